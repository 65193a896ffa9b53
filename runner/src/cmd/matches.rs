//! `spar match` and `spar sprt`: parallel self-play between two engine variants.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use sprt::Decision;

use crate::cli::{
    AdjudicationArgs, BookArgs, EngineArgs, FailureArgs, OutputArgs, RunArgs, SlurmArgs, SprtArgs,
};
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::shard::ShardRun;
use crate::engines;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::lock::{lock_output, Lock};
use crate::files::match_files::{MatchFiles, OpenFiles};
use crate::files::paths::PathCheck;
use crate::files::position_dump::{spec_of, DumpSpec};
use crate::files::run_record::{self, Field};
use crate::interrupt;
use crate::plan::{MatchPlan, PlanRequest, Run};
use crate::play::game::Termination;
use crate::play::schedule::{self, Control, PairOutcome, Stride};
use crate::play::tally::Tally;
use crate::progress::Progress;
use crate::stdout;
use crate::summary::{self, MatchInfo, OutputFormat};

/// Play games between two engine variants.
///
/// Each `--engine` takes fastchess-style key=value words; `--each` words apply to every
/// engine (an engine's own words win):
///
///   spar match --engine name=dev option.rfp_margin=90 --engine name=base --each nodes=5000 --games 200
///
///   spar match --engine name=sf cmd=/usr/games/stockfish option.Hash=16 --engine name=spar --each tc=10+0.1
///
/// Engine keys: name, cmd (external UCI engine), args, dir, git / features (build spar at a
/// revision / with cargo features), params (parameter file, builtin), `option.<Name>`,
/// nodes, depth, movetime (ms), st (s), tc (moves/base+inc, seconds), timemargin (ms).
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[command(verbatim_doc_comment)]
pub struct MatchArgs {
    #[command(flatten)]
    engines: EngineArgs,
    /// Number of games (even: N/2 pairs, each opening once per colour). `spar sprt`
    /// without it runs until the SPRT decides; `spar match` defaults to 100.
    #[arg(long)]
    games: Option<u64>,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    book: BookArgs,
    #[command(flatten)]
    adjudication: AdjudicationArgs,
    #[command(flatten)]
    files: OutputArgs,
    /// Format of the final summary.
    #[arg(long, value_enum, default_value = "cutechess")]
    output: OutputFormat,
    #[command(flatten)]
    failure: FailureArgs,
    #[command(flatten)]
    sprt: SprtArgs,
    #[command(flatten)]
    slurm: SlurmArgs,
    /// Print fastchess's (or cutechess-cli's) per-game lines on stdout (`Started game N of
    /// M (A vs B)`, `Finished game N (A vs B): RESULT {reason}`), in game order, their
    /// periodic reports and their final report; `spar fastchess`/`spar cutechess` set it
    /// (`TOOL[:OUTPUT][:rating=N][:every=N]`, see cmd::compat::Lines).
    #[arg(long, hide = true, num_args = 0..=1, default_missing_value = "fastchess")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    game_lines: Option<String>,
}

/// Games `spar match` plays without `--games`.
const DEFAULT_MATCH_GAMES: u64 = 100;

/// Checks the command line and makes the plan of the match.
fn plan(args: &MatchArgs, is_sprt: bool) -> CliResult<(MatchPlan, Run)> {
    if !is_sprt && (args.sprt.elo0.is_some() || args.sprt.elo1.is_some()) {
        return Err(CliError::usage(
            "--elo0/--elo1 belong to `spar sprt`; `spar match` plays a fixed number of games",
        ));
    }
    // Before any file is opened: the personality's lines.
    if let Some(word) = &args.game_lines {
        crate::cmd::compat::Lines::parse(word)?;
    }
    MatchPlan::build(&PlanRequest {
        engines: &args.engines,
        seats: 2..=2,
        example: "--engine name=dev option.rfp_margin=90 --engine name=base",
        run: &args.run,
        games: args.games,
        default_games: (!is_sprt).then_some(DEFAULT_MATCH_GAMES),
        book: &args.book,
        adjudication: args.adjudication.rules()?,
        failure: Some(&args.failure),
        recover_by_default: is_sprt,
        sprt: is_sprt.then_some(&args.sprt),
    })
}

/// Checks the arguments of a match as [`run`] does before its first game (the plan: engines,
/// games, book, adjudication, SPRT bounds), playing nothing: what `spar tune` checks of its
/// verification SPRT before the tune's first game.
pub fn check(args: &MatchArgs, is_sprt: bool) -> CliResult {
    plan(args, is_sprt).map(|_| ())
}

/// Runs `spar match` (`is_sprt = false`) or `spar sprt`; with `--slurm`, as the coordinator
/// of a cluster run.
pub fn run(args: MatchArgs, is_sprt: bool) -> CliResult {
    if args.slurm.slurm {
        if args.game_lines.is_some() {
            return Err(CliError::usage(
                "--game-lines does not apply to --slurm: the shards play the games",
            ));
        }
        return coordinate(args, is_sprt);
    }
    args.slurm.check_local()?;
    if args.files.resume && args.files.results.is_none() {
        return Err(CliError::usage(
            "--resume needs --results FILE: the record the run continues from",
        ));
    }
    let _locks = lock_outputs(&args)?;
    play(args, is_sprt, None)
}

/// One writer per file a local run appends to and resumes from (`--results`, `--pgnout`,
/// `--dump-positions`): a second run on any of them is refused before any game, after the
/// checks of the paths themselves. The kernel frees the locks when this process ends.
fn lock_outputs(args: &MatchArgs) -> CliResult<Vec<Lock>> {
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

/// Plays shard `shard.index` of a cluster run: the pairs I, I+N, … of the manifest's match
/// (all of them, or until `RUN_DIR/STOP`), into the shard's own files, resuming them.
pub fn run_shard(args: serde_json::Value, is_sprt: bool, shard: &ShardRun) -> CliResult {
    let mut args: MatchArgs = serde_json::from_value(args).map_err(|e| {
        CliError::usage(format!(
            "{}: the match arguments do not read: {e}",
            shard.dir.display()
        ))
    })?;
    let dir = &shard.dir;
    let i = shard.index;
    args.run.concurrency = Some(shard.concurrency);
    args.run.quiet = true;
    args.game_lines = None;
    args.slurm = SlurmArgs::default();
    let dump = args.files.dump_positions.take().map(|words| {
        let mut w = vec![crate::cluster::shard_positions(dir, i)
            .to_string_lossy()
            .into_owned()];
        w.extend(words.into_iter().skip(1));
        w
    });
    args.files = OutputArgs {
        pgnout: args
            .files
            .pgnout
            .is_some()
            .then(|| crate::cluster::shard_pgn(dir, i)),
        dump_positions: dump,
        results: Some(crate::cluster::shard_results(dir, i)),
        json: None,
        resume: true,
    };
    play(args, is_sprt, Some(shard))
}

/// The coordinator of `--slurm`: everything checked here first, variants built once, the
/// manifest written, then [`coordinator::run`] submits, watches, stops and merges.
fn coordinate(mut args: MatchArgs, is_sprt: bool) -> CliResult {
    let quiet = args.run.quiet;
    let cpus = coordinator::shard_cpus(&mut args.run, &args.slurm)?;
    let dump_spec = checked_paths(&args)?;
    if !args.files.resume {
        // The merge writes these whole; a local run would append to them.
        let mut outputs: Vec<(&str, std::path::PathBuf)> = Vec::new();
        if let Some(p) = &args.files.pgnout {
            outputs.push(("--pgnout", p.clone()));
        }
        if let Some(p) = &args.files.results {
            outputs.push(("--results", p.clone()));
        }
        if let Some(d) = &dump_spec {
            let paths = d.format.paths(&d.path);
            for p in [paths.viriformat, paths.text].into_iter().flatten() {
                outputs.push(("--dump-positions", p));
            }
        }
        if let Some((flag, p)) = outputs.iter().find(|(_, p)| has_rows(p)) {
            return Err(CliError::usage(format!(
                "{flag} {} already holds games: a --slurm run writes its merged files whole, so give a new file",
                p.display()
            )));
        }
    }
    let cluster = coordinator::prepare(&args.slurm, args.files.resume)?;
    let (mut plan, mut run) = plan(&args, is_sprt)?;
    // A shard plays --cpus-per-shard pairs at once, whatever the number of pairs.
    plan.concurrency = cpus;
    let resume = args.files.resume;
    args.files.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let command = if is_sprt { "sprt" } else { "match" };
    let manifest = if resume {
        coordinator::reattach(&cluster, command, &stored)?
    } else {
        let built: Vec<bool> = run
            .variants
            .iter()
            .map(|v| matches!(v.source, engines::variant::Source::Build { .. }))
            .collect();
        run.build_variants(quiet)?;
        let cwd = std::env::current_dir().unwrap_or_default();
        let files: Vec<_> = plan
            .engines
            .iter()
            .flat_map(|e| {
                crate::cluster::manifest::files_in_words(
                    &format!("engine '{}'", e.name),
                    &e.words,
                    &cwd,
                )
            })
            .collect();
        let mut m = coordinator::plan_manifest(
            &cluster,
            command,
            stored,
            Some(plan.clone()),
            &run.variants,
            &built,
            args.book.book.as_deref(),
            &files,
            plan.pairs,
        )?;
        coordinator::pin_tables(&mut m, &cluster.dir, &plan.adjudication, &run.variants)?;
        m
    };
    let submission = Submission {
        cluster: &cluster,
        manifest: &manifest,
        quiet,
    };
    coordinator::run(&submission)
}

/// Plays a match (or a shard of one).
fn play(args: MatchArgs, is_sprt: bool, shard: Option<&ShardRun>) -> CliResult {
    let started = Instant::now();
    let quiet = args.run.quiet;
    // Before the plan: building it reads the engines' parameter files and the book.
    let dump_spec = checked_paths(&args)?;
    let (plan, mut run) = plan(&args, is_sprt)?;
    let tables = super::table_files(plan.adjudication.tb.as_ref(), &run.variants);
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
    if let Some(word) = &args.game_lines {
        let layout = crate::cmd::compat::Lines::parse(word)?.pgn();
        files.set_pgn_format(Box::new(move |pair, g, white, black, ended| {
            layout.format(pair, g, white, black, ended)
        }));
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
    let mut report = match &args.game_lines {
        Some(word) => Some(crate::cmd::compat::Report::new(
            crate::cmd::compat::Lines::parse(word)?,
            names,
            end_pair.map(|p| 2 * p),
            crate::cmd::compat::fastchess_header(
                &variants,
                args.book.book.as_ref().and_then(|w| w.first()),
            ),
        )),
        None => None,
    };
    if let Some(r) = &report {
        stdout::print_lines(&r.start())?;
    }
    let failure: RefCell<Option<CliError>> = RefCell::new(None);

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

/// The `--dump-positions` spec, after [`check_paths`] of every file the match touches.
fn checked_paths(args: &MatchArgs) -> CliResult<Option<DumpSpec>> {
    let dump_spec = spec_of(args.files.dump_positions.as_deref())?;
    check_paths(args, dump_spec.as_ref())?;
    Ok(dump_spec)
}

/// Every file the match reads or writes: no output is another input or output, and every
/// output can be written, before any game.
fn check_paths(args: &MatchArgs, dump: Option<&DumpSpec>) -> CliResult {
    let mut check = PathCheck::new();
    check.engines(&args.engines.engines, &args.engines.each);
    check.book_words(args.book.book.as_deref());
    check.tb_words(args.adjudication.tb.as_deref());
    if let Some(dir) = args.slurm.run_dir.as_ref().filter(|_| args.slurm.slurm) {
        check.run_dir(dir);
    }
    let f = &args.files;
    if let Some(r) = &f.results {
        check.record("--results", r).locked("--results", r);
        check.record("--results record", run_record::path_for(r));
    }
    if let Some(p) = &f.pgnout {
        check.output("--pgnout", p).locked("--pgnout", p);
    }
    if let Some(d) = dump {
        let paths = d.format.paths(&d.path);
        for p in [paths.viriformat, paths.text, paths.index]
            .into_iter()
            .flatten()
        {
            check
                .record("--dump-positions", &p)
                .locked("--dump-positions", &p);
        }
    }
    if let Some(j) = &f.json {
        check.output("--json", j);
    }
    check.check()
}

/// Whether a results file holds anything (a resume with nothing to resume is a new run).
fn has_rows(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() > 0)
}

/// What defines a match for `--resume`: the engines, seed, book, adjudication and SPRT of
/// the plan, the Syzygy table files it probes (`tables`: path and size), and which files it
/// writes (not the concurrency, the number of games or the failure policy, which may change
/// between sessions).
pub fn record_fields(
    plan: &MatchPlan,
    pgnout: bool,
    dump: Option<&DumpSpec>,
    tables: &[(PathBuf, u64)],
) -> Vec<Field> {
    // Files by their bytes (engine executables, parameter files, networks, the book).
    let mut fields: Vec<Field> = plan
        .engines
        .iter()
        .enumerate()
        .map(|(i, e)| super::engine_field(&format!("engine {}", i + 1), "--engine", &e.words))
        .collect();
    fields.push(Field::new("seed", "--seed", plan.seed.into()));
    fields.push(super::book_field(plan.book.as_deref()));
    fields.push(Field::new(
        "adjudication",
        "--resign/--draw/--maxmoves/--tb",
        json(&plan.adjudication),
    ));
    let shown = plan
        .adjudication
        .tb
        .as_ref()
        .map_or("option.SyzygyPath", |t| t.dirs.as_str());
    fields.push(super::tables_field(tables, shown));
    fields.push(Field::new(
        "sprt",
        "--elo0/--elo1/--alpha/--beta/--model",
        json(&plan.sprt),
    ));
    fields.push(Field::new("pgnout", "--pgnout", pgnout.into()));
    let dump = dump.map(|d| {
        let f = &d.filter;
        format!(
            "format={} min-ply={} max-score={} keep-check={} keep-tactical={}",
            d.format.name(),
            f.min_ply,
            f.max_score,
            !f.skip_in_check,
            !f.skip_tactical
        )
    });
    fields.push(Field::new(
        "dump-positions",
        "--dump-positions",
        json(&dump),
    ));
    fields
}

/// A part of the plan as JSON.
fn json<T: serde::Serialize>(v: &T) -> serde_json::Value {
    serde_json::to_value(v).expect("plan parts are json")
}

fn write_json(path: &Path, report: &serde_json::Value) -> CliResult {
    let text = serde_json::to_string_pretty(report).expect("json") + "\n";
    write_atomically(path, &text)
        .map_err(|e| CliError::failure(format!("cannot write --json {}: {e}", path.display())))
}
