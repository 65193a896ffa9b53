//! The report job (`spar report`): games played with `track!` recording on, and each
//! site's statistics (terminal, CSV, JSON, HTML). Its arguments ([`args`]); its games on
//! this machine's threads ([`games`]); the local run and the re-rendering of saved runs
//! ([`local`]); the cluster run and a shard's play ([`shards`]) with the shard's statistics
//! checkpoint ([`checkpoint`]); the merge of the shards' statistics ([`merge`]); the job
//! contract's methods ([`job`]).
//!
//! Pair k plays opening k with seeds derived from (seed, k); under a node limit its games,
//! and so what they record, are the same wherever they are played, so the sum of the
//! shards' statistics is the statistics of the local run with the same options.

pub mod args;
pub mod checkpoint;
pub mod games;
pub mod job;
pub mod local;
pub mod merge;
pub mod shards;

use crate::error::CliResult;

/// Runs `spar report`: on this machine, or with `--slurm` as the coordinator of a cluster
/// run.
pub fn run(args: args::ReportArgs) -> CliResult {
    if args.slurm.slurm {
        return shards::coordinate(args, &job::REPORT);
    }
    args.slurm.check_local()?;
    if args.resume {
        return Err(crate::error::CliError::usage(
            "--resume belongs to a cluster run (--slurm --run-dir DIR): a local report plays all its games again",
        ));
    }
    local::run(args)
}
