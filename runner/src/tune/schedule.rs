//! The parallel SPSA schedule: which θ each iteration plays from, so that a run's
//! trajectory is a function of its seed and options only — not of the number of threads or
//! shards, the order in which pairs finish, requeues or kills.
//!
//! Iteration `j` (1-based) is the game pairs `(j − 1)·P … j·P − 1` (`P` =
//! `--pairs-per-iteration`); pair `k` plays opening `k`. Its engines are perturbed (flips
//! and rounding from a generator seeded by `(seed, j)`, as in [`super::spsa`]) from
//! `θ_b(j)` with
//!
//! ```text
//! b(j) = max(j − 1 − D, 0)          D = --delay
//! θ_j  = clip(θ_{j−1} + r_j · c_j · (W − L)_j · flip_j)
//! ```
//!
//! so iteration `j` can start once iterations `1 … j − 1 − D` are complete: up to `D + 1`
//! iterations play at once, on threads or on shards, and their results are applied in
//! iteration order whatever order they arrive in. `D = 0` is the classic sequential SPSA
//! (each iteration from the θ the previous one left), which is what `spar tune` has always
//! run. Under node or depth limits a pair's games depend only on its index and its two
//! engines, so any process that plays pair `k` gets the same result, and [`Tuner`], fed the
//! pairs in any order (or the same pair twice), produces the same rows.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use super::spsa::{Perturbation, Spsa};
use super::trajectory::Row;

/// The shape of a run: iterations, pairs per iteration and the delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    /// Iterations `N`.
    pub iterations: u64,
    /// Game pairs per iteration `P` (≥ 1).
    pub pairs_per_iteration: u64,
    /// How many iterations may play ahead of the last complete one, `D`.
    pub delay: u64,
}

impl Schedule {
    /// Pairs in the whole run, `N · P`.
    pub fn total_pairs(&self) -> u64 {
        self.iterations * self.pairs_per_iteration
    }

    /// The iteration (1-based) pair `k` belongs to.
    pub fn iteration_of(&self, pair: u64) -> u64 {
        pair / self.pairs_per_iteration + 1
    }

    /// The pairs of iteration `j`.
    #[cfg(test)]
    pub fn pairs(&self, j: u64) -> std::ops::Range<u64> {
        (j - 1) * self.pairs_per_iteration..j * self.pairs_per_iteration
    }

    /// `b(j)`: the iteration whose θ iteration `j` is perturbed from (0: the start values).
    pub fn basis(&self, j: u64) -> u64 {
        j.saturating_sub(1 + self.delay)
    }
}

/// What is known of an iteration that is not complete yet.
#[derive(Default, Debug)]
struct Pending {
    pairs: BTreeSet<u64>,
    score: i64,
}

/// The trajectory as far as the recorded pairs allow: fed pair results in any order, it
/// applies complete iterations in order and keeps the θ that later iterations play from.
#[derive(Debug)]
pub struct Tuner {
    spsa: Spsa,
    schedule: Schedule,
    done: u64,
    games: u64,
    /// θ of iterations `done + 1 − history.len() ..= done`.
    history: VecDeque<Vec<f64>>,
    pending: BTreeMap<u64, Pending>,
}

impl Tuner {
    /// A run from its start values (`spsa` as made by [`Spsa::new`]).
    pub fn new(spsa: Spsa, schedule: Schedule) -> Tuner {
        let history = VecDeque::from([spsa.theta().to_vec()]);
        Tuner {
            spsa,
            schedule,
            done: 0,
            games: 0,
            history,
            pending: BTreeMap::new(),
        }
    }

    /// A run resumed from its trajectory rows (row 0 the start, then one per iteration, as
    /// `--csv` holds them): the last row's θ, and the θ of the `D` rows before it.
    pub fn resume(spsa: Spsa, schedule: Schedule, rows: &[Row]) -> Tuner {
        let mut t = Tuner::new(spsa, schedule);
        if let Some(last) = rows.last() {
            t.spsa.set_theta(&last.theta);
            t.done = last.iteration;
            t.games = last.games;
            let keep = (schedule.delay + 1) as usize;
            t.history = rows
                .iter()
                .skip(rows.len().saturating_sub(keep))
                .map(|r| r.theta.clone())
                .collect();
        }
        t
    }

    /// Iterations applied.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Games counted in the applied iterations.
    pub fn games(&self) -> u64 {
        self.games
    }

    /// θ after the applied iterations.
    pub fn theta(&self) -> &[f64] {
        self.spsa.theta()
    }

    /// The schedule.
    pub fn schedule(&self) -> &Schedule {
        &self.schedule
    }

    /// The first pair not yet part of an applied iteration.
    pub fn frontier(&self) -> u64 {
        self.done * self.schedule.pairs_per_iteration
    }

    /// The engines of iteration `j`, once the θ it plays from is known (`None` before).
    pub fn perturbation(&self, j: u64) -> Option<Perturbation> {
        let b = self.schedule.basis(j);
        if b > self.done {
            return None;
        }
        let oldest = self.done + 1 - self.history.len() as u64;
        // An iteration already applied is not asked for; its θ may be gone.
        let theta = self.history.get(b.checked_sub(oldest)? as usize)?;
        Some(self.spsa.perturb_from(j, theta))
    }

    /// Whether pair `pair`'s result is known (recorded, or part of an applied iteration).
    pub fn is_recorded(&self, pair: u64) -> bool {
        pair < self.frontier()
            || self
                .pending
                .get(&self.schedule.iteration_of(pair))
                .is_some_and(|p| p.pairs.contains(&pair))
    }

    /// Records pair `pair`'s result, dev's wins minus losses over its two games. A pair of
    /// an applied iteration, or one recorded before, is ignored.
    pub fn record(&mut self, pair: u64, score: i64) {
        if pair < self.frontier() || pair >= self.schedule.total_pairs() {
            return;
        }
        let p = self
            .pending
            .entry(self.schedule.iteration_of(pair))
            .or_default();
        if p.pairs.insert(pair) {
            p.score += score;
        }
    }

    /// Applies every iteration that is complete and next in order; returns their rows.
    pub fn advance(&mut self) -> Vec<Row> {
        let mut rows = Vec::new();
        let per = self.schedule.pairs_per_iteration;
        loop {
            let j = self.done + 1;
            match self.pending.get(&j) {
                Some(p) if p.pairs.len() as u64 == per => {}
                _ => break,
            }
            let Some(perturbation) = self.perturbation(j) else {
                break;
            };
            let score = self.pending.remove(&j).map_or(0, |p| p.score);
            self.spsa.update(&perturbation, score as f64);
            self.done = j;
            self.games += 2 * per;
            self.history.push_back(self.spsa.theta().to_vec());
            while self.history.len() as u64 > self.schedule.delay + 1 {
                self.history.pop_front();
            }
            rows.push(Row {
                iteration: j,
                games: self.games,
                theta: self.spsa.theta().to_vec(),
                c: Some(perturbation.c),
                r: Some(perturbation.r),
            });
        }
        rows
    }

    /// The start row (iteration 0).
    pub fn start_row(&self) -> Row {
        Row {
            iteration: 0,
            games: 0,
            theta: self.spsa.params().iter().map(|p| p.start).collect(),
            c: None,
            r: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::gains::Gains;
    use super::super::spsa_params::SpsaParam;
    use super::*;

    /// `iterations` of `pairs_per_iteration` pairs, `delay` iterations of delay.
    fn schedule(iterations: u64, pairs_per_iteration: u64, delay: u64) -> Schedule {
        Schedule {
            iterations,
            pairs_per_iteration,
            delay,
        }
    }

    fn spsa(seed: u64, n: u64) -> Spsa {
        let params = ["a", "b", "c"]
            .iter()
            .enumerate()
            .map(|(i, name)| SpsaParam {
                name: name.to_string(),
                start: 10.0 * i as f64,
                min: -100.0,
                max: 100.0,
                c_end: 2.0,
                r_end: 0.002,
            })
            .collect();
        let gains = Gains {
            iterations: n,
            alpha: 0.602,
            gamma: 0.101,
            a_ratio: 0.1,
        };
        Spsa::new(params, gains, seed)
    }

    /// A pair's "result": a function of its index and its engines only, as a node-limited
    /// game pair is.
    fn result(pair: u64, p: &Perturbation) -> i64 {
        let sum: i64 = p.dev.iter().zip(&p.base).map(|(d, b)| d - b).sum();
        ((pair as i64 * 7 + sum) % 5) - 2
    }

    /// Plays the schedule with pairs finishing in the order `order` picks among the
    /// playable ones.
    fn play(schedule: Schedule, mut pick: impl FnMut(usize) -> usize) -> Vec<Row> {
        let mut t = Tuner::new(spsa(9, schedule.iterations), schedule);
        let mut rows = vec![t.start_row()];
        let mut next = 0;
        let mut in_flight: Vec<(u64, Perturbation)> = Vec::new();
        while rows.len() as u64 <= schedule.iterations {
            // Start every pair whose θ is known (up to a bound of 13 in flight).
            while next < schedule.total_pairs() && in_flight.len() < 13 {
                match t.perturbation(schedule.iteration_of(next)) {
                    Some(p) => {
                        in_flight.push((next, p));
                        next += 1;
                    }
                    None => break,
                }
            }
            let (pair, p) = in_flight.remove(pick(in_flight.len()));
            t.record(pair, result(pair, &p));
            // A pair reported twice counts once.
            t.record(pair, result(pair, &p));
            rows.extend(t.advance());
        }
        rows
    }

    #[test]
    fn delay_zero_is_sequential_spsa() {
        let s = schedule(40, 3, 0);
        let rows = play(s, |_| 0);
        let mut plain = spsa(9, 40);
        for k in 1..=40 {
            let p = plain.perturb(k);
            let score: i64 = s.pairs(k).map(|pair| result(pair, &p)).sum();
            plain.update(&p, score as f64);
            assert_eq!(rows[k as usize].theta, plain.theta(), "iteration {k}");
            assert_eq!(rows[k as usize].games, 6 * k);
        }
    }

    #[test]
    fn the_trajectory_does_not_depend_on_the_order_of_arrival() {
        for delay in [0, 1, 4] {
            let s = schedule(30, 4, delay);
            let in_order = play(s, |_| 0);
            let last_first = play(s, |n| n - 1);
            let mut x = 12345u64;
            let random = play(s, |n| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                (x >> 33) as usize % n
            });
            assert_eq!(in_order, last_first, "delay {delay}");
            assert_eq!(in_order, random, "delay {delay}");
        }
        // A delay is part of the schedule: it changes the trajectory.
        let s = |delay| schedule(30, 4, delay);
        assert_ne!(play(s(0), |_| 0), play(s(3), |_| 0));
    }

    #[test]
    fn resume_from_rows_continues_exactly() {
        let s = schedule(25, 2, 3);
        let whole = play(s, |_| 0);
        let mut t = Tuner::resume(spsa(9, 25), s, &whole[..11]);
        assert_eq!(t.done(), 10);
        let mut rows = whole[..11].to_vec();
        for pair in t.frontier()..s.total_pairs() {
            let p = t.perturbation(s.iteration_of(pair)).expect("θ known");
            t.record(pair, result(pair, &p));
            rows.extend(t.advance());
        }
        assert_eq!(rows, whole);
    }

    #[test]
    fn basis_and_pairs() {
        let s = schedule(10, 8, 2);
        assert_eq!(s.total_pairs(), 80);
        assert_eq!(s.iteration_of(0), 1);
        assert_eq!(s.iteration_of(8), 2);
        assert_eq!(s.pairs(2), 8..16);
        assert_eq!((s.basis(1), s.basis(3), s.basis(4)), (0, 0, 1));
        let t = Tuner::new(spsa(1, 10), s);
        assert!(t.perturbation(3).is_some());
        assert!(t.perturbation(4).is_none());
    }
}
