//! The datagen job (`spar datagen`): training positions from self-play of the builtin
//! engine. Its arguments ([`args`]), plan ([`plan`]) and run record ([`record`]); its games
//! on this machine ([`generate`]) and as a cluster run ([`shards`]); the merge of a
//! cluster run's files ([`merge`]); the job contract's methods ([`job`]).
//!
//! Game k depends only on (seed, k) and the options: its opening comes from a generator
//! seeded with H(seed, k), each game starts with an emptied hash table and histories, and
//! one thread searches each move to a node limit. Games are played by the shared game
//! loop ([`crate::play::game`]) with datagen's adjudication, run by the shared ordered
//! runner ([`crate::play::ordered`]) and written in index order, so the files are the same
//! at any concurrency, and `--resume` continues with the next index.

pub mod args;
pub mod generate;
pub mod job;
pub mod live;
pub mod merge;
pub mod plan;
pub mod record;
pub mod shards;

use crate::error::CliResult;
use crate::files::lock::lock_output;

/// Runs `spar datagen` (not `--inspect`): on this machine's threads, or with `--slurm` as
/// the coordinator of a cluster run.
pub fn run(args: args::DatagenArgs) -> CliResult {
    if args.slurm.slurm {
        return shards::coordinate(args, &job::DATAGEN);
    }
    args.slurm.check_local()?;
    let plan = plan::plan(&args)?;
    // One writer per file of --out (the viriformat file and the text file, whose index
    // follows it): a second run on any of them, whatever its --format, is refused here,
    // before any game; the kernel frees the locks when this process ends.
    let paths = plan.format.paths(&plan.out);
    let mut locks = Vec::new();
    for p in [&paths.viriformat, &paths.text].into_iter().flatten() {
        locks.extend(lock_output(p, "--out")?);
    }
    generate::generate(&args, &plan, None)
}
