//! What every handler shares: the database's [`Store`], the scheduler, the data directory, and the
//! check of a run's words that `cmd/serve.rs` hands in (the same clap command and plan
//! checks as the CLI's; `cmd/` is imported by nothing, so the server is given it).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;

use super::scheduler::Scheduler;
use super::store::Store;

/// Checks a run's words as `spar KIND WORDS…` would before its first game, with the
/// server's output flags pointing into the scratch directory given: `Err` is the message.
pub type CheckWords = fn(kind: &str, words: &[String], scratch: &Path) -> Result<(), String>;

/// The server's shared state.
pub struct AppState {
    /// The database, behind its one handle ([`Store`]: nothing else takes its lock).
    pub store: Store,
    pub sched: Arc<Scheduler>,
    /// The data directory (absolute).
    pub data_dir: PathBuf,
    /// Where runs are checked and started (relative paths in their words).
    pub cwd: String,
    pub check: CheckWords,
    /// What the files a run's words name may be ([`super::file_access`]).
    pub files: super::file_access::FileAccess,
    /// The largest net file an upload may have, in bytes (`--net-limit`).
    pub net_limit: u64,
    /// When a shard's or machine's residual is flagged (`--residual-threshold`,
    /// `--residual-min-games`).
    pub residuals: super::residuals::Limits,
    /// The live streams (`GET /api/runs/{id}/events`) open now; at most
    /// [`super::handlers::stream::MAX_STREAMS`].
    pub streams: AtomicUsize,
    /// Set when the server stops serving: every live stream ends (so that the graceful
    /// shutdown does not wait for them).
    pub closing: AtomicBool,
    /// Whether the session cookie gets `Secure` (TLS served here or by a proxy in front).
    pub secure_cookie: bool,
    /// Every run's live numbers, kept up to date from its files ([`super::cache`]).
    pub cache: Arc<super::cache::RunCache>,
}

impl AppState {
    /// A fresh directory under `DATA/tmp` (removed when dropped), where a check of a run's
    /// words points the run's output flags.
    pub fn scratch(&self) -> Result<tempfile::TempDir, String> {
        let tmp = self.data_dir.join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        tempfile::Builder::new()
            .prefix("check-")
            .tempdir_in(&tmp)
            .map_err(|e| format!("{}: {e}", tmp.display()))
    }

    /// The directory of run `id`.
    pub fn run_dir(&self, id: i64) -> PathBuf {
        self.data_dir.join("runs").join(id.to_string())
    }
}

/// The state as handlers receive it.
pub type Shared = Arc<AppState>;
