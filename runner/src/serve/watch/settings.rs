//! An engine's watch settings: checked and stored for its owner or an admin (the engine
//! page's form and `PUT /api/engines/NAME/watch`), unwatched (the history stays), and the
//! push token — a random secret shown once when the watch is made or its token rotated,
//! stored as its SHA-256 hash — checked by the push hook. Nothing here runs git: the
//! branch and the anchor are resolved by the watcher's thread ([`super::watcher`]).

use serde::Deserialize;

use crate::job::{WatchAsk, WatchRole};
use crate::serve::accounts::{new_token, token_hash, Caller};
use crate::serve::actions::Refusal;
use crate::serve::builds::check_rev;
use crate::serve::db::watch::Watch;
use crate::serve::engines::{self, may_change, Refused};
use crate::serve::state::AppState;

/// fishtest's non-regression bounds, the default of a commit test.
pub const DEFAULT_BOUNDS: [f64; 2] = [-3.0, 1.0];

/// The default, shortest and longest poll interval (seconds).
pub const DEFAULT_POLL: i64 = 300;
const MIN_POLL: i64 = 10;
const MAX_POLL: i64 = 7 * 86_400;

/// The most words of a watch's test words, and the most games of an anchor test.
const MAX_WORDS: usize = 200;
const MAX_ANCHOR_GAMES: u64 = 1_000_000;

/// An engine's watch settings as the API and the form take them.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The branch to watch.
    pub branch: String,
    /// The test words for both sides (after `--each`: `tc=8+0.08`, `nodes=2000`).
    #[serde(default)]
    pub each: Vec<String>,
    /// The other words of every run (`--book NAME …`).
    #[serde(default)]
    pub extra: Vec<String>,
    /// The commit tests' bounds (default `[-3, 1]`).
    pub elo0: Option<f64>,
    pub elo1: Option<f64>,
    /// The anchor revision (a tag or a commit; empty: none), its games and every how many
    /// commits it is played.
    #[serde(default)]
    pub anchor: String,
    pub anchor_games: Option<u64>,
    pub anchor_every: Option<u64>,
    /// Seconds between two looks at the branch (default 300).
    pub poll: Option<i64>,
    /// A new push token (the old one stops working).
    #[serde(default)]
    pub rotate_token: bool,
}

/// The settings checked, as stored for engine `engine` by `by`.
fn checked(engine: &str, s: &Settings, by: Option<&str>) -> Result<Watch, Refused> {
    let bad = |m: String| Refused::Bad(m);
    let branch = s.branch.trim();
    check_rev(branch).map_err(|m| bad(format!("branch: {m}")))?;
    for (what, words) in [("test words", &s.each), ("extra words", &s.extra)] {
        if words.len() > MAX_WORDS {
            return Err(bad(format!("{what}: at most {MAX_WORDS} words")));
        }
    }
    if let Some(w) = s.each.iter().find(|w| w.starts_with('-')) {
        return Err(bad(format!(
            "test words: '{w}' is a flag: the test words are engine words for both sides \
             (tc=8+0.08, nodes=2000, option.Hash=16); flags go in the extra words"
        )));
    }
    let [d0, d1] = DEFAULT_BOUNDS;
    let (elo0, elo1) = (s.elo0.unwrap_or(d0), s.elo1.unwrap_or(d1));
    let sane = |x: f64| x.is_finite() && x.abs() <= 1000.0;
    if !(sane(elo0) && sane(elo1) && elo0 < elo1) {
        return Err(bad(format!(
            "bounds [{elo0}, {elo1}]: elo0 < elo1, both from -1000 to 1000"
        )));
    }
    let anchor = s.anchor.trim().to_string();
    let (games, every) = (s.anchor_games.unwrap_or(0), s.anchor_every.unwrap_or(0));
    if !anchor.is_empty() {
        check_rev(&anchor).map_err(|m| bad(format!("anchor: {m}")))?;
        if !(1..=MAX_ANCHOR_GAMES).contains(&games) || every == 0 {
            return Err(bad(format!(
                "anchor {anchor}: give its games (1 to {MAX_ANCHOR_GAMES}) and every how \
                 many commits it is played (1 or more)"
            )));
        }
    }
    let poll = s.poll.unwrap_or(DEFAULT_POLL);
    if !(MIN_POLL..=MAX_POLL).contains(&poll) {
        return Err(bad(format!(
            "poll interval {poll} s: from {MIN_POLL} to {MAX_POLL} seconds"
        )));
    }
    Ok(Watch {
        engine: engine.to_string(),
        branch: branch.to_string(),
        each: s.each.clone(),
        extra: s.extra.clone(),
        elo0,
        elo1,
        anchor,
        anchor_games: if s.anchor.trim().is_empty() { 0 } else { games },
        anchor_every: if s.anchor.trim().is_empty() { 0 } else { every },
        poll_secs: poll,
        set_by: by.map(String::from),
        active: true,
        ..Watch::default()
    })
}

/// The kind that plays `role` for a watched branch, found through the job contract.
pub fn kind_for(role: WatchRole) -> Option<&'static dyn crate::job::Job> {
    crate::jobs::KINDS
        .iter()
        .copied()
        .find(|k| k.watch_role() == Some(role))
}

/// The ask of a watch's run of `base` against `tip`.
pub fn ask<'a>(w: &'a Watch, base: &'a str, tip: &'a str) -> WatchAsk<'a> {
    WatchAsk {
        engine: &w.engine,
        base,
        tip,
        each: &w.each,
        extra: &w.extra,
        bounds: [w.elo0, w.elo1],
        games: w.anchor_games,
    }
}

/// Checks the words of a watch's commit test (and anchor test, when it has an anchor) as a
/// run's words are checked when submitted, two made-up commits standing in for the ones
/// the watcher will test (no git, no build).
fn check_words(st: &AppState, w: &Watch, owner: Option<&str>) -> Result<(), Refused> {
    let (base, tip) = ("0".repeat(40), "1".repeat(40));
    let mut roles = vec![WatchRole::CommitTest];
    if !w.anchor.is_empty() {
        roles.push(WatchRole::AnchorTest);
    }
    for role in roles {
        let Some(kind) = kind_for(role) else {
            return Err(Refused::Internal(format!(
                "this spar has no kind for the watch's {role:?}"
            )));
        };
        let words = kind.watch_words(&ask(w, &base, &tip));
        super::check_run_words(st, kind.command(), &words, owner).map_err(|r| {
            let m = format!(
                "the watch's runs (spar {} …): {}",
                kind.command(),
                r.message()
            );
            match r {
                Refusal::Forbidden(_) => Refused::Forbidden(m),
                Refusal::Internal(_) => Refused::Internal(m),
                _ => Refused::Bad(m),
            }
        })?;
    }
    Ok(())
}

/// What setting a watch did: the settings stored, and the push token when a new one was
/// made (shown this once).
#[derive(Debug)]
pub struct Set {
    pub watch: Watch,
    pub token: Option<String>,
}

/// Sets engine `name`'s watch (its owner or an admin: 403 otherwise), checked as a run's
/// words are; a new watch, or `rotate_token`, makes a new push token.
pub fn set(st: &AppState, name: &str, s: &Settings, caller: &Caller) -> Result<Set, Refused> {
    let e = engines::get(st, name)?;
    if e.removed.is_some() {
        return Err(Refused::NotFound(format!("engine {name} was removed")));
    }
    may_change(&e, caller, "watch")?;
    let w = checked(name, s, caller.name())?;
    let owner = e.owner.as_deref().or(caller.name());
    check_words(st, &w, owner)?;
    let old = st.store.blocking(|db| db.watch(name))?;
    let token = match (&old, s.rotate_token) {
        (Some(_), false) => None,
        _ => Some(new_token().map_err(Refused::Internal)?),
    };
    let hash = token.as_deref().map(token_hash);
    let by = caller.name().map_or(String::new(), |b| format!(" by {b}"));
    st.store.blocking(|db| {
        db.set_watch(&w, hash.as_deref())?;
        let rotated = if token.is_some() && old.is_some() {
            "; a new push token was made (the old one no longer works)"
        } else {
            ""
        };
        let _ = db.event(
            None,
            "watch",
            &format!(
                "engine {name}: branch {} watched{by} (test words: {}; bounds [{}, {}]; a \
                 look every {} s){rotated}",
                w.branch,
                w.each.join(" "),
                w.elo0,
                w.elo1,
                w.poll_secs
            ),
        );
        Ok::<_, Refused>(())
    })?;
    let watch = st
        .store
        .blocking(|db| db.watch(name))?
        .map(|(w, _)| w)
        .ok_or_else(|| Refused::Internal("the watch was not stored".into()))?;
    Ok(Set { watch, token })
}

/// Stops watching engine `name` (its owner or an admin); its history stays.
pub fn unwatch(st: &AppState, name: &str, caller: &Caller) -> Result<Watch, Refused> {
    let e = engines::get(st, name)?;
    may_change(&e, caller, "unwatch")?;
    let by = caller.name().map_or(String::new(), |b| format!(" by {b}"));
    let done = st.store.blocking(|db| {
        let done = db.unwatch(name)?;
        if done {
            let _ = db.event(
                None,
                "watch",
                &format!("engine {name}: unwatched{by} (its history stays)"),
            );
        }
        Ok::<_, String>(done)
    })?;
    if !done {
        return Err(Refused::Conflict(format!("engine {name} is not watched")));
    }
    Ok(st
        .store
        .blocking(|db| db.watch(name))?
        .map(|(w, _)| w)
        .unwrap_or_default())
}

/// The hook's refusal of a wrong token, or of an engine that is not watched (the same
/// answer: 403).
fn refused(name: &str) -> (u16, String) {
    (
        403,
        format!(
            "engine {name}: wrong push token, or the engine is not watched (its owner sees the \
             token once, when the watch is made or its token rotated)"
        ),
    )
}

/// The push hook's check: `token` (`None`: none sent) must be engine `name`'s push token,
/// and the engine watched; then a look at the branch is asked of the watcher (nothing
/// else). `Err`: the HTTP status (401 without a token; 403 with a wrong one or for an
/// engine not watched, the same answer; 500) and the message.
pub fn push(st: &AppState, name: &str, token: Option<&str>) -> Result<String, (u16, String)> {
    let internal = |e: String| (500, e);
    let Some(token) = token else {
        return Err((
            401,
            format!(
                "engine {name}: send the watch's push token (the header Authorization: \
                 Bearer TOKEN)"
            ),
        ));
    };
    // An engine not watched (or unknown) answers as a wrong token does: the hook's caller
    // learns nothing of which engines are watched without a token of one.
    let found = st.store.blocking(|db| db.watch(name)).map_err(internal)?;
    let Some((w, hash)) = found.filter(|(w, _)| w.active) else {
        return Err(refused(name));
    };
    if hash.is_empty() || !same(&token_hash(token), &hash) {
        let _ = st.store.blocking(|db| {
            db.event(
                None,
                "watch",
                &format!("engine {name}: a push with a wrong token was refused"),
            )
        });
        return Err(refused(name));
    }
    st.store
        .blocking(|db| {
            db.poke_watch(name)?;
            db.event(
                None,
                "watch",
                &format!(
                    "engine {name}: push hook: branch {} is looked at now",
                    w.branch
                ),
            )
        })
        .map_err(internal)?;
    Ok(w.branch)
}

/// Whether two hashes are equal, in a time that does not depend on where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0, |d, (x, y)| d | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(branch: &str) -> Settings {
        Settings {
            branch: branch.into(),
            each: vec!["nodes=500".into()],
            ..Settings::default()
        }
    }

    #[test]
    fn settings_are_checked_and_get_their_defaults() {
        let w = checked("e", &s("main"), Some("ann")).unwrap();
        assert_eq!((w.elo0, w.elo1, w.poll_secs), (-3.0, 1.0, DEFAULT_POLL));
        assert_eq!(w.set_by.as_deref(), Some("ann"));
        for bad in [
            s("-x"),
            s("a b"),
            Settings {
                each: vec!["--book".into()],
                ..s("main")
            },
            Settings {
                elo0: Some(2.0),
                elo1: Some(1.0),
                ..s("main")
            },
            Settings {
                elo0: Some(f64::NAN),
                ..s("main")
            },
            Settings {
                anchor: "v1".into(),
                ..s("main")
            },
            Settings {
                poll: Some(1),
                ..s("main")
            },
        ] {
            assert!(checked("e", &bad, None).is_err(), "{bad:?}");
        }
        let a = Settings {
            anchor: "v1".into(),
            anchor_games: Some(100),
            anchor_every: Some(4),
            ..s("main")
        };
        let w = checked("e", &a, None).unwrap();
        assert_eq!(
            (w.anchor.as_str(), w.anchor_games, w.anchor_every),
            ("v1", 100, 4)
        );
    }

    #[test]
    fn hashes_compare_whole() {
        assert!(same("abc", "abc"));
        assert!(!same("abc", "abd") && !same("abc", "ab"));
    }

    #[test]
    fn the_watch_roles_have_kinds() {
        assert!(kind_for(WatchRole::CommitTest).is_some());
        assert!(kind_for(WatchRole::AnchorTest).is_some());
    }
}
