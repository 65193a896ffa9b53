//! `spar tune`: SPSA tuning of the builtin engine's parameters by self-play, and
//! `spar tune --plot` to draw a run's trajectory.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use engine::search::Evaluation;

use crate::cli::{AdjudicationArgs, BookArgs, EngineArgs, RunArgs};
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{self, Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::kill_point;
use crate::files::lock::lock_output;
use crate::files::paths::PathCheck;
use crate::files::run_record::{self, Field};
use crate::interrupt;
use crate::plan::{MatchPlan, PlanRequest};
use crate::progress::Progress;
use crate::stdout;
use crate::tune::gains::Gains;
use crate::tune::selfplay::SelfPlay;
use crate::tune::spsa::Spsa;
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
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct TuneArgs {
    /// SPSA input file: one parameter per line (OpenBench or fishtest form).
    #[arg(long, value_name = "FILE")]
    params: Option<PathBuf>,
    /// Tune this registered parameter from its default (repeatable).
    #[arg(long = "param", value_name = "NAME")]
    param: Vec<String>,
    /// Number of iterations N (the schedule depends on it).
    #[arg(long, default_value_t = 25_000)]
    iterations: u64,
    /// Game pairs per iteration (each opening once per colour).
    #[arg(long, default_value_t = 8, value_name = "P")]
    pairs_per_iteration: u64,
    /// Learning-rate decay exponent α.
    #[arg(long, default_value_t = 0.602)]
    alpha: f64,
    /// Perturbation decay exponent γ.
    #[arg(long, default_value_t = 0.101)]
    gamma: f64,
    /// A as a fraction of the iterations.
    #[arg(long, default_value_t = 0.1)]
    a_ratio: f64,
    /// The engine being tuned, in `spar match`'s engine words (default: the builtin engine):
    /// `cmd=PATH` (with `args=`, `dir=`, `option.X=V`) for an external UCI engine, whose
    /// tuned parameters are its `spin` options; combined with --each.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE", action = clap::ArgAction::Set)]
    engine: Vec<String>,
    /// Engine words for both sides: a limit (`nodes=5000`, `tc=8+0.08`, `depth=`,
    /// `movetime=`), `option.Hash=8`, fixed overrides `option.<param>=<v>`, `params=FILE`.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    each: Vec<String>,
    #[command(flatten)]
    book: BookArgs,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    adjudication: AdjudicationArgs,
    /// Trajectory CSV: one row per iteration (θ, c_k, r_k), appended as the run goes.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Continue an interrupted run from its --csv file (same command otherwise).
    #[arg(long, requires = "csv")]
    resume: bool,
    /// Write the final values as `name, value` lines (load with `--engine … params=FILE`):
    /// the averaged θ over the last quarter of the iterations, rounded (the last iterate
    /// is printed beside it).
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Instead of tuning, a preflight: per parameter a match of θ + c_end against θ − c_end
    /// (the others at their start), its Elo gap ± error, flags for steps too small to
    /// measure or without effect, and suggested c_end, r_end and game budget.
    #[arg(long, conflicts_with_all = ["csv", "resume", "out", "plot"])]
    probe: bool,
    /// With --probe: games per parameter (pairs: each opening once per colour).
    #[arg(long, value_name = "N", requires = "probe", default_value_t = tune::probe::DEFAULT_GAMES)]
    probe_games: u64,
    /// Draw the trajectory in this CSV as an SVG instead of tuning.
    #[arg(long, value_name = "CSV", conflicts_with_all = ["params", "param", "resume", "out"])]
    plot: Option<PathBuf>,
    /// With --plot: where to write the SVG (default: the CSV's name with .svg).
    #[arg(long, value_name = "FILE", requires = "plot")]
    svg: Option<PathBuf>,
}

/// Runs `spar tune`.
pub fn run(args: TuneArgs) -> CliResult {
    if let Some(csv) = &args.plot {
        return run_plot(csv, args.svg.as_deref());
    }
    // Before anything is read.
    let mut check = PathCheck::new();
    if let Some(p) = &args.params {
        check.input("--params", p);
    }
    check.engine_words(&args.each);
    check.engine_words(&args.engine);
    check.book_words(args.book.book.as_deref());
    if let Some(c) = &args.csv {
        check.record("--csv", c).locked("--csv", c);
        check.record("--csv record", run_record::path_for(c));
    }
    if let Some(o) = &args.out {
        check.output("--out", o);
    }
    check.check()?;
    // One writer per --csv: a second tune on it is refused before any game.
    let _lock = match &args.csv {
        Some(c) => lock_output(c, "--csv")?,
        None => None,
    };
    let started = Instant::now();
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
            Field::new("seed", "--seed", plan.seed.into()),
            // Files by their bytes (new keys: an older record's paths are not compared).
            match super::words_by_content(&plan.engines[0].words, false) {
                Some(w) => Field::new("each by content", "--each", w.into()),
                None => Field::new("each", "--each", plan.engines[0].words.clone().into()),
            },
            match plan
                .book
                .as_deref()
                .and_then(|b| super::words_by_content(b, true))
            {
                Some(w) => Field::new("book by content", "--book", w.into()),
                None => Field::new("book", "--book", plan.book.clone().into()),
            },
            Field::new(
                "adjudication",
                "--resign/--draw/--maxmoves/--tb",
                serde_json::to_value(&plan.adjudication).expect("json"),
            ),
        ]
    };
    let mut run = run;
    if matches!(run.variants[0].source, Source::Build { .. }) {
        run.build_variants(args.run.quiet)?;
    }
    let variant = run.variants[0].clone();
    let external_engine = matches!(variant.source, Source::Uci { .. });
    let fixed = variant
        .options
        .iter()
        .find(|(o, _)| params.iter().any(|p| p.name.eq_ignore_ascii_case(o)));
    if let (Source::Uci { .. }, Some((name, value))) = (&variant.source, fixed) {
        return Err(CliError::usage(format!(
            "option.{name}={value} fixes a parameter that is tuned: drop the word or the parameter"
        )));
    }
    match &variant.source {
        Source::Uci { .. } => check_uci_options(&variant, &params, run.stall_timeout)?,
        _ if variant.evaluation == Evaluation::Nnue => {
            if let Some(p) = params
                .iter()
                .find(|p| engine::params::spec(&p.name).is_some_and(|s| s.eval))
            {
                return Err(CliError::usage(variant::unused_weight(
                    &p.name,
                    "to --each",
                )));
            }
        }
        _ => {}
    }
    let concurrency = plan.concurrency;
    let quiet = args.run.quiet;
    if pairs_per < concurrency as u64 && !quiet {
        eprintln!(
            "note: --pairs-per-iteration {pairs_per} is below --concurrency {concurrency}: the pairs of an iteration run at once, so {} worker(s) will idle",
            concurrency as u64 - pairs_per
        );
    }
    let (adjudication, book) = (plan.adjudication, run.book);
    if args.probe {
        let pairs = tune::probe::check_games(args.probe_games)?;
        let selfplay = SelfPlay::new(concurrency, variant, adjudication, book, run.stall_timeout)?;
        return run_probe(&selfplay, &params, pairs, concurrency, pairs_per, quiet);
    }

    let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    let starts: Vec<f64> = params.iter().map(|p| p.start).collect();
    let mut spsa = Spsa::new(params, gains, plan.seed);
    // The whole trajectory, for the averaged θ at the end.
    let mut history: Vec<Row> = Vec::new();
    let mut done = 0u64;
    let mut games = 0u64;
    let mut csv = None;
    if let Some(path) = &args.csv {
        if args.resume {
            run_record::check_resume("--csv", path, &fields, quiet)?;
            let (t, rows) = Trajectory::resume(path, &names).map_err(CliError::usage)?;
            let last = rows.last().expect("a start row");
            spsa.set_theta(&last.theta);
            done = last.iteration;
            games = last.games;
            history = rows.clone();
            if !quiet && done > 0 {
                eprintln!(
                    "Resuming after iteration {done} ({games} games) from {}",
                    path.display()
                );
            }
            csv = Some(t);
        } else {
            let start = Row {
                iteration: 0,
                games: 0,
                theta: spsa.theta().to_vec(),
                c: None,
                r: None,
            };
            csv = Some(Trajectory::create(path, &names, &start).map_err(CliError::usage)?);
        }
        // When this session started, for `spar status`'s games/s (not compared on resume).
        let mut extra = serde_json::Map::new();
        extra.insert(
            tune::status::SESSION_KEY.into(),
            tune::status::session_record(games),
        );
        run_record::write("--csv", path, "tune", &fields, extra)?;
    }
    if history.is_empty() {
        history.push(Row {
            iteration: 0,
            games: 0,
            theta: spsa.theta().to_vec(),
            c: None,
            r: None,
        });
    }

    let abort = interrupt::on_ctrl_c("stopping (the unfinished iteration is not counted)");
    let selfplay = SelfPlay::new(concurrency, variant, adjudication, book, run.stall_timeout)?;
    let progress = Progress::new(quiet, "iterations", Some(gains.iterations), done);
    let mut tally = sprt::Trinomial::default();
    let games_before = games;
    let mut failure = None;
    for k in done + 1..=gains.iterations {
        let p = spsa.perturb(k);
        let dev = selfplay.values(&names, &p.dev)?;
        let base = selfplay.values(&names, &p.base)?;
        let pairs = (k - 1) * pairs_per..k * pairs_per;
        let on_game = || {};
        let Some(s) = selfplay.play(pairs, &dev, &base, &abort, &on_game) else {
            break;
        };
        spsa.update(&p, (s.wins as i64 - s.losses as i64) as f64);
        tally += s;
        games += s.games();
        done = k;
        let row = Row {
            iteration: k,
            games,
            theta: spsa.theta().to_vec(),
            c: Some(p.c.clone()),
            r: Some(p.r.clone()),
        };
        if let Some(t) = &mut csv {
            if let Err(e) = t.append(&row) {
                failure = Some(e);
                break;
            }
            kill_point::record_written();
        }
        history.push(row);
        progress.set_position(k);
        progress.set_message(&theta_line(&names, spsa.theta()));
    }
    progress.finish();
    let interrupted = abort.load(Ordering::SeqCst);

    // The averaged θ (what --out writes) beside the last iterate.
    let (values, finals) = report::tune_values(&names, &starts, &history, external_engine);
    let elapsed = started.elapsed().as_secs_f64();
    let played = games - games_before;
    let text = format!(
        "SPSA: {done}/{} iterations, {games} games ({played} this session in {elapsed:.1} s, {:.2} games/s); dev vs base W-D-L {}-{}-{}\n{values}",
        gains.iterations,
        played as f64 / elapsed.max(1e-9),
        tally.wins,
        tally.draws,
        tally.losses,
    );
    // The values are written even when standard output is gone.
    let printed = stdout::print(&text);
    if let Some(path) = &args.out {
        write_atomically(path, &report::openbench_lines(&finals)).map_err(|e| {
            CliError::failure(format!("cannot write --out {}: {e}", path.display()))
        })?;
        printed.clone()?;
        stdout::print(&format!("\nWrote {}\n", path.display()))?;
    }
    printed?;
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
            message: format!("interrupted after iteration {done}; {how}"),
            code: 130,
        });
    }
    Ok(())
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

/// `spar tune --probe`: plays the probe and prints its report.
fn run_probe(
    selfplay: &SelfPlay,
    params: &[SpsaParam],
    pairs: u64,
    threads: usize,
    pairs_per_iteration: u64,
    quiet: bool,
) -> CliResult {
    let abort = interrupt::on_ctrl_c("stopping the probe");
    let total = 2 * pairs * params.len() as u64;
    let progress = Progress::new(quiet, "games", Some(total), 0);
    let (rows, stopped) = tune::probe::play(selfplay, params, pairs, threads, &abort, &progress)?;
    progress.finish();
    stdout::print_lines(&tune::probe::lines(&rows, pairs, pairs_per_iteration))?;
    if stopped {
        return Err(CliError {
            message: format!(
                "interrupted: {} of {} parameters probed",
                rows.len(),
                params.len()
            ),
            code: 130,
        });
    }
    Ok(())
}
