//! The builder: the scheduler's second thread, which builds the registered engines of the
//! queued runs before they play (DESIGN.md §13: builds happen in the scheduler, never in
//! an HTTP request; nothing of a run that waits for approval is built). A run that names
//! registered engines is stored unbuilt (`engine=NAME rev=REV`, [`super::engine_words::plan`]);
//! once it is queued (at once, or when approved) the builder resolves and builds each
//! revision ([`super::engine_words::build`]: `git fetch` of a mirror, `make` or cargo, the
//! bench), checks the built words as the CLI does, and stores them: the scheduler starts
//! only built runs. A failure fails the run with its message (the build's last lines).
//! Each step of a build goes to the event log and to the run's `build.log`.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use super::state::{AppState, Shared};

/// How long the builder sleeps when no run waits for a build.
const IDLE: Duration = Duration::from_millis(300);

/// The run file that tells what the builder did.
pub const BUILD_LOG: &str = "build.log";

/// Starts the builder thread (it never returns).
pub fn start(st: Shared) -> Result<(), String> {
    std::thread::Builder::new()
        .name("builder".into())
        .spawn(move || loop {
            let next = st.store.blocking(|db| db.unbuilt());
            match next.as_deref() {
                Ok([id, ..]) => build_run(&st, *id),
                Ok([]) => std::thread::sleep(IDLE),
                Err(e) => {
                    eprintln!("spar serve: builder: {e}");
                    std::thread::sleep(IDLE);
                }
            }
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the builder: {e}"))
}

/// Builds run `id`'s engines and stores its built words, or fails it.
fn build_run(st: &AppState, id: i64) {
    let Ok(Some(run)) = st.store.blocking(|db| db.get(id)) else {
        return;
    };
    let dir = Path::new(&run.dir);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("spar serve: run {id}: {}: {e}", dir.display());
    }
    let note = |kind: &str, message: &str| {
        append(dir, message);
        if let Err(e) = st.store.blocking(|db| db.event(Some(id), kind, message)) {
            eprintln!("spar serve: the event log: {e}");
        }
    };
    append(dir, &format!("run {id}: building its registered engines"));
    match built_words(st, run.kind.as_str(), &run.words, &note) {
        Ok((words, rows)) => {
            let stored = st.store.blocking(|db| db.set_built(id, &words, &rows));
            match stored {
                Ok(()) => append(dir, &format!("run {id}: its engines are built: it plays")),
                Err(e) => eprintln!("spar serve: run {id}: {e}"),
            }
            st.sched.wake();
        }
        Err(message) => {
            append(dir, &message);
            let failed = st.store.blocking(|db| db.build_failed(id, &message));
            let first = message.lines().next().unwrap_or("the build failed");
            match failed {
                Ok(true) => note(
                    "failure",
                    &format!("run {id} failed: its engines were not built: {first}"),
                ),
                Ok(false) => append(
                    dir,
                    &format!("run {id}: its engines were not built; it was stopped meanwhile"),
                ),
                Err(e) => eprintln!("spar serve: run {id}: {e}"),
            }
        }
    }
}

/// The words of a run with its registered engines built, checked as the CLI checks them
/// before its first game, and its engines' rows; `Err` is the message.
fn built_words(
    st: &AppState,
    kind: &str,
    words: &[String],
    note: super::builds::BuildLog,
) -> Result<(Vec<String>, Vec<super::db::engines::RunEngine>), String> {
    let (words, rows) =
        super::engine_words::build(st, words, note).map_err(|e| e.message().to_string())?;
    let scratch = st.scratch()?;
    let plain = super::nps_scale::strip(&words);
    (st.check)(kind, &plain, scratch.path())?;
    Ok((words, rows))
}

/// Appends a line to the run's build log (a failure is only reported).
fn append(dir: &Path, line: &str) {
    let path = dir.join(BUILD_LOG);
    let wrote = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = wrote {
        eprintln!("spar serve: {}: {e}", path.display());
    }
}
