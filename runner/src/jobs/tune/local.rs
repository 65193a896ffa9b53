//! A tune on this machine's threads: the trajectory CSV and its record, the progress, the
//! final values and `--out`, the verification SPRT, and `--probe`.

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Instant;

use super::args::TuneArgs;
use super::setup::{check_engine, check_paths, setup, tuned_values, Setup};
use super::verify::{check_verification, verify_local};
use crate::engines::variant::Source;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::kill_point;
use crate::files::lock::lock_output;
use crate::files::run_record;
use crate::interrupt;
use crate::play::game::PlayedGame;
use crate::progress::Progress;
use crate::stdout;
use crate::tune::crash::{crash_file, Crashes};
use crate::tune::driver::{self, Sink};
use crate::tune::schedule::Tuner;
use crate::tune::selfplay::{tally, SelfPlay};
use crate::tune::spsa::Perturbation;
use crate::tune::trajectory::{Row, Trajectory};
use crate::tune::{self, report};

/// A local tune (`spar tune` without `--slurm`): the schedule on this machine's threads.
pub fn run(args: TuneArgs) -> CliResult {
    check_paths(&args)?;
    // One writer per --csv: a second tune on it is refused before any game.
    let _lock = match &args.csv {
        Some(c) => lock_output(c, "--csv")?,
        None => None,
    };
    let started = Instant::now();
    let mut s = setup(&args)?;
    check_verification(&args, &s)?;
    if args.probe {
        // Before any build or engine start, as every other option.
        tune::probe::check_games(args.probe_games)?;
    }
    if matches!(s.run.variants[0].source, Source::Build { .. }) {
        s.run.build_variants(args.run.quiet)?;
    }
    check_engine(&s)?;
    if args.probe {
        return run_probe(&args, &s);
    }
    let concurrency = s.plan.concurrency;
    let quiet = args.run.quiet;
    let in_flight = (s.schedule.delay + 1) * s.schedule.pairs_per_iteration;
    if in_flight < concurrency as u64 && !quiet {
        eprintln!(
            "note: {in_flight} pair(s) can play at once (--pairs-per-iteration {} × (--delay {} + 1)), below --concurrency {concurrency}: {} worker(s) will idle",
            s.schedule.pairs_per_iteration,
            s.schedule.delay,
            concurrency as u64 - in_flight
        );
    }
    let mut tuner = s.tuner();
    let mut csv = None;
    // The whole trajectory, for the averaged θ at the end.
    let mut history = vec![tuner.start_row()];
    let mut session_extra = serde_json::Map::new();
    if let Some(path) = &args.csv {
        // An empty trajectory has nothing to continue: the run starts afresh.
        if args.resume && std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            run_record::check_resume("--csv", path, &s.fields, quiet)?;
            let (t, rows) = Trajectory::resume(path, &s.names).map_err(CliError::usage)?;
            tuner = s.resumed(&rows);
            history = rows;
            if !quiet && tuner.done() > 0 {
                eprintln!(
                    "Resuming after iteration {} ({} games) from {}",
                    tuner.done(),
                    tuner.games(),
                    path.display()
                );
            }
            csv = Some(t);
        } else {
            csv = Some(
                Trajectory::create(path, &s.names, &tuner.start_row()).map_err(CliError::usage)?,
            );
        }
        session_extra = session(tuner.games());
        run_record::write("--csv", path, "tune", &s.fields, session_extra.clone())?;
    }
    let games_before = tuner.games();
    let abort = interrupt::on_ctrl_c("stopping (unfinished iterations are not counted)");
    let variant = s.run.variants[0].clone();
    let selfplay = SelfPlay::new(
        concurrency,
        variant.clone(),
        s.plan.adjudication.clone(),
        s.run.book.clone(),
        s.run.stall_timeout,
    )?;
    let progress = Progress::new(quiet, "iterations", Some(s.gains.iterations), tuner.done());
    let crashes = Crashes::new(args.csv.as_ref().map(|c| crash_file(c)), &s.plan, &s.names);
    let mut sink = LocalSink {
        csv,
        progress: &progress,
        names: &s.names,
        tally: sprt::Trinomial::default(),
        crashes,
        history,
    };
    let pairs: Vec<u64> = (tuner.frontier()..s.schedule.total_pairs()).collect();
    let (tuner, failure) = driver::run(&selfplay, tuner, &s.names, &pairs, &mut sink, &abort);
    progress.finish();
    drop(selfplay);
    let interrupted = abort.load(Ordering::SeqCst);
    let elapsed = started.elapsed().as_secs_f64();
    let played = tuner.games() - games_before;
    let t = sink.tally;
    let head = format!(
        "SPSA: {}/{} iterations, {} games ({played} this session in {elapsed:.1} s, {:.2} games/s, dev vs base W-D-L {}-{}-{})",
        tuner.done(),
        s.gains.iterations,
        tuner.games(),
        played as f64 / elapsed.max(1e-9),
        t.wins,
        t.draws,
        t.losses,
    );
    // The averaged θ (what --out writes and the verification plays) beside the last iterate.
    let (values, finals) = tuned_values(&s, &sink.history);
    report_values(&head, &values, &finals, args.out.as_deref())?;
    if let Some(e) = failure {
        return Err(e);
    }
    if interrupted {
        let how = if args.csv.is_some() {
            "rerun the same command with --resume to continue"
        } else {
            "give --csv FILE next time to be able to --resume"
        };
        return Err(CliError {
            message: format!("interrupted after iteration {}; {how}", tuner.done()),
            code: 130,
        });
    }
    if !args.verify.no_verify && tuner.done() == s.gains.iterations {
        let verdict = verify_local(&args, &s, &finals)?;
        if let (Some(path), Some(v)) = (&args.csv, verdict) {
            let mut extra = session_extra;
            extra.insert("verify".into(), v);
            run_record::write("--csv", path, "tune", &s.fields, extra)?;
        }
    }
    Ok(())
}

/// Prints the run's summary line and its final values (`values`, the text of
/// [`report::tune_values`]), and writes `finals` to `--out`. The values are written even
/// when standard output is gone.
pub(crate) fn report_values(
    head: &str,
    values: &str,
    finals: &[(String, i64)],
    out: Option<&Path>,
) -> CliResult {
    let printed = stdout::print(&format!("{head}\n{values}"));
    if let Some(path) = out {
        write_atomically(path, &report::openbench_lines(finals)).map_err(|e| {
            CliError::failure(format!("cannot write --out {}: {e}", path.display()))
        })?;
        printed.clone()?;
        stdout::print(&format!("\nWrote {}\n", path.display()))?;
    }
    printed
}

/// A local run's sink: the trajectory CSV, the progress line, the tally and crashes, and
/// the trajectory's rows (for the averaged θ).
struct LocalSink<'a> {
    csv: Option<Trajectory>,
    progress: &'a Progress,
    names: &'a [String],
    tally: sprt::Trinomial,
    crashes: Crashes,
    history: Vec<Row>,
}

impl Sink for LocalSink<'_> {
    fn pair(&mut self, pair: u64, games: &[PlayedGame; 2], engines: &Perturbation) -> CliResult {
        self.tally += tally(games);
        self.crashes.check(pair, games, engines, self.progress)
    }

    fn rows(&mut self, rows: &[Row], tuner: &Tuner) -> CliResult {
        if let Some(t) = &mut self.csv {
            for row in rows {
                t.append(row)?;
                kill_point::record_written();
            }
        }
        self.history.extend_from_slice(rows);
        self.progress.set_position(tuner.done());
        self.progress
            .set_message(&theta_line(self.names, tuner.theta()));
        Ok(())
    }
}

/// The status message: the current θ.
fn theta_line(names: &[String], theta: &[f64]) -> String {
    let values: Vec<String> = names
        .iter()
        .zip(theta)
        .map(|(n, t)| format!("{n} {t:.2}"))
        .collect();
    values.join("  ")
}

/// The run record's extras of a local session: when it started and the games before it
/// (`spar status`'s games/s; not compared on `--resume`).
fn session(games_before: u64) -> serde_json::Map<String, serde_json::Value> {
    let mut extra = serde_json::Map::new();
    extra.insert(
        super::status_local::SESSION_KEY.into(),
        super::status_local::session_record(games_before),
    );
    extra
}

/// `spar tune --probe`: plays the probe on this machine's threads and prints its report.
fn run_probe(args: &TuneArgs, s: &Setup) -> CliResult {
    let pairs = tune::probe::check_games(args.probe_games)?;
    let selfplay = SelfPlay::new(
        s.plan.concurrency,
        s.run.variants[0].clone(),
        s.plan.adjudication.clone(),
        s.run.book.clone(),
        s.run.stall_timeout,
    )?;
    let abort = interrupt::on_ctrl_c("stopping the probe");
    let total = 2 * pairs * s.params.len() as u64;
    let progress = Progress::new(args.run.quiet, "games", Some(total), 0);
    let (rows, stopped) = tune::probe::play(&selfplay, &s.params, pairs, &abort, &progress)?;
    progress.finish();
    let lines = tune::probe::lines(&rows, pairs, s.schedule.pairs_per_iteration);
    stdout::print_lines(&lines)?;
    if stopped {
        return Err(CliError {
            message: format!(
                "interrupted: {} of {} parameters probed",
                rows.len(),
                s.params.len()
            ),
            code: 130,
        });
    }
    Ok(())
}
