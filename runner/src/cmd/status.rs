//! `spar status RUN_DIR | RESULTS.csv | TUNE.csv [--html FILE]`: where a run stands.

use std::path::{Path, PathBuf};

use crate::cluster::manifest::Manifest;
use crate::cluster::merge;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::paths::PathCheck;
use crate::files::run_record;
use crate::job::StatusView;
use crate::jobs;
use crate::stdout;

/// Show where a run stands: games, W-L-D, Elo, LLR and bounds, ETA, and one line per shard
/// (flagged when stalled or failed). Takes a cluster run's directory or a local run's
/// results CSV. For a tune's trajectory (`spar tune --csv`): iterations, games/s, ETA, and
/// per parameter its θ, range, distance in c_end, averaged θ and whether it moves with
/// signal or drifts in noise; the page draws every parameter's trajectory.
///
///   spar status /shared/run1
///   spar status /shared/run1 --html status.html
///   spar status results.csv
///   spar status tune.csv --html tune.html
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct StatusArgs {
    /// A cluster run directory, a results CSV of `spar match|sprt --results`, or a
    /// trajectory CSV of `spar tune --csv`.
    run: PathBuf,
    /// Also write a self-contained HTML page (charts of the LLR and Elo over games); it
    /// reloads itself while the run is live.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

/// Runs `spar status`.
pub fn run(args: StatusArgs) -> CliResult {
    let is_dir = args.run.is_dir();
    if !is_dir && !args.run.is_file() {
        let why = if args.run.exists() {
            "is not a regular file (a device, pipe or socket)"
        } else {
            "is no such run directory or results file"
        };
        return Err(CliError::usage(format!(
            "{} {why}: give a --run-dir or a --results CSV",
            args.run.display()
        )));
    }
    // A local run's file (a bisect's directory is its own), or a cluster run's directory.
    let owner = jobs::owning(&args.run);
    if is_dir && owner.is_none() {
        return run_dir(&args);
    }
    // The kind that keeps it (a results CSV is the catch-all).
    let job = owner.ok_or_else(|| {
        CliError::usage(format!(
            "{}: not a file of a spar run: give a --run-dir or a --results CSV",
            args.run.display()
        ))
    })?;
    // Before any work: --html may be no file the run owns or reads.
    if let Some(path) = &args.html {
        let mut check = PathCheck::new();
        for (what, file) in job.file_inputs(&args.run) {
            check.input(what, file);
        }
        engines_of_record(&args.run, &mut check);
        check.output("--html", path).check()?;
    }
    show(&*job.status_of_file(&args.run)?, args.html.as_deref())
}

/// `spar status RUN_DIR`: a cluster run, whatever its kind.
fn run_dir(args: &StatusArgs) -> CliResult {
    // Before any work: --html may be no file the run owns or reads.
    if let Some(path) = &args.html {
        let mut check = PathCheck::new();
        check.run_dir(&args.run);
        if let Ok(m) = Manifest::read(&args.run) {
            merge::inputs_of(&m, &mut check);
        }
        check.output("--html", path).check()?;
    }
    let (m, job) = jobs::read(&args.run)?;
    show(&*job.status(&args.run, &m)?, args.html.as_deref())
}

/// Writes the view's page to `html` (when given) and prints its lines.
fn show(view: &dyn StatusView, html: Option<&Path>) -> CliResult {
    if let Some(path) = html {
        write_atomically(path, &view.page()).map_err(|e| {
            CliError::failure(format!("cannot write --html {}: {e}", path.display()))
        })?;
    }
    stdout::print_lines(&view.lines())
}

/// The files of the engines (and `--tb` tables) of the run whose record lies beside `file`
/// (a match's `engine N` words, a tune's `engine` over `each`), as inputs of `check`:
/// `--html` may be none of them. A missing or unreadable record adds nothing (the status
/// reports it).
fn engines_of_record(file: &Path, check: &mut PathCheck) {
    use serde_json::Value;
    let Ok(Some(record)) = run_record::read("results", file) else {
        return;
    };
    let Some(fields) = record.get("fields").and_then(Value::as_object) else {
        return;
    };
    let words = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|w| w.as_str().map(String::from))
            .collect()
    };
    let each = fields.get("each").map(words).unwrap_or_default();
    let engines: Vec<Vec<String>> = fields
        .iter()
        .filter(|(k, _)| {
            k.strip_prefix("engine")
                .is_some_and(|n| n.is_empty() || n.trim().parse::<u32>().is_ok())
        })
        .map(|(_, v)| words(v))
        .collect();
    check.engines(&engines, &each);
    if let Some(dirs) = fields
        .get("adjudication")
        .and_then(|a| a.pointer("/tb/dirs"))
        .and_then(Value::as_str)
    {
        check.tb_words(Some(&[dirs.to_string()]));
    }
}
