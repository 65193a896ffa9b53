//! `spar match` and `spar sprt`: parallel self-play between two engine variants.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sprt::{Decision, Model, Sample, Sprt};

use crate::cmd::stats::{self, Request};
use crate::engines::git_build;
use crate::engines::player::{BuiltinPlayer, Player};
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{parse_variant, Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::book::OpeningBook;
use crate::files::match_files::MatchFiles;
use crate::files::position_dump::PositionDump;
use crate::play::adjudication::Adjudication;
use crate::play::game::Termination;
use crate::play::schedule::{self, Control, PairOutcome, Schedule};
use crate::play::tally::{GameSummary, Tally};
use crate::progress::Progress;

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
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct MatchArgs {
    /// An engine: key=value words (give --engine twice).
    #[arg(long = "engine", id = "engine", num_args = 1.., action = clap::ArgAction::Append, value_name = "KEY=VALUE", required = true)]
    engine_words: Vec<String>,
    /// The `--engine` words grouped per occurrence (filled from the parsed matches).
    #[arg(skip)]
    pub engines: Vec<Vec<String>>,
    /// Words applied to every engine, e.g. `nodes=5000` or `tc=10+0.1`.
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    each: Vec<String>,
    /// Number of games (even: N/2 pairs, each opening once per colour). `spar sprt`
    /// without it runs until the SPRT decides; `spar match` defaults to 100.
    #[arg(long)]
    games: Option<u64>,
    /// Games played at once (default: all cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Seed of the opening order and of everything random.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Opening book: `FILE [format=epd|pgn] [order=random|sequential] [plies=N] [start=K]`
    /// (default: the built-in balanced book, random order).
    #[arg(long, num_args = 1.., value_name = "FILE [KEY=VALUE]")]
    book: Option<Vec<String>>,
    /// Resign adjudication: `movecount=3 score=600 [twosided=true]`.
    #[arg(long, num_args = 0.., value_name = "KEY=VALUE")]
    resign: Option<Vec<String>>,
    /// Draw adjudication: `movenumber=34 movecount=8 score=20`.
    #[arg(long, num_args = 0.., value_name = "KEY=VALUE")]
    draw: Option<Vec<String>>,
    /// Adjudicate a draw after this many moves (per side).
    #[arg(long, value_name = "N")]
    maxmoves: Option<u32>,
    /// Append every game to this PGN file.
    #[arg(long, value_name = "FILE")]
    pgnout: Option<PathBuf>,
    /// Record training positions of every game: `FILE [format=viriformat|text|both]
    /// [min-ply=16] [max-score=3000] [keep-check=false] [keep-tactical=false]`.
    #[arg(long, num_args = 1.., value_name = "FILE [KEY=VALUE]")]
    dump_positions: Option<Vec<String>>,
    /// Append one CSV row per game to this file (the record `--resume` continues from).
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
    /// Write the final summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Continue an interrupted run from its --results file (same command otherwise).
    #[arg(long, requires = "results")]
    resume: bool,
    /// No progress display (the final summary is still printed).
    #[arg(long)]
    quiet: bool,
    /// Format of the final summary.
    #[arg(long, value_enum, default_value = "cutechess")]
    output: OutputFormat,
    /// After a crash or hang, restart the engine and go on (default for `spar sprt`).
    #[arg(long, overrides_with = "no_recover")]
    recover: bool,
    /// Stop the match when an engine crashes or hangs (default for `spar match`).
    #[arg(long)]
    no_recover: bool,
    /// Seconds an external engine may stay silent under node or depth limits before it is
    /// killed and forfeits.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    stall_timeout: f64,
    /// SPRT: Elo difference of the null hypothesis (in --model units; default 0).
    #[arg(long, allow_negative_numbers = true)]
    elo0: Option<f64>,
    /// SPRT: Elo difference of the alternative hypothesis (default 5).
    #[arg(long, allow_negative_numbers = true)]
    elo1: Option<f64>,
    /// SPRT: false positive rate.
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// SPRT: false negative rate.
    #[arg(long, default_value_t = 0.05)]
    beta: f64,
    /// SPRT: Elo model of the bounds: normalized, logistic or bayesian.
    #[arg(long, default_value = "normalized")]
    model: String,
}

/// SPRT bounds when none are given: [0, 5] in the units of --model (normalized by default),
/// a common "gainer" test.
const DEFAULT_BOUNDS: (f64, f64) = (0.0, 5.0);

/// Summary formats.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    /// cutechess-cli lines.
    Cutechess,
    /// fastchess lines.
    Fastchess,
}

/// Everything checked before the first game.
struct Plan {
    variants: [Variant; 2],
    pairs: Option<u64>,
    concurrency: usize,
    adjudication: Adjudication,
    sprt: Option<Sprt>,
    recover: bool,
    stall_timeout: Duration,
    book: OpeningBook,
}

fn plan(args: &MatchArgs, is_sprt: bool) -> CliResult<Plan> {
    if args.engines.len() != 2 {
        return Err(CliError::usage(format!(
            "give exactly two --engine options (got {}), e.g. --engine name=dev option.rfp_margin=90 --engine name=base",
            args.engines.len()
        )));
    }
    let mut variants = Vec::new();
    for (i, words) in args.engines.iter().enumerate() {
        let v = parse_variant(words, &args.each, i)
            .map_err(|e| CliError::usage(format!("--engine {}: {e}", words.join(" "))))?;
        variants.push(v);
    }
    if variants[0].name == variants[1].name {
        let n = variants[0].name.clone();
        variants[0].name = format!("{n}-1");
        variants[1].name = format!("{n}-2");
    }
    for v in &variants {
        if let Source::Uci { cmd, .. } = &v.source {
            if which(cmd).is_none() {
                return Err(CliError::usage(format!(
                    "engine '{}': cannot find executable '{cmd}' (give a path or put it on PATH)",
                    v.name
                )));
            }
        }
    }
    let pairs = match args.games {
        Some(0) => return Err(CliError::usage("--games must be at least 2")),
        Some(n) if n % 2 == 1 => {
            return Err(CliError::usage(format!(
                "--games {n} is odd: games are played in pairs (each opening once per colour); use {} or {}",
                n - 1,
                n + 1
            )))
        }
        Some(n) => Some(n / 2),
        None if is_sprt => None,
        None => Some(50),
    };
    let sprt = match (args.elo0, args.elo1) {
        (Some(e0), Some(e1)) => {
            if !is_sprt {
                return Err(CliError::usage("--elo0/--elo1 belong to `spar sprt`; `spar match` plays a fixed number of games"));
            }
            let model: Model = args
                .model
                .parse()
                .map_err(|e| CliError::usage(format!("--model {}: {e}", args.model)))?;
            Some(
                Sprt::new(e0, e1, args.alpha, args.beta, model).map_err(|e| {
                    CliError::usage(format!(
                        "SPRT --elo0 {e0} --elo1 {e1} --alpha {} --beta {}: {e}",
                        args.alpha, args.beta
                    ))
                })?,
            )
        }
        (None, None) if is_sprt => {
            let model: Model = args
                .model
                .parse()
                .map_err(|e| CliError::usage(format!("--model {}: {e}", args.model)))?;
            let (e0, e1) = DEFAULT_BOUNDS;
            Some(
                Sprt::new(e0, e1, args.alpha, args.beta, model)
                    .map_err(|e| CliError::usage(e.to_string()))?,
            )
        }
        (None, None) => None,
        _ => return Err(CliError::usage("give both --elo0 and --elo1")),
    };
    let concurrency = match args.concurrency {
        Some(0) => return Err(CliError::usage("--concurrency must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let adjudication =
        Adjudication::from_words(args.resign.as_deref(), args.draw.as_deref(), args.maxmoves)
            .map_err(CliError::usage)?;
    if !(args.stall_timeout.is_finite() && args.stall_timeout > 0.0) {
        return Err(CliError::usage(
            "--stall-timeout must be a positive number of seconds",
        ));
    }
    let book = OpeningBook::load(args.book.as_deref(), args.seed).map_err(CliError::usage)?;
    let recover = if args.no_recover {
        false
    } else {
        args.recover || is_sprt
    };
    let variants: [Variant; 2] = variants.try_into().expect("two variants");
    Ok(Plan {
        variants,
        pairs,
        concurrency,
        adjudication,
        sprt,
        recover,
        stall_timeout: Duration::from_secs_f64(args.stall_timeout),
        book,
    })
}

/// Finds an executable the way a shell would.
fn which(cmd: &str) -> Option<PathBuf> {
    let path = std::path::Path::new(cmd);
    if cmd.contains('/') {
        return path.is_file().then(|| path.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(cmd))
            .find(|p| p.is_file())
    })
}

/// Groups the words of each `--engine` occurrence (clap's derive API flattens them).
pub fn group_engine_words(args: &mut MatchArgs, matches: &clap::ArgMatches) {
    args.engines = matches
        .get_occurrences::<String>("engine")
        .map(|occ| occ.map(|o| o.cloned().collect()).collect())
        .unwrap_or_default();
}

/// Runs `spar match` (`is_sprt = false`) or `spar sprt`.
pub fn run(args: MatchArgs, is_sprt: bool) -> CliResult {
    let started = Instant::now();
    let mut plan = plan(&args, is_sprt)?;
    let quiet = args.quiet;

    // Build variants compile spar first; from then on they are external UCI engines.
    if plan
        .variants
        .iter()
        .any(|v| matches!(v.source, Source::Build { .. }))
    {
        let repo = std::env::current_dir().map_err(|e| CliError::failure(e.to_string()))?;
        for v in plan.variants.iter_mut() {
            *v = git_build::resolve(v, &repo, quiet).map_err(CliError::usage)?;
        }
    }

    let command_line: Vec<String> = std::env::args().collect();
    let mut files = MatchFiles::open(
        args.pgnout.as_deref(),
        args.results.as_deref(),
        args.resume,
        [&plan.variants[0].name, &plan.variants[1].name],
    )
    .map_err(CliError::usage)?;

    let mut tally = Tally::default();
    let resumed = files.resumed_pairs();
    for p in &resumed {
        tally.add_pair(p.games);
    }
    let first_pair = resumed.len() as u64;
    let mut dump = PositionDump::open(
        args.dump_positions.as_deref(),
        args.resume,
        2 * first_pair,
        quiet,
    )
    .map_err(CliError::usage)?;
    if !quiet && first_pair > 0 {
        eprintln!(
            "Resuming after {first_pair} finished pairs ({} games) from the results file",
            2 * first_pair
        );
    }
    let mut decision = plan
        .sprt
        .as_ref()
        .map(|s| s.status(&sample(&tally, s)).map(|st| st.decision))
        .transpose()
        .ok()
        .flatten();

    if !quiet {
        let games = plan
            .pairs
            .map_or("until decided".to_string(), |p| format!("{} games", 2 * p));
        let mut header = format!(
            "{} vs {}: {}, {games}, concurrency {}, {}, seed {}",
            plan.variants[0].name,
            plan.variants[1].name,
            if plan.variants[0].limits == plan.variants[1].limits {
                plan.variants[0].limits.describe()
            } else {
                format!(
                    "{} vs {}",
                    plan.variants[0].limits.describe(),
                    plan.variants[1].limits.describe()
                )
            },
            plan.concurrency,
            plan.book.describe(),
            args.seed
        );
        if let Some(s) = &plan.sprt {
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

    let abort = Arc::new(AtomicBool::new(false));
    install_ctrl_c(abort.clone());

    let total_games = plan.pairs.map(|p| 2 * p);
    let progress = std::cell::RefCell::new(Progress::new(quiet, total_games, 2 * first_pair));
    let mut failure: Option<CliError> = None;

    let already_done = decision.is_some_and(|d| d != Decision::Continue)
        || plan.pairs.is_some_and(|p| first_pair >= p);
    if !already_done {
        let variants = plan.variants.clone();
        let stall = plan.stall_timeout;
        let make_player = |i: usize| -> Result<Box<dyn Player>, String> {
            let v = &variants[i];
            match &v.source {
                Source::Builtin => Ok(Box::new(BuiltinPlayer::new(v))),
                Source::Uci { .. } => Ok(Box::new(UciPlayer::new(v, stall)?)),
                Source::Build { .. } => unreachable!("build variants were turned into UCI engines"),
            }
        };
        let book = &plan.book;
        let opening = |k: u64| book.opening(k);
        let schedule = Schedule {
            variants: &plan.variants,
            first_pair,
            end_pair: plan.pairs,
            concurrency: plan.concurrency,
            seed: args.seed,
            adjudication: &plan.adjudication,
            opening: &opening,
            make_player: &make_player,
            abort: &abort,
        };
        let recover = plan.recover;
        let sprt = plan.sprt;
        let result = schedule::run(
            &schedule,
            || progress.borrow_mut().game_finished(),
            |pair: PairOutcome| {
                if let Err(e) = dump.write_pair(&pair) {
                    failure = Some(CliError::failure(e));
                    return Control::Stop;
                }
                if let Err(e) = files.write_pair(&pair, &plan.variants, &plan.book) {
                    failure = Some(CliError::failure(e));
                    return Control::Stop;
                }
                let summaries = pair_summaries(&pair);
                tally.add_pair(summaries);
                if let Some(s) = &sprt {
                    if let Ok(st) = s.status(&sample(&tally, s)) {
                        decision = Some(st.decision);
                    }
                }
                progress.borrow_mut().update(
                    &tally,
                    sprt.as_ref(),
                    [&plan.variants[0].name, &plan.variants[1].name],
                );
                if !recover {
                    if let Some(g) = summaries
                        .iter()
                        .find(|g| matches!(g.termination, Termination::Crash | Termination::Stall))
                    {
                        let who = &plan.variants[g.loser().unwrap_or(0)].name;
                        failure = Some(CliError::failure(format!(
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
                Control::Continue
            },
        );
        if let Err(e) = result {
            failure.get_or_insert(CliError::usage(e));
        }
    }
    progress.borrow().finish();

    let interrupted = abort.load(Ordering::SeqCst);
    let lines = summary_lines(&tally, &plan, args.output)?;
    for line in &lines {
        println!("{line}");
    }
    if interrupted {
        println!(
            "Interrupted: {} complete pairs counted; rerun with --resume to continue",
            tally.pairs.pairs()
        );
    }
    if let Some(path) = &args.json {
        let report = json_summary(
            &tally,
            &plan,
            &args,
            decision,
            &command_line,
            started.elapsed(),
        )?;
        write_atomically(
            path,
            &(serde_json::to_string_pretty(&report).expect("json") + "\n"),
        )
        .map_err(|e| CliError::failure(format!("cannot write --json {}: {e}", path.display())))?;
    }
    match failure {
        Some(e) => Err(e),
        None if interrupted => Err(CliError {
            message: "interrupted".to_string(),
            code: 130,
        }),
        None => Ok(()),
    }
}

fn pair_summaries(pair: &PairOutcome) -> [GameSummary; 2] {
    [0, 1].map(|g| GameSummary {
        first_is_white: g == 0,
        outcome: pair.games[g].outcome,
        termination: pair.games[g].termination,
    })
}

/// The SPRT sample: pairs, or games for the bayesian model (trinomial only).
fn sample(tally: &Tally, sprt: &Sprt) -> Sample {
    if sprt.model() == Model::Bayesian {
        Sample::Trinomial(tally.games)
    } else {
        Sample::Pentanomial(tally.pairs)
    }
}

fn request(tally: &Tally, plan: &Plan) -> Request {
    let sample = match &plan.sprt {
        Some(s) => sample(tally, s),
        None => Sample::Pentanomial(tally.pairs),
    };
    Request {
        games: Some(tally.games),
        pairs: Some(tally.pairs),
        sample,
        sprt: plan.sprt,
    }
}

fn summary_lines(tally: &Tally, plan: &Plan, format: OutputFormat) -> CliResult<Vec<String>> {
    let names = [plan.variants[0].name.clone(), plan.variants[1].name.clone()];
    let req = request(tally, plan);
    let estimate = req.sample.estimate();
    let mut lines = Vec::new();
    match format {
        OutputFormat::Cutechess => {
            lines.push(sprt::format::cutechess_score(
                &tally.games,
                &names[0],
                &names[1],
            ));
            // cutechess computes its Elo line from W/D/L.
            lines.push(sprt::format::cutechess_elo(&tally.games.estimate()));
            if let Some(s) = &plan.sprt {
                let st = s
                    .status(&req.sample)
                    .map_err(|e| CliError::failure(e.to_string()))?;
                let verdict = match st.decision {
                    Decision::H1 => " - H1 was accepted",
                    Decision::H0 => " - H0 was accepted",
                    Decision::Continue => "",
                };
                lines.push(format!(
                    "SPRT: llr {:.3} ({:.1}%), lbound {:.2}, ubound {:.2}{verdict}",
                    st.llr,
                    s.fraction(st.llr) * 100.0,
                    st.lower_bound,
                    st.upper_bound
                ));
            }
            lines.push(sprt::format::fastchess_ptnml(&tally.pairs));
        }
        OutputFormat::Fastchess => {
            let limits = plan.variants[0].limits.describe();
            lines.push(format!(
                "Results of {} vs {} ({limits}, {}):",
                names[0],
                names[1],
                plan.book.describe()
            ));
            lines.extend(
                // Skip the two cutechess lines (score, Elo difference).
                stats::text_report(&req, &estimate, &names)?
                    .into_iter()
                    .skip(2),
            );
        }
    }
    let f = &tally.failures;
    let fail_total =
        |i: usize| f[i].crashes + f[i].stalls + f[i].time_forfeits + f[i].illegal_moves;
    for i in 0..2 {
        if fail_total(i) > 0 {
            lines.push(format!(
                "{}: {} crashes, {} stalls, {} time forfeits, {} illegal moves",
                names[i], f[i].crashes, f[i].stalls, f[i].time_forfeits, f[i].illegal_moves
            ));
        }
    }
    Ok(lines)
}

fn json_summary(
    tally: &Tally,
    plan: &Plan,
    args: &MatchArgs,
    decision: Option<Decision>,
    command_line: &[String],
    elapsed: Duration,
) -> CliResult<Value> {
    let req = request(tally, plan);
    let estimate = req.sample.estimate();
    let mut report = stats::json_report(&req, &estimate)?;
    let obj = report.as_object_mut().expect("object");
    if let Some(d) = decision {
        obj.insert("decision".into(), json!(d.name()));
    }
    obj.insert(
        "engines".into(),
        json!([plan.variants[0].name, plan.variants[1].name]),
    );
    obj.insert("pairs".into(), json!(tally.pairs.pairs()));
    let terminations: serde_json::Map<String, Value> = tally
        .terminations
        .iter()
        .map(|(t, n)| (t.key().to_string(), json!(n)))
        .collect();
    obj.insert("terminations".into(), Value::Object(terminations));
    let failures: serde_json::Map<String, Value> = (0..2)
        .map(|i| {
            let f = tally.failures[i];
            (
                plan.variants[i].name.clone(),
                json!({"crashes": f.crashes, "stalls": f.stalls, "time_forfeits": f.time_forfeits, "illegal_moves": f.illegal_moves}),
            )
        })
        .collect();
    obj.insert("failures".into(), Value::Object(failures));
    obj.insert(
        "crashes".into(),
        json!(tally.failures[0].crashes + tally.failures[1].crashes),
    );
    obj.insert(
        "time_forfeits".into(),
        json!(tally.failures[0].time_forfeits + tally.failures[1].time_forfeits),
    );
    obj.insert("seed".into(), json!(args.seed));
    obj.insert("command_line".into(), json!(command_line.join(" ")));
    obj.insert(
        "duration_seconds".into(),
        stats::number(elapsed.as_secs_f64()),
    );
    Ok(report)
}

/// First Ctrl-C: stop taking new games, abandon those in flight, write the summary.
/// Second Ctrl-C: exit at once (every file write is a single whole record, so none is torn).
fn install_ctrl_c(abort: Arc<AtomicBool>) {
    let _ = ctrlc::set_handler(move || {
        if abort.swap(true, Ordering::SeqCst) {
            eprintln!("\nspar: second interrupt, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nspar: interrupt: finishing up (press Ctrl-C again to exit at once)");
    });
}
