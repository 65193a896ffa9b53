//! The actions log (issue 32): every action a person takes — on runs (`actions.rs`),
//! engines (the engine handlers) and accounts (the account handlers) — is recorded here,
//! by [`record`], with who took it, when, its kind ([`Action`]) and what it concerns
//! ([`Target`]). `/actions` and `/api/actions` read it back, filtered by user, kind, target
//! and dates ([`window`]).

use std::fmt;

use super::db::action_log::ActionFilter;
use super::db::Db;
use super::store::Store;

/// The kinds of action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Submit,
    Approve,
    Stop,
    Resume,
    Delete,
    Priority,
    Note,
    EngineRegister,
    EngineChange,
    EngineRemove,
    /// An approver or admin approved a change of an engine that waited.
    EngineApprove,
    /// A change, removal or approval of an engine was refused: the caller may not.
    EngineRefused,
    Signup,
    Accept,
    Reject,
    Role,
    Trust,
    TokenCreate,
    TokenRevoke,
    /// Failed sign-ins locked an account for a while.
    Lock,
    NetUpload,
    NetRemove,
    /// An engine's default net set or cleared.
    NetDefault,
    /// An admin excluded a machine, or let it play again.
    MachineExclude,
}

impl Action {
    /// Every kind, in the order the page's filter lists them.
    pub const ALL: &'static [Action] = &[
        Action::Submit,
        Action::Approve,
        Action::Stop,
        Action::Resume,
        Action::Delete,
        Action::Priority,
        Action::Note,
        Action::EngineRegister,
        Action::EngineChange,
        Action::EngineRemove,
        Action::EngineApprove,
        Action::EngineRefused,
        Action::Signup,
        Action::Accept,
        Action::Reject,
        Action::Role,
        Action::Trust,
        Action::TokenCreate,
        Action::TokenRevoke,
        Action::Lock,
        Action::NetUpload,
        Action::NetRemove,
        Action::NetDefault,
        Action::MachineExclude,
    ];

    /// The name stored and shown.
    pub fn name(self) -> &'static str {
        match self {
            Action::Submit => "submit",
            Action::Approve => "approve",
            Action::Stop => "stop",
            Action::Resume => "resume",
            Action::Delete => "delete",
            Action::Priority => "priority",
            Action::Note => "note",
            Action::EngineRegister => "engine-register",
            Action::EngineChange => "engine-change",
            Action::EngineRemove => "engine-remove",
            Action::EngineApprove => "engine-approve",
            Action::EngineRefused => "engine-refused",
            Action::Signup => "signup",
            Action::Accept => "accept",
            Action::Reject => "reject",
            Action::Role => "role",
            Action::Trust => "trust",
            Action::TokenCreate => "token-create",
            Action::TokenRevoke => "token-revoke",
            Action::Lock => "lock",
            Action::NetUpload => "net-upload",
            Action::NetRemove => "net-remove",
            Action::NetDefault => "net-default",
            Action::MachineExclude => "machine-exclude",
        }
    }

    /// The kind of this name.
    pub fn parse(name: &str) -> Option<Action> {
        Action::ALL.iter().copied().find(|a| a.name() == name)
    }
}

/// What an action concerns.
#[derive(Clone, Debug)]
pub enum Target<'a> {
    Run(i64),
    Engine(&'a str),
    User(&'a str),
    Net(&'a str),
    Machine(&'a str),
}

impl fmt::Display for Target<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Run(id) => write!(f, "run {id}"),
            Target::Engine(n) => write!(f, "engine {n}"),
            Target::User(n) => write!(f, "user {n}"),
            Target::Net(n) => write!(f, "net {n}"),
            Target::Machine(n) => write!(f, "machine {n}"),
        }
    }
}

/// Who is recorded for a caller's name: the name, or `-` (no accounts, nobody signed in).
pub fn who(name: Option<&str>) -> &str {
    name.unwrap_or("-")
}

/// Records an action now (a failure to record it is only reported on stderr).
pub fn record(store: &Store, by: Option<&str>, action: Action, target: Target, detail: &str) {
    let recorded = store.blocking(|db| {
        record_in(db, by, action, target, detail);
        Ok::<(), String>(())
    });
    if let Err(e) = recorded {
        eprintln!("spar serve: actions log: {e}");
    }
}

/// [`record`], for work on the database already (inside a [`Store`] closure).
pub fn record_in(db: &Db, by: Option<&str>, action: Action, target: Target, detail: &str) {
    let stored = db.add_action(who(by), action.name(), &target.to_string(), detail);
    if let Err(e) = stored {
        eprintln!("spar serve: actions log: {e}");
    }
}

/// Checks a filter and turns its days into Unix times: `(since, until)`, `until` the end of
/// its day. `Err` names the bad field and what to give.
pub fn window(f: &ActionFilter) -> Result<(Option<i64>, Option<i64>), String> {
    let action = f.action.trim();
    if !action.is_empty() && Action::parse(action).is_none() {
        let names: Vec<&str> = Action::ALL.iter().map(|a| a.name()).collect();
        return Err(format!(
            "unknown action '{action}': one of {}",
            names.join(", ")
        ));
    }
    super::days::window(&f.from, &f.to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_name_that_parses_back() {
        for a in Action::ALL {
            assert_eq!(Action::parse(a.name()), Some(*a));
        }
        assert_eq!(Action::parse("launch"), None);
        assert_eq!(Target::Run(7).to_string(), "run 7");
        assert_eq!(Target::User("ann").to_string(), "user ann");
        assert_eq!(Target::Net("n1").to_string(), "net n1");
    }

    #[test]
    fn days_are_utc_and_bad_ones_are_named() {
        assert_eq!(super::super::days::day_start("1970-01-01"), Some(0));
        assert_eq!(
            super::super::days::day_start("2025-11-26"),
            Some(1_764_115_200)
        );
        assert_eq!(
            super::super::days::day_start("2024-03-01"),
            Some(1_709_251_200)
        );
        for bad in ["2025-13-01", "2025-1-01", "yesterday", "2025-01-01-01", ""] {
            assert_eq!(super::super::days::day_start(bad), None, "{bad}");
        }
        let f = ActionFilter {
            from: "2025-11-26".into(),
            to: "2025-11-26".into(),
            ..ActionFilter::default()
        };
        assert_eq!(
            window(&f).unwrap(),
            (Some(1_764_115_200), Some(1_764_115_200 + 86_399))
        );
        let f = ActionFilter {
            to: "26/11/2025".into(),
            ..ActionFilter::default()
        };
        assert!(window(&f).unwrap_err().starts_with("to '26/11/2025'"));
        let f = ActionFilter {
            action: "launch".into(),
            ..ActionFilter::default()
        };
        assert!(window(&f).unwrap_err().contains("unknown action 'launch'"));
    }
}
