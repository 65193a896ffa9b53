//! The match job (`spar match`, `spar sprt`): its arguments and plan ([`args`]), its run
//! record ([`record`]), its play on this machine ([`local`]) and as a cluster run
//! ([`shards`]), the merge of a cluster run's records ([`merge`]), the job contract's
//! methods ([`job`]), and what a personality adds to it ([`lines`]).

pub mod args;
pub mod job;
pub mod lines;
pub mod live;
pub mod local;
pub mod merge;
pub mod record;
pub mod shards;

use args::MatchArgs;
use lines::GameLines;

use crate::error::{CliError, CliResult};

/// Runs `spar match` (`is_sprt = false`) or `spar sprt`; with `--slurm`, as the coordinator
/// of a cluster run. `lines`: the personality of `--game-lines` (`spar fastchess`, `spar
/// cutechess`), which `cmd/` makes from the word; `None` without it.
pub fn run(args: MatchArgs, is_sprt: bool, lines: Option<&dyn GameLines>) -> CliResult {
    if args.slurm.slurm {
        if args.game_lines.is_some() {
            return Err(CliError::usage(
                "--game-lines does not apply to --slurm: the shards play the games",
            ));
        }
        let job = if is_sprt { &job::SPRT } else { &job::MATCH };
        return shards::coordinate(args, is_sprt, job);
    }
    args.slurm.check_local()?;
    if args.files.resume && args.files.results.is_none() {
        return Err(CliError::usage(
            "--resume needs --results FILE: the record the run continues from",
        ));
    }
    let _locks = local::lock_outputs(&args)?;
    local::play(args, is_sprt, None, lines)
}
