//! What one shard of a cluster run needs besides its command's own code: which shard it
//! is (from the options or the scheduler's environment), how many games it plays at once,
//! the manifest's built engines, the `RUN_DIR/STOP` watch, the horizon and the records of
//! a failure or a pause.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;

use super::manifest::Manifest;
use crate::engines::variant::Source;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::plan::Run;
use crate::play::ordered::Stride;

/// How often a shard looks for `RUN_DIR/STOP`.
pub const STOP_POLL: Duration = Duration::from_millis(250);

/// How long a shard waits for an earlier process of the same shard to let go of it.
pub const LOCK_WAIT: Duration = Duration::from_secs(30);

/// One shard of a run, ready to play.
pub struct ShardRun {
    /// The run directory.
    pub dir: PathBuf,
    /// This shard's index I.
    pub index: u64,
    /// The number of shards N.
    pub count: u64,
    /// Games played at once.
    pub concurrency: usize,
    /// The run's plan.
    pub manifest: Manifest,
    /// This shard's lock, held while it plays.
    _lock: crate::files::lock::Lock,
}

/// Why a shard did not start.
#[derive(Debug)]
pub enum OpenError {
    /// A wrong command line or environment, or a lock another process holds: not the
    /// shard's failure.
    Args(CliError),
    /// The run's binary, engines, book or inputs differ from its manifest: recorded.
    Refused(CliError),
}

/// Reads a variable of the environment (a closure in tests).
pub type Env<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The process environment.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

fn env_number(env: Env, name: &str) -> CliResult<Option<u64>> {
    match env(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            CliError::usage(format!(
                "{name}={v} is not a number: give --index I (and --of N) instead"
            ))
        }),
    }
}

/// The shard index: `--index`, else `SLURM_ARRAY_TASK_ID` (a Slurm array task), else
/// `JOB_COMPLETION_INDEX` (a Kubernetes Indexed Job).
pub fn resolve_index(index: Option<u64>, env: Env) -> CliResult<u64> {
    if let Some(i) = index {
        return Ok(i);
    }
    for name in ["SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"] {
        if let Some(i) = env_number(env, name)? {
            return Ok(i);
        }
    }
    Err(CliError::usage(
        "which shard is this? give --index I, or run it as a Slurm array task \
         (SLURM_ARRAY_TASK_ID) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX)",
    ))
}

/// The number of shards: `--of`, else the manifest's. `SLURM_ARRAY_TASK_COUNT` is not used
/// as the count: a resubmission runs a few of the shards as a smaller array.
pub fn resolve_count(of: Option<u64>, manifest: &Manifest, dir: &Path) -> CliResult<u64> {
    match of {
        Some(n) if n != manifest.shards => Err(CliError::usage(format!(
            "--of {n}: the run in {} has {} shards (leave --of out, or give --of {})",
            dir.display(),
            manifest.shards,
            manifest.shards
        ))),
        _ => Ok(manifest.shards),
    }
}

/// Games at once: `--concurrency`, else `SLURM_CPUS_PER_TASK`, else every core.
pub fn resolve_concurrency(concurrency: Option<usize>, env: Env) -> CliResult<usize> {
    match concurrency {
        Some(0) => Err(CliError::usage("--concurrency must be at least 1")),
        Some(c) => Ok(c),
        None => match env_number(env, "SLURM_CPUS_PER_TASK")? {
            Some(c) if c > 0 => Ok(c as usize),
            _ => Ok(crate::cli::all_cores()),
        },
    }
}

impl ShardRun {
    /// Reads the manifest of `dir` for shard `index` of `of`, checks that this process runs
    /// what it says and takes the shard's lock. Errors come in two kinds: `Err(Args(e))`,
    /// the command line or the environment is wrong (nothing to record: the shard did not
    /// run), and `Err(Refused(e))`, the run's files differ from its manifest (recorded as
    /// the shard's failure, where the coordinator ends the run with its message). `kind`
    /// checks the manifest as its kind of job requires (the job contract's
    /// `check_manifest`), before anything else is done.
    pub fn open(
        dir: &Path,
        index: Option<u64>,
        of: Option<u64>,
        concurrency: Option<usize>,
        env: Env,
        kind: &dyn Fn(&Path, &Manifest) -> CliResult,
    ) -> Result<ShardRun, OpenError> {
        use OpenError::{Args, Refused};
        let index = resolve_index(index, env).map_err(Args)?;
        let concurrency = resolve_concurrency(concurrency, env).map_err(Args)?;
        let manifest = Manifest::read(dir).map_err(Args)?;
        kind(dir, &manifest).map_err(Args)?;
        let count = resolve_count(of, &manifest, dir).map_err(Args)?;
        if index >= count {
            return Err(Args(CliError::usage(format!(
                "shard index {index} is out of range: the run in {} has shards 0..{}",
                dir.display(),
                count - 1
            ))));
        }
        let dir = std::path::absolute(dir)
            .map_err(|e| Args(CliError::usage(format!("{}: {e}", dir.display()))))?;
        let me = super::shard_dir(&dir, index);
        std::fs::create_dir_all(&me).map_err(|e| {
            Args(CliError::failure(format!(
                "cannot create {}: {e}",
                me.display()
            )))
        })?;
        // One process per shard: a requeued task waits for the one before to let go.
        let lock = crate::files::lock::acquire_within(
            &super::shard_lock(&dir, index),
            &format!("shard {index} of {}", dir.display()),
            LOCK_WAIT,
        )
        .map_err(Args)?;
        manifest.verify(&dir).map_err(Refused)?;
        // A failure record of an earlier attempt is void once the shard runs again, and so
        // is a pause at the horizon.
        let _ = std::fs::remove_file(super::shard_failed(&dir, index));
        super::horizon::clear_paused(&dir, index);
        // The machine it plays on, for the server's residuals (a note: never a failure).
        let node = super::machine_name(env);
        let _ = write_atomically(&super::shard_node(&dir, index), &format!("{node}\n"));
        // Its bench speed, when the server asks (a note as well).
        if env(super::SHARD_BENCH_ENV).as_deref() == Some("1") {
            let params = engine::params::Params::defaults();
            let nps = engine::bench::run(engine::bench::DEFAULT_DEPTH, &params).nps();
            let _ = write_atomically(&super::shard_nps(&dir, index), &format!("{nps}\n"));
        }
        Ok(ShardRun {
            dir,
            index,
            count,
            concurrency,
            manifest,
            _lock: lock,
        })
    }

    /// The pairs (or games) of this shard.
    pub fn stride(&self) -> Stride {
        Stride::shard(self.index, self.count)
    }

    /// Turns `git=`/`features=` variants into the binaries the coordinator built into the
    /// run directory (shards never build).
    pub fn use_built(&self, run: &mut Run) -> CliResult {
        for e in self.manifest.engines.iter().filter(|e| e.built) {
            let v = run.variants.get_mut(e.seat).ok_or_else(|| {
                CliError::usage(format!("the manifest names engine seat {}", e.seat))
            })?;
            v.source = Source::Uci {
                cmd: e.file.path.to_string_lossy().into_owned(),
                args: vec!["uci".to_string()],
                dir: None,
            };
        }
        Ok(())
    }

    /// Whether `RUN_DIR/STOP` exists.
    pub fn stopped(&self) -> bool {
        super::stop_file(&self.dir).exists()
    }

    /// Whether the run's pair `pair` may start now: below the run's horizon, or no horizon
    /// (see [`super::horizon`]). Read at each pair's start.
    pub fn admits(&self, pair: u64) -> bool {
        super::horizon::read(&self.dir).is_none_or(|h| pair < h)
    }

    /// Records that this shard stopped before `pair`, at the horizon, for the coordinator
    /// (which resubmits it when the count nears it) and `status`.
    pub fn record_pause(&self, pair: u64) -> CliResult {
        super::horizon::write_paused(&self.dir, self.index, pair)
    }

    /// Raises `flag` within [`STOP_POLL`] of `RUN_DIR/STOP` appearing (a background thread
    /// that ends with the process).
    pub fn watch_stop(&self, flag: Arc<AtomicBool>) {
        let stop = super::stop_file(&self.dir);
        let _ = std::thread::Builder::new()
            .name("spar-stop-watch".into())
            .spawn(move || loop {
                if stop.exists() {
                    flag.store(true, Ordering::SeqCst);
                    return;
                }
                std::thread::sleep(STOP_POLL);
            });
    }

    /// What continues this shard after an interrupt (it has no `--resume`: it always
    /// continues its own records).
    pub fn continue_hint(&self) -> String {
        format!(
            "run `spar shard {} --index {}` again to continue",
            self.dir.display(),
            self.index
        )
    }

    /// What continues a run after an interrupt: the shard's command, or `--resume`.
    pub fn how_to_continue(shard: Option<&ShardRun>) -> String {
        shard.map_or("rerun with --resume to continue".to_string(), |s| {
            s.continue_hint()
        })
    }

    /// Records a failure of this shard for the coordinator and `status`.
    pub fn record_failure(&self, err: &CliError) {
        record_failure(&self.dir, self.index, err);
    }
}

/// Records the failure of shard `index` of the run in `dir` (`RUN_DIR/shards/I/failed.json`):
/// the coordinator ends the run on a refusal (exit 2) and resubmits other failures.
pub fn record_failure(dir: &Path, index: u64, err: &CliError) {
    let path = super::shard_failed(dir, index);
    if let Some(parent) = path.parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    let text = json!({
        "code": err.code,
        "message": err.message,
        "time": super::manifest::now_secs(),
    })
    .to_string();
    let _ = write_atomically(&path, &(text + "\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_index_comes_from_the_option_slurm_or_kubernetes() {
        let slurm = env_of(&[("SLURM_ARRAY_TASK_ID", "3"), ("JOB_COMPLETION_INDEX", "9")]);
        let k8s = env_of(&[("JOB_COMPLETION_INDEX", "5")]);
        let none = env_of(&[]);
        assert_eq!(resolve_index(Some(1), &slurm).unwrap(), 1);
        assert_eq!(resolve_index(None, &slurm).unwrap(), 3);
        assert_eq!(resolve_index(None, &k8s).unwrap(), 5);
        let err = resolve_index(None, &none).unwrap_err();
        assert!(err.message.contains("--index"), "{}", err.message);
        let bad = env_of(&[("JOB_COMPLETION_INDEX", "x")]);
        let err = resolve_index(None, &bad).unwrap_err();
        assert!(
            err.message.contains("JOB_COMPLETION_INDEX=x"),
            "{}",
            err.message
        );
    }

    #[test]
    fn concurrency_comes_from_the_option_or_slurm_cpus() {
        let cpus = env_of(&[("SLURM_CPUS_PER_TASK", "6")]);
        assert_eq!(resolve_concurrency(Some(2), &cpus).unwrap(), 2);
        assert_eq!(resolve_concurrency(None, &cpus).unwrap(), 6);
        assert!(resolve_concurrency(None, &env_of(&[])).unwrap() >= 1);
        assert!(resolve_concurrency(Some(0), &cpus).is_err());
    }
}
