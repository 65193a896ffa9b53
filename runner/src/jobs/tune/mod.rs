//! The tune job (`spar tune`, SPSA): its arguments ([`args`]) and checked setup
//! ([`setup`]); its play on this machine ([`local`]) and as a cluster run ([`shards`]), the
//! merge of a cluster run's records ([`merge`]); the verification SPRT that ends it
//! ([`verify`], with its files and verdict in [`verdict`]); and where a tune stands
//! ([`status`]: the view and its text; [`status_page`] its HTML page; [`status_local`]
//! from a local run's trajectory CSV, [`status_cluster`] from a cluster run's directory).
//! The job contract's methods are [`job`]. The SPSA itself (gains, schedule, driver,
//! trajectory) is [`crate::tune`]'s.

pub mod args;
pub mod job;
pub mod live;
pub mod local;
pub mod merge;
pub mod served_section;
pub mod setup;
pub mod shards;
pub mod status;
pub mod status_cluster;
pub mod status_local;
pub mod status_page;
pub mod verdict;
pub mod verify;

use crate::error::{CliError, CliResult};

/// Runs `spar tune` (not `--plot`): on this machine, or with `--slurm` as the coordinator
/// of a cluster run.
pub fn run(args: args::TuneArgs) -> CliResult {
    if args.slurm.slurm {
        return shards::coordinate(args, &job::TUNE);
    }
    args.slurm.check_local()?;
    if args.resume && args.csv.is_none() {
        return Err(CliError::usage(
            "--resume needs --csv FILE: the trajectory the run continues from",
        ));
    }
    local::run(args)
}
