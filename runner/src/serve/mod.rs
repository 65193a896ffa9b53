//! `spar serve`: a front for jobs (DESIGN.md §13). It stores what was asked in SQLite
//! ([`db`]: the index and the history) and starts each run as a child `spar` process with
//! the words a user would type, in its own run directory under the data directory
//! ([`scheduler`], [`words`]); the files are the truth ([`live`] reads a run's status from
//! them with the job contract's status views), so a restarted server continues every run
//! from its files. The room mirrors Atuin's server crate: [`router`] builds the routes in
//! one place, [`handlers`] one file per area, [`settings`] the config, [`pages`] the HTML.
//!
//! `cmd/serve.rs` hands in the check of a run's words ([`state::CheckWords`]): it parses
//! them with the CLI's own clap command, which lives in `cmd/` (imported by nothing else).

pub mod accounts;
pub mod action_log;
pub mod actions;
pub mod api_errors;
pub mod builder;
/// The builds of registered engines (moved to `engines/`, shared with `spar bisect`).
pub use crate::engines::repo_build as builds;
pub mod cache;
pub mod days;
pub mod db;
pub mod disk;
pub mod engine_words;
pub mod engines;
pub mod exposure;
pub mod file_access;
pub mod form_words;
pub mod handlers;
pub mod headers;
pub mod limits;
pub mod live;
pub mod machines;
pub mod names;
pub mod nets;
pub mod nodes;
pub mod nps_scale;
pub mod pages;
pub mod repo_words;
pub mod residuals;
pub mod router;
pub mod scheduler;
pub mod settings;
pub mod share;
pub mod slurm;
pub mod state;
pub mod store;
pub mod tls;
pub mod transport;
pub mod watch;
pub mod words;

use std::path::Path;
use std::sync::Arc;

use crate::error::{CliError, CliResult};
use settings::Settings;
use state::{AppState, CheckWords};

/// Runs the server until it is killed.
pub fn run(settings: Settings, check: CheckWords) -> CliResult {
    let data = &settings.data_dir;
    // Exposure: refused before anything is made (a bind beyond loopback without --public,
    // unreadable TLS files, a public server without an admin).
    let exposure = &settings.exposure;
    exposure
        .check_bind(&settings.bind)
        .map_err(CliError::usage)?;
    let tls = match &exposure.tls {
        Some(files) => Some(tls::config(&files.cert, &files.key).map_err(CliError::usage)?),
        None => None,
    };
    // A `spar.db` that is not one spar may adopt (another program's, a newer spar's, a
    // directory, damaged) is refused before anything is made or locked.
    db::Db::inspect(&data.join("spar.db")).map_err(CliError::usage)?;
    if !data.join("spar.db").is_file() {
        let shown = data.display().to_string();
        exposure
            .check_accounts(false, &shown)
            .map_err(CliError::usage)?;
    }
    std::fs::create_dir_all(data.join("runs")).map_err(|e| {
        CliError::usage(format!("--data-dir {}: cannot create: {e}", data.display()))
    })?;
    let data = std::fs::canonicalize(data)
        .map_err(|e| CliError::usage(format!("--data-dir {}: {e}", data.display())))?;
    // One server per data directory: the lock is freed when this process dies.
    let _lock = crate::files::lock::acquire(
        &data.join("serve.lock"),
        &format!("--data-dir {} (another spar serve uses it)", data.display()),
    )?;
    let db = db::Db::open(&data.join("spar.db")).map_err(CliError::usage)?;
    let has_admin = db.has_admin().map_err(CliError::failure)?;
    exposure
        .check_accounts(has_admin, &data.display().to_string())
        .map_err(CliError::usage)?;
    report_orphans(&data, &db);
    // The reserve holds room to record a run's end on a full disk (made when there is room).
    let space = Arc::new(disk::Space::new(&data, settings.min_free));
    if !space.keep_reserve() {
        eprintln!(
            "spar serve: {}: not made ({} free in {}): made once there is room",
            disk::reserve::path(&data).display(),
            space.free().map_or("?".into(), disk::size::show),
            data.display()
        );
    }
    let store = store::Store::new(db);
    let exe = std::env::current_exe()
        .map_err(|e| CliError::failure(format!("cannot find this spar's binary: {e}")))?;
    let track = track_spar(settings.track_spar.as_deref())?;
    let sched = Arc::new(
        scheduler::Scheduler::new(settings.cores, exe, store.clone(), space)
            .map_err(CliError::failure)?
            .with_slurm(settings.slurm.clone())
            .with_track(track)
            .with_reference_nps(settings.reference_nps),
    );
    let cwd = std::env::current_dir()
        .map_err(|e| CliError::failure(format!("no current directory: {e}")))?;
    let files = file_access::FileAccess::new(&settings.allow_files, &cwd, &data)
        .map_err(CliError::usage)?;
    let state = Arc::new(AppState {
        store,
        sched: sched.clone(),
        data_dir: data.clone(),
        cwd: cwd.to_string_lossy().into_owned(),
        check,
        files,
        net_limit: settings.net_limit,
        residuals: settings.residuals,
        streams: Default::default(),
        closing: Default::default(),
        secure_cookie: exposure.secure_cookie(),
        cache: Default::default(),
    });
    cache::start(state.cache.clone(), state.store.clone()).map_err(CliError::failure)?;
    machines::measure_local(state.store.clone());
    builder::start(state.clone()).map_err(CliError::failure)?;
    watch::watcher::start(state.clone()).map_err(CliError::failure)?;
    let closing = state.clone();
    let sched_handle = sched.clone();
    let db_events = state.store.clone();
    let db_end = state.store.clone();
    std::thread::Builder::new()
        .name("scheduler".into())
        .spawn(move || sched.run())
        .map_err(|e| CliError::failure(format!("cannot start the scheduler: {e}")))?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| CliError::failure(format!("cannot start the server: {e}")))?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind(&settings.bind)
            .await
            .map_err(|e| CliError::usage(format!("--bind {}: {e}", settings.bind)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| CliError::failure(e.to_string()))?;
        let scheme = if tls.is_some() { "https" } else { "http" };
        let backend = match &settings.slurm {
            Some(s) => format!(
                "Slurm: {} shards × {} CPUs per run{}",
                s.shards,
                s.cpus_per_shard,
                s.partition
                    .as_ref()
                    .map_or(String::new(), |p| format!(", partition {p}"))
            ),
            None => format!("{} cores", settings.cores),
        };
        log_event(
            &db_events,
            "server-start",
            &format!("spar serve started on {scheme}://{addr}/ ({backend})"),
        );
        crate::stdout::print(&format!(
            "spar serve: {scheme}://{addr}/ (data in {}, {backend})\n",
            data.display(),
        ))?;
        // Ctrl-C or SIGTERM: stop serving, then stop the children gracefully (a second
        // Ctrl-C exits at once; the children die with the server and resume all the same).
        let stop = crate::interrupt::on_ctrl_c("stopping the runs (they resume at the next start)");
        let stopped = async move {
            while !stop.load(std::sync::atomic::Ordering::SeqCst) {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            closing
                .closing
                .store(true, std::sync::atomic::Ordering::SeqCst);
        };
        if let Some(warning) = settings.exposure.proxy_warning(&addr) {
            eprintln!("{warning}");
        }
        let app = router::build(state);
        transport::serve(listener, tls, app, settings.bounds, stopped).await;
        Ok::<(), CliError>(())
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(1));
    sched_handle.shutdown(std::time::Duration::from_secs(30));
    log_event(&db_end, "server-stop", "spar serve stopped (Ctrl-C or SIGTERM); the runs that were playing resume at the next start");
    eprintln!("spar serve: stopped; the runs that were playing resume at the next start");
    Ok(())
}

/// Reports (never deletes) the run directories that have no row in the database.
fn report_orphans(data: &Path, db: &db::Db) {
    let known: std::collections::HashSet<String> =
        db.dirs().unwrap_or_default().into_iter().collect();
    let Ok(entries) = std::fs::read_dir(data.join("runs")) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        if !known.contains(&path.to_string_lossy().into_owned()) {
            let message = format!(
                "{} has no run in the database: left as it is (move it away, or keep it)",
                path.display()
            );
            eprintln!("spar serve: {message}");
            if let Err(e) = db.event(None, "orphan", &message) {
                eprintln!("spar serve: event log: {e}");
            }
        }
    }
}

/// The spar that plays report runs when it is not this one (`--track-spar PATH`, made
/// absolute): a regular file, else the flag is refused.
fn track_spar(path: Option<&Path>) -> CliResult<Option<std::path::PathBuf>> {
    let Some(p) = path else {
        return Ok(None);
    };
    let refuse = |why: String| {
        CliError::usage(format!(
            "--track-spar {}: {why} (give a spar built with `cargo build --release --features track`)",
            p.display()
        ))
    };
    let abs = std::fs::canonicalize(p).map_err(|e| refuse(e.to_string()))?;
    if !abs.is_file() {
        return Err(refuse("not a file".into()));
    }
    Ok(Some(abs))
}

/// Records a server event (a failure to record it is only reported).
fn log_event(store: &store::Store, kind: &str, message: &str) {
    if let Err(e) = store.blocking(|db| db.event(None, kind, message)) {
        eprintln!("spar serve: event log: {e}");
    }
}
