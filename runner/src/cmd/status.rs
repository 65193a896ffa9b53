//! `spar status RUN_DIR | RESULTS.csv [--html FILE]`: where a run stands.

use std::path::PathBuf;

use crate::cluster::{html, status};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::stdout;

/// Show where a run stands: games, W-L-D, Elo, LLR and bounds, ETA, and one line per shard
/// (flagged when stalled or failed). Takes a cluster run's directory or a local run's
/// results CSV.
///
///   spar status /shared/run1
///   spar status /shared/run1 --html status.html
///   spar status results.csv
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct StatusArgs {
    /// A cluster run directory, or a results CSV of `spar match|sprt --results`.
    run: PathBuf,
    /// Also write a self-contained HTML page (charts of the LLR and Elo over games); it
    /// reloads itself while the run is live.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Runs `spar status`.
pub fn run(args: StatusArgs) -> CliResult {
    let snapshot = if args.run.is_dir() {
        status::of_run(&args.run)?
    } else if args.run.is_file() {
        status::of_csv(&args.run)?
    } else {
        return Err(CliError::usage(format!(
            "{}: no such run directory or results file (give a --run-dir or a --results CSV)",
            args.run.display()
        )));
    };
    if let Some(path) = &args.html {
        write_atomically(path, &html::render(&snapshot))
            .map_err(|e| CliError::usage(format!("cannot write --html {}: {e}", path.display())))?;
    }
    stdout::print_lines(&snapshot.lines())
}
