//! `spar bisect`: which commit lost the Elo. The arguments and the run are the bisect
//! job's ([`crate::jobs::bisect`]).

use crate::error::CliResult;
pub use crate::jobs::bisect::args::BisectArgs;

/// Runs `spar bisect`.
pub fn run(args: BisectArgs) -> CliResult {
    crate::jobs::bisect::run::run(args)
}
