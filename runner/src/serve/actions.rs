//! What the API and the pages' forms do to runs, in one place: submit (checked before
//! anything is stored; a run of an untrusted user waits for an approver), approve, stop,
//! resume, priority, note, delete (the directory moved to the archive, never removed).
//! Each action done is recorded in the actions log ([`action_log::record`]) with `by`,
//! the name of who did it (`None`: a server without accounts).

use std::time::{Duration, Instant};

use serde::Deserialize;

use super::accounts::Caller;
use super::action_log::{self, Action, Target};
use super::db::runs::{NewRun, Run, State, PENDING};
use super::state::AppState;
use super::words;

/// Why an action was refused, and the HTTP status that says so.
#[derive(Debug)]
pub enum Refusal {
    /// 400: bad input; nothing was stored.
    Bad(String),
    /// 403: the caller may not do it.
    Forbidden(String),
    /// 404.
    NotFound(String),
    /// 409: the run's state does not allow it.
    Conflict(String),
    /// 507: the data directory's free space is under `--min-free`.
    InsufficientStorage(String),
    /// 500.
    Internal(String),
}

impl Refusal {
    /// The HTTP status code.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::Bad(_) => 400,
            Refusal::Forbidden(_) => 403,
            Refusal::NotFound(_) => 404,
            Refusal::Conflict(_) => 409,
            Refusal::InsufficientStorage(_) => 507,
            Refusal::Internal(_) => 500,
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Refusal::Bad(m)
            | Refusal::Forbidden(m)
            | Refusal::NotFound(m)
            | Refusal::Conflict(m)
            | Refusal::InsufficientStorage(m)
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
            Refused::Forbidden(m) => Refusal::Forbidden(m),
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

/// Whether a run that `owner` submits waits for an approver: on a server with accounts,
/// unless its owner is trusted, an approver or an admin. Without accounts (no owner) no
/// run waits.
fn waits(st: &AppState, owner: Option<&str>) -> Result<bool, Refusal> {
    let Some(name) = owner else {
        return Ok(false);
    };
    let user = st.store.blocking(|db| db.user(name))?;
    Ok(user.is_none_or(|u| u.role == "user" && !u.trusted))
}

/// Checks and stores a new run (queued, or waiting for an approver: [`waits`]); nothing
/// is stored when it is refused: first of all while the data directory's free space is
/// under `--min-free` (507). The checks are static: no engine process, no git, no
/// build (DESIGN.md §13, "Nothing runs before approval"). A run that names registered
/// engines is stored unbuilt: the scheduler's builder builds them once it is queued
/// ([`super::builder`]). Blocking: the check reads files.
pub fn submit(st: &AppState, s: &Submit) -> Result<Run, Refusal> {
    if let Some(why) = st.sched.space().refusal() {
        return Err(Refusal::InsufficientStorage(why));
    }
    words::check_owned(&s.kind, &s.words).map_err(Refusal::Bad)?;
    st.files
        .check(&s.words, s.owner.is_some())
        .map_err(Refusal::Forbidden)?;
    let slurm = st.sched.slurm().is_some();
    super::nps_scale::check(&s.words, st.sched.reference_nps(), slurm).map_err(Refusal::Bad)?;
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
    let scratch = st.scratch()?;
    // Nets named in the words (`net=NAME`), and the engines' default nets, become
    // `option.EvalFile=DATA/nets/SHA` first: `engine=NAME` still says whose default it is.
    let (words, nets) = super::nets::words::expand(st, &s.words).map_err(Refusal::Bad)?;
    // Registered engines named in the words are checked without git or a build; the words
    // are checked with this spar standing in for their builds (the check starts no engine).
    let stand_in = std::env::current_exe()
        .map_err(|e| Refusal::Internal(format!("cannot find this spar's binary: {e}")))?;
    let (checked, engines) = super::engine_words::plan(st, &words, &stand_in)?;
    // The opt-in of clock scaling is the server's word: the child never sees it.
    let plain = super::nps_scale::strip(&checked);
    (st.check)(&s.kind, &plain, scratch.path()).map_err(Refusal::Bad)?;
    drop(scratch);
    let waits = waits(st, s.owner.as_deref())?;
    let then = if waits {
        ": it waits for an approver"
    } else {
        ""
    };
    // Stored with its engines as named and marked unbuilt as one unit of the database (and
    // under one lock: the scheduler never sees it built before its engines are, a crash
    // never leaves it half stored).
    let run = st.store.blocking(|db| {
        db.atomically(|db| {
            let run = db.insert(
                &NewRun {
                    kind: &s.kind,
                    words: &words,
                    priority,
                    throughput,
                    note: &note,
                    cwd: &st.cwd,
                    owner: s.owner.as_deref(),
                    waits,
                },
                |id| claim_dir(st, id),
            )?;
            // A registered repository (`--repo NAME`) is expanded by the builder too.
            if !engines.is_empty() || super::repo_words::names_repo(&words) {
                db.mark_unbuilt(run.id)?;
            }
            if !engines.is_empty() {
                db.insert_run_engines(run.id, &engines)?;
            }
            if !nets.is_empty() {
                db.insert_run_nets(run.id, &nets)?;
            }
            // In the same unit: the scheduler may start the run as soon as it is stored,
            // and the event log has its submission before its start.
            db.event(
                Some(run.id),
                "submit",
                &format!("run {}: spar {} submitted{then}", run.id, run.kind),
            )?;
            Ok(run)
        })
    })?;
    let detail = format!("spar {}{then}", run.kind);
    log(st, s.owner.as_deref(), Action::Submit, run.id, &detail);
    st.sched.wake();
    Ok(run)
}

/// Approves a run that waits (an approver's or an admin's, never its owner's): it is
/// queued, with who approved it and when. Approving a run approved already changes
/// nothing; a run that never waited is a 409.
pub fn approve(st: &AppState, id: i64, caller: &Caller) -> Result<Run, Refusal> {
    let run = get(st, id)?;
    if !caller.accounts {
        return Err(Refusal::Conflict(format!(
            "run {id} needs no approval: this server has no accounts (one person)"
        )));
    }
    let Some(user) = caller.user.as_ref().filter(|_| caller.acts_on_any_run()) else {
        return Err(Refusal::Forbidden(format!(
            "run {id}: only an approver or an admin approves runs (ask an admin for the role)"
        )));
    };
    let owner = st.store.blocking(|db| db.run_owner(id))?.flatten();
    if owner.as_deref() == Some(user.name.as_str()) {
        return Err(Refusal::Forbidden(format!(
            "run {id} is yours: another approver or an admin must approve it"
        )));
    }
    if run.approved_by.is_some() {
        return Ok(run);
    }
    if run.state != PENDING {
        return Err(Refusal::Conflict(format!(
            "run {id} is {}: only a run that waits for approval ({PENDING}) is approved",
            run.state
        )));
    }
    if st.store.blocking(|db| db.approve(id, &user.name))? {
        event(
            st,
            id,
            "approve",
            &format!("run {id} approved by {}: queued", user.name),
        );
        log(st, Some(&user.name), Action::Approve, id, "");
        st.sched.wake();
    }
    get(st, id)
}

/// The run `id`, not deleted.
pub fn get(st: &AppState, id: i64) -> Result<Run, Refusal> {
    match st.store.blocking(|db| db.get(id))? {
        Some(r) if !r.deleted => Ok(r),
        _ => Err(Refusal::NotFound(format!("no run {id}"))),
    }
}

/// Stops a queued or running run (its child stops gracefully and keeps what is complete).
pub fn stop(st: &AppState, id: i64, by: Option<&str>) -> Result<Run, Refusal> {
    let run = get(st, id)?;
    if !run.state.plays() {
        return Err(Refusal::Conflict(format!(
            "run {id} is {}: only a queued or running run stops",
            run.state
        )));
    }
    st.store.blocking(|db| db.set_state(id, State::Stopped))?;
    event(
        st,
        id,
        "stop",
        &format!("run {id} stopped (it was {})", run.state),
    );
    log(st, by, Action::Stop, id, &format!("it was {}", run.state));
    st.sched.wake();
    get(st, id)
}

/// Queues a stopped or failed run again; it resumes from its files.
pub fn resume(st: &AppState, id: i64, by: Option<&str>) -> Result<Run, Refusal> {
    let run = get(st, id)?;
    if !run.state.resumable() {
        return Err(Refusal::Conflict(format!(
            "run {id} is {}: only a stopped or failed run resumes",
            run.state
        )));
    }
    st.store.blocking(|db| db.set_state(id, State::Queued))?;
    event(
        st,
        id,
        "resume",
        &format!(
            "run {id} queued again (it was {}): it resumes from its files",
            run.state
        ),
    );
    log(st, by, Action::Resume, id, &format!("it was {}", run.state));
    st.sched.wake();
    get(st, id)
}

/// Sets a run's priority and throughput (the cores are shared again).
pub fn priority(st: &AppState, id: i64, p: i64, t: i64, by: Option<&str>) -> Result<Run, Refusal> {
    get(st, id)?;
    check_schedule(p, t)?;
    st.store.blocking(|db| db.set_priority(id, p, t))?;
    event(
        st,
        id,
        "priority",
        &format!("run {id}: priority {p}, throughput {t}"),
    );
    let detail = format!("priority {p}, throughput {t}");
    log(st, by, Action::Priority, id, &detail);
    st.sched.wake();
    get(st, id)
}

/// Sets a run's note.
pub fn note(st: &AppState, id: i64, note: &str, by: Option<&str>) -> Result<Run, Refusal> {
    get(st, id)?;
    if note.len() > MAX_NOTE {
        return Err(Refusal::Bad(format!("a note has at most {MAX_NOTE} bytes")));
    }
    st.store.blocking(|db| db.set_note(id, note))?;
    log(st, by, Action::Note, id, &format!("{} bytes", note.len()));
    get(st, id)
}

/// Deletes a run: its child is stopped, its directory MOVED to `DATA/archive/ID` (never
/// removed), its row marked deleted. Blocking: waits for the child to end.
pub fn delete(st: &AppState, id: i64, by: Option<&str>) -> Result<Run, Refusal> {
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
    st.store.blocking(|db| db.set_deleted(id, &shown))?;
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
    log(st, by, Action::Delete, id, &format!("files in {shown}"));
    st.store
        .blocking(|db| Ok(db.get(id)?.expect("the run is still in the database")))
}

/// Makes the directory of new run `id` (`create_dir`, not `create_dir_all`: `runs/` is
/// there): its path, or `None` when it exists already (an orphan, which stays untouched).
fn claim_dir(st: &AppState, id: i64) -> Result<Option<String>, String> {
    let dir = st.run_dir(id);
    match std::fs::create_dir(&dir) {
        Ok(()) => Ok(Some(dir.to_string_lossy().into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
        Err(e) => Err(format!(
            "{}: cannot make the run's directory: {e}",
            dir.display()
        )),
    }
}

/// Records an event of run `id` (a failure to record it is only reported).
fn event(st: &AppState, id: i64, kind: &str, message: &str) {
    if let Err(e) = st.store.blocking(|db| db.event(Some(id), kind, message)) {
        eprintln!("spar serve: event log: {e}");
    }
}

/// Records an action on run `id` in the actions log.
fn log(st: &AppState, by: Option<&str>, action: Action, id: i64, detail: &str) {
    action_log::record(&st.store, by, action, Target::Run(id), detail);
}
