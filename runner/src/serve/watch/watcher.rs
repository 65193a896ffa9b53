//! The watcher: a thread of its own (as the builder's), never a request. Each second it
//! looks at the watched branches that are due (their poll interval passed, or the push
//! hook poked them) and follows the runs it submitted:
//!
//! - a look fetches the branch (the server's mirror of a URL, or the registered
//!   repository's own refs; hooks off: [`builds::NO_HOOKS`]) and lists the new first-parent
//!   commits since the tip it last saw (`git rev-list --first-parent --reverse OLD..NEW`).
//!   The first look only remembers the tip; a tip that is no descendant of the last one
//!   (history rewritten by a force-push) is remembered and nothing is tested. Each new
//!   commit gets a commit test against its first parent; a push of several commits also a
//!   batch test of its tip against its base; every N commits, an anchor test of the tip
//!   against the anchor.
//! - following: a batch test that ended with H0 gets a bisect of its range, at priority
//!   [`BISECT_PRIORITY`] (below people's runs); a push of one commit whose test failed has
//!   that commit for its answer (found by its own test). A bisect that ended records the
//!   commit it found (`Job::watch_found`).
//!
//! Every run is submitted by [`actions::submit`], as its engine's owner's (or, for an engine
//! without owner, the watch's setter's): approvals, limits and checks all apply, and nothing
//! of a run that waits for approval is built. Every action goes to the event log.

use std::path::Path;
use std::time::Duration;

use super::settings::{ask, kind_for};
use crate::job::WatchRole;
use crate::serve::actions::{self, Submit};
use crate::serve::builds::{self, is_url};
use crate::serve::db::runs::State;
use crate::serve::db::watch::{Watch, WatchCommit, WatchRun};
use crate::serve::state::{AppState, Shared};

/// How often the watcher wakes.
const TICK: Duration = Duration::from_secs(1);

/// The most new commits one look tests (the newest; the others are only logged).
pub const MAX_NEW: usize = 100;

/// The priority of a watch's bisects: below people's runs (whose default is 0), so that a
/// bisect plays when nothing else waits.
pub const BISECT_PRIORITY: i64 = -1;

/// The roles of the runs a watch records besides its commit tests.
pub const BATCH: &str = "batch";
pub const BISECT: &str = "bisection";
pub const ANCHOR: &str = "anchor";

/// Starts the watcher thread (it never returns).
pub fn start(st: Shared) -> Result<(), String> {
    std::thread::Builder::new()
        .name("watcher".into())
        .spawn(move || loop {
            tick(&st);
            std::thread::sleep(TICK);
        })
        .map(|_| ())
        .map_err(|e| format!("cannot start the watcher: {e}"))
}

/// One round: the looks that are due, then the runs to follow.
pub fn tick(st: &AppState) {
    match st.store.blocking(|db| db.due_watches()) {
        Ok(due) => {
            for w in due {
                look(st, &w);
                if let Err(e) = st.store.blocking(|db| db.watch_polled(&w.engine)) {
                    eprintln!("spar serve: watcher: {e}");
                }
            }
        }
        Err(e) => eprintln!("spar serve: watcher: {e}"),
    }
    match st.store.blocking(|db| db.watch_runs(None, true)) {
        Ok(open) => open.iter().for_each(|r| follow(st, r)),
        Err(e) => eprintln!("spar serve: watcher: {e}"),
    }
}

/// Records a watch event of `engine`'s `branch` (a failure to record it is only reported).
fn note(st: &AppState, run: Option<i64>, w: (&str, &str), message: &str) {
    let m = format!("engine {}: branch {}: {message}", w.0, w.1);
    if let Err(e) = st.store.blocking(|db| db.event(run, "watch", &m)) {
        eprintln!("spar serve: event log: {e}");
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// A commit's first parent, subject, author and time.
fn commit_info(source: &Path, sha: &str) -> Result<(String, String, String, i64), String> {
    let out = builds::git(
        source,
        &[
            "log",
            "-1",
            "--no-show-signature",
            "--format=%P%x1f%s%x1f%an%x1f%ct",
            sha,
            "--",
        ],
    )?;
    let mut f = out.trim_end_matches('\n').split('\x1f');
    let parent = f
        .next()
        .unwrap_or("")
        .split(' ')
        .next()
        .unwrap_or("")
        .to_string();
    let subject: String = f.next().unwrap_or("").chars().take(300).collect();
    let author: String = f.next().unwrap_or("").chars().take(100).collect();
    let time = f.next().and_then(|t| t.trim().parse().ok()).unwrap_or(0);
    Ok((parent, subject, author, time))
}

/// Looks at watch `w`'s branch and submits the runs its new commits need.
fn look(st: &AppState, w: &Watch) {
    let at = (w.engine.as_str(), w.branch.as_str());
    let e = match st.store.blocking(|db| db.engine(&w.engine)) {
        Ok(Some(e)) if e.removed.is_none() => e,
        Ok(_) => return note(st, None, at, "the engine is removed: nothing is looked at"),
        Err(e) => return eprintln!("spar serve: watcher: {e}"),
    };
    let source = Path::new(&e.source);
    let head = format!("refs/heads/{}", w.branch);
    let tip = match builds::resolve(&e.name, source, &head, is_url(&e.repo)) {
        Ok(t) => t,
        Err(m) => return note(st, None, at, &format!("cannot read the branch: {m}")),
    };
    let known = match st.store.blocking(|db| db.watch_tip(at.0, at.1)) {
        Ok(k) => k,
        Err(e) => return eprintln!("spar serve: watcher: {e}"),
    };
    let remember = |since: i64| {
        if let Err(e) = st
            .store
            .blocking(|db| db.set_watch_tip(at.0, at.1, &tip, since))
        {
            eprintln!("spar serve: watcher: {e}");
        }
    };
    let Some((old, since)) = known else {
        remember(0);
        return note(
            st,
            None,
            at,
            &format!(
                "first look: its tip is {}; nothing is tested (the commits that come after \
                 it are)",
                short(&tip)
            ),
        );
    };
    if old == tip {
        return;
    }
    let ancestor = builds::git(source, &["merge-base", "--is-ancestor", &old, &tip]).is_ok();
    if !ancestor {
        remember(0);
        return note(
            st,
            None,
            at,
            &format!(
                "history rewritten (a force-push?): {} is no ancestor of the tip {}: the \
                 watch starts again from {}; nothing is tested",
                short(&old),
                short(&tip),
                short(&tip)
            ),
        );
    }
    let listed = builds::git(
        source,
        &[
            "rev-list",
            "--first-parent",
            "--reverse",
            &format!("{old}..{tip}"),
            "--",
        ],
    );
    let mut new: Vec<String> = match listed {
        Ok(out) => out.lines().map(|l| l.trim().to_string()).collect(),
        Err(m) => return note(st, None, at, &format!("git rev-list failed: {m}")),
    };
    if new.len() > MAX_NEW {
        note(
            st,
            None,
            at,
            &format!(
                "{} new commits: only the newest {MAX_NEW} are tested",
                new.len()
            ),
        );
        new.drain(..new.len() - MAX_NEW);
    }
    note(
        st,
        None,
        at,
        &format!(
            "{} new commit{} from {} to {}",
            new.len(),
            if new.len() == 1 { "" } else { "s" },
            short(&old),
            short(&tip)
        ),
    );
    let owner = e.owner.clone().or(w.set_by.clone());
    let batch = new.len() as i64;
    let mut position = st
        .store
        .blocking(|db| db.next_watch_position(at.0, at.1))
        .unwrap_or(1);
    let mut last_run = None;
    for sha in &new {
        let (parent, subject, author, time) = match commit_info(source, sha) {
            Ok(i) => i,
            Err(m) => {
                note(
                    st,
                    None,
                    at,
                    &format!("commit {}: git log failed: {m}", short(sha)),
                );
                continue;
            }
        };
        let run_id = if parent.is_empty() {
            note(
                st,
                None,
                at,
                &format!("commit {}: no parent: not tested", short(sha)),
            );
            None
        } else {
            let what = format!("commit {} ({subject})", short(sha));
            submit(st, w, WatchRole::CommitTest, &parent, sha, 0, &owner, &what)
        };
        last_run = run_id;
        let c = WatchCommit {
            sha: sha.clone(),
            parent,
            subject,
            author,
            time,
            position,
            batch,
            run_id,
        };
        if let Err(e) = st
            .store
            .blocking(|db| db.insert_watch_commit(at.0, at.1, &c))
        {
            eprintln!("spar serve: watcher: {e}");
        }
        position += 1;
    }
    let tip_position = position - 1;
    // The batch: its own test, or (one commit) that commit's test.
    let batch_run = if new.len() > 1 {
        let what = format!("the push {}..{}", short(&old), short(&tip));
        submit(st, w, WatchRole::CommitTest, &old, &tip, 0, &owner, &what)
    } else {
        last_run
    };
    record(st, w, BATCH, batch_run, &old, &tip, tip_position);
    let mut since = since + new.len() as i64;
    if !w.anchor.is_empty() && w.anchor_every > 0 && since >= w.anchor_every as i64 {
        since = 0;
        match builds::resolve(&e.name, source, &w.anchor, false) {
            Ok(anchor) => {
                let what = format!("the tip {} against the anchor {}", short(&tip), w.anchor);
                let run = submit(
                    st,
                    w,
                    WatchRole::AnchorTest,
                    &anchor,
                    &tip,
                    0,
                    &owner,
                    &what,
                );
                record(st, w, ANCHOR, run, &anchor, &tip, tip_position);
            }
            Err(m) => note(st, None, at, &format!("anchor {}: {m}", w.anchor)),
        }
    }
    remember(since);
}

/// Records a run of `role` a watch submitted (`None`: refused).
fn record(st: &AppState, w: &Watch, role: &str, run: Option<i64>, base: &str, tip: &str, pos: i64) {
    let stored = st
        .store
        .blocking(|db| db.insert_watch_run(&w.engine, &w.branch, role, run, base, tip, pos));
    if let Err(e) = stored {
        eprintln!("spar serve: watcher: {e}");
    }
}

/// Submits watch `w`'s run of the kind that plays `role`, of `base` against `tip`, as
/// `owner`'s: its id, or `None` (refused, or no kind plays the role), said in the event log.
#[allow(clippy::too_many_arguments)]
fn submit(
    st: &AppState,
    w: &Watch,
    role: WatchRole,
    base: &str,
    tip: &str,
    priority: i64,
    owner: &Option<String>,
    what: &str,
) -> Option<i64> {
    let at = (w.engine.as_str(), w.branch.as_str());
    let name = match role {
        WatchRole::CommitTest => "commit test",
        WatchRole::AnchorTest => "anchor test",
        WatchRole::Bisect => "bisection",
    };
    let Some(kind) = kind_for(role) else {
        note(
            st,
            None,
            at,
            &format!("{what}: this spar has no kind for a {name}: none submitted"),
        );
        return None;
    };
    let s = Submit {
        kind: kind.command().to_string(),
        words: kind.watch_words(&ask(w, base, tip)),
        priority: Some(priority),
        throughput: None,
        note: Some(format!("watch {} {}: {name} of {what}", at.0, at.1)),
        owner: owner.clone(),
    };
    match actions::submit(st, &s) {
        Ok(run) => {
            let waits = if run.state == State::Pending {
                " (it waits for an approver)"
            } else {
                ""
            };
            note(
                st,
                Some(run.id),
                at,
                &format!("{name} of {what}: run {}{waits}", run.id),
            );
            Some(run.id)
        }
        Err(r) => {
            note(
                st,
                None,
                at,
                &format!("{name} of {what}: refused: {}", r.message()),
            );
            None
        }
    }
}

/// Follows a run a watch submitted: acts on its end once.
fn follow(st: &AppState, r: &WatchRun) {
    let Some(id) = r.run_id else {
        return;
    };
    let at = (r.engine.as_str(), r.branch.as_str());
    let run = match st.store.blocking(|db| db.get(id)) {
        Ok(Some(run)) if !run.deleted => run,
        Ok(_) => return handled(st, r, None),
        Err(e) => return eprintln!("spar serve: watcher: {e}"),
    };
    // A stopped or failed run may be resumed: it is followed until it finishes.
    if run.state != State::Finished {
        return;
    }
    match r.role.as_str() {
        BATCH => {
            let verdict = st.cache.live(&st.store, &run).verdict;
            if verdict.as_deref() != Some("H0") {
                return handled(st, r, None);
            }
            let one = st
                .store
                .blocking(|db| db.watch_commits(at.0, at.1, None))
                .map(|cs| cs.iter().any(|c| c.sha == r.tip && c.batch == 1))
                .unwrap_or(false);
            if one {
                note(
                    st,
                    Some(id),
                    at,
                    &format!(
                        "commit {} failed its test (run {id}, H0): a push of one commit, it \
                         is the answer (found by its own test)",
                        short(&r.tip)
                    ),
                );
                return handled(st, r, Some(&r.tip));
            }
            let Some(w) = st.store.blocking(|db| db.watch(at.0)).ok().flatten() else {
                return handled(st, r, None);
            };
            let mut w = w.0;
            if !w.active {
                note(st, Some(id), at, &format!("the push {}..{} failed its batch test (run {id}); unwatched since: no bisect", short(&r.base), short(&r.tip)));
                return handled(st, r, None);
            }
            w.branch = r.branch.clone();
            let what = format!(
                "{}..{} (its batch test, run {id}, failed)",
                short(&r.base),
                short(&r.tip)
            );
            note(
                st,
                Some(id),
                at,
                &format!("the push {what}: a bisect is submitted"),
            );
            let owner = st
                .store
                .blocking(|db| db.engine(at.0))
                .ok()
                .flatten()
                .and_then(|e| e.owner)
                .or(w.set_by.clone());
            let bisect = submit(
                st,
                &w,
                WatchRole::Bisect,
                &r.base,
                &r.tip,
                BISECT_PRIORITY,
                &owner,
                &what,
            );
            record(st, &w, BISECT, bisect, &r.base, &r.tip, r.position);
            handled(st, r, None);
        }
        BISECT => {
            let found = run.kind.watch_found(Path::new(&run.dir), &run.words);
            let m = match &found {
                Some(sha) => format!("bisect run {id} found {}", short(sha)),
                None => format!("bisect run {id} ended without an answer"),
            };
            note(st, Some(id), at, &m);
            handled(st, r, found.as_deref());
        }
        _ => handled(st, r, None),
    }
}

/// Marks watch run `r` handled, with what it found.
fn handled(st: &AppState, r: &WatchRun, found: Option<&str>) {
    if let Err(e) = st.store.blocking(|db| db.watch_run_handled(r.id, found)) {
        eprintln!("spar serve: watcher: {e}");
    }
}
