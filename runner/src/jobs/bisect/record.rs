//! What a bisect keeps in its run directory, and what it makes of it:
//!
//! ```text
//! RUN_DIR/bisect.json         the plan: the commits good..=bad, the drop, the rates, the words
//! RUN_DIR/steps.jsonl         one line per finished step (the gate, then the search's steps)
//! RUN_DIR/steps/NN-SHA12/     each step's SPRT: its results.csv (local), or a cluster run
//! RUN_DIR/builds/SHA/         the builds, unless --builds names another cache
//! ```
//!
//! The plan is written once (atomically) before any step; a step's line is appended (and
//! synced) when its SPRT has decided or the commit was skipped, so after `kill -9` the
//! lines say which steps are done and the step in play resumes from its own results file.
//! The search itself is never stored: it is replayed from the lines
//! ([`replay`]), so the status view, a server's live numbers and `--resume` all reach the
//! same state by the same code.

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use sprt::bisect::{Next, Search, Verdict};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::input::{read_optional, SMALL_FILE};

/// The plan's file name in the run directory.
pub const PLAN: &str = "bisect.json";
/// The steps' file name in the run directory.
pub const STEPS: &str = "steps.jsonl";
/// The plan's schema.
pub const SCHEMA: u32 = 1;

/// A commit of the bisected line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    /// Its full hash.
    pub sha: String,
    /// Its subject (the first line of its message).
    pub subject: String,
    /// The bench its message states (`Bench: N`, OpenBench's convention), if it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<u64>,
}

impl Commit {
    /// Its hash's first 12 characters.
    pub fn short(&self) -> &str {
        &self.sha[..self.sha.len().min(12)]
    }
}

/// What a bisect is asked to do: written once, before any step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// [`SCHEMA`].
    pub schema: u32,
    /// The spar version that wrote it.
    pub spar_version: String,
    /// The repository as given (a path or a URL).
    pub repo: String,
    /// The engine's name (`make`'s `EXE=`, the builds' names).
    pub name: String,
    /// How each commit is built: `make` or `spar`.
    pub build: String,
    /// The commits along the first-parent line, the good one first and the bad one last.
    pub commits: Vec<Commit>,
    /// The drop looked for: each step's SPRT has bounds `[-drop, 0]`.
    pub drop: f64,
    /// The whole bisect's rate of calling a commit at least `drop` worse good.
    pub alpha: f64,
    /// The whole bisect's rate of calling a commit no worse bad.
    pub beta: f64,
    /// The Elo model of the bounds (`normalized`, `logistic`, `bayesian`).
    pub model: String,
    /// Whether the bad commit is taken as bad without the gate's SPRT.
    pub known_bad: bool,
    /// Whether a commit whose bench differs from its message's is skipped.
    pub check_bench: bool,
    /// The words of the command that planned it (`--resume` must give the same).
    pub words: Vec<String>,
    /// Seconds since the Unix epoch when it was planned.
    pub created: u64,
}

/// Which test a step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The bad commit against the good one, before the search (not with `--known-bad`).
    Gate,
    /// A step of the search.
    Search,
}

/// What a step found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    /// Its SPRT accepted H1: no worse than good (the gate: no regression of the drop).
    Good,
    /// Its SPRT accepted H0: at least the drop worse.
    Bad,
    /// Not tested: it did not build, or its bench was not its message's ([`Step::why`]).
    Skip,
}

/// One finished step: a line of [`STEPS`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// The gate or a step of the search.
    pub role: Role,
    /// The tested commit's place in [`Plan::commits`].
    pub commit: usize,
    /// Its full hash.
    pub sha: String,
    /// What it found.
    pub outcome: Outcome,
    /// Why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The bench its build printed, when it was built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bench: Option<u64>,
    /// The error rates of its SPRT.
    pub alpha: f64,
    /// See `alpha`.
    pub beta: f64,
    /// Games played (0 when skipped).
    pub games: u64,
    /// The tested commit's wins, losses and draws against the good one.
    pub wins: u64,
    /// See `wins`.
    pub losses: u64,
    /// See `wins`.
    pub draws: u64,
    /// Its Elo against the good one (in the units of the plan's model) and the 95 % margin.
    pub elo: f64,
    /// See `elo`.
    pub elo_pm: f64,
    /// The SPRT's final log-likelihood ratio and its bounds.
    pub llr: f64,
    /// See `llr`.
    pub lower: f64,
    /// See `llr`.
    pub upper: f64,
    /// The step's directory, relative to the run directory.
    pub dir: String,
}

/// The directory of search step `k` (the gate is step 0) testing `sha`, relative to the
/// run directory: `steps/01-SHA12`.
pub fn step_dir(k: usize, sha: &str) -> String {
    format!("steps/{k:02}-{}", &sha[..sha.len().min(12)])
}

impl Plan {
    /// Reads `dir/bisect.json`; `Ok(None)` when there is none (not a bisect's directory).
    pub fn read(dir: &Path) -> CliResult<Option<Plan>> {
        let path = dir.join(PLAN);
        let Some(text) = read_optional(&path, "the bisect's plan", SMALL_FILE)? else {
            return Ok(None);
        };
        let plan: Plan = serde_json::from_str(&text).map_err(|e| {
            CliError::usage(format!("{}: not a spar bisect plan: {e}", path.display()))
        })?;
        if plan.schema != SCHEMA {
            return Err(CliError::usage(format!(
                "{}: a bisect plan of schema {} (this spar reads {SCHEMA}): start a new --run-dir",
                path.display(),
                plan.schema
            )));
        }
        if plan.commits.len() < 2 {
            return Err(CliError::usage(format!(
                "{}: a plan needs the good and the bad commit (edited by hand?): start a new --run-dir",
                path.display()
            )));
        }
        Ok(Some(plan))
    }

    /// Writes `dir/bisect.json` atomically.
    pub fn write(&self, dir: &Path) -> CliResult {
        let path = dir.join(PLAN);
        let text = serde_json::to_string_pretty(self).expect("a plan serialises") + "\n";
        write_atomically(&path, &text)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
    }
}

/// The finished steps in `dir/steps.jsonl` (none when it does not exist). A last line
/// without its newline is one a kill cut: it is not a step, and [`append_step`] writes over
/// it. A complete line that is not a step is an error naming it.
pub fn read_steps(dir: &Path) -> CliResult<Vec<Step>> {
    let path = dir.join(STEPS);
    let Some(text) = read_optional(&path, "the bisect's steps", SMALL_FILE)? else {
        return Ok(Vec::new());
    };
    let complete = match text.rfind('\n') {
        Some(end) => &text[..=end],
        None => "",
    };
    complete
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            serde_json::from_str(line).map_err(|e| {
                CliError::usage(format!(
                    "{} line {}: not a bisect step ({e}): start a new --run-dir",
                    path.display(),
                    i + 1
                ))
            })
        })
        .collect()
}

/// Appends `step` to `dir/steps.jsonl` and syncs it, after cutting a torn last line (one
/// without its newline, left by a kill).
pub fn append_step(dir: &Path, step: &Step) -> CliResult {
    let path = dir.join(STEPS);
    let io = |e: std::io::Error| CliError::failure(format!("cannot write {}: {e}", path.display()));
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .open(&path)
        .map_err(io)?;
    let text = std::fs::read(&path).map_err(io)?;
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    if whole < text.len() {
        f.set_len(whole as u64).map_err(io)?;
    }
    let line = serde_json::to_string(step).expect("a step serialises") + "\n";
    f.write_all(line.as_bytes()).map_err(io)?;
    f.sync_data().map_err(io)?;
    crate::files::kill_point::record_written();
    Ok(())
}

/// Where a bisect stands, replayed from its plan and steps.
#[derive(Clone, Debug)]
pub struct State {
    /// The gate's step, once played (`None` with `--known-bad` or before it ends).
    pub gate: Option<Step>,
    /// The search, with every recorded search step applied.
    pub search: Search,
    /// What comes next, or the answer.
    pub next: Answer,
}

/// What a bisect does next, or what it found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The gate is to be played.
    Gate,
    /// The gate found no regression of the drop: nothing to bisect.
    NoRegression,
    /// Commit `i` (a place in the plan's commits) is to be tested.
    Test(usize),
    /// Commit `i` is the first bad commit.
    Found(usize),
    /// The first bad commit is one of `first..=last` (those before `last` were skipped).
    Untestable {
        /// The first candidate.
        first: usize,
        /// The last candidate (found bad).
        last: usize,
    },
}

impl Answer {
    /// Whether the bisect is over.
    pub fn is_final(&self) -> bool {
        matches!(
            self,
            Answer::NoRegression | Answer::Found(_) | Answer::Untestable { .. }
        )
    }
}

/// Replays `steps` through the search of `plan`: a step the search would not have taken
/// (a steps file of another plan, edited by hand) is an error naming it.
pub fn replay(plan: &Plan, steps: &[Step]) -> Result<State, String> {
    let n = plan.commits.len() - 1;
    let mut search = Search::new(n, plan.alpha, plan.beta).map_err(|e| e.to_string())?;
    let mut gate = None;
    for (k, s) in steps.iter().enumerate() {
        let bad = |why: &str| format!("step {} (commit {}): {why}", k + 1, s.sha);
        if plan.commits.get(s.commit).map(|c| c.sha.as_str()) != Some(s.sha.as_str()) {
            return Err(bad("not a commit of the plan at its place"));
        }
        match s.role {
            Role::Gate => {
                if plan.known_bad || gate.is_some() || k != 0 || s.commit != n {
                    return Err(bad("a gate where the plan has none"));
                }
                if s.outcome == Outcome::Skip {
                    return Err(bad("the gate's commit is skipped"));
                }
                gate = Some(s.clone());
            }
            Role::Search => {
                if !plan.known_bad && gate.as_ref().is_none_or(|g| g.outcome != Outcome::Bad) {
                    return Err(bad("a search step before the gate found the regression"));
                }
                let verdict = match s.outcome {
                    Outcome::Good => Verdict::Good,
                    Outcome::Bad => Verdict::Bad,
                    Outcome::Skip => Verdict::Skip,
                };
                search.record(s.commit, verdict).map_err(|e| bad(&e.0))?;
            }
        }
    }
    let next = match (&gate, plan.known_bad) {
        (None, false) => Answer::Gate,
        (Some(g), false) if g.outcome == Outcome::Good => Answer::NoRegression,
        _ => match search.next() {
            Next::Test(i) => Answer::Test(i),
            Next::Found(i) => Answer::Found(i),
            Next::Untestable { first, last } => Answer::Untestable { first, last },
        },
    };
    Ok(State { gate, search, next })
}

/// Reads the plan and steps of the bisect in `dir` and replays them (`Ok(None)`: no plan).
pub fn load(dir: &Path) -> CliResult<Option<(Plan, Vec<Step>, State)>> {
    let Some(plan) = Plan::read(dir)? else {
        return Ok(None);
    };
    let steps = read_steps(dir)?;
    let state = replay(&plan, &steps).map_err(|e| {
        CliError::usage(format!(
            "{}: {e}: start a new --run-dir",
            dir.join(STEPS).display()
        ))
    })?;
    Ok(Some((plan, steps, state)))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A plan of `n + 1` commits (`c0` good … `cN` bad).
    pub(crate) fn plan(n: usize, known_bad: bool) -> Plan {
        Plan {
            schema: SCHEMA,
            spar_version: env!("CARGO_PKG_VERSION").into(),
            repo: "r".into(),
            name: "eng".into(),
            build: "make".into(),
            commits: (0..=n)
                .map(|i| Commit {
                    sha: format!("{i:040x}"),
                    subject: format!("commit {i}"),
                    bench: None,
                })
                .collect(),
            drop: 10.0,
            alpha: 0.05,
            beta: 0.05,
            model: "normalized".into(),
            known_bad,
            check_bench: false,
            words: vec![],
            created: 0,
        }
    }

    /// A finished step of commit `i` of `p`.
    pub(crate) fn step(p: &Plan, role: Role, i: usize, outcome: Outcome) -> Step {
        Step {
            role,
            commit: i,
            sha: p.commits[i].sha.clone(),
            outcome,
            why: None,
            bench: None,
            alpha: 0.01,
            beta: 0.01,
            games: 40,
            wins: 5,
            losses: 20,
            draws: 15,
            elo: -120.0,
            elo_pm: 60.0,
            llr: -3.0,
            lower: -2.9,
            upper: 2.9,
            dir: step_dir(1, &p.commits[i].sha),
        }
    }

    #[test]
    fn steps_append_survive_a_torn_line_and_replay_to_the_answer() {
        let dir = tempfile::tempdir().unwrap();
        let p = plan(16, false);
        p.write(dir.path()).unwrap();
        assert_eq!(Plan::read(dir.path()).unwrap(), Some(p.clone()));
        let (_, _, s) = load(dir.path()).unwrap().unwrap();
        assert_eq!(s.next, Answer::Gate);
        append_step(dir.path(), &step(&p, Role::Gate, 16, Outcome::Bad)).unwrap();
        // A kill while writing a line leaves it torn: it is not a step, and is cut.
        let path = dir.path().join(STEPS);
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"{\"role\":\"sea").unwrap();
        assert_eq!(read_steps(dir.path()).unwrap().len(), 1);
        for (i, o) in [(8, Outcome::Bad), (4, Outcome::Skip), (5, Outcome::Good)] {
            append_step(dir.path(), &step(&p, Role::Search, i, o)).unwrap();
        }
        let (_, steps, s) = load(dir.path()).unwrap().unwrap();
        assert_eq!(steps.len(), 4);
        assert_eq!(s.next, Answer::Test(6));
        append_step(dir.path(), &step(&p, Role::Search, 6, Outcome::Bad)).unwrap();
        assert_eq!(load(dir.path()).unwrap().unwrap().2.next, Answer::Found(6));
    }

    #[test]
    fn a_step_the_search_would_not_take_or_a_bad_line_is_refused_by_name() {
        let p = plan(8, true);
        let wrong = step(&p, Role::Search, 3, Outcome::Good);
        let e = replay(&p, &[wrong]).unwrap_err();
        assert!(e.contains("commit 3 is not the one"), "{e}");
        let gate = step(&p, Role::Gate, 8, Outcome::Bad);
        assert!(replay(&p, &[gate]).unwrap_err().contains("a gate where"));
        let p2 = plan(8, false);
        let early = step(&p2, Role::Search, 4, Outcome::Good);
        assert!(replay(&p2, &[early]).is_err());
        let none = step(&p2, Role::Gate, 8, Outcome::Good);
        assert_eq!(replay(&p2, &[none]).unwrap().next, Answer::NoRegression);
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(STEPS), "nonsense\n").unwrap();
        let e = read_steps(dir.path()).unwrap_err().to_string();
        assert!(e.contains("steps.jsonl line 1: not a bisect step"), "{e}");
    }
}
