//! Watched branches (docs/serve.md, "Watched branches"): an engine's owner sets a branch to
//! watch ([`settings`]); the watcher's thread ([`watcher`]) looks at it on its schedule or
//! when the push hook asks, and submits for its new commits the runs of the kinds that play
//! each role of the job contract (`Job::watch_role`: a commit test of each commit, a batch
//! test of a push of several, a bisect of a batch that failed, an anchor test every N
//! commits) through the same submit path as a person's runs; the progression
//! ([`progression`]) is the Elo line along the commits that the engine's progression page
//! and its API show. No branch here names a kind.

pub mod progression;
pub mod settings;
pub mod watcher;

use super::actions::Refusal;
use super::state::AppState;

/// Checks the words of a run of `kind` that `owner` would submit as the submit path checks
/// them, without storing anything: the server's flags, the files it may name, the nets and
/// registered engines it names (no git, no build), and the CLI's own check.
pub fn check_run_words(
    st: &AppState,
    kind: &str,
    words: &[String],
    owner: Option<&str>,
) -> Result<(), Refusal> {
    super::words::check_owned(kind, words).map_err(Refusal::Bad)?;
    st.files
        .check(words, owner.is_some())
        .map_err(Refusal::Forbidden)?;
    let slurm = st.sched.slurm().is_some();
    super::nps_scale::check(words, st.sched.reference_nps(), slurm).map_err(Refusal::Bad)?;
    let (words, _) = super::nets::words::expand(st, words)?;
    let stand_in = std::env::current_exe()
        .map_err(|e| Refusal::Internal(format!("cannot find this spar's binary: {e}")))?;
    let (checked, _) = super::engine_words::plan(st, &words, &stand_in)?;
    let plain = super::nps_scale::strip(&checked);
    let scratch = st.scratch()?;
    (st.check)(kind, &plain, scratch.path()).map_err(Refusal::Bad)
}
