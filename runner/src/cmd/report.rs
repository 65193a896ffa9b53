//! `spar report`: play games with `track!` recording on, then show each site's statistics
//! (terminal, CSV, JSON, HTML), side by side for two variants; or re-render saved runs.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cli::{AdjudicationArgs, BookArgs, EngineArgs, FailureArgs, RunArgs};
use crate::engines::git_build::ensure_built;
use crate::engines::player::{BuiltinPlayer, Player};
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::paths::PathCheck;
use crate::interrupt;
use crate::plan::{MatchPlan, PlanRequest};
use crate::play::schedule::{self, Control};
use crate::progress::Progress;
use crate::report::stats::{StatsFile, VariantStats};
use crate::report::{self, terminal, tracked::TrackedPlayer};
use crate::stdout;

/// Set in the environment of the track-enabled spar that a default build runs in its place.
const CHILD_ENV: &str = "SPAR_REPORT_TRACK_CHILD";

/// Play games and report what every `track!(…)` site recorded: count, mean, mean of |x|,
/// standard deviation, min, max and a histogram, per variant, with the differences between
/// two variants and their significance.
///
///   spar report --engine name=dev option.rfp_margin=60 --engine name=base --each nodes=5000 --games 40 --out rep
///
///   spar report --from rep/stats.json                      re-render a saved run
///   spar report --from base.json --from dev.json --out cmp  compare two saved runs
///
/// Builtin engines need a spar built with the `track` feature; a spar without it builds
/// one from the working tree (`cargo build --release --features track`, cached) and runs
/// that instead, unless --no-build. External spar builds (`cmd=…`, `features=track`) are
/// asked to dump their statistics through the `TrackFile` UCI option.
///
/// Engine keys are those of `spar match` (name, cmd, args, dir, git, features, params,
/// `option.<Name>`, nodes, depth, movetime, st, tc, timemargin).
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct ReportArgs {
    #[command(flatten)]
    engines: EngineArgs,
    /// Number of games (even: each opening is played once with each colour).
    #[arg(long, default_value_t = 20)]
    games: u64,
    #[command(flatten)]
    run: RunArgs,
    #[command(flatten)]
    book: BookArgs,
    #[command(flatten)]
    adjudication: AdjudicationArgs,
    /// Write stats.csv, stats.json and report.html into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Report saved statistics (stats.json, stats.csv or a TrackFile dump) instead of
    /// playing; give it twice to compare two runs.
    #[arg(long, value_name = "FILE", action = clap::ArgAction::Append)]
    from: Vec<PathBuf>,
    /// Fail instead of building a track-enabled spar when this one lacks the feature.
    #[arg(long)]
    no_build: bool,
    #[command(flatten)]
    failure: FailureArgs,
}

/// Runs `spar report`.
pub fn run(args: ReportArgs) -> CliResult {
    // Inputs and outputs are checked, and an output directory that cannot be made is found
    // out, before any game is played.
    let mut check = PathCheck::new();
    for f in &args.from {
        check.input("--from", f);
    }
    check.engines(&args.engines.engines, &args.engines.each);
    check.tb_words(args.adjudication.tb.as_deref());
    // A spar without `track` builds one that has it (unless --no-build).
    if !args.engines.engines.is_empty() && !args.no_build && !engine::track::ENABLED {
        check.builds();
    }
    check.book_words(args.book.book.as_deref());
    if let Some(dir) = &args.out {
        for name in report::FILES {
            check.output("--out", dir.join(name));
        }
    }
    check.inputs()?;
    check.collisions()?;
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::usage(format!(
                "--out {}: cannot create the directory: {e} (give a writable directory)",
                dir.display()
            ))
        })?;
    }
    check.writable()?;
    match (args.from.is_empty(), args.engines.engines.is_empty()) {
        (false, false) => Err(CliError::usage(
            "give --engine to play games or --from to report saved statistics, not both",
        )),
        (false, true) => from_files(&args),
        (true, _) => play(&args),
    }
}

/// Prints the terminal report and writes the files.
fn output(variants: Vec<VariantStats>, out: Option<&Path>, title: &str) -> CliResult {
    let printed = stdout::print(&terminal::render(&variants));
    if let Some(dir) = out {
        let file = StatsFile::new(variants);
        report::write_files(dir, &file, title)?;
        eprintln!(
            "spar: wrote {0}/stats.csv, {0}/stats.json and {0}/report.html",
            dir.display()
        );
    }
    printed
}

fn from_files(args: &ReportArgs) -> CliResult {
    let mut variants: Vec<VariantStats> = Vec::new();
    for path in &args.from {
        let file = StatsFile::read(path).map_err(|e| {
            CliError::usage(format!(
                "--from {e} (give the stats.json or stats.csv that `spar report --out DIR` wrote, or a TrackFile dump)"
            ))
        })?;
        let stem = path
            .file_stem()
            .map_or(String::new(), |s| s.to_string_lossy().into_owned());
        for mut v in file.variants {
            if variants.iter().any(|w| w.name == v.name) {
                v.name = format!("{} ({stem})", v.name);
            }
            let base = v.name.clone();
            let mut k = 2;
            while variants.iter().any(|w| w.name == v.name) {
                v.name = format!("{base} #{k}");
                k += 1;
            }
            variants.push(v);
        }
    }
    let names: Vec<&str> = variants.iter().map(|v| v.name.as_str()).collect();
    let title = format!("spar report: {}", names.join(" vs "));
    output(variants, args.out.as_deref(), &title)
}

/// Runs the track-enabled spar built from the working tree with the same arguments.
fn run_track_build(quiet: bool) -> CliResult {
    let repo = std::env::current_dir().map_err(|e| CliError::failure(e.to_string()))?;
    if !quiet {
        eprintln!(
            "spar: this spar was built without the `track` feature; building one that has it (once, cached)"
        );
    }
    let binary = ensure_built(None, &["track".to_string()], &repo, quiet).map_err(|e| {
        CliError::usage(format!(
            "builtin engines need a spar built with the `track` feature, and building one failed: {e}; \
             build it with `cargo build --release --features track` and run that spar"
        ))
    })?;
    let status = Command::new(&binary)
        .args(std::env::args_os().skip(1))
        .env(CHILD_ENV, "1")
        .status()
        .map_err(|e| CliError::failure(format!("cannot run {}: {e}", binary.display())))?;
    std::process::exit(status.code().unwrap_or(1));
}

fn play(args: &ReportArgs) -> CliResult {
    let (plan, mut run) = MatchPlan::build(&PlanRequest {
        engines: &args.engines,
        seats: 1..=2,
        example: "--engine name=dev option.rfp_margin=60 --engine name=base",
        run: &args.run,
        games: Some(args.games),
        default_games: None,
        book: &args.book,
        adjudication: args.adjudication.rules()?,
        failure: Some(&args.failure),
        recover_by_default: false,
        sprt: None,
    })?;
    let n = run.variants.len();
    let builtin = run.variants.iter().any(|v| v.source == Source::Builtin);
    if builtin && !engine::track::ENABLED {
        if args.no_build || std::env::var_os(CHILD_ENV).is_some() {
            return Err(CliError::usage(
                "this spar was built without the `track` feature, so builtin engines record nothing: \
                 build one with `cargo build --release --features track` (or drop --no-build and let spar build it)",
            ));
        }
        return run_track_build(args.run.quiet);
    }
    run.build_variants(args.run.quiet)?;
    let mut variants = run.variants.clone();
    // One engine plays itself: both seats record into slot 0.
    let single = n == 1;
    if single {
        variants.push(variants[0].clone());
    }
    let slot = |i: usize| if single { 0 } else { i };
    let seats: [Variant; 2] = variants.try_into().expect("two seats");
    let dumps = tempfile::Builder::new()
        .prefix("spar-track-")
        .tempdir()
        .map_err(|e| CliError::failure(format!("cannot make a temporary directory: {e}")))?;

    engine::track::reset();
    let abort = interrupt::on_ctrl_c("reporting the games played so far");
    let stall = run.stall_timeout;
    let started = AtomicUsize::new(0);
    let dump_dir = dumps.path().to_path_buf();
    let make_player = |i: usize| -> CliResult<Box<dyn Player>> {
        let v = &seats[i];
        match &v.source {
            Source::Builtin => Ok(Box::new(TrackedPlayer::new(
                Box::new(BuiltinPlayer::new(v)?),
                slot(i),
            ))),
            Source::Uci { .. } => {
                let k = started.fetch_add(1, Ordering::SeqCst);
                let mut v = v.clone();
                let path = dump_dir.join(format!("v{}-{k}.json", slot(i)));
                v.options
                    .push(("TrackFile".to_string(), path.to_string_lossy().into_owned()));
                Ok(Box::new(UciPlayer::new(&v, stall).map_err(|e| {
                    CliError::usage(format!("engine '{}': {e}", v.name))
                })?))
            }
            Source::Build { .. } => unreachable!("build variants were turned into UCI engines"),
        }
    };
    let book = &run.book;
    let opening = |k: u64| book.opening(k);
    let schedule = plan.schedule(&seats, 0, &opening, &make_player, &abort);
    let progress = Progress::new(args.run.quiet, "games", plan.pairs.map(|p| 2 * p), 0);
    let mut games_played = 0u64;
    let result = schedule::run(
        &schedule,
        || progress.inc(),
        |_pair| {
            games_played += 2;
            Control::Continue
        },
    );
    progress.finish();
    result?;

    let snapshot = engine::track::snapshot();
    let mut stats = Vec::new();
    for (i, v) in seats.iter().enumerate().take(n) {
        let s = slot(i);
        let vs = match &v.source {
            Source::Builtin => VariantStats::from_totals(&v.name, snapshot.get(&s), None),
            _ => {
                let seats_per_game = if single { 2 } else { 1 };
                read_dumps(&v.name, &dump_dir, s, games_played * seats_per_game)?
            }
        };
        if vs.sites.is_empty() {
            eprintln!(
                "spar: warning: engine '{}' recorded no track! site{}",
                v.name,
                if v.source == Source::Builtin {
                    ""
                } else {
                    " (is it a spar built with the `track` feature? e.g. features=track)"
                }
            );
        }
        stats.push(vs);
    }
    let names: Vec<&str> = seats.iter().take(n).map(|v| v.name.as_str()).collect();
    let limits = seats[0].limits.describe();
    let title = format!(
        "spar report: {} ({} games, {limits})",
        names.join(" vs "),
        games_played
    );
    output(stats, args.out.as_deref(), &title)
}

/// Merges the TrackFile dumps of one variant's engine processes.
fn read_dumps(name: &str, dir: &Path, slot: usize, games: u64) -> CliResult<VariantStats> {
    let prefix = format!("v{slot}-");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::failure(format!("cannot list {}: {e}", dir.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(&prefix) && f.ends_with(".json"))
        })
        .collect();
    paths.sort();
    let mut merged = VariantStats::from_totals(name, None, Some(0));
    for path in paths {
        let file = StatsFile::read(&path)
            .map_err(|e| CliError::failure(format!("engine '{name}': bad TrackFile dump: {e}")))?;
        for v in &file.variants {
            merged
                .merge(v)
                .map_err(|e| CliError::failure(format!("engine '{name}': {e}")))?;
        }
    }
    merged.name = name.to_string();
    merged.games = games;
    Ok(merged)
}
