//! What the API and the pages' forms do to runs, in one place: submit (checked before
//! anything is stored), stop, resume, priority, note, delete (the directory moved to the
//! archive, never removed).

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::db::runs::{NewRun, Run};
use super::state::AppState;
use super::words;

/// Why an action was refused, and the HTTP status that says so.
#[derive(Debug)]
pub enum Refusal {
    /// 400: bad input; nothing was stored.
    Bad(String),
    /// 404.
    NotFound(String),
    /// 409: the run's state does not allow it.
    Conflict(String),
    /// 500.
    Internal(String),
}

impl Refusal {
    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Bad(_) => 400,
            Refusal::NotFound(_) => 404,
            Refusal::Conflict(_) => 409,
            Refusal::Internal(_) => 500,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Refusal::Bad(m)
            | Refusal::NotFound(m)
            | Refusal::Conflict(m)
            | Refusal::Internal(m) => m,
        }
    }
}

impl From<String> for Refusal {
    fn from(e: String) -> Self {
        Refusal::Internal(e)
    }
}

impl From<super::engines::Refused> for Refusal {
    fn from(e: super::engines::Refused) -> Self {
        use super::engines::Refused;
        match e {
            Refused::Bad(m) => Refusal::Bad(m),
            Refused::NotFound(m) => Refusal::NotFound(m),
            Refused::Conflict(m) => Refusal::Conflict(m),
            Refused::Internal(m) => Refusal::Internal(m),
        }
    }
}

/// A new run, as the API takes it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Submit {
    pub kind: String,
    pub words: Vec<String>,
    pub priority: Option<i64>,
    pub throughput: Option<i64>,
    pub note: Option<String>,
    /// Who submits it: the signed-in account (never read from the request's body).
    #[serde(skip)]
    pub owner: Option<String>,
}

/// The most words, and the longest note, a run may have.
const MAX_WORDS: usize = 1000;
const MAX_NOTE: usize = 10_000;

/// The default throughput (OpenBench's unit: shares are proportional to it).
pub const DEFAULT_THROUGHPUT: i64 = 100;

fn check_schedule(priority: i64, throughput: i64) -> Result<(), Refusal> {
    if !(-1_000_000..=1_000_000).contains(&priority) {
        return Err(Refusal::Bad(format!(
            "priority {priority}: from -1000000 to 1000000"
        )));
    }
    if !(1..=1_000_000).contains(&throughput) {
        return Err(Refusal::Bad(format!(
            "throughput {throughput}: from 1 to 1000000"
        )));
    }
    Ok(())
}

/// Checks and stores a new run (queued); nothing is stored when it is refused. Blocking:
/// the check reads files and may start engines (their `uci` answer).
pub fn submit(st: &AppState, s: &Submit) -> Result<Run, Refusal> {
    words::check_owned(&s.kind, &s.words).map_err(Refusal::Bad)?;
    if s.words.len() > MAX_WORDS {
        return Err(Refusal::Bad(format!("at most {MAX_WORDS} words")));
    }
    let note = s.note.clone().unwrap_or_default();
    if note.len() > MAX_NOTE {
        return Err(Refusal::Bad(format!("a note has at most {MAX_NOTE} bytes")));
    }
    let priority = s.priority.unwrap_or(0);
    let throughput = s.throughput.unwrap_or(DEFAULT_THROUGHPUT);
    check_schedule(priority, throughput)?;
    let tmp = st.data_dir.join("tmp");
    std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let scratch = tempfile::Builder::new()
        .prefix("check-")
        .tempdir_in(&tmp)
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    // Registered engines named in the words are built (or found in the cache) and
    // replaced by their builds' `cmd=`: the run stores and plays the expanded words.
    // Nets named in the words (`net=NAME`), and the engines' default nets, become
    // `option.EvalFile=DATA/nets/SHA` first: `engine=NAME` still says whose default it is.
    let (words, nets) = super::nets::words::expand(st, &s.words).map_err(Refusal::Bad)?;
    let (words, engines) = super::engines::expand(st, &words)?;
    (st.check)(&s.kind, &words, scratch.path()).map_err(Refusal::Bad)?;
    drop(scratch);
    let run = st.db.lock().expect("db lock").insert(
        &NewRun {
            kind: &s.kind,
            words: &words,
            priority,
            throughput,
            note: &note,
            cwd: &st.cwd,
            owner: s.owner.as_deref(),
        },
        |id| st.run_dir(id).to_string_lossy().into_owned(),
    )?;
    if !engines.is_empty() {
        st.db
            .lock()
            .expect("db lock")
            .insert_run_engines(run.id, &engines)?;
    }
    if !nets.is_empty() {
        st.db
            .lock()
            .expect("db lock")
            .insert_run_nets(run.id, &nets)?;
    }
    std::fs::create_dir_all(&run.dir).map_err(|e| format!("{}: {e}", run.dir))?;
    event(
        st,
        run.id,
        "submit",
        &format!("run {}: spar {} submitted", run.id, run.kind),
    );
    st.sched.wake();
    Ok(run)
}

/// The run `id`, not deleted.
pub fn get(st: &AppState, id: i64) -> Result<Run, Refusal> {
    match st.db.lock().expect("db lock").get(id)? {
        Some(r) if !r.deleted => Ok(r),
        _ => Err(Refusal::NotFound(format!("no run {id}"))),
    }
}

/// Stops a queued or running run (its child stops gracefully and keeps what is complete).
pub fn stop(st: &AppState, id: i64) -> Result<Run, Refusal> {
    let run = get(st, id)?;
    if !matches!(run.state.as_str(), "queued" | "running") {
        return Err(Refusal::Conflict(format!(
            "run {id} is {}: only a queued or running run stops",
            run.state
        )));
    }
    st.db.lock().expect("db lock").set_state(id, "stopped")?;
    event(
        st,
        id,
        "stop",
        &format!("run {id} stopped (it was {})", run.state),
    );
    st.sched.wake();
    get(st, id)
}

/// Queues a stopped or failed run again; it resumes from its files.
pub fn resume(st: &AppState, id: i64) -> Result<Run, Refusal> {
    let run = get(st, id)?;
    if !matches!(run.state.as_str(), "stopped" | "failed") {
        return Err(Refusal::Conflict(format!(
            "run {id} is {}: only a stopped or failed run resumes",
            run.state
        )));
    }
    st.db.lock().expect("db lock").set_state(id, "queued")?;
    event(
        st,
        id,
        "resume",
        &format!(
            "run {id} queued again (it was {}): it resumes from its files",
            run.state
        ),
    );
    st.sched.wake();
    get(st, id)
}

/// Sets a run's priority and throughput (the cores are shared again).
pub fn priority(st: &AppState, id: i64, p: i64, t: i64) -> Result<Run, Refusal> {
    get(st, id)?;
    check_schedule(p, t)?;
    st.db.lock().expect("db lock").set_priority(id, p, t)?;
    event(
        st,
        id,
        "priority",
        &format!("run {id}: priority {p}, throughput {t}"),
    );
    st.sched.wake();
    get(st, id)
}

/// Sets a run's note.
pub fn note(st: &AppState, id: i64, note: &str) -> Result<Run, Refusal> {
    get(st, id)?;
    if note.len() > MAX_NOTE {
        return Err(Refusal::Bad(format!("a note has at most {MAX_NOTE} bytes")));
    }
    st.db.lock().expect("db lock").set_note(id, note)?;
    get(st, id)
}

/// Deletes a run: its child is stopped, its directory MOVED to `DATA/archive/ID` (never
/// removed), its row marked deleted. Blocking: waits for the child to end.
pub fn delete(st: &AppState, id: i64) -> Result<Run, Refusal> {
    let run = get(st, id)?;
    let archive = st.data_dir.join("archive");
    std::fs::create_dir_all(&archive).map_err(|e| format!("{}: {e}", archive.display()))?;
    let mut target = archive.join(id.to_string());
    let mut n = 1;
    while target.exists() {
        target = archive.join(format!("{id}.{n}"));
        n += 1;
    }
    let shown = target.to_string_lossy().into_owned();
    st.db.lock().expect("db lock").set_deleted(id, &shown)?;
    st.sched.wake();
    let until = Instant::now() + Duration::from_secs(90);
    while st.sched.has_child(id) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    if st.sched.has_child(id) {
        return Err(Refusal::Internal(format!(
            "run {id}: its child did not stop; its directory stays in {}",
            run.dir
        )));
    }
    if std::path::Path::new(&run.dir).exists() {
        std::fs::rename(&run.dir, &target)
            .map_err(|e| format!("cannot move {} to {shown}: {e}", run.dir))?;
    }
    eprintln!("spar serve: run {id} deleted: its files are in {shown}");
    event(
        st,
        id,
        "delete",
        &format!("run {id} deleted: its files are in {shown}"),
    );
    let db = st.db.lock().expect("db lock");
    Ok(db.get(id)?.expect("the run is still in the database"))
}

/// Records an event of run `id` (a failure to record it is only reported).
fn event(st: &AppState, id: i64, kind: &str, message: &str) {
    if let Err(e) = st
        .db
        .lock()
        .expect("db lock")
        .event(Some(id), kind, message)
    {
        eprintln!("spar serve: event log: {e}");
    }
}
