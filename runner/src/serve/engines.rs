//! Registered engines: registration (a name, a git repository, how it is built, who
//! registered it), changes and removals (by its owner or an admin; a plain user's change
//! waits for an approver), and the diff between a run's base and dev commits for its page.
//! The engine words that name one in a run are [`super::engine_words`]'; the builds
//! themselves [`super::builds`]'.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::accounts::Caller;
use super::builds::{self, check_name, is_url, NO_HOOKS};
use super::db::engines::{Engine, RunEngine};
use super::state::AppState;

/// Why an engine action was refused: as the actions' `Refusal` (which takes it as it is:
/// 400, 404, 409, 500).
#[derive(Debug)]
pub enum Refused {
    Bad(String),
    /// 403: the caller may not do it.
    Forbidden(String),
    NotFound(String),
    Conflict(String),
    Internal(String),
}

impl Refused {
    /// The message.
    pub fn message(&self) -> &str {
        match self {
            Refused::Bad(m)
            | Refused::Forbidden(m)
            | Refused::NotFound(m)
            | Refused::Conflict(m)
            | Refused::Internal(m) => m,
        }
    }
}

impl From<String> for Refused {
    fn from(e: String) -> Self {
        Refused::Internal(e)
    }
}

/// A new engine, as the API and the form take it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Register {
    pub name: String,
    /// A path of a git repository the server can read, or a URL.
    pub repo: String,
    /// `make` (default) or `spar`.
    pub build: Option<String>,
}

/// Checks a build's name (`make` when empty).
fn check_build(build: Option<&str>) -> Result<String, Refused> {
    let build = build.map(str::trim).filter(|b| !b.is_empty());
    let build = build.unwrap_or("make");
    if !builds::BUILDS_KINDS.contains(&build) {
        return Err(Refused::Bad(format!(
            "build '{build}': one of {}",
            builds::BUILDS_KINDS.join(", ")
        )));
    }
    Ok(build.to_string())
}

/// A repository as it will be registered: the URL as given, or the absolute path of a git
/// repository the server can read (`git rev-parse --git-dir`, hooks off). Nothing is cloned
/// or fetched.
fn checked_repo(st: &AppState, repo: &str) -> Result<String, Refused> {
    let repo = repo.trim();
    if repo.is_empty()
        || repo.starts_with('-')
        || repo.len() > 1000
        || repo.chars().any(char::is_control)
    {
        return Err(Refused::Bad(format!(
            "repository '{repo}': a path of a git repository or a URL"
        )));
    }
    if is_url(repo) {
        return Ok(repo.to_string());
    }
    let path = Path::new(&st.cwd).join(repo);
    let path = std::fs::canonicalize(&path)
        .map_err(|e| Refused::Bad(format!("repository {repo}: {e}")))?;
    builds::git(&path, &["rev-parse", "--git-dir"]).map_err(|e| {
        Refused::Bad(format!(
            "repository {repo}: not a git repository the server can read ({})",
            e.lines().next().unwrap_or("git failed")
        ))
    })?;
    Ok(path.to_string_lossy().into_owned())
}

/// The repository of engine `name` as registered (an absolute path, or the URL) and the git
/// directory the server reads (the path, or its mirror of the URL, cloned or fetched now).
fn source_of(st: &AppState, name: &str, repo: &str) -> Result<(String, PathBuf), Refused> {
    let repo = checked_repo(st, repo)?;
    if is_url(&repo) {
        let mirror = mirror(st, name, &repo)?;
        return Ok((repo, mirror));
    }
    let path = PathBuf::from(&repo);
    Ok((repo, path))
}

/// The server's mirror of `url` for engine `name`, `DATA/repos/NAME.git`: cloned when
/// missing; an existing one (the name registered before, or its repository changed) is
/// fetched from `url` and follows it from then on. The URL is an argument, never a shell
/// word; git never prompts.
fn mirror(st: &AppState, name: &str, url: &str) -> Result<PathBuf, Refused> {
    let mirror = st.data_dir.join("repos").join(format!("{name}.git"));
    let refuse = |out: std::process::Output| {
        Refused::Bad(format!(
            "repository {url}: cannot clone it: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    };
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(NO_HOOKS)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| Refused::Internal(format!("cannot run git: {e}")))
    };
    let m = mirror.to_string_lossy().into_owned();
    if mirror.exists() {
        let out = git(&[
            "-C",
            &m,
            "fetch",
            "--quiet",
            "--prune",
            "--",
            url,
            "+refs/*:refs/*",
        ])?;
        if !out.status.success() {
            return Err(refuse(out));
        }
        git(&["-C", &m, "remote", "set-url", "origin", "--", url])?;
        return Ok(mirror);
    }
    let parent = mirror.parent().expect("repos/");
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let out = git(&["clone", "--quiet", "--mirror", "--", url, &m])?;
    if !out.status.success() {
        let _ = std::fs::remove_dir_all(&mirror);
        return Err(refuse(out));
    }
    Ok(mirror)
}

/// Registers an engine (a removed engine's name too) for `owner`, the signed-in caller
/// (`None` without accounts); nothing is stored when it is refused.
pub fn register(st: &AppState, r: &Register, owner: Option<&str>) -> Result<Engine, Refused> {
    let name = r.name.trim();
    check_name(name).map_err(Refused::Bad)?;
    let build = check_build(r.build.as_deref())?;
    let taken = |st: &AppState| -> Result<bool, Refused> {
        let e = st.store.blocking(|db| db.engine(name))?;
        Ok(e.is_some_and(|e| e.removed.is_none()))
    };
    if taken(st)? {
        return Err(Refused::Conflict(format!(
            "engine {name} is registered already"
        )));
    }
    let (shown, source) = source_of(st, name, &r.repo)?;
    let source = source.to_string_lossy().into_owned();
    st.store.blocking(|db| {
        if !db.insert_engine(name, &shown, &source, &build, owner)? {
            return Err(Refused::Conflict(format!(
                "engine {name} is registered already"
            )));
        }
        let by = owner.map_or(String::new(), |o| format!(" by {o}"));
        let _ = db.event(
            None,
            "engine",
            &format!("engine {name} registered{by}: {shown} (build {build})"),
        );
        Ok(db.engine(name)?.expect("the engine was stored"))
    })
}

/// A change of a registered engine, as the API and the engines page take it.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// A new repository (a path or a URL); unchanged when absent.
    pub repo: Option<String>,
    /// A new build (`make` or `spar`); unchanged when absent.
    pub build: Option<String>,
}

/// Refuses with a 409 when a queued or running run uses engine `name` (with `resumable`,
/// a stopped or failed one too: it may play again with its build).
fn refuse_in_use(st: &AppState, name: &str, what: &str, resumable: bool) -> Result<(), Refused> {
    let ids = st.store.blocking(|db| db.runs_using(name, resumable))?;
    if ids.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = ids.iter().map(i64::to_string).collect();
    Err(Refused::Conflict(format!(
        "engine {name}: cannot {what} while run{} {} use{} it ({}): {}",
        if ids.len() == 1 { "" } else { "s" },
        list.join(", "),
        if ids.len() == 1 { "s" } else { "" },
        if resumable {
            "queued, running, or stopped or failed: a resumed run plays its build, which a \
             build of the other kind at the same commit would replace"
        } else {
            "queued or running"
        },
        match (resumable, ids.len() == 1) {
            (false, true) => "stop or delete it, or wait until it ends",
            (false, false) => "stop or delete them, or wait until they end",
            (true, true) => "delete it, or wait until it finishes",
            (true, false) => "delete them, or wait until they finish",
        },
    )))
}

/// The registered (not removed) engine `name`.
fn registered(st: &AppState, name: &str) -> Result<Engine, Refused> {
    let e = get(st, name)?;
    if e.removed.is_some() {
        return Err(Refused::NotFound(format!(
            "engine {name} was removed (register it again on /engines)"
        )));
    }
    Ok(e)
}

/// Refuses (403) a caller who may not `what` (change, remove) engine `e`: on a server with
/// accounts only its owner or an admin may; an engine registered before engines had owners
/// only an admin.
pub fn may_change(e: &Engine, caller: &Caller, what: &str) -> Result<(), Refused> {
    if !caller.accounts || caller.is_admin() {
        return Ok(());
    }
    let name = &e.name;
    match &e.owner {
        Some(o) if Some(o.as_str()) == caller.name() => Ok(()),
        Some(o) => Err(Refused::Forbidden(format!(
            "engine {name} is {o}'s: only its owner or an admin may {what} it"
        ))),
        None => Err(Refused::Forbidden(format!(
            "engine {name} was registered before engines had owners: only an admin may {what} it"
        ))),
    }
}

/// Whether the caller is a plain user (not trusted, not an approver or admin) on a server
/// with accounts: their changes of an engine wait for an approver, as their runs do.
fn plain(caller: &Caller) -> bool {
    caller.accounts
        && caller
            .user
            .as_ref()
            .is_some_and(|u| u.role == "user" && !u.trusted)
}

/// What an edit did: the engine, and whether the change waits for an approver (the engine
/// keeps its repository and build until then).
#[derive(Debug)]
pub struct Edited {
    pub engine: Engine,
    pub waits: bool,
}

/// Changes a registered engine's repository or build, for its owner or an admin ([`may_change`];
/// 403 otherwise); refused (409, with the run ids) while a queued or running run uses it.
/// Finished runs keep what they recorded. A plain user's change is checked (a repository
/// path must be a git repository; a URL is not cloned yet) and waits for an approver
/// ([`approve_change`]).
pub fn edit(st: &AppState, name: &str, ed: &Edit, caller: &Caller) -> Result<Edited, Refused> {
    let e = registered(st, name)?;
    may_change(&e, caller, "change")?;
    let build = match &ed.build {
        Some(b) => check_build(Some(b))?,
        None => e.build.clone(),
    };
    let repo = ed
        .repo
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty() && *r != e.repo);
    let unchanged = |e: Engine| Edited {
        engine: e,
        waits: false,
    };
    if repo.is_none() && build == e.build {
        return Ok(unchanged(e));
    }
    if plain(caller) {
        let shown = match repo {
            Some(r) => checked_repo(st, r)?,
            None => e.repo.clone(),
        };
        if shown == e.repo && build == e.build {
            return Ok(unchanged(e));
        }
        let by = caller.name().unwrap_or("-");
        return st.store.blocking(|db| {
            db.set_pending_change(name, &shown, &build, by)?;
            let _ = db.event(
                None,
                "engine",
                &format!(
                    "engine {name}: {by} asks to change it to {shown} (build {build}): the \
                     change waits for an approver"
                ),
            );
            Ok(Edited {
                engine: db.engine(name)?.expect("the engine is stored"),
                waits: true,
            })
        });
    }
    let engine = apply(st, &e, repo, &build, "")?;
    Ok(Edited {
        engine,
        waits: false,
    })
}

/// Approves the change of engine `name` that waits (an approver's or an admin's, never the
/// asker's): it is made as an admin's change would be (409 while a queued or running run
/// uses the engine; a URL is mirrored now); 409 when no change waits.
pub fn approve_change(st: &AppState, name: &str, caller: &Caller) -> Result<Engine, Refused> {
    let e = registered(st, name)?;
    let Some(user) = caller.user.as_ref().filter(|_| caller.acts_on_any_run()) else {
        return Err(Refused::Forbidden(format!(
            "engine {name}: only an approver or an admin approves a change of an engine (ask \
             an admin for the role)"
        )));
    };
    let Some(p) = e.pending.clone() else {
        return Err(Refused::Conflict(format!(
            "engine {name}: no change of it waits for approval"
        )));
    };
    if p.by == user.name {
        return Err(Refused::Forbidden(format!(
            "engine {name}: the change is yours: another approver or an admin must approve it"
        )));
    }
    let repo = (p.repo != e.repo).then_some(p.repo.as_str());
    let asked = format!(" (asked by {}, approved by {})", p.by, user.name);
    apply(st, &e, repo, &p.build, &asked)
}

/// Makes a change of engine `e`: its new repository (`None`: unchanged) and build, the
/// event's message ending with `why`.
fn apply(
    st: &AppState,
    e: &Engine,
    repo: Option<&str>,
    build: &str,
    why: &str,
) -> Result<Engine, Refused> {
    let name = e.name.as_str();
    if repo.is_some() {
        refuse_in_use(st, name, "change its repository", false)?;
    }
    if build != e.build {
        refuse_in_use(st, name, "change its build", true)?;
    }
    let (shown, source) = match repo {
        Some(r) => {
            let (shown, source) = source_of(st, name, r)?;
            (shown, source.to_string_lossy().into_owned())
        }
        None => (e.repo.clone(), e.source.clone()),
    };
    st.store.blocking(|db| {
        db.update_engine(name, &shown, &source, build)?;
        let _ = db.event(
            None,
            "engine",
            &format!("engine {name} changed: {shown} (build {build}){why}"),
        );
        Ok(db.engine(name)?.expect("the engine is stored"))
    })
}

/// Removes a registered engine, for its owner or an admin ([`may_change`]; 403 otherwise):
/// refused (409, with the run ids) while a queued or running run uses it. Its row stays,
/// marked removed (the runs that used it keep their engines, commits and diffs), and so do
/// its cached builds; its name may be registered again.
pub fn remove(st: &AppState, name: &str, caller: &Caller) -> Result<Engine, Refused> {
    let e = registered(st, name)?;
    may_change(&e, caller, "remove")?;
    refuse_in_use(st, name, "remove it", false)?;
    st.store.blocking(|db| {
        db.remove_engine(name)?;
        let _ = db.event(None, "engine", &format!("engine {name} removed"));
        Ok(db.engine(name)?.expect("the engine is kept"))
    })
}

/// The engine `name`.
pub fn get(st: &AppState, name: &str) -> Result<Engine, Refused> {
    st.store
        .blocking(|db| db.engine(name))?
        .ok_or_else(|| Refused::NotFound(format!("no engine '{name}' is registered")))
}

/// The most bytes of a diff, and commits of a log, a run page shows.
const MAX_DIFF: usize = 200_000;
const MAX_COMMITS: usize = 200;

/// What a run's page shows of its registered engines' commits.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Diff {
    pub stat: String,
    pub diff: String,
    /// The diff was longer and is cut at [`MAX_DIFF`] bytes.
    pub truncated: bool,
    /// `git log --oneline base..dev`, at most [`MAX_COMMITS`].
    pub log: String,
    /// Why there is no diff (different engines, git failed).
    pub none: Option<String>,
}

/// The diff base..dev of a run whose first two registered engines are dev and base, once
/// they are built (resolved to commits). No external diff or text conversion of the
/// repository's config runs (`--no-ext-diff --no-textconv`), nor any hook.
pub fn diff(st: &AppState, rows: &[RunEngine]) -> Option<Diff> {
    let (dev, base) = (rows.first()?, rows.get(1)?);
    if dev.sha.is_empty() || base.sha.is_empty() {
        return None;
    }
    if dev.engine != base.engine {
        return Some(Diff {
            none: Some(format!(
                "dev is engine {} and base engine {}: no diff between two repositories",
                dev.engine, base.engine
            )),
            ..Diff::default()
        });
    }
    let e = get(st, &dev.engine).ok()?;
    let src = Path::new(&e.source);
    let range = format!("{}..{}", base.sha, dev.sha);
    let run = || -> Result<Diff, String> {
        let plain = ["diff", "--no-ext-diff", "--no-textconv"];
        let stat = builds::git(
            src,
            &[&plain[..], &["--stat", &base.sha, &dev.sha, "--"]].concat(),
        )?;
        let mut diff = builds::git(src, &[&plain[..], &[&base.sha, &dev.sha, "--"]].concat())?;
        let truncated = diff.len() > MAX_DIFF;
        if truncated {
            let mut cut = MAX_DIFF;
            while !diff.is_char_boundary(cut) {
                cut -= 1;
            }
            diff.truncate(cut);
        }
        let log = builds::git(
            src,
            &[
                "log",
                "--oneline",
                "--no-decorate",
                &format!("--max-count={MAX_COMMITS}"),
                &range,
                "--",
            ],
        )?;
        Ok(Diff {
            stat,
            diff,
            truncated,
            log,
            none: None,
        })
    };
    Some(run().unwrap_or_else(|e| Diff {
        none: Some(format!("git diff {range} failed: {e}")),
        ..Diff::default()
    }))
}
