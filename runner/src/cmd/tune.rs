//! `spar tune`: SPSA tuning of the builtin engine's parameters by self-play, and
//! `spar tune --plot` to draw a run's trajectory.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use engine::search::Evaluation;

use super::tune_cluster;
use crate::cli::{AdjudicationArgs, BookArgs, EngineArgs, RunArgs, SlurmArgs};
use crate::cluster::manifest::MAX_TOTAL;
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{self, Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::kill_point;
use crate::files::lock::lock_output;
use crate::files::paths::PathCheck;
use crate::files::run_record::{self, Field};
use crate::interrupt;
use crate::plan::Run;
use crate::plan::{MatchPlan, PlanRequest};
use crate::play::game::PlayedGame;
use crate::progress::Progress;
use crate::stdout;
use crate::tune::crash::{crash_file, Crashes};
use crate::tune::driver::{self, Sink};
use crate::tune::gains::Gains;
use crate::tune::schedule::{Schedule, Tuner};
use crate::tune::selfplay::{tally, SelfPlay};
use crate::tune::spsa::{Perturbation, Spsa};
use crate::tune::spsa_params::{self, SpsaParam};
use crate::tune::trajectory::{self, Row, Trajectory};
use crate::tune::{self, plot, report};

/// Tune parameters of the builtin engine, or the spin options of an external UCI engine,
/// by SPSA self-play, as OpenBench does.
///
///   spar tune --param rfp_margin --param lmr_base --each nodes=5000 --iterations 2000 --csv run.csv
///
///   spar tune --params spsa.txt --each tc=8+0.08 --csv run.csv --out tuned.txt
///
///   spar tune --params spsa.txt --engine cmd=./myengine option.Hash=8 --each nodes=5000 --csv run.csv
///
///   spar tune --plot run.csv                 (writes run.svg)
///
///   spar tune --params spsa.txt --each nodes=5000 --probe   (preflight: is c_end measurable?)
///
/// `--params FILE` takes OpenBench lines `name, int, start, min, max, c_end, r_end` (as
/// `spar params --search` prints them) or fishtest lines `name, start, min, max, c_end,
/// r_end`; `--param NAME` takes a parameter's registered default, range and step sizes.
/// For an external engine (`cmd=`) a parameter is a `spin` option of the engine, sent with
/// `setoption` before each game; each is checked against the engine's `uci` answer first.
/// Each iteration plays --pairs-per-iteration game pairs (in parallel) between θ + c_k·Δ
/// and θ − c_k·Δ for a random ±1 vector Δ, then moves θ by r_k·c_k·(W − L)·Δ.
/// At the end the averaged θ over the last quarter of the iterations is printed beside the
/// last iterate, with an error bar per parameter; `spar status run.csv` shows a run's state.
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[command(verbatim_doc_comment)]
pub struct TuneArgs {
    /// SPSA input file: one parameter per line (OpenBench or fishtest form).
    #[arg(long, value_name = "FILE")]
    pub(crate) params: Option<PathBuf>,
    /// Tune this registered parameter from its default (repeatable).
    #[arg(long = "param", value_name = "NAME")]
    pub(crate) param: Vec<String>,
    /// Number of iterations N (the schedule depends on it).
    #[arg(long, default_value_t = 25_000)]
    pub(crate) iterations: u64,
    /// Game pairs per iteration (each opening once per colour).
    #[arg(long, default_value_t = 8, value_name = "P")]
    pub(crate) pairs_per_iteration: u64,
    /// Learning-rate decay exponent α.
    #[arg(long, default_value_t = 0.602)]
    pub(crate) alpha: f64,
    /// Perturbation decay exponent γ.
    #[arg(long, default_value_t = 0.101)]
    pub(crate) gamma: f64,
    /// A as a fraction of the iterations.
    #[arg(long, default_value_t = 0.1)]
    pub(crate) a_ratio: f64,
    /// Iterations that may play ahead of the last complete one: iteration j plays from θ
    /// after iteration j − 1 − D, so D + 1 iterations run at once (on threads or shards).
    /// Part of the schedule: the same seed and options give the same trajectory whatever
    /// the threads or shards; 0 is sequential SPSA (docs/tuning.md).
    #[arg(long, default_value_t = 0, value_name = "D")]
    #[serde(default)]
    pub(crate) delay: u64,
    /// The engine being tuned, in `spar match`'s engine words (default: the builtin engine):
    /// `cmd=PATH` (with `args=`, `dir=`, `option.X=V`) for an external UCI engine, whose
    /// tuned parameters are its `spin` options; combined with --each.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE", action = clap::ArgAction::Set)]
    pub(crate) engine: Vec<String>,
    /// Engine words for both sides: a limit (`nodes=5000`, `tc=8+0.08`, `depth=`,
    /// `movetime=`), `option.Hash=8`, fixed overrides `option.<param>=<v>`, `params=FILE`.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub(crate) each: Vec<String>,
    #[command(flatten)]
    pub(crate) book: BookArgs,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    #[command(flatten)]
    pub(crate) adjudication: AdjudicationArgs,
    /// Trajectory CSV: one row per iteration (θ, c_k, r_k), appended as the run goes.
    #[arg(long, value_name = "FILE")]
    pub(crate) csv: Option<PathBuf>,
    /// Continue an interrupted run from its --csv file (same command otherwise); with
    /// --slurm, reattach to the run in --run-dir.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Write the final values as `name, value` lines (load with `--engine … params=FILE`):
    /// the averaged θ over the last quarter of the iterations, rounded (the last iterate
    /// is printed beside it).
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Instead of tuning, a preflight: per parameter a match of θ + c_end against θ − c_end
    /// (the others at their start), its Elo gap ± error, flags for steps too small to
    /// measure or without effect, and suggested c_end, r_end and game budget.
    #[arg(long, conflicts_with_all = ["csv", "resume", "out", "plot", "slurm"])]
    #[serde(default)]
    pub(crate) probe: bool,
    /// With --probe: games per parameter (pairs: each opening once per colour).
    #[arg(long, value_name = "N", requires = "probe", default_value_t = tune::probe::DEFAULT_GAMES)]
    #[serde(default)]
    pub(crate) probe_games: u64,
    /// Draw the trajectory in this CSV as an SVG instead of tuning.
    #[arg(long, value_name = "CSV", conflicts_with_all = ["params", "param", "resume", "out"])]
    pub(crate) plot: Option<PathBuf>,
    /// With --plot: where to write the SVG (default: the CSV's name with .svg).
    #[arg(long, value_name = "FILE", requires = "plot")]
    pub(crate) svg: Option<PathBuf>,
    #[command(flatten)]
    #[serde(default)]
    pub(crate) verify: VerifyArgs,
    #[command(flatten)]
    #[serde(default)]
    pub(crate) slurm: SlurmArgs,
}

/// The SPRT of the tuned values against the start values that ends a tune.
#[derive(clap::Args, Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct VerifyArgs {
    /// Skip the verification SPRT (tuned against start) at the end of the run.
    #[arg(long)]
    #[serde(default)]
    pub no_verify: bool,
    /// Limit words of the verification games instead of the tune's (e.g. `tc=10+0.1`, to
    /// verify at a longer time control); other --each words are kept.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    #[serde(default)]
    pub verify_each: Vec<String>,
    /// Elo of the verification SPRT's null hypothesis [default: 0].
    #[arg(long, value_name = "ELO", allow_hyphen_values = true)]
    #[serde(default)]
    pub verify_elo0: Option<f64>,
    /// Elo of the verification SPRT's alternative [default: 5].
    #[arg(long, value_name = "ELO", allow_hyphen_values = true)]
    #[serde(default)]
    pub verify_elo1: Option<f64>,
    /// At most this many verification games (the SPRT may end undecided).
    #[arg(long, value_name = "N")]
    #[serde(default)]
    pub verify_games: Option<u64>,
}

/// Runs `spar tune`.
pub fn run(args: TuneArgs) -> CliResult {
    if let Some(csv) = &args.plot {
        return run_plot(csv, args.svg.as_deref());
    }
    if args.slurm.slurm {
        return tune_cluster::coordinate(args);
    }
    args.slurm.check_local()?;
    if args.resume && args.csv.is_none() {
        return Err(CliError::usage(
            "--resume needs --csv FILE: the trajectory the run continues from",
        ));
    }
    local(args)
}

/// Everything a tune needs, checked, before any engine starts.
pub(crate) struct Setup {
    /// The tuned parameters.
    pub params: Vec<SpsaParam>,
    /// Their names.
    pub names: Vec<String>,
    /// The gain schedule.
    pub gains: Gains,
    /// Iterations, pairs per iteration, delay.
    pub schedule: Schedule,
    /// The plan (one engine: both sides run it).
    pub plan: MatchPlan,
    /// The engine, book and watchdog.
    pub run: Run,
    /// What `--resume` compares.
    pub fields: Vec<Field>,
}

impl Setup {
    /// A new run's state at its start values.
    pub fn tuner(&self) -> Tuner {
        Tuner::new(
            Spsa::new(self.params.clone(), self.gains, self.plan.seed),
            self.schedule,
        )
    }

    /// The run continued from its trajectory rows.
    pub fn resumed(&self, rows: &[Row]) -> Tuner {
        Tuner::resume(
            Spsa::new(self.params.clone(), self.gains, self.plan.seed),
            self.schedule,
            rows,
        )
    }

    /// Whether the tuned engine is an external UCI engine (parameters are its options).
    pub fn external(&self) -> bool {
        matches!(self.run.variants[0].source, Source::Uci { .. })
    }
}

/// Reads the parameters and checks the options and the plan; nothing is started.
pub(crate) fn setup(args: &TuneArgs) -> CliResult<Setup> {
    // An external engine's parameters are its UCI options, checked against its `uci` answer
    // once the engine is known; the builtin engine's (and a spar build's) are registered.
    let external = args
        .each
        .iter()
        .chain(&args.engine)
        .any(|w| w.starts_with("cmd="));
    let mut params: Vec<SpsaParam> = match &args.params {
        Some(path) => spsa_params::load(path, external).map_err(CliError::usage)?,
        None => Vec::new(),
    };
    for name in &args.param {
        if params.iter().any(|p| &p.name == name) {
            return Err(CliError::usage(format!(
                "--param {name}: already listed (in --params or an earlier --param)"
            )));
        }
        params.push(SpsaParam::from_registry(name).map_err(CliError::usage)?);
    }
    if params.is_empty() {
        return Err(CliError::usage(
            "nothing to tune: give --params FILE (OpenBench SPSA lines) or --param NAME (e.g. --param rfp_margin)",
        ));
    }
    let gains = Gains {
        iterations: args.iterations,
        alpha: args.alpha,
        gamma: args.gamma,
        a_ratio: args.a_ratio,
    };
    gains.check().map_err(CliError::usage)?;
    let pairs_per = args.pairs_per_iteration;
    if pairs_per == 0 {
        return Err(CliError::usage("--pairs-per-iteration must be at least 1"));
    }
    let total = args
        .iterations
        .checked_mul(pairs_per)
        .filter(|&t| t <= MAX_TOTAL);
    if total.is_none() {
        return Err(CliError::usage(format!(
            "--iterations {} × --pairs-per-iteration {pairs_per} is more pairs than a run can have ({MAX_TOTAL})",
            args.iterations
        )));
    }
    if args.delay >= args.iterations {
        return Err(CliError::usage(format!(
            "--delay {}: must be below --iterations {} (a few iterations: e.g. --delay 4)",
            args.delay, args.iterations
        )));
    }
    let schedule = Schedule {
        iterations: args.iterations,
        pairs_per_iteration: pairs_per,
        delay: args.delay,
    };
    let engines = EngineArgs {
        engines: if args.engine.is_empty() {
            Vec::new()
        } else {
            vec![args.engine.clone()]
        },
        each: args.each.clone(),
    };
    let (plan, run) = MatchPlan::build(&PlanRequest {
        engines: &engines,
        seats: 0..=1,
        example: "--each nodes=5000",
        run: &args.run,
        games: None,
        default_games: None,
        book: &args.book,
        adjudication: args.adjudication.rules()?,
        failure: None,
        recover_by_default: false,
        sprt: None,
    })?;
    let fields = {
        let params: Vec<String> = params
            .iter()
            .map(|p| {
                format!(
                    "{} {} {} {} {} {}",
                    p.name, p.start, p.min, p.max, p.c_end, p.r_end
                )
            })
            .collect();
        vec![
            Field::new("params", "--params/--param", params.into()),
            Field::new("iterations", "--iterations", args.iterations.into()),
            Field::new(
                "pairs-per-iteration",
                "--pairs-per-iteration",
                pairs_per.into(),
            ),
            Field::new("alpha", "--alpha", args.alpha.into()),
            Field::new("gamma", "--gamma", args.gamma.into()),
            Field::new("a-ratio", "--a-ratio", args.a_ratio.into()),
            // Before --delay, every tune was sequential.
            Field::new("delay", "--delay", args.delay.into()).absent_as(0.into()),
            Field::new("seed", "--seed", plan.seed.into()),
            // Files by their bytes (executables, parameter files, networks, the book).
            super::engine_field(
                "each",
                if args.engine.is_empty() {
                    "--each"
                } else {
                    "--engine"
                },
                &plan.engines[0].words,
            ),
            super::book_field(plan.book.as_deref()),
            Field::new(
                "adjudication",
                "--resign/--draw/--maxmoves/--tb",
                serde_json::to_value(&plan.adjudication).expect("json"),
            ),
            super::tables_field(
                &super::table_files(plan.adjudication.tb.as_ref(), &run.variants),
                plan.adjudication
                    .tb
                    .as_ref()
                    .map_or("option.SyzygyPath", |t| t.dirs.as_str()),
            ),
        ]
    };
    let names = params.iter().map(|p| p.name.clone()).collect();
    Ok(Setup {
        params,
        names,
        gains,
        schedule,
        plan,
        run,
        fields,
    })
}

/// Checks the engine against the parameters: an external engine's `uci` options, the
/// builtin engine's evaluation.
pub(crate) fn check_engine(s: &Setup) -> CliResult {
    let variant = &s.run.variants[0];
    let fixed = variant
        .options
        .iter()
        .find(|(o, _)| s.params.iter().any(|p| p.name.eq_ignore_ascii_case(o)));
    if let (Source::Uci { .. }, Some((name, value))) = (&variant.source, fixed) {
        return Err(CliError::usage(format!(
            "option.{name}={value} fixes a parameter that is tuned: drop the word or the parameter"
        )));
    }
    match &variant.source {
        Source::Uci { .. } => check_uci_options(variant, &s.params, s.run.stall_timeout),
        _ if variant.evaluation == Evaluation::Nnue => {
            match s
                .params
                .iter()
                .find(|p| engine::params::spec(&p.name).is_some_and(|s| s.eval))
            {
                Some(p) => Err(CliError::usage(variant::unused_weight(
                    &p.name,
                    "to --each",
                ))),
                None => Ok(()),
            }
        }
        _ => Ok(()),
    }
}

/// The files a tune reads and writes, checked before anything is read.
pub(crate) fn check_paths(args: &TuneArgs) -> CliResult {
    let mut check = PathCheck::new();
    if let Some(p) = &args.params {
        check.input("--params", p);
    }
    check.engine(&args.engine, &args.each);
    check.book_words(args.book.book.as_deref());
    check.tb_words(args.adjudication.tb.as_deref());
    if let Some(dir) = args.slurm.run_dir.as_ref().filter(|_| args.slurm.slurm) {
        check.run_dir(dir);
    }
    if let Some(c) = &args.csv {
        check.record("--csv", c).locked("--csv", c);
        check.record("--csv record", run_record::path_for(c));
        check.record("--csv crash record", crash_file(c));
        if !args.verify.no_verify {
            let v = verify_files(c);
            check.record("--csv verification", &v.results);
            check.output("--csv verification summary", &v.json);
        }
    }
    if let Some(o) = &args.out {
        check.output("--out", o);
    }
    check.check()
}

/// A local tune: the schedule on this machine's threads.
fn local(args: TuneArgs) -> CliResult {
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

/// The final values of a run whose trajectory is `rows` (row 0 the start): the text printed
/// at the end (the averaged θ beside the last iterate, see [`report::tune_values`]) and the
/// averaged values, rounded — what `--out` writes and the verification plays.
pub(crate) fn tuned_values(s: &Setup, rows: &[Row]) -> (String, Vec<(String, i64)>) {
    let starts: Vec<f64> = s.params.iter().map(|p| p.start).collect();
    report::tune_values(&s.names, &starts, rows, s.external())
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
/// Starts the external engine once and checks that every tuned parameter is one of its
/// `spin` options and that the parameter's range lies within the option's.
fn check_uci_options(variant: &Variant, params: &[SpsaParam], stall: Duration) -> CliResult {
    let engine = UciPlayer::new(variant, stall).map_err(CliError::usage)?;
    let offered = engine.offered_options();
    let spins = || {
        let names: Vec<&str> = offered
            .iter()
            .filter(|o| o.kind == "spin")
            .map(|o| o.name.as_str())
            .collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    for p in params {
        let name = &p.name;
        let Some(o) = offered.iter().find(|o| o.name.eq_ignore_ascii_case(name)) else {
            return Err(CliError::usage(format!(
                "parameter '{name}': engine '{}' has no UCI option '{name}'; tune one of its spin options: {}",
                variant.name,
                spins()
            )));
        };
        if o.kind != "spin" {
            return Err(CliError::usage(format!(
                "parameter '{name}': engine '{}' offers '{}' as a '{}' option, and SPSA tunes integer (spin) options only; drop it from --params/--param (its spin options: {})",
                variant.name,
                o.name,
                o.kind,
                spins()
            )));
        }
        let (Some(lo), Some(hi)) = (o.min, o.max) else {
            return Err(CliError::usage(format!(
                "parameter '{name}': engine '{}' announces spin option '{}' without min and max; spar cannot check the range",
                variant.name, o.name
            )));
        };
        if p.min < lo as f64 || p.max > hi as f64 {
            return Err(CliError::usage(format!(
                "parameter '{name}': range {}..{} is outside engine '{}''s spin option '{}' (min {lo}, max {hi}); narrow it in --params to lie within {lo}..{hi}",
                p.min, p.max, variant.name, o.name
            )));
        }
    }
    Ok(())
}

fn run_plot(csv: &Path, svg: Option<&Path>) -> CliResult {
    let out = svg.map_or_else(|| csv.with_extension("svg"), Path::to_path_buf);
    PathCheck::new()
        .input("--plot", csv)
        .output("--svg", &out)
        .check()?;
    let contents = trajectory::read(csv).map_err(|e| CliError::usage(format!("--plot: {e}")))?;
    if contents.rows.is_empty() {
        return Err(CliError::usage(format!(
            "--plot {}: no rows to draw",
            csv.display()
        )));
    }
    let title = format!(
        "SPSA trajectory: {} ({} iterations)",
        csv.file_name()
            .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
        contents.rows.last().map_or(0, |r| r.iteration)
    );
    write_atomically(&out, &plot::svg(&contents, &title))
        .map_err(|e| CliError::failure(format!("cannot write {}: {e}", out.display())))?;
    stdout::print(&format!("Wrote {}\n", out.display()))
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

/// The files of the verification SPRT of a local run whose trajectory is `csv`.
pub(crate) struct VerifyFiles {
    /// Its results CSV (resumable).
    pub results: PathBuf,
    /// Its JSON summary (holds the verdict).
    pub json: PathBuf,
}

/// `CSV.verify.csv` and `CSV.verify.json`.
pub(crate) fn verify_files(csv: &Path) -> VerifyFiles {
    let with = |suffix: &str| {
        let mut name = csv.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        csv.with_file_name(name)
    };
    VerifyFiles {
        results: with(".verify.csv"),
        json: with(".verify.json"),
    }
}

/// Engine words that set a limit (replaced by `--verify-each`'s).
fn is_limit(word: &str) -> bool {
    ["nodes=", "depth=", "movetime=", "st=", "tc="]
        .iter()
        .any(|k| word.starts_with(k))
}

/// The `spar sprt` arguments of the verification (tuned against start) of a tune, without
/// its output files and cluster options.
pub(crate) fn verify_argv(args: &TuneArgs, s: &Setup, finals: &[(String, i64)]) -> Vec<String> {
    let v = &args.verify;
    let words: Vec<String> = s.plan.engines[0]
        .words
        .iter()
        .filter(|w| !w.starts_with("name="))
        .filter(|w| v.verify_each.is_empty() || !is_limit(w))
        .cloned()
        .collect();
    let start: Vec<(String, i64)> = s
        .params
        .iter()
        .map(|p| (p.name.clone(), p.start.round() as i64))
        .collect();
    let mut argv: Vec<String> = vec!["sprt".into()];
    for (name, values) in [("tuned", finals), ("start", &start[..])] {
        argv.push("--engine".into());
        argv.push(format!("name={name}"));
        argv.extend(words.iter().cloned());
        argv.extend(values.iter().map(|(n, x)| format!("option.{n}={x}")));
    }
    if !v.verify_each.is_empty() {
        argv.push("--each".into());
        argv.extend(v.verify_each.iter().cloned());
    }
    if let Some(b) = &args.book.book {
        argv.push("--book".into());
        argv.extend(b.iter().cloned());
    }
    let a = &args.adjudication;
    for (flag, w) in [
        ("--resign", &a.resign),
        ("--draw", &a.draw),
        ("--tb", &a.tb),
    ] {
        if let Some(w) = w {
            argv.push(flag.into());
            argv.extend(w.iter().cloned());
        }
    }
    if let Some(m) = a.maxmoves {
        argv.extend(["--maxmoves".to_string(), m.to_string()]);
    }
    argv.extend([
        "--seed".to_string(),
        s.plan.seed.to_string(),
        "--elo0".to_string(),
        v.verify_elo0.unwrap_or(0.0).to_string(),
        "--elo1".to_string(),
        v.verify_elo1.unwrap_or(5.0).to_string(),
    ]);
    if let Some(g) = v.verify_games {
        argv.extend(["--games".to_string(), g.to_string()]);
    }
    if args.run.quiet {
        argv.push("--quiet".into());
    }
    argv
}

/// `spar sprt`'s arguments, parsed.
#[derive(clap::Parser, Debug)]
#[command(name = "spar")]
struct SprtCommand {
    #[command(subcommand)]
    sprt: SprtSub,
}

#[derive(clap::Subcommand, Debug)]
enum SprtSub {
    Sprt(super::matches::MatchArgs),
}

/// Runs `spar sprt` with these arguments (without the program name).
pub(crate) fn run_sprt(argv: &[String]) -> CliResult {
    super::matches::run(parse_sprt(argv)?, true)
}

/// Checks the verification SPRT's options (`--verify-*` with the tune's engine, book and
/// adjudication) before the tune's first game, as the SPRT at its end will read them: the
/// same arguments with the start values where the tuned ones will be (both lie in every
/// parameter's range). Nothing to check with `--no-verify` or `--probe`.
pub(crate) fn check_verification(args: &TuneArgs, s: &Setup) -> CliResult {
    if args.verify.no_verify || args.probe {
        return Ok(());
    }
    let start: Vec<(String, i64)> = s
        .params
        .iter()
        .map(|p| (p.name.clone(), p.start.round() as i64))
        .collect();
    let parsed = parse_sprt(&verify_argv(args, s, &start))?;
    super::matches::check(&parsed, true).map_err(|e| {
        CliError::usage(format!(
            "the verification SPRT's options: {} (or --no-verify to skip it)",
            verify_words(&e.message, &args.verify)
        ))
    })
}

/// A message of `spar sprt` in the words of the tune's options: the SPRT's bounds are
/// `--verify-elo0/--verify-elo1`, its engine words `--verify-each`'s, its `--games`
/// `--verify-games`.
fn verify_words(message: &str, v: &VerifyArgs) -> String {
    let (head, rest) = message.split_once(": ").unwrap_or(("", message));
    let head = if head.starts_with("SPRT ") {
        format!(
            "--verify-elo0 {} --verify-elo1 {}",
            v.verify_elo0.unwrap_or(0.0),
            v.verify_elo1.unwrap_or(5.0)
        )
    } else if head.starts_with("--engine ") && !v.verify_each.is_empty() {
        format!("--verify-each {}", v.verify_each.join(" "))
    } else {
        head.replace("--games", "--verify-games")
    };
    let rest = rest.replace("--games", "--verify-games");
    if head.is_empty() {
        rest
    } else {
        format!("{head}: {rest}")
    }
}

/// `spar sprt`'s arguments (without the program name), parsed.
fn parse_sprt(argv: &[String]) -> CliResult<super::matches::MatchArgs> {
    use clap::Parser;
    let parsed = SprtCommand::try_parse_from(
        std::iter::once("spar".to_string()).chain(argv.iter().cloned()),
    )
    .map_err(|e| {
        let text = e.to_string();
        CliError::usage(format!(
            "the verification SPRT's options: {}",
            text.lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
        ))
    })?;
    let SprtSub::Sprt(args) = parsed.sprt;
    Ok(args)
}

/// The verdict in a verification's JSON summary: the summary object, or `None` when the
/// file cannot be read.
pub(crate) fn read_verdict(json: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(json).ok()?;
    serde_json::from_str(&text).ok()
}

/// The one line a verdict prints.
pub(crate) fn verdict_line(v: &serde_json::Value) -> String {
    let decision = v
        .get("decision")
        .and_then(|d| d.as_str())
        .unwrap_or("continue");
    let what = match decision {
        "H1" => "passed (H1: the tuned values are better)",
        "H0" => "failed (H0: the tuned values are not better; keep the start values)",
        _ => "undecided (no verdict within --verify-games)",
    };
    let games = v
        .get("games")
        .and_then(|g| g.as_u64())
        .map_or(String::new(), |g| format!(" after {g} games"));
    format!("Verification SPRT tuned vs start: {what}{games}")
}

/// The verification of a local run: an SPRT of the tuned values against the start values
/// on this machine; returns its summary.
fn verify_local(
    args: &TuneArgs,
    s: &Setup,
    finals: &[(String, i64)],
) -> CliResult<Option<serde_json::Value>> {
    let mut argv = verify_argv(args, s, finals);
    argv.extend(["--concurrency".to_string(), s.plan.concurrency.to_string()]);
    let scratch;
    let json = match &args.csv {
        Some(csv) => {
            let f = verify_files(csv);
            argv.push("--results".into());
            argv.push(f.results.to_string_lossy().into_owned());
            argv.push("--resume".into());
            f.json
        }
        None => {
            scratch = tempfile::tempdir().map_err(|e| {
                CliError::failure(format!("cannot make a temporary directory: {e}"))
            })?;
            scratch.path().join("verify.json")
        }
    };
    argv.push("--json".into());
    argv.push(json.to_string_lossy().into_owned());
    if !args.run.quiet {
        eprintln!(
            "\nVerifying: SPRT [{}, {}] of the tuned values against the start values (--no-verify skips it)",
            args.verify.verify_elo0.unwrap_or(0.0),
            args.verify.verify_elo1.unwrap_or(5.0)
        );
    }
    stdout::print("\n")?;
    run_sprt(&argv)?;
    let verdict = read_verdict(&json);
    if let Some(v) = &verdict {
        stdout::print(&format!("{}\n", verdict_line(v)))?;
    }
    Ok(verdict)
}

/// The run record's extras of a local session: when it started and the games before it
/// (`spar status`'s games/s; not compared on `--resume`).
fn session(games_before: u64) -> serde_json::Map<String, serde_json::Value> {
    let mut extra = serde_json::Map::new();
    extra.insert(
        tune::status::SESSION_KEY.into(),
        tune::status::session_record(games_before),
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
