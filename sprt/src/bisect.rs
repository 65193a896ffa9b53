//! Noisy bisection: the search of `spar bisect` over a first-parent line of commits, whose
//! every step is an SPRT of the middle commit against the known good one, and the rule that
//! shares the whole bisect's error rates out among the steps.
//!
//! Commits are numbered `0..=n` along the line: `0` is known good, `n` known bad (worse by
//! at least the drop). A step tests a commit strictly between the last commit found good
//! (`lo`) and the first found bad (`hi`) with the SPRT `[elo0, elo1] = [-drop, 0]`: H1
//! accepted (no worse than good) makes it the new `lo`, H0 accepted (at least `drop` worse)
//! the new `hi`. A commit that cannot be tested (it does not build, its bench is not what
//! its message says) is skipped, as `git bisect skip` does, and a neighbour is tested
//! instead. The search ends when `hi = lo + 1` (the first bad commit is `hi`) or when every
//! commit between them is skipped (it is one of `lo+1..=hi`).
//!
//! ## The error rule
//!
//! A wrong answer needs a wrong step: a commit at least `drop` worse called good (that
//! step's SPRT `alpha`), or a commit no worse called bad (its `beta`). The search spends
//! the bisect's `alpha` and `beta` over its steps: before each step, what is left of each
//! is divided by the number of steps still needed without further skips,
//! `ceil(log2(hi - lo))`. Without skips every step of a search over `n` commits gets
//! `alpha / ceil(log2 n)`; a skip that leaves more steps than planned divides what is left
//! more finely; the last step takes what is left. So along every path the steps' `alpha`s
//! add up to at most the bisect's `alpha` (and their `beta`s to its `beta`), and by the
//! union bound the chance that any bad commit is called good is at most `alpha`, that any
//! good commit is called bad at most `beta`, and that the answer is wrong at most
//! `max(alpha, beta)` (each step is one or the other kind, and its share of both is the
//! same). The rates a step gets depend only on the steps before it, which the bound needs.
//!
//! ```
//! use sprt::bisect::{Next, Search, Verdict};
//!
//! let mut s = Search::new(16, 0.05, 0.05).unwrap();
//! assert_eq!(s.next(), Next::Test(8));
//! let (alpha, _) = s.rates();
//! assert!((alpha - 0.0125).abs() < 1e-12);
//! s.record(8, Verdict::Bad).unwrap();
//! assert_eq!(s.next(), Next::Test(4));
//! ```

use std::fmt;

/// What a tested commit turned out to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Its SPRT accepted H1: no worse than the good commit.
    Good,
    /// Its SPRT accepted H0: at least the drop worse.
    Bad,
    /// It could not be tested (it did not build, or its bench is not the one its message
    /// states); no SPRT was played.
    Skip,
}

/// What the search does next ([`Search::next`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Test this commit.
    Test(usize),
    /// This commit is the first bad one: the one before it was found good.
    Found(usize),
    /// The first bad commit is one of `first..=last`: every commit between the last good and
    /// the first bad one was skipped.
    Untestable {
        /// The first candidate (the one after the last good commit).
        first: usize,
        /// The last candidate (the first commit found bad).
        last: usize,
    },
}

/// A refused step or search: the message names what is wrong.
#[derive(Clone, Debug, PartialEq)]
pub struct BisectError(pub String);

impl fmt::Display for BisectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BisectError {}

/// The state of a noisy bisection over commits `0..=n` (see the module documentation).
#[derive(Clone, Debug)]
pub struct Search {
    n: usize,
    lo: usize,
    hi: usize,
    skipped: Vec<bool>,
    alpha: f64,
    beta: f64,
    spent_alpha: f64,
    spent_beta: f64,
    sprts: usize,
}

/// Steps a search over an interval of `m` commits needs without skips: `ceil(log2 m)`.
pub fn steps_needed(m: usize) -> usize {
    if m <= 1 {
        0
    } else {
        (usize::BITS - (m - 1).leading_zeros()) as usize
    }
}

impl Search {
    /// A search over commits `0..=n` (`0` good, `n` bad) whose whole error rates are `alpha`
    /// and `beta`: `n >= 1` and both rates in `(0, 1)`.
    pub fn new(n: usize, alpha: f64, beta: f64) -> Result<Search, BisectError> {
        if n == 0 {
            return Err(BisectError(
                "the good and the bad commit are the same: nothing to bisect".into(),
            ));
        }
        for (name, v) in [("alpha", alpha), ("beta", beta)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(BisectError(format!(
                    "{name} ({v}) must be between 0 and 1 (e.g. 0.05)"
                )));
            }
        }
        Ok(Search {
            n,
            lo: 0,
            hi: n,
            skipped: vec![false; n + 1],
            alpha,
            beta,
            spent_alpha: 0.0,
            spent_beta: 0.0,
            sprts: 0,
        })
    }

    /// The last commit found good and the first found bad.
    pub fn bounds(&self) -> (usize, usize) {
        (self.lo, self.hi)
    }

    /// The number of commits after the good one (the bad commit's number).
    pub fn len(&self) -> usize {
        self.n
    }

    /// Always false: a search has at least the bad commit after the good one.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// SPRT steps recorded so far (skips not counted).
    pub fn sprts(&self) -> usize {
        self.sprts
    }

    /// The most SPRT steps the whole search makes without skips: `ceil(log2 n)`.
    pub fn planned_steps(&self) -> usize {
        steps_needed(self.n)
    }

    /// What to do next: the commit to test (the middle of `lo..hi`, or the nearest commit
    /// to it not skipped, the later one first), or the answer.
    pub fn next(&self) -> Next {
        if self.hi == self.lo + 1 {
            return Next::Found(self.hi);
        }
        let mid = self.lo + (self.hi - self.lo) / 2;
        let inside = |i: usize| i > self.lo && i < self.hi && !self.skipped[i];
        for d in 0..self.hi - self.lo {
            if inside(mid + d) {
                return Next::Test(mid + d);
            }
            if d <= mid && inside(mid - d) {
                return Next::Test(mid - d);
            }
        }
        Next::Untestable {
            first: self.lo + 1,
            last: self.hi,
        }
    }

    /// The SPRT error rates `(alpha, beta)` of the next step: what is left of the bisect's
    /// rates divided by the steps still needed without skips (module documentation).
    pub fn rates(&self) -> (f64, f64) {
        let left = steps_needed(self.hi - self.lo).max(1) as f64;
        (
            (self.alpha - self.spent_alpha) / left,
            (self.beta - self.spent_beta) / left,
        )
    }

    /// Records the verdict of commit `i`, which must be the one [`Search::next`] asks
    /// for (a replayed record that is not is refused: it was written by another search).
    pub fn record(&mut self, i: usize, verdict: Verdict) -> Result<(), BisectError> {
        if self.next() != Next::Test(i) {
            return Err(BisectError(format!(
                "commit {i} is not the one the search tests next ({:?})",
                self.next()
            )));
        }
        match verdict {
            Verdict::Skip => self.skipped[i] = true,
            Verdict::Good | Verdict::Bad => {
                let (a, b) = self.rates();
                self.spent_alpha += a;
                self.spent_beta += b;
                self.sprts += 1;
                if verdict == Verdict::Good {
                    self.lo = i;
                } else {
                    self.hi = i;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a truth (commits `>= culprit` bad), skipping `skip`.
    fn bisect(n: usize, culprit: usize, skip: &[usize]) -> (Next, Vec<usize>, f64, f64) {
        let mut s = Search::new(n, 0.05, 0.1).unwrap();
        let mut tested = Vec::new();
        let (mut a, mut b) = (0.0, 0.0);
        loop {
            match s.next() {
                Next::Test(i) => {
                    let v = if skip.contains(&i) {
                        Verdict::Skip
                    } else {
                        let (ra, rb) = s.rates();
                        a += ra;
                        b += rb;
                        tested.push(i);
                        if i >= culprit {
                            Verdict::Bad
                        } else {
                            Verdict::Good
                        }
                    };
                    s.record(i, v).unwrap();
                }
                done => return (done, tested, a, b),
            }
        }
    }

    #[test]
    fn steps_needed_is_the_ceiling_of_log2() {
        let got: Vec<usize> = (0..=9).map(steps_needed).collect();
        assert_eq!(got, [0, 0, 1, 2, 2, 3, 3, 3, 3, 4]);
        assert_eq!(steps_needed(16), 4);
        assert_eq!(steps_needed(17), 5);
    }

    #[test]
    fn without_skips_every_culprit_is_found_in_at_most_ceil_log2_steps_spending_all() {
        for n in 1..=40 {
            for culprit in 1..=n {
                let (done, tested, a, b) = bisect(n, culprit, &[]);
                assert_eq!(done, Next::Found(culprit), "n {n} culprit {culprit}");
                assert!(tested.len() <= steps_needed(n), "n {n}: {tested:?}");
                assert!(a <= 0.05 + 1e-12 && b <= 0.1 + 1e-12, "n {n}: {a} {b}");
            }
        }
        // Sixteen commits: four steps of alpha / 4 each.
        let (_, tested, a, _) = bisect(16, 11, &[]);
        assert_eq!(tested, [8, 12, 10, 11]);
        assert!((a - 0.05).abs() < 1e-12);
    }

    #[test]
    fn skips_test_a_neighbour_and_never_spend_more_than_the_rates() {
        for n in 2..=24 {
            for culprit in 1..=n {
                for skip in [vec![n / 2], vec![n / 2, n / 2 + 1, n / 4], (1..n).collect()] {
                    let (done, tested, a, b) = bisect(n, culprit, &skip);
                    assert!(
                        a <= 0.05 + 1e-12 && b <= 0.1 + 1e-12,
                        "{n} {culprit} {skip:?}"
                    );
                    assert!(tested.iter().all(|i| !skip.contains(i)));
                    match done {
                        Next::Found(c) => assert_eq!(c, culprit, "{n} {skip:?}"),
                        Next::Untestable { first, last } => {
                            assert!(first <= culprit && culprit <= last);
                            assert!((first..last).all(|i| skip.contains(&i)));
                        }
                        Next::Test(_) => unreachable!(),
                    }
                }
            }
        }
    }

    #[test]
    fn a_step_out_of_turn_and_bad_arguments_are_refused() {
        let mut s = Search::new(8, 0.05, 0.05).unwrap();
        let e = s.record(3, Verdict::Good).unwrap_err();
        assert!(e.0.contains("commit 3 is not the one"), "{e}");
        assert!(Search::new(0, 0.05, 0.05).is_err());
        let e = Search::new(4, 0.0, 0.05).unwrap_err();
        assert!(e.0.starts_with("alpha (0) must be between 0 and 1"), "{e}");
        let one = Search::new(1, 0.05, 0.05).unwrap();
        assert_eq!(one.next(), Next::Found(1));
    }
}
