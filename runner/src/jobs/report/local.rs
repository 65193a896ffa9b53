//! A report on this machine: the games played with `track!` recording on (or saved runs
//! read back), the terminal report and the `--out` files; and the track-enabled spar a
//! default build runs in its place.

use std::path::Path;
use std::process::Command;

use super::args::{check_paths, plan, ReportArgs};
use super::games::{self, Seats, Stretch};
use crate::engines::git_build::ensure_built;
use crate::engines::variant::Source;
use crate::error::{CliError, CliResult};
use crate::interrupt;
use crate::play::schedule::{Control, Stride};
use crate::progress::Progress;
use crate::report::stats::{StatsFile, VariantStats};
use crate::report::{self, terminal};
use crate::stdout;

/// Set in the environment of the track-enabled spar that a default build runs in its place.
const CHILD_ENV: &str = "SPAR_REPORT_TRACK_CHILD";

/// Runs `spar report` on this machine.
pub(super) fn run(args: ReportArgs) -> CliResult {
    // Inputs and outputs are checked, and an output directory that cannot be made is found
    // out, before any game is played.
    check_paths(&args, None)?;
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
        write_out(variants, dir, title)?;
    }
    printed
}

/// Writes `stats.csv`, `stats.json` and `report.html` into `dir`, and says so on stderr.
pub(super) fn write_out(variants: Vec<VariantStats>, dir: &Path, title: &str) -> CliResult {
    let file = StatsFile::new(variants);
    report::write_files(dir, &file, title)?;
    eprintln!(
        "spar: wrote {0}/stats.csv, {0}/stats.json and {0}/report.html",
        dir.display()
    );
    Ok(())
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

/// Whether builtin engines of `run` can record here: `Ok(true)` yes, `Ok(false)` this spar
/// lacks the `track` feature and the caller should run the track-enabled build
/// ([`run_track_build`]); an error when it may not build one (`--no-build`, or this is
/// that build's child already).
pub(super) fn can_record(
    variants: &[crate::engines::variant::Variant],
    no_build: bool,
) -> CliResult<bool> {
    let builtin = variants.iter().any(|v| v.source == Source::Builtin);
    if !builtin || engine::track::ENABLED {
        return Ok(true);
    }
    if no_build || std::env::var_os(CHILD_ENV).is_some() {
        return Err(CliError::usage(
            "this spar was built without the `track` feature, so builtin engines record nothing: \
             build one with `cargo build --release --features track` (or drop --no-build and let spar build it)",
        ));
    }
    Ok(false)
}

/// Runs the track-enabled spar built from the working tree with the same arguments.
pub(super) fn run_track_build(quiet: bool) -> CliResult {
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
    let (plan, mut run) = plan(args)?;
    if !can_record(&run.variants, args.no_build)? {
        return run_track_build(args.run.quiet);
    }
    run.build_variants(args.run.quiet)?;
    let seats = Seats::new(&run.variants);
    let abort = interrupt::on_ctrl_c("reporting the games played so far");
    let progress = Progress::new(args.run.quiet, "games", plan.pairs.map(|p| 2 * p), 0);
    let stretch = Stretch {
        stride: Stride::ALL,
        first: 0,
        end: None,
    };
    let played = games::play(
        &plan,
        &run,
        &seats,
        &stretch,
        &abort,
        || progress.inc(),
        |_pair| Control::Continue,
    );
    progress.finish();
    let (stats, games_played) = played?;
    games::warn_empty(&stats, &seats.seats);
    output(stats, args.out.as_deref(), &seats.title(games_played))
}
