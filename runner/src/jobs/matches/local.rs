//! A match or SPRT played on this machine's threads (or one shard of a cluster run): its
//! locks, files, schedule, SPRT, progress, summary and JSON.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Instant;

use sprt::Decision;

use super::args::{checked_paths, has_rows, plan, MatchArgs};
use super::lines::GameLines;
use super::record::{json, record_fields};
use crate::cluster::shard::ShardRun;
use crate::engines;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::lock::{lock_output, Lock};
use crate::files::match_files::{MatchFiles, OpenFiles};
use crate::files::run_record;
use crate::interrupt;
use crate::jobs::record_fields::table_files;
use crate::play::game::Termination;
use crate::play::schedule::{self, Control, PairOutcome, Stride};
use crate::play::tally::Tally;
use crate::progress::Progress;
use crate::stdout;
use crate::summary::{self, MatchInfo};

/// One writer per file a local run appends to and resumes from (`--results`, `--pgnout`,
/// `--dump-positions`): a second run on any of them is refused before any game, after the
/// checks of the paths themselves. The kernel frees the locks when this process ends.
pub(super) fn lock_outputs(args: &MatchArgs) -> CliResult<Vec<Lock>> {
    let dump = checked_paths(args)?;
    let f = &args.files;
    let mut outputs: Vec<(&str, PathBuf)> = Vec::new();
    if let Some(r) = &f.results {
        outputs.push(("--results", r.clone()));
    }
    if let Some(p) = &f.pgnout {
        outputs.push(("--pgnout", p.clone()));
    }
    if let Some(d) = &dump {
        // Each file of the dump (viriformat, text); the text file's index follows it.
        let paths = d.format.paths(&d.path);
        for p in [paths.viriformat, paths.text].into_iter().flatten() {
            outputs.push(("--dump-positions", p));
        }
    }
    let mut locks = Vec::new();
    for (flag, path) in &outputs {
        locks.extend(lock_output(path, flag)?);
    }
    Ok(locks)
}

/// Plays a match (or a shard of one); `lines`, a personality's (`--game-lines`).
pub(super) fn play(
    args: MatchArgs,
    is_sprt: bool,
    shard: Option<&ShardRun>,
    lines: Option<&dyn GameLines>,
) -> CliResult {
    let started = Instant::now();
    let quiet = args.run.quiet;
    // Before the plan: building it reads the engines' parameter files and the book.
    let dump_spec = checked_paths(&args)?;
    let (plan, mut run) = plan(&args, is_sprt, lines)?;
    let tables = table_files(plan.adjudication.tb.as_ref(), &run.variants);
    let fields = record_fields(
        &plan,
        args.files.pgnout.is_some(),
        dump_spec.as_ref(),
        &tables,
    );
    let stored = match &args.files.results {
        Some(r) if args.files.resume && has_rows(r) => {
            run_record::check_resume("--results", r, &fields, quiet)?
        }
        _ => None,
    };
    if let Some(s) = shard {
        if let Some(p) = &s.manifest.plan {
            let mut mine = plan.clone();
            mine.concurrency = p.concurrency;
            if &mine != p {
                return Err(CliError::usage(format!(
                    "{}: the match arguments do not give the manifest's plan (edited by hand?): start a new --run-dir",
                    s.dir.display()
                )));
            }
        }
        s.use_built(&mut run)?;
    } else {
        // Build variants compile spar first; from then on they are external UCI engines.
        run.build_variants(quiet)?;
    }
    let stride = shard.map_or(Stride::ALL, ShardRun::stride);
    // The pairs this process plays: all of the plan's, or the shard's among them.
    let end_pair = plan.pairs.map(|p| stride.count_below(p));
    let variants = run.seats();
    let names = [variants[0].name.as_str(), variants[1].name.as_str()];

    let command_line: Vec<String> = std::env::args().collect();
    let mut files = MatchFiles::open(&OpenFiles {
        pgn: args.files.pgnout.as_deref(),
        results: args.files.results.as_deref(),
        dump: args.files.dump_positions.as_deref(),
        resume: args.files.resume,
        names,
        pgn_start: stored
            .as_ref()
            .and_then(|s| s.get("pgn_start"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0),
        quiet,
        stride,
    })
    .map_err(CliError::usage)?;
    // A personality writes the tool's PGN (`spar match`'s own is unchanged).
    if let Some(lines) = lines {
        files.set_pgn_format(lines.pgn()?);
    }
    if let Some(r) = &args.files.results {
        let mut extra = serde_json::Map::new();
        extra.insert("pgn_start".into(), files.pgn_start().into());
        extra.insert("plan".into(), json(&plan));
        let command = if is_sprt { "sprt" } else { "match" };
        run_record::write("--results", r, command, &fields, extra)?;
    }

    let mut tally = Tally::default();
    let resumed = files.resumed_pairs();
    for p in &resumed {
        tally.add_pair(p.games);
    }
    let first_pair = resumed.len() as u64;
    if !quiet && first_pair > 0 {
        eprintln!(
            "Resuming after {first_pair} finished pairs ({} games) from the results file",
            2 * first_pair
        );
    }
    // A shard does not decide: the coordinator counts the pairs of every shard.
    let sprt = if shard.is_some() { None } else { run.sprt };
    let mut decision = sprt
        .as_ref()
        .and_then(|s| s.status(&summary::sample(&tally, s)).ok())
        .map(|st| st.decision);

    let limits = if variants[0].limits == variants[1].limits {
        variants[0].limits.describe()
    } else {
        format!(
            "{} vs {}",
            variants[0].limits.describe(),
            variants[1].limits.describe()
        )
    };
    if !quiet {
        let games = plan
            .pairs
            .map_or("until decided".to_string(), |p| format!("{} games", 2 * p));
        let mut header = format!(
            "{} vs {}: {limits}, {games}, concurrency {}, {}, seed {}",
            names[0],
            names[1],
            plan.concurrency,
            run.book.describe(),
            plan.seed
        );
        if let Some(s) = &sprt {
            header.push_str(&format!(
                ", SPRT [{:.2}, {:.2}] {} alpha {} beta {}",
                s.elo0(),
                s.elo1(),
                s.model().name(),
                s.alpha(),
                s.beta()
            ));
        }
        eprintln!("{header}");
    }

    let abort = interrupt::on_ctrl_c("finishing up");
    if let Some(s) = shard {
        s.watch_stop(abort.clone());
    }
    let progress = Progress::new(quiet, "games", end_pair.map(|p| 2 * p), 2 * first_pair);
    // A personality's lines (`spar fastchess`, `spar cutechess`).
    let mut report = match lines {
        Some(lines) => Some(lines.report(
            names,
            end_pair.map(|p| 2 * p),
            &variants,
            args.book.book.as_ref().and_then(|w| w.first()),
        )?),
        None => None,
    };
    if let Some(r) = &report {
        stdout::print_lines(&r.start())?;
    }
    let failure: RefCell<Option<CliError>> = RefCell::new(None);
    // The pair a shard stopped before, at the horizon (the last refused: pairs start in
    // order, so it is the first not played).
    let paused: Mutex<Option<u64>> = Mutex::new(None);

    let already_done = decision.is_some_and(|d| d != Decision::Continue)
        || end_pair.is_some_and(|p| first_pair >= p);
    if !already_done {
        let stall = run.stall_timeout;
        let make_player = |i: usize| engines::make_player(&variants[i], stall);
        let book = &run.book;
        let opening = |k: u64| book.opening(k);
        let mut schedule = plan.schedule(&variants, first_pair, &opening, &make_player, &abort);
        schedule.stride = stride;
        schedule.end_pair = end_pair;
        // A shard starts no pair at or past the SPRT's horizon (RUN_DIR/horizon).
        let admit = |k: u64| {
            let ok = shard.is_none_or(|s| s.admits(k));
            if !ok {
                let mut p = paused.lock().unwrap_or_else(|e| e.into_inner());
                *p = Some(p.map_or(k, |q: u64| q.max(k)));
            }
            ok
        };
        if shard.is_some() {
            schedule.admit = Some(&admit);
        }
        let recover = plan.recover;
        let result = schedule::run(
            &schedule,
            || progress.inc(),
            |pair: PairOutcome| {
                if let Err(e) = files.write_pair(&pair, &variants) {
                    *failure.borrow_mut() = Some(e);
                    return Control::Stop;
                }
                if let Some(report) = report.as_mut() {
                    let lines = match report.pair(&pair, sprt.as_ref()) {
                        Ok(lines) => lines,
                        Err(e) => {
                            *failure.borrow_mut() = Some(e);
                            return Control::Stop;
                        }
                    };
                    if let Err(e) = stdout::print_lines(&lines) {
                        *failure.borrow_mut() = Some(e);
                        return Control::Stop;
                    }
                }
                let summaries = summary::pair_summaries(&pair);
                tally.add_pair(summaries);
                if let Some(s) = &sprt {
                    if let Ok(st) = s.status(&summary::sample(&tally, s)) {
                        decision = Some(st.decision);
                    }
                }
                progress.set_message(&summary::status_line(&tally, sprt.as_ref(), names));
                if !recover {
                    if let Some(g) = summaries
                        .iter()
                        .find(|g| matches!(g.termination, Termination::Crash | Termination::Stall))
                    {
                        let who = names[g.loser().unwrap_or(0)];
                        *failure.borrow_mut() = Some(CliError::failure(format!(
                            "engine '{who}' {} in pair {}; stopping (use --recover to restart crashed engines and go on)",
                            if g.termination == Termination::Crash { "crashed" } else { "stopped answering" },
                            pair.pair
                        )));
                        return Control::Stop;
                    }
                }
                if decision.is_some_and(|d| d != Decision::Continue) {
                    return Control::Stop;
                }
                // cutechess-cli's own SPRT (its personality) decided.
                if report.as_ref().is_some_and(|r| r.stop()) {
                    return Control::Stop;
                }
                Control::Continue
            },
        );
        if let Err(e) = result {
            failure.borrow_mut().get_or_insert(e);
        }
    }
    progress.finish();

    let interrupted = abort.load(Ordering::SeqCst);
    let info = MatchInfo {
        names,
        limits: variants[0].limits.describe(),
        book: run.book.describe(),
        sprt: sprt.as_ref(),
    };
    let mut lines = match &report {
        Some(report) => report.finish(&info, &tally)?,
        None => summary::summary_lines(&tally, &info, args.output)?,
    };
    if interrupted {
        lines.push(format!(
            "Interrupted: {} complete pairs counted; {}",
            tally.pairs.pairs(),
            ShardRun::how_to_continue(shard)
        ));
    }
    let paused = paused.into_inner().unwrap_or_else(|e| e.into_inner());
    if let (Some(s), Some(k), false, true) =
        (shard, paused, interrupted, failure.borrow().is_none())
    {
        s.record_pause(k)?;
        lines.push(format!(
            "Paused before pair {k}: the SPRT's horizon ({}); the coordinator resubmits \
             this shard when its count nears the pair",
            crate::cluster::horizon::horizon_file(&s.dir).display()
        ));
    }
    stdout::print_lines(&lines)?;
    if let Some(path) = &args.files.json {
        let report = summary::json_summary(
            &tally,
            &info,
            plan.seed,
            decision,
            &command_line,
            started.elapsed(),
        )?;
        write_json(path, &report)?;
    }
    match failure.into_inner() {
        Some(e) => Err(e),
        // A shard stopped by RUN_DIR/STOP has done what was asked of it.
        None if interrupted && shard.is_some_and(ShardRun::stopped) => Ok(()),
        None if interrupted => Err(CliError::interrupted()),
        None => Ok(()),
    }
}

fn write_json(path: &Path, report: &serde_json::Value) -> CliResult {
    let text = serde_json::to_string_pretty(report).expect("json") + "\n";
    write_atomically(path, &text)
        .map_err(|e| CliError::failure(format!("cannot write --json {}: {e}", path.display())))
}
