//! Simulated bisects: the search of [`crate::bisect`] run over commits of known strength,
//! each step a simulated SPRT of [`crate::simulate`], to measure how often the whole bisect
//! names the wrong commit and how many games it plays.
//!
//! **The truth.** Commits `0..=n`: every commit before the culprit `K` plays at true Elo 0
//! against the good commit `0`, every commit from `K` on at `−T` (the true drop). With a
//! spread fraction `F`, commit `K` loses only `F·T` and commit `K + 1` the rest (`K + 1`
//! and later play at `−T`), the drop shared by two adjacent commits.
//!
//! **A bisect.** Unless the bad commit is known bad, the gate first plays an SPRT of commit
//! `n` against commit `0` with bounds `[−D, 0]` (`D` the drop the bisect looks for) at the
//! bisect's own `alpha` and `beta`; H1 (no worse than good) ends the bisect with no answer.
//! Then [`Search`] asks for commits to test, each an SPRT `[−D, 0]` of that commit against
//! commit `0` at the rates [`Search::rates`] gives, with the game model and the LLR
//! schedule of [`run_sprt`]; H0 makes the commit bad, H1 good.
//!
//! **The answers.** The commit found is *right* when it is `K`; with a spread drop `K + 1`
//! is counted apart (*next*): when `F·T < D` commit `K` is inside the indifference zone and
//! either answer is one the error rule allows. Any other commit is *early* (before `K`: a
//! commit no worse than good was called bad, a `beta` error) or *late* (after the
//! acceptable ones: a commit `T` worse was called good, an `alpha` error, which the rule
//! bounds only when `T ≥ D`).
//!
//! ```
//! use sprt::simulate_bisect::{Answer, BisectSetup, BisectSim};
//!
//! let sim = BisectSim::new(BisectSetup { culprit: Some(5), ..BisectSetup::new(8, 10.0, 40.0) })
//!     .unwrap();
//! let run = sim.run(1, 0);
//! assert_eq!(run.answer, Answer::Found(5));
//! assert_eq!(run.steps.len(), 3);
//! ```

use crate::bisect::{BisectError, Next, Search, Verdict};
use crate::llr::Model;
use crate::simulate::{run_sprt, GameModel, LlrChecks, Xoshiro256};
use crate::sprt::{Decision, Sprt};

/// What a simulated bisect is asked to do, and the truth it runs against (module
/// documentation). Checked by [`BisectSim::new`].
#[derive(Clone, Debug, PartialEq)]
pub struct BisectSetup {
    /// Commits after the good one (`n`; commit `n` is the bad one).
    pub commits: usize,
    /// The drop the bisect looks for (`D`): every step's SPRT has bounds `[−D, 0]`.
    pub drop: f64,
    /// The real drop of the culprit (`T`, at least 0).
    pub true_drop: f64,
    /// The culprit `K` (`1..=n`), or `None` for one drawn uniformly in each run.
    pub culprit: Option<usize>,
    /// The share `F` (strictly between 0 and 1) of the drop lost by the culprit, the rest
    /// by the next commit; `None` for the whole drop at the culprit.
    pub spread: Option<f64>,
    /// The whole bisect's rate of calling a commit at least `D` worse good.
    pub alpha: f64,
    /// The whole bisect's rate of calling a commit no worse than good bad.
    pub beta: f64,
    /// The Elo model of the drops and of the SPRTs.
    pub model: Model,
    /// Share of drawn games between equal engines.
    pub draw_ratio: f64,
    /// Skip the gate SPRT of the bad commit against the good one.
    pub known_bad: bool,
    /// An SPRT still undecided after this many pairs ends the bisect undecided.
    pub max_pairs: u64,
    /// How often the SPRTs recompute the LLR.
    pub checks: LlrChecks,
}

impl BisectSetup {
    /// `commits` commits, the drop `drop` looked for, a true drop `true_drop`, and the
    /// defaults of `spar sim --bisect`: a random culprit, no spread, `alpha = beta = 0.05`,
    /// normalized Elo, draw ratio 0.5, the gate played, a million pairs, adaptive checks.
    pub fn new(commits: usize, drop: f64, true_drop: f64) -> BisectSetup {
        BisectSetup {
            commits,
            drop,
            true_drop,
            culprit: None,
            spread: None,
            alpha: 0.05,
            beta: 0.05,
            model: Model::Normalized,
            draw_ratio: 0.5,
            known_bad: false,
            max_pairs: 1_000_000,
            checks: LlrChecks::Adaptive,
        }
    }

    /// The commits that can be the culprit: `1..=n`, or `1..=n−1` with a spread drop (the
    /// next commit must exist).
    pub fn culprits(&self) -> std::ops::RangeInclusive<usize> {
        let last = if self.spread.is_some() {
            self.commits.saturating_sub(1)
        } else {
            self.commits
        };
        1..=last
    }
}

/// How a simulated bisect ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// The search named this commit as the first bad one.
    Found(usize),
    /// The gate accepted H1: no regression of at least the drop, no search.
    NoRegression,
    /// An SPRT reached the pair limit undecided.
    Undecided,
}

/// One simulated SPRT of a bisect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    /// The commit tested against commit 0.
    pub commit: usize,
    /// Games played (two per pair).
    pub games: u64,
    /// H0 (bad), H1 (good), or `Continue` at the pair limit.
    pub decision: Decision,
}

/// One simulated bisect.
#[derive(Clone, Debug, PartialEq)]
pub struct BisectRun {
    /// The culprit of this run.
    pub culprit: usize,
    /// The gate SPRT, unless the bad commit was known bad.
    pub gate: Option<Step>,
    /// The search's SPRTs in order.
    pub steps: Vec<Step>,
    /// How it ended.
    pub answer: Answer,
}

impl BisectRun {
    /// Games of the gate and of every step.
    pub fn total_games(&self) -> u64 {
        self.gate.iter().chain(&self.steps).map(|s| s.games).sum()
    }
}

/// A checked [`BisectSetup`] with its game models, ready to run.
#[derive(Clone, Debug)]
pub struct BisectSim {
    setup: BisectSetup,
    gate: Sprt,
    good: GameModel,
    part: GameModel,
    bad: GameModel,
}

impl BisectSim {
    /// Checks the setup: at least one commit, a positive finite drop, a finite true drop
    /// of at least 0, a culprit in [`BisectSetup::culprits`], a spread strictly between 0
    /// and 1 (and then two commits at least), rates and a draw ratio an SPRT and a game
    /// model accept, a positive pair limit.
    pub fn new(setup: BisectSetup) -> Result<BisectSim, BisectError> {
        let fail = |m: String| Err(BisectError(m));
        let n = setup.commits;
        if n == 0 {
            return fail(
                "commits (0) must be at least 1: the bad commit comes after the good one".into(),
            );
        }
        if !(setup.drop.is_finite() && setup.drop > 0.0) {
            return fail(format!(
                "drop ({}) must be a positive Elo difference, e.g. 5",
                setup.drop
            ));
        }
        if !(setup.true_drop.is_finite() && setup.true_drop >= 0.0) {
            return fail(format!(
                "true drop ({}) must be at least 0 (an Elo loss, e.g. 5)",
                setup.true_drop
            ));
        }
        if let Some(f) = setup.spread {
            if !(f > 0.0 && f < 1.0) {
                return fail(format!(
                    "spread ({f}) must be strictly between 0 and 1: the culprit's share of the drop"
                ));
            }
            if n < 2 {
                return fail(format!(
                    "a spread drop needs two commits after the good one, not {n}"
                ));
            }
        }
        if let Some(k) = setup.culprit {
            let range = setup.culprits();
            if !range.contains(&k) {
                return fail(format!(
                    "culprit ({k}) must be a commit from {} to {}{}",
                    range.start(),
                    range.end(),
                    if setup.spread.is_some() {
                        " (with a spread drop the next commit must exist)"
                    } else {
                        ""
                    }
                ));
            }
        }
        if setup.max_pairs == 0 {
            return fail("the pair limit must be at least 1".into());
        }
        Search::new(n, setup.alpha, setup.beta)?;
        let gate = Sprt::new(-setup.drop, 0.0, setup.alpha, setup.beta, setup.model)
            .map_err(|e| BisectError(e.to_string()))?;
        let game = |elo: f64| {
            GameModel::new(elo, setup.draw_ratio, setup.model)
                .map_err(|e| BisectError(e.to_string()))
        };
        let part = -setup.true_drop * setup.spread.unwrap_or(1.0);
        Ok(BisectSim {
            good: game(0.0)?,
            part: game(part)?,
            bad: game(-setup.true_drop)?,
            gate,
            setup,
        })
    }

    /// The setup it runs.
    pub fn setup(&self) -> &BisectSetup {
        &self.setup
    }

    /// Simulated bisect number `run` of a simulation seeded with `seed`: its culprit (when
    /// random) and its games come from [`Xoshiro256::for_run`], so a run is the same
    /// whatever the order or the thread it is played in.
    pub fn run(&self, seed: u64, run: u64) -> BisectRun {
        let s = &self.setup;
        let mut rng = Xoshiro256::for_run(seed, run);
        let culprit = s.culprit.unwrap_or_else(|| {
            let range = s.culprits();
            let count = range.end() - range.start() + 1;
            range.start() + ((rng.next_f64() * count as f64) as usize).min(count - 1)
        });
        let game = |commit: usize| {
            if commit < culprit {
                &self.good
            } else if commit == culprit {
                &self.part
            } else {
                &self.bad
            }
        };
        let mut play = |sprt: &Sprt, commit: usize| {
            let o = run_sprt(sprt, game(commit), &mut rng, s.max_pairs, s.checks);
            Step {
                commit,
                games: 2 * o.pairs,
                decision: o.decision,
            }
        };
        let mut out = BisectRun {
            culprit,
            gate: None,
            steps: Vec::new(),
            answer: Answer::Undecided,
        };
        if !s.known_bad {
            let gate = play(&self.gate, s.commits);
            out.gate = Some(gate);
            match gate.decision {
                Decision::H0 => {}
                Decision::H1 => {
                    out.answer = Answer::NoRegression;
                    return out;
                }
                Decision::Continue => return out,
            }
        }
        // The setup was checked by `new`: the search and every step's SPRT exist.
        let mut search = Search::new(s.commits, s.alpha, s.beta).expect("checked in new");
        loop {
            match search.next() {
                Next::Test(commit) => {
                    let (alpha, beta) = search.rates();
                    let sprt = Sprt::new(-s.drop, 0.0, alpha, beta, s.model)
                        .expect("the rates of a checked search are in (0, 1)");
                    let step = play(&sprt, commit);
                    out.steps.push(step);
                    let verdict = match step.decision {
                        Decision::H0 => Verdict::Bad,
                        Decision::H1 => Verdict::Good,
                        Decision::Continue => return out,
                    };
                    search
                        .record(commit, verdict)
                        .expect("the commit is the one the search asked for");
                }
                Next::Found(commit) => {
                    out.answer = Answer::Found(commit);
                    return out;
                }
                Next::Untestable { .. } => unreachable!("a simulated bisect skips no commit"),
            }
        }
    }

    /// Sorts an answer against the truth of `run` (module documentation).
    pub fn grade(&self, run: &BisectRun) -> Grade {
        let k = run.culprit;
        match run.answer {
            Answer::NoRegression => Grade::NoRegression,
            Answer::Undecided => Grade::Undecided,
            Answer::Found(c) if c == k => Grade::Right,
            Answer::Found(c) if c == k + 1 && self.setup.spread.is_some() => Grade::Next,
            Answer::Found(c) if c < k => Grade::Early,
            Answer::Found(_) => Grade::Late,
        }
    }
}

/// An answer sorted against the truth ([`BisectSim::grade`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grade {
    /// The culprit.
    Right,
    /// The commit after the culprit, with a spread drop.
    Next,
    /// A commit before the culprit.
    Early,
    /// A commit after the acceptable ones.
    Late,
    /// No regression found by the gate.
    NoRegression,
    /// An SPRT reached the pair limit.
    Undecided,
}

/// What many simulated bisects of one setup say.
#[derive(Clone, Debug, PartialEq)]
pub struct BisectSummary {
    /// Number of bisects.
    pub runs: u64,
    /// Bisects that found the culprit.
    pub right: u64,
    /// Bisects that found the commit after it (spread drops only).
    pub next: u64,
    /// Bisects that found a commit before the culprit.
    pub early: u64,
    /// Bisects that found a commit after the acceptable ones.
    pub late: u64,
    /// Bisects whose gate found no regression.
    pub no_regression: u64,
    /// Bisects stopped by the pair limit.
    pub undecided: u64,
    /// `(early + late) / runs`: the rate of wrong answers.
    pub wrong_rate: f64,
    /// Monte-Carlo standard error of `wrong_rate`: √(p(1−p)/runs).
    pub wrong_rate_error: f64,
    /// `no_regression / runs`.
    pub no_regression_rate: f64,
    /// The bound the error rule promises on `wrong_rate`: `max(alpha, beta)`.
    pub bound: f64,
    /// Mean number of search steps (SPRTs after the gate).
    pub mean_steps: f64,
    /// Mean games of the gate (NaN when there is none).
    pub mean_gate_games: f64,
    /// Mean games of one search step, over every step of every bisect (NaN without steps).
    pub mean_step_games: f64,
    /// Mean games of step 1, 2, … over the bisects that played that step.
    pub mean_games_by_step: Vec<f64>,
    /// Mean games of a whole bisect (gate and steps).
    pub mean_total_games: f64,
    /// Median games of a whole bisect (nearest rank).
    pub p50_total_games: f64,
    /// 90th percentile of the games of a whole bisect (nearest rank).
    pub p90_total_games: f64,
}

impl BisectSummary {
    /// Summarizes the bisects `runs` of `sim` (at least one).
    pub fn new(sim: &BisectSim, runs: &[BisectRun]) -> BisectSummary {
        let n = runs.len() as u64;
        let mut count = [0u64; 6];
        for r in runs {
            count[sim.grade(r) as usize] += 1;
        }
        let [right, next, early, late, no_regression, undecided] = count;
        let mean = |sum: u64, count: usize| {
            if count == 0 {
                f64::NAN
            } else {
                sum as f64 / count as f64
            }
        };
        let gates: Vec<u64> = runs
            .iter()
            .filter_map(|r| r.gate.map(|g| g.games))
            .collect();
        let steps: Vec<u64> = runs
            .iter()
            .flat_map(|r| r.steps.iter().map(|s| s.games))
            .collect();
        let longest = runs.iter().map(|r| r.steps.len()).max().unwrap_or(0);
        let mean_games_by_step = (0..longest)
            .map(|i| {
                let at: Vec<u64> = runs
                    .iter()
                    .filter_map(|r| r.steps.get(i))
                    .map(|s| s.games)
                    .collect();
                mean(at.iter().sum(), at.len())
            })
            .collect();
        let mut totals: Vec<u64> = runs.iter().map(BisectRun::total_games).collect();
        totals.sort_unstable();
        let rank = |q: f64| -> f64 {
            if totals.is_empty() {
                return f64::NAN;
            }
            let index = ((q * totals.len() as f64).ceil() as usize).clamp(1, totals.len()) - 1;
            totals[index] as f64
        };
        let wrong_rate = (early + late) as f64 / n as f64;
        BisectSummary {
            runs: n,
            right,
            next,
            early,
            late,
            no_regression,
            undecided,
            wrong_rate,
            wrong_rate_error: (wrong_rate * (1.0 - wrong_rate) / n as f64).sqrt(),
            no_regression_rate: no_regression as f64 / n as f64,
            bound: sim.setup.alpha.max(sim.setup.beta),
            mean_steps: mean(runs.iter().map(|r| r.steps.len() as u64).sum(), runs.len()),
            mean_gate_games: mean(gates.iter().sum(), gates.len()),
            mean_step_games: mean(steps.iter().sum(), steps.len()),
            mean_games_by_step,
            mean_total_games: mean(totals.iter().sum(), totals.len()),
            p50_total_games: rank(0.5),
            p90_total_games: rank(0.9),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(sim: &BisectSim, count: u64) -> Vec<BisectRun> {
        (0..count).map(|r| sim.run(7, r)).collect()
    }

    #[test]
    fn a_huge_drop_is_never_missed_and_found_in_ceil_log2_steps() {
        for n in [1, 2, 5, 16, 33] {
            let sim = BisectSim::new(BisectSetup::new(n, 10.0, 200.0)).unwrap();
            let all = runs(&sim, 60);
            for r in &all {
                assert!(r.steps.len() <= crate::bisect::steps_needed(n), "{r:?}");
                assert_eq!(r.gate.unwrap().decision, Decision::H0);
                // A commit 200 worse is never called good: no answer after the culprit.
                // (A good commit sits on the bound elo1 = 0 and may still be called bad.)
                assert!(
                    matches!(r.answer, Answer::Found(c) if c <= r.culprit),
                    "{r:?}"
                );
            }
            let s = BisectSummary::new(&sim, &all);
            assert_eq!((s.late, s.no_regression, s.undecided), (0, 0, 0));
            // Random culprits: more than one of them for n > 1.
            let first = all[0].culprit;
            assert_eq!(all.iter().all(|r| r.culprit == first), n == 1, "n {n}");
            // The culprit first: every tested commit is bad, every answer right.
            let first = BisectSim::new(BisectSetup {
                culprit: Some(1),
                ..sim.setup().clone()
            })
            .unwrap();
            let s = BisectSummary::new(&first, &runs(&first, 20));
            assert_eq!((s.right, s.wrong_rate), (20, 0.0), "n {n}");
        }
    }

    #[test]
    fn at_the_threshold_wrong_answers_stay_within_alpha() {
        // 8 commits, the true drop equal to the drop looked for: every step sits on a
        // bound of its SPRT, so the error rule's 5 % is nearly all spent; 1000 bisects
        // measure the rate within about 0.7 %.
        let sim = BisectSim::new(BisectSetup::new(8, 20.0, 20.0)).unwrap();
        let all = runs(&sim, 1000);
        let s = BisectSummary::new(&sim, &all);
        assert!(s.wrong_rate < s.bound + 2.0 * s.wrong_rate_error, "{s:?}");
        assert!(s.wrong_rate > 0.02, "{s:?}");
        assert!(s.no_regression_rate < 0.05 + 2.0 * 0.007, "{s:?}");
        assert_eq!(
            s.runs,
            s.right + s.early + s.late + s.no_regression + s.undecided
        );
        assert_eq!(s.undecided, 0);
        assert!(s.mean_total_games > s.mean_gate_games && s.mean_steps <= 3.0);
        assert_eq!(s.mean_games_by_step.len(), 3);
        assert_eq!(s.bound, 0.05);
    }

    #[test]
    fn a_run_is_the_same_whatever_the_order_or_thread() {
        let sim = BisectSim::new(BisectSetup::new(16, 20.0, 20.0)).unwrap();
        let forward = runs(&sim, 24);
        let mut backward: Vec<BisectRun> = (0..24).rev().map(|r| sim.run(7, r)).collect();
        backward.reverse();
        assert_eq!(forward, backward);
        let threaded: Vec<BisectRun> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..4u64)
                .map(|t| {
                    let sim = &sim;
                    scope.spawn(move || {
                        (t..24)
                            .step_by(4)
                            .map(|r| (r, sim.run(7, r)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            let mut all: Vec<(u64, BisectRun)> = handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect();
            all.sort_by_key(|(r, _)| *r);
            all.into_iter().map(|(_, b)| b).collect()
        });
        assert_eq!(forward, threaded);
        assert_ne!(forward, (0..24).map(|r| sim.run(8, r)).collect::<Vec<_>>());
    }

    #[test]
    fn known_bad_skips_the_gate_and_no_drop_is_no_regression() {
        let known = BisectSetup {
            known_bad: true,
            culprit: Some(3),
            ..BisectSetup::new(4, 30.0, 300.0)
        };
        let sim = BisectSim::new(known).unwrap();
        let r = sim.run(1, 0);
        assert_eq!((r.gate, r.answer), (None, Answer::Found(3)));
        assert_eq!(r.steps.iter().map(|s| s.commit).collect::<Vec<_>>(), [2, 3]);
        // Nothing lost: the gate says so (at most beta of the time it does not).
        let none = BisectSim::new(BisectSetup::new(4, 30.0, 0.0)).unwrap();
        let s = BisectSummary::new(&none, &runs(&none, 200));
        assert!(s.no_regression_rate > 0.9, "{s:?}");
        assert!(s.mean_steps < 0.3 && s.mean_gate_games > 0.0, "{s:?}");
    }

    #[test]
    fn a_spread_drop_counts_the_next_commit_apart() {
        let setup = BisectSetup {
            spread: Some(0.5),
            culprit: Some(4),
            known_bad: true,
            ..BisectSetup::new(8, 30.0, 30.0)
        };
        let sim = BisectSim::new(setup).unwrap();
        let all = runs(&sim, 100);
        let s = BisectSummary::new(&sim, &all);
        // Commit 4 loses 15 of the 30 looked for: either 4 or 5 may be named.
        assert!(s.right > 0 && s.next > 0, "{s:?}");
        assert_eq!(s.right + s.next + s.early + s.late, 100);
        assert!(s.early + s.late <= 8, "{s:?}");
        let r = all.iter().find(|r| r.answer == Answer::Found(5)).unwrap();
        assert_eq!(sim.grade(r), Grade::Next);
    }

    #[test]
    fn the_pair_limit_ends_a_bisect_undecided() {
        let setup = BisectSetup {
            max_pairs: 1,
            ..BisectSetup::new(8, 5.0, 5.0)
        };
        let sim = BisectSim::new(setup).unwrap();
        let r = sim.run(1, 0);
        assert_eq!(
            (r.answer, r.steps.len(), r.total_games()),
            (Answer::Undecided, 0, 2)
        );
        let s = BisectSummary::new(&sim, &[r]);
        assert_eq!((s.undecided, s.wrong_rate), (1, 0.0));
        assert!(s.mean_step_games.is_nan() && s.mean_games_by_step.is_empty());
    }

    #[test]
    fn bad_setups_are_refused_with_the_reason() {
        let base = BisectSetup::new(8, 5.0, 5.0);
        let cases: [(BisectSetup, &str); 9] = [
            (
                BisectSetup {
                    commits: 0,
                    ..base.clone()
                },
                "commits (0) must be at least 1",
            ),
            (
                BisectSetup {
                    drop: 0.0,
                    ..base.clone()
                },
                "drop (0) must be a positive",
            ),
            (
                BisectSetup {
                    drop: f64::NAN,
                    ..base.clone()
                },
                "drop (NaN)",
            ),
            (
                BisectSetup {
                    true_drop: -1.0,
                    ..base.clone()
                },
                "true drop (-1) must be at least 0",
            ),
            (
                BisectSetup {
                    culprit: Some(9),
                    ..base.clone()
                },
                "culprit (9) must be a commit from 1 to 8",
            ),
            (
                BisectSetup {
                    culprit: Some(0),
                    ..base.clone()
                },
                "culprit (0)",
            ),
            (
                BisectSetup {
                    culprit: Some(8),
                    spread: Some(0.5),
                    ..base.clone()
                },
                "from 1 to 7 (with a spread drop",
            ),
            (
                BisectSetup {
                    spread: Some(1.0),
                    ..base.clone()
                },
                "spread (1) must be strictly",
            ),
            (
                BisectSetup {
                    alpha: 0.0,
                    ..base.clone()
                },
                "alpha (0) must be between 0 and 1",
            ),
        ];
        for (setup, why) in cases {
            let e = BisectSim::new(setup.clone()).unwrap_err();
            assert!(e.0.contains(why), "{setup:?}: {e}");
        }
        let e = BisectSim::new(BisectSetup {
            spread: Some(0.5),
            ..BisectSetup::new(1, 5.0, 5.0)
        })
        .unwrap_err();
        assert!(e.0.contains("needs two commits"), "{e}");
        let e = BisectSim::new(BisectSetup {
            draw_ratio: 1.0,
            ..base.clone()
        })
        .unwrap_err();
        assert!(e.0.contains("draw ratio"), "{e}");
        let e = BisectSim::new(BisectSetup {
            max_pairs: 0,
            ..base
        })
        .unwrap_err();
        assert!(e.0.contains("pair limit"), "{e}");
    }
}
