//! A match or SPRT as a cluster run (`--slurm`): its coordinator, which checks everything,
//! builds the variants once and writes the manifest before [`coordinator::run`] takes over,
//! and the play of one shard (`spar shard`).

use super::args::{checked_paths, has_rows, plan, MatchArgs};
use super::local::play;
use crate::cli::{OutputArgs, SlurmArgs};
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::setup;
use crate::cluster::shard::ShardRun;
use crate::error::{CliError, CliResult};
use crate::job::Job;

/// The coordinator of `--slurm`: everything checked here first, variants built once, the
/// manifest written, then [`coordinator::run`] submits, watches, stops and merges.
pub(super) fn coordinate(mut args: MatchArgs, is_sprt: bool, job: &dyn Job) -> CliResult {
    let quiet = args.run.quiet;
    let cpus = setup::shard_cpus(&mut args.run, &args.slurm)?;
    let dump_spec = checked_paths(&args)?;
    if !args.files.resume {
        // The merge writes these whole; a local run would append to them.
        let mut outputs: Vec<(&str, std::path::PathBuf)> = Vec::new();
        if let Some(p) = &args.files.pgnout {
            outputs.push(("--pgnout", p.clone()));
        }
        if let Some(p) = &args.files.results {
            outputs.push(("--results", p.clone()));
        }
        if let Some(d) = &dump_spec {
            let paths = d.format.paths(&d.path);
            for p in [paths.viriformat, paths.text].into_iter().flatten() {
                outputs.push(("--dump-positions", p));
            }
        }
        if let Some((flag, p)) = outputs.iter().find(|(_, p)| has_rows(p)) {
            return Err(CliError::usage(format!(
                "{flag} {} already holds games: a --slurm run writes its merged files whole, so give a new file",
                p.display()
            )));
        }
    }
    let cluster = setup::prepare(&args.slurm, args.files.resume)?;
    let (mut plan, mut run) = plan(&args, is_sprt, None)?;
    // A shard plays --cpus-per-shard pairs at once, whatever the number of pairs.
    plan.concurrency = cpus;
    let resume = args.files.resume;
    args.files.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let command = if is_sprt { "sprt" } else { "match" };
    let manifest =
        setup::match_manifest(&cluster, command, stored, resume, &plan, &mut run, quiet)?;
    let submission = Submission {
        job,
        cluster: &cluster,
        manifest: &manifest,
        quiet,
    };
    coordinator::run(&submission)
}

/// Plays shard `shard.index` of a cluster run: the pairs I, I+N, … of the manifest's match
/// (all of them, or until `RUN_DIR/STOP`), into the shard's own files, resuming them.
pub fn run_shard(args: serde_json::Value, is_sprt: bool, shard: &ShardRun) -> CliResult {
    let mut args: MatchArgs = serde_json::from_value(args).map_err(|e| {
        CliError::usage(format!(
            "{}: the match arguments do not read: {e}",
            shard.dir.display()
        ))
    })?;
    let dir = &shard.dir;
    let i = shard.index;
    args.run.concurrency = Some(shard.concurrency);
    args.run.quiet = true;
    args.game_lines = None;
    args.slurm = SlurmArgs::default();
    let dump = args.files.dump_positions.take().map(|words| {
        let mut w = vec![crate::cluster::shard_positions(dir, i)
            .to_string_lossy()
            .into_owned()];
        w.extend(words.into_iter().skip(1));
        w
    });
    args.files = OutputArgs {
        pgnout: args
            .files
            .pgnout
            .is_some()
            .then(|| crate::cluster::shard_pgn(dir, i)),
        dump_positions: dump,
        results: Some(crate::cluster::shard_results(dir, i)),
        json: None,
        resume: true,
    };
    play(args, is_sprt, Some(shard), None)
}
