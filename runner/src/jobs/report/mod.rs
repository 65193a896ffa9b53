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
pub mod live;
pub mod local;
pub mod merge;
pub mod served_section;
pub mod shards;

use crate::engines::variant::Source;
use crate::error::{CliError, CliResult};

/// Checks a report's arguments as `spar report` checks them before its first game, and
/// plays nothing: its files, and its plan (engines, limits, book) when it plays games.
/// `track`: whether the spar that will play it has the `track` feature; without it,
/// builtin engines (which record only in such a build) are refused.
pub fn check(args: &args::ReportArgs, track: bool) -> CliResult {
    args::check_paths(args, None)?;
    if !args.from.is_empty() {
        if !args.engines.engines.is_empty() {
            return Err(CliError::usage(
                "give --engine to play games or --from to report saved statistics, not both",
            ));
        }
        return Ok(());
    }
    let (_, run) = args::plan(args)?;
    if !track && run.variants.iter().any(|v| v.source == Source::Builtin) {
        return Err(CliError::usage(
            "spar report: a builtin engine records its track! sites only in a spar built with \
             the `track` feature, and this server has none: start spar serve with \
             --track-spar PATH (a spar built with `cargo build --release --features track`), \
             or give the engines as cmd=… (an engine that answers the TrackFile option, e.g. \
             `cmd=PATH-TO-SPAR args=uci`)",
        ));
    }
    Ok(())
}

/// Runs `spar report`: on this machine, or with `--slurm` as the coordinator of a cluster
/// run.
pub fn run(args: args::ReportArgs) -> CliResult {
    if args.slurm.slurm {
        return shards::coordinate(args, &job::REPORT);
    }
    args.slurm.check_local()?;
    if args.resume {
        return Err(CliError::usage(
            "--resume belongs to a cluster run (--slurm --run-dir DIR): a local report plays all its games again",
        ));
    }
    local::run(args)
}
