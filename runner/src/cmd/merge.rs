//! `spar merge RUN_DIR`: the shards' records combined into the files and summary of the
//! local command.

use std::path::PathBuf;

use crate::cli::OutputArgs;
use crate::cluster::merge;
use crate::error::{CliError, CliResult};
use crate::jobs;
use crate::stdout;

/// Merge the shards of a cluster run: the summary, and the files the run asked for (PGN
/// and results CSV in pair order, positions in game order, JSON), each pair counted once.
///
/// Usable at any time, also while shards run or after the coordinator died.
///
///   spar merge /shared/run1
///   spar merge /shared/run1 --results all.csv --pgnout all.pgn
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct MergeArgs {
    /// The run directory.
    run_dir: PathBuf,
    /// Write the PGN here (instead of the run's --pgnout).
    #[arg(long, value_name = "FILE")]
    pgnout: Option<PathBuf>,
    /// Write the results CSV here (instead of the run's --results).
    #[arg(long, value_name = "FILE")]
    results: Option<PathBuf>,
    /// Write the JSON summary here (instead of the run's --json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Runs `spar merge`.
pub fn run(args: MergeArgs) -> CliResult {
    let (m, job) = jobs::read(&args.run_dir)?;
    let any = args.pgnout.is_some() || args.results.is_some() || args.json.is_some();
    // Paths given here are relative to here, not to where the run was started.
    let here = |p: &Option<PathBuf>| -> CliResult<Option<PathBuf>> {
        p.as_ref()
            .map(|p| {
                std::path::absolute(p).map_err(|e| CliError::usage(format!("{}: {e}", p.display())))
            })
            .transpose()
    };
    let files = OutputArgs {
        pgnout: here(&args.pgnout)?,
        dump_positions: None,
        results: here(&args.results)?,
        json: here(&args.json)?,
        resume: false,
    };
    // An option this run cannot honour is refused, naming it.
    merge::check_options(&args.run_dir, &m, job, &files)?;
    let files = any.then_some(&files);
    let dir = std::path::absolute(&args.run_dir)
        .map_err(|e| CliError::usage(format!("{}: {e}", args.run_dir.display())))?;
    // Before any work: no output may be a file the run owns or reads, or another output.
    merge::check_outputs(&dir, &m, job, files)?;
    // The run's engine words name files (networks, parameters) relative to where it was
    // started, as its shards read them.
    std::env::set_current_dir(&m.cwd).map_err(|e| {
        CliError::usage(format!(
            "cannot enter {}, where the run was started: {e}",
            m.cwd.display()
        ))
    })?;
    let merged = job.merge(&dir, &m, files)?;
    stdout::print_lines(&merged.lines)?;
    for note in &merged.notes {
        eprintln!("{note}");
    }
    if !merged.conflicts.is_empty() {
        return Err(CliError::failure(format!(
            "{} pairs were recorded twice with different games (listed above)",
            merged.conflicts.len()
        )));
    }
    Ok(())
}
