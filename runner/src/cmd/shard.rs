//! `spar shard RUN_DIR`: what one task of a cluster run executes (a Slurm array task, a
//! Kubernetes Indexed Job pod, a GNU parallel job).

use std::path::PathBuf;

use crate::cluster::shard::{process_env, record_failure, resolve_index, OpenError, ShardRun};
use crate::error::{CliError, CliResult};
use crate::jobs;

/// Play one shard of the run in RUN_DIR (written by `spar match|sprt|datagen --slurm`).
///
/// Shard I of N plays pairs (datagen: games) I, I+N, I+2N, … of the run, appending to
/// RUN_DIR/shards/I/ and continuing from there when run again. It stops within a second of
/// RUN_DIR/STOP appearing, and on SIGTERM it keeps what is complete and exits.
///
///   spar shard /shared/run1                 # in a Slurm array task
///   spar shard /shared/run1 --index 3       # anywhere else
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct ShardArgs {
    /// The run directory (holds manifest.json).
    run_dir: PathBuf,
    /// This shard's index [default: SLURM_ARRAY_TASK_ID, else JOB_COMPLETION_INDEX].
    #[arg(long, value_name = "I")]
    index: Option<u64>,
    /// The number of shards (must be the run's) [default: the manifest's].
    #[arg(long, value_name = "N")]
    of: Option<u64>,
    /// Games played at once [default: SLURM_CPUS_PER_TASK, else all cores].
    #[arg(long)]
    concurrency: Option<usize>,
}

/// Runs `spar shard`.
pub fn run(args: ShardArgs) -> CliResult {
    let shard = match ShardRun::open(
        &args.run_dir,
        args.index,
        args.of,
        args.concurrency,
        &process_env,
        &|dir, m| jobs::of(dir, m).map(|_| ()),
    ) {
        Ok(s) => s,
        Err(OpenError::Args(e)) => return Err(e),
        Err(OpenError::Refused(e)) => {
            // A refusal (another binary, a changed engine, book or network) is recorded
            // where the coordinator looks; the index is known, or open would have said.
            if let Ok(i) = resolve_index(args.index, &process_env) {
                record_failure(&args.run_dir, i, &e);
            }
            return Err(e);
        }
    };
    let m = &shard.manifest;
    // Paths in the run's arguments are relative to where the run was started.
    std::env::set_current_dir(&m.cwd).map_err(|e| {
        CliError::usage(format!(
            "cannot enter {}, where the run was started: {e} (it must be on a filesystem every node shares)",
            m.cwd.display()
        ))
    })?;
    let job = jobs::of(&shard.dir, m)?;
    let result = job.play_shard(&shard);
    if let Err(e) = &result {
        if e.code == 1 || e.code == 2 {
            shard.record_failure(e);
        }
    }
    result
}
