//! Datagen as a cluster run (`--slurm`): its coordinator, and the play of one shard
//! (`spar shard`), games I, I+N, … into the shard's own file.

use std::path::PathBuf;

use super::args::DatagenArgs;
use super::generate::generate;
use super::plan::{plan, Target};
use crate::cli::SlurmArgs;
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::setup;
use crate::cluster::shard::ShardRun;
use crate::error::{CliError, CliResult};
use crate::job::Job;

/// The coordinator of `spar datagen --slurm`: shard I plays games I, I+N, …; the merge
/// writes them in game order into --out.
pub(super) fn coordinate(mut args: DatagenArgs, job: &dyn Job) -> CliResult {
    if args.positions.is_some() {
        return Err(CliError::usage(
            "--positions cannot be sharded (where a shard stops depends on the others): give --games N with --slurm",
        ));
    }
    setup::shard_cpus(&mut args.run, &args.slurm)?;
    let resume = args.resume;
    let cluster = setup::prepare(&args.slurm, resume)?;
    // Checks every option (and the --out paths) as a local run would.
    let checked = plan(&args)?;
    let Target::Games(games) = checked.target else {
        unreachable!("--positions is refused above")
    };
    let paths = checked.format.paths(&checked.out);
    let has_games = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
    if has_games && !resume {
        return Err(CliError::usage(format!(
            "--out {} already holds games: choose a new file (the merge of the shards writes it)",
            checked.out.display()
        )));
    }
    args.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let manifest = if resume {
        setup::reattach(&cluster, "datagen", &stored)?
    } else {
        let book = args
            .book
            .as_ref()
            .map(|b| vec![b.to_string_lossy().into_owned()]);
        let files: Vec<(String, PathBuf)> = args
            .eval_file
            .iter()
            .map(|f| ("--eval-file".to_string(), f.clone()))
            .collect();
        let mut m = setup::plan_manifest(
            &cluster,
            "datagen",
            stored,
            None,
            &[],
            &[],
            book.as_deref(),
            &files,
            Some(games),
        )?;
        let tables = checked.game.tablebase.as_ref().map(|t| t.files());
        m.pin_tablebases(&cluster.dir, tables.unwrap_or_default())?;
        m
    };
    coordinator::run(&Submission {
        job,
        cluster: &cluster,
        manifest: &manifest,
        quiet: args.run.quiet,
    })
}

/// Plays shard `shard.index` of a datagen run: games I, I+N, … into the shard's own file,
/// continuing it.
pub fn run_shard(args: serde_json::Value, shard: &ShardRun) -> CliResult {
    let mut args: DatagenArgs = serde_json::from_value(args).map_err(|e| {
        CliError::usage(format!(
            "{}: the datagen arguments do not read: {e}",
            shard.dir.display()
        ))
    })?;
    args.out = Some(crate::cluster::shard_positions(&shard.dir, shard.index));
    args.resume = true;
    args.run.concurrency = Some(shard.concurrency);
    args.run.quiet = true;
    args.slurm = SlurmArgs::default();
    let mut plan = plan(&args)?;
    if let Target::Games(g) = plan.target {
        plan.target = Target::Games(shard.stride().count_below(g));
    }
    generate(&args, &plan, Some(shard))
}
