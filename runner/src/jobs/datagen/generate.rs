//! Datagen's games on this machine's threads (or one shard's of a cluster run): played in
//! index order into the training files, with their run record, progress and summary.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use data::training::files::{Format, TrainingWriter};

use super::args::DatagenArgs;
use super::plan::{Plan, Target};
use super::record::record_fields;
use crate::cluster::shard::ShardRun;
use crate::engines::player::BuiltinPlayer;
use crate::error::{CliError, CliResult};
use crate::files::kill_point;
use crate::files::run_record;
use crate::interrupt;
use crate::play::ordered::{self, Control, Jobs, Stride};
use crate::play::training::{GameWorker, Played};
use crate::progress::Progress;
use crate::stdout;

/// Running totals of the files, for the target and the progress display.
struct Counts {
    games: u64,
    positions: u64,
    lines: u64,
}

impl Counts {
    fn progress(&self, format: Format) -> u64 {
        if format == Format::Text {
            self.lines
        } else {
            self.positions
        }
    }

    fn reached(&self, target: Target, format: Format) -> bool {
        match target {
            Target::Games(g) => self.games >= g,
            Target::Positions(p) => self.progress(format) >= p,
        }
    }

    fn line(&self, format: Format, rate: f64) -> String {
        format!(
            "{} games, {} positions, {} text lines, {rate:.0} {}/s",
            self.games,
            self.positions,
            self.lines,
            unit(format)
        )
    }
}

fn unit(format: Format) -> &'static str {
    if format == Format::Text {
        "lines"
    } else {
        "positions"
    }
}

/// Plays the games of `plan` (all of them, or those of `shard`) into its files, continuing
/// them with `--resume`, and prints the summary.
pub(crate) fn generate(args: &DatagenArgs, plan: &Plan, shard: Option<&ShardRun>) -> CliResult {
    let started = Instant::now();
    let quiet = args.run.quiet;
    let fields = record_fields(args, plan);
    let paths = plan.format.paths(&plan.out);
    let has_games = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
    if args.resume && has_games {
        run_record::check_resume("--out", &plan.out, &fields, quiet)?;
    }
    let (mut writer, resumed) =
        TrainingWriter::open(&plan.out, plan.format, plan.filter, args.resume, None)
            .map_err(CliError::usage)?;
    run_record::write(
        "--out",
        &plan.out,
        "datagen",
        &fields,
        serde_json::Map::new(),
    )?;
    let mut counts = Counts {
        games: resumed.games,
        positions: resumed.positions,
        lines: resumed.lines,
    };
    if args.resume && !quiet {
        eprintln!(
            "Resuming after {} games ({} positions, {} text lines){}",
            resumed.games,
            resumed.positions,
            resumed.lines,
            if resumed.dropped_bytes > 0 {
                format!(
                    "; dropped {} bytes of an unfinished game",
                    resumed.dropped_bytes
                )
            } else {
                String::new()
            }
        );
    }
    let first_game = resumed.games;
    let at_start = counts.progress(plan.format);

    let abort = interrupt::on_ctrl_c("finishing up");
    if let Some(s) = shard {
        s.watch_stop(abort.clone());
    }
    let (len, what) = match plan.target {
        Target::Positions(p) => (p, unit(plan.format)),
        Target::Games(g) => (g, "games"),
    };
    let by_games = matches!(plan.target, Target::Games(_));
    let progress = Progress::new(
        quiet,
        what,
        Some(len),
        if by_games { counts.games } else { at_start },
    );
    let mut failure: Option<CliError> = None;
    let (mut search_time, mut worker_time, mut write_time) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);

    if !counts.reached(plan.target, plan.format) {
        let jobs = Jobs {
            stride: shard.map_or(Stride::ALL, ShardRun::stride),
            first: first_game,
            end: match plan.target {
                Target::Games(g) => Some(g),
                Target::Positions(_) => None,
            },
            concurrency: plan.concurrency,
            abort: &abort,
            admit: None,
        };
        let make_worker = || {
            Ok(GameWorker {
                options: &plan.game,
                player: BuiltinPlayer::new(&plan.game.variant)?,
            })
        };
        let result = ordered::run(
            &jobs,
            &make_worker,
            || {},
            |played: Played| {
                search_time += played.search_time;
                worker_time += played.total_time;
                let t0 = Instant::now();
                match writer.write_game(&played.game) {
                    Ok((positions, lines)) => {
                        kill_point::record_written();
                        counts.games += 1;
                        counts.positions += positions;
                        counts.lines += lines;
                    }
                    Err(e) => {
                        failure = Some(CliError::failure(e));
                        return Control::Stop;
                    }
                }
                write_time += t0.elapsed();
                let done = counts.progress(plan.format);
                progress.set_position(if by_games { counts.games } else { done });
                let rate = (done - at_start) as f64 / started.elapsed().as_secs_f64().max(1e-9);
                progress.set_message(&counts.line(plan.format, rate));
                if counts.reached(plan.target, plan.format) {
                    Control::Stop
                } else {
                    Control::Continue
                }
            },
        );
        if let Err(e) = result {
            failure.get_or_insert(e);
        }
    }
    progress.finish();
    writer.sync().map_err(CliError::failure)?;

    let elapsed = started.elapsed().as_secs_f64();
    let made = counts.progress(plan.format) - at_start;
    let paths = writer.paths();
    let files: Vec<String> = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    let mut lines = vec![
        format!(
            "{} games, {} positions, {} text lines in {}",
            counts.games,
            counts.positions,
            counts.lines,
            files.join(" and ")
        ),
        format!(
            "This run: {} {} in {elapsed:.1} s ({:.0}/s, {} threads, {} nodes per move)",
            made,
            if plan.format == Format::Text {
                "text lines"
            } else {
                "positions"
            },
            made as f64 / elapsed.max(1e-9),
            plan.concurrency,
            args.nodes
        ),
    ];
    if worker_time > Duration::ZERO {
        let inside = search_time.as_secs_f64() / worker_time.as_secs_f64();
        lines.push(format!(
            "Time in search: {:.1} % of worker time ({:.1} % outside: openings, rules, \
             recording); writing {:.2} s",
            100.0 * inside,
            100.0 * (1.0 - inside),
            write_time.as_secs_f64()
        ));
    }
    if let Some(e) = failure {
        stdout::print_lines(&lines)?;
        return Err(e);
    }
    if abort.load(Ordering::SeqCst) && !shard.is_some_and(ShardRun::stopped) {
        lines.push(format!(
            "Interrupted after {} complete games; {}",
            counts.games,
            ShardRun::how_to_continue(shard)
        ));
        stdout::print_lines(&lines)?;
        return Err(CliError::interrupted());
    }
    stdout::print_lines(&lines)
}
