//! A cluster run's set-up, before the coordinator takes over ([`super::coordinator::run`]):
//!
//! 1. [`prepare`] checks the cluster options, the Slurm tools and the run directory (before
//!    anything is built or submitted), and takes the run directory's lock.
//! 2. [`plan_manifest`] copies `git=`/`features=` builds into the run directory and writes
//!    the manifest (with [`pin_tables`] for the Syzygy tables a run probes); [`reattach`]
//!    reads it back for `--resume` and refuses other options. [`shard_cpus`] turns
//!    `--cpus-per-shard` into the shards' concurrency.

use std::path::{Path, PathBuf};

use super::manifest::{
    files_in_words, now_secs, EngineFile, HashedFile, Manifest, PinnedFile, SCHEMA,
};
use super::slurm;
use crate::cli::SlurmArgs;
use crate::engines::variant::{Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::lock::{self, Lock};
use crate::plan::{MatchPlan, Run};

/// The checked cluster options.
pub struct Cluster {
    /// The run directory (absolute).
    pub dir: PathBuf,
    /// Shards of a new run.
    pub shards: u64,
    /// CPUs per task.
    pub cpus: usize,
    /// Extra sbatch options.
    pub sbatch_args: Vec<String>,
    /// Write the manifest only.
    pub plan_only: bool,
    /// The run directory's lock, held while this coordinator lives.
    _lock: Lock,
}

/// The games a shard plays at once, `--cpus-per-shard` (1 by default), put into `run` as
/// its concurrency; `--concurrency` itself does not apply to a cluster run.
pub fn shard_cpus(run: &mut crate::cli::RunArgs, slurm: &SlurmArgs) -> CliResult<usize> {
    if run.concurrency.is_some() {
        return Err(CliError::usage(
            "--concurrency does not apply to --slurm: each shard plays --cpus-per-shard games at once",
        ));
    }
    let cpus = slurm.cpus_per_shard.unwrap_or(1);
    run.concurrency = Some(cpus);
    Ok(cpus)
}

/// Pins the Syzygy tables a run reads (those of `--tb` and of every engine's
/// `option.SyzygyPath`, each file once) in its manifest.
pub fn pin_tables(
    m: &mut Manifest,
    dir: &Path,
    adjudication: &crate::play::adjudication::Adjudication,
    variants: &[Variant],
) -> CliResult {
    let mut tables = adjudication
        .tb
        .as_ref()
        .map(|t| t.files())
        .unwrap_or_default();
    for t in variants.iter().filter_map(|v| v.tablebases.as_ref()) {
        tables.extend(t.files());
    }
    tables.sort();
    tables.dedup();
    m.pin_tablebases(dir, tables)
}

/// Checks the cluster options, the Slurm tools and the run directory.
pub fn prepare(a: &SlurmArgs, resume: bool) -> CliResult<Cluster> {
    let dir = a.run_dir.as_ref().ok_or_else(|| {
        CliError::usage(
            "--slurm needs --run-dir DIR: a directory on a filesystem every node shares",
        )
    })?;
    let shards = a.shards.unwrap_or(SlurmArgs::DEFAULT_SHARDS);
    if shards == 0 || shards > super::manifest::MAX_SHARDS {
        return Err(CliError::usage(format!(
            "--shards {shards}: give 1 to {} array tasks",
            super::manifest::MAX_SHARDS
        )));
    }
    let cpus = a.cpus_per_shard.unwrap_or(1);
    if cpus == 0 {
        return Err(CliError::usage("--cpus-per-shard must be at least 1"));
    }
    if !a.plan_only {
        slurm::check_tools()?;
    }
    if a.plan_only && resume {
        return Err(CliError::usage(
            "--plan-only writes a new run: leave out --resume",
        ));
    }
    let dir = std::path::absolute(dir)
        .map_err(|e| CliError::usage(format!("--run-dir {}: {e}", dir.display())))?;
    let unwritable = |e: std::io::Error| {
        CliError::usage(format!(
            "--run-dir {} is not a writable directory: {e} (give a directory you can write, \
             on a filesystem every node shares)",
            dir.display()
        ))
    };
    std::fs::create_dir_all(&dir).map_err(unwritable)?;
    tempfile::tempfile_in(&dir).map_err(unwritable)?;
    let lock = lock::acquire(
        &super::coordinator_lock(&dir),
        &format!("--run-dir {}", dir.display()),
    )?;
    let has_manifest = Manifest::path(&dir).exists();
    if has_manifest && !resume {
        return Err(CliError::usage(format!(
            "--run-dir {} already holds a run: add --resume to reattach to it, or give a new --run-dir",
            dir.display()
        )));
    }
    if resume && !has_manifest {
        return Err(CliError::usage(format!(
            "--resume: --run-dir {} holds no run (no manifest.json): leave out --resume to start one",
            dir.display()
        )));
    }
    Ok(Cluster {
        dir,
        shards,
        cpus,
        sbatch_args: a.sbatch_args.clone(),
        plan_only: a.plan_only,
        _lock: lock,
    })
}

/// The arguments compared on `--resume`: all but the cluster options and `--quiet`.
fn comparable(args: &serde_json::Value) -> serde_json::Value {
    let mut a = args.clone();
    if let Some(o) = a.as_object_mut() {
        o.remove("slurm");
        if let Some(r) = o.get_mut("run").and_then(|r| r.as_object_mut()) {
            r.remove("quiet");
        }
    }
    a
}

/// Reads the manifest of a run to reattach to; the command and its arguments must be the
/// ones the run was started with.
pub fn reattach(c: &Cluster, command: &str, args: &serde_json::Value) -> CliResult<Manifest> {
    let m = Manifest::read(&c.dir)?;
    if m.command != command {
        return Err(CliError::usage(format!(
            "--resume: the run in {} is a `spar {}` run, not `spar {command}`",
            c.dir.display(),
            m.command
        )));
    }
    let (then, now) = (comparable(&m.args), comparable(args));
    if then != now {
        let key = first_difference(&then, &now, "");
        return Err(CliError::usage(format!(
            "--resume: the options differ from the run in {} ({key}); resume with the same options or start a new --run-dir",
            c.dir.display()
        )));
    }
    Ok(m)
}

/// The first key where two JSON values differ, as `a.b`.
fn first_difference(a: &serde_json::Value, b: &serde_json::Value, at: &str) -> String {
    if let (Some(x), Some(y)) = (a.as_object(), b.as_object()) {
        for (k, v) in x {
            let here = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            match y.get(k) {
                Some(w) if w == v => {}
                Some(w) => return first_difference(v, w, &here),
                None => return here,
            }
        }
    }
    format!("{at}: {a} then, {b} now")
}

/// Writes the manifest of a new run: built engines are copied into the run directory,
/// external engines, the book, every file in `files` (what names it, path: networks,
/// parameter files) and this spar binary are hashed.
#[allow(clippy::too_many_arguments)]
pub fn plan_manifest(
    c: &Cluster,
    command: &str,
    args: serde_json::Value,
    plan: Option<crate::plan::MatchPlan>,
    variants: &[Variant],
    built: &[bool],
    book: Option<&[String]>,
    files: &[(String, PathBuf)],
    total: Option<u64>,
) -> CliResult<Manifest> {
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::failure(format!("cannot read the current directory: {e}")))?;
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(format!("cannot find the spar binary: {e}")))?;
    let mut engines = Vec::new();
    for (seat, v) in variants.iter().enumerate() {
        let Source::Uci { cmd, .. } = &v.source else {
            continue;
        };
        let found = crate::plan::which(cmd).ok_or_else(|| {
            CliError::usage(format!(
                "engine '{}': cannot find executable '{cmd}'",
                v.name
            ))
        })?;
        let is_built = built.get(seat).copied().unwrap_or(false);
        let path = if is_built {
            let to = c.dir.join("engines").join(seat.to_string()).join("spar");
            std::fs::create_dir_all(to.parent().expect("parent"))
                .map_err(|e| CliError::usage(format!("cannot create {}: {e}", to.display())))?;
            std::fs::copy(&found, &to).map_err(|e| {
                CliError::failure(format!(
                    "cannot copy {} to {}: {e}",
                    found.display(),
                    to.display()
                ))
            })?;
            to
        } else {
            found
        };
        engines.push(EngineFile {
            seat,
            name: v.name.clone(),
            file: HashedFile::of(&path, &cwd, &format!("engine '{}'", v.name))?,
            built: is_built,
        });
    }
    let book = match book.and_then(|w| w.first()) {
        Some(first) => {
            let file = first.strip_prefix("file=").unwrap_or(first);
            Some(HashedFile::of(Path::new(file), &cwd, "--book")?)
        }
        None => None,
    };
    let mut inputs: Vec<PinnedFile> = Vec::new();
    for (what, path) in files {
        let file = HashedFile::of(path, &cwd, what)?;
        if !inputs.iter().any(|p| p.file.path == file.path) {
            inputs.push(PinnedFile {
                what: what.clone(),
                file,
            });
        }
    }
    let m = Manifest {
        schema: SCHEMA,
        spar_version: env!("CARGO_PKG_VERSION").to_string(),
        binary: HashedFile::of(&exe, &cwd, "the spar binary")?,
        command: command.to_string(),
        args,
        cwd,
        command_line: std::env::args().collect(),
        plan,
        engines,
        book,
        inputs,
        // Filled in by the commands that take --tb.
        tablebases: Vec::new(),
        shards: c.shards,
        cpus_per_shard: c.cpus,
        total,
        created: now_secs(),
    };
    m.write(&c.dir)?;
    Ok(m)
}

/// The manifest of a cluster run of a match plan (a match, an SPRT, a report): on `resume`
/// the stored one, checked against `stored` ([`reattach`]); else the plan's variants built
/// once and a new manifest written ([`plan_manifest`]) with the plan's book and every file
/// the engines' words name, the tables pinned.
pub fn match_manifest(
    c: &Cluster,
    command: &str,
    stored: serde_json::Value,
    resume: bool,
    plan: &MatchPlan,
    run: &mut Run,
    quiet: bool,
) -> CliResult<Manifest> {
    if resume {
        return reattach(c, command, &stored);
    }
    let built: Vec<bool> = run
        .variants
        .iter()
        .map(|v| matches!(v.source, Source::Build { .. }))
        .collect();
    run.build_variants(quiet)?;
    let cwd = std::env::current_dir().unwrap_or_default();
    let files: Vec<_> = plan
        .engines
        .iter()
        .flat_map(|e| files_in_words(&format!("engine '{}'", e.name), &e.words, &cwd))
        .collect();
    let mut m = plan_manifest(
        c,
        command,
        stored,
        Some(plan.clone()),
        &run.variants,
        &built,
        plan.book.as_deref(),
        &files,
        plan.pairs,
    )?;
    pin_tables(&mut m, &c.dir, &plan.adjudication, &run.variants)?;
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_compares_all_but_the_cluster_options() {
        let a = serde_json::json!({"games": 10, "run": {"seed": 1, "quiet": true}, "slurm": {"shards": 4}});
        let b = serde_json::json!({"games": 10, "run": {"seed": 2, "quiet": false}, "slurm": {"shards": 8}});
        assert_ne!(comparable(&a), comparable(&b));
        let key = first_difference(&comparable(&a), &comparable(&b), "");
        assert!(key.starts_with("run.seed"), "{key}");
        let c = serde_json::json!({"games": 10, "run": {"seed": 1, "quiet": false}, "slurm": {}});
        assert_eq!(comparable(&a), comparable(&c));
    }
}
