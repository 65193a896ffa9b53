//! Monte-Carlo SPRT runs: how often a test passes at a given true strength and how many
//! games it takes.
//!
//! **Game model.** Games are independent, each won, drawn or lost with fixed probabilities
//! (w, d, l); a pair is two such games, so the pentanomial probabilities are
//! (l², 2ld, d² + 2wl, 2wd, w²). The true strength is given in the units of the SPRT
//! model and the draw ratio d fixes the rest:
//! - `logistic`: score s = 1/(1 + 10^(−elo/400)), w = s − d/2, l = 1 − s − d/2;
//! - `normalized`: the score s whose normalized Elo (s − ½)/σ · 800/ln 10, with
//!   σ² = w + d/4 − s², equals the given nElo (w, l as above);
//! - `bayesian`: BayesElo with the drawelo for which equal engines draw a fraction d.
//!
//! **LLR checks.** Computing the exact GSPRT LLR after every pair is the reference
//! ([`LlrChecks::EveryPair`]). [`LlrChecks::Adaptive`] gives the same decisions much faster:
//! after each exact evaluation it skips k pairs, where k is the distance to the nearer
//! bound divided by twice the largest LLR change one pair can cause at the current MLEs
//! (and at most a quarter of the pairs played), so a bound cannot be crossed unseen.

use crate::counts::{Pentanomial, PlayerResult, Trinomial};
use crate::elo::{bayeselo_to_wdl, elo_to_score, NELO_PER_T};
use crate::llr::Model;
use crate::mle::brent;
use crate::sprt::{Decision, Sprt};

/// SplitMix64: a tiny 64-bit generator, used to seed and to derive per-run seeds.
///
/// spar's one SplitMix64 is `engine::rng::SplitMix64`; this copy (same algorithm, same
/// outputs) exists because `sprt` depends on `statrs` alone and must not depend on `engine`.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator with the given state.
    pub fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// xoshiro256++: the generator of one simulated run (period 2^256 − 1).
#[derive(Debug, Clone)]
pub struct Xoshiro256(
    /// The 256-bit state.
    [u64; 4],
);

impl Xoshiro256 {
    /// A generator whose state is filled by SplitMix64 from `seed`.
    pub fn new(seed: u64) -> Self {
        let mut mix = SplitMix64::new(seed);
        Xoshiro256([
            mix.next_u64(),
            mix.next_u64(),
            mix.next_u64(),
            mix.next_u64(),
        ])
    }

    /// The generator of run `run` of a simulation seeded with `seed`: independent of the
    /// number of threads and of the order in which runs are played.
    pub fn for_run(seed: u64, run: u64) -> Self {
        let run_key = SplitMix64::new(run ^ 0x5350_4152_5f52_554e).next_u64();
        Xoshiro256::new(SplitMix64::new(seed ^ run_key).next_u64())
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.0;
        let result = s[0].wrapping_add(s[3]).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// A uniform number in [0, 1) with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Why no game model exists for a strength and draw ratio.
#[derive(Debug, Clone, PartialEq)]
pub enum GameModelError {
    /// The draw ratio must be in [0, 1).
    DrawRatio(f64),
    /// The strength cannot be reached with this draw ratio (win or loss probability
    /// would be negative), or is not finite.
    Unreachable {
        /// The true strength asked for.
        elo: f64,
        /// The draw ratio asked for.
        draw_ratio: f64,
        /// The Elo model of `elo`.
        model: Model,
    },
}

impl std::fmt::Display for GameModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GameModelError::DrawRatio(d) => {
                write!(f, "draw ratio ({d}) must be at least 0 and below 1")
            }
            GameModelError::Unreachable {
                elo,
                draw_ratio,
                model,
            } => write!(
                f,
                "a true {model} Elo of {elo} is impossible with a draw ratio of {draw_ratio}: \
                 lower the draw ratio or the Elo"
            ),
        }
    }
}

impl std::error::Error for GameModelError {}

/// Win, draw and loss probabilities of one game for the tested engine.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GameModel {
    /// Probability of a win.
    pub win: f64,
    /// Probability of a draw.
    pub draw: f64,
    /// Probability of a loss.
    pub loss: f64,
}

impl GameModel {
    /// The game model of a true strength `elo` in the units of `model`, with draw ratio
    /// `draw_ratio` (see the module documentation).
    pub fn new(elo: f64, draw_ratio: f64, model: Model) -> Result<GameModel, GameModelError> {
        let d = draw_ratio;
        if !(0.0..1.0).contains(&d) {
            return Err(GameModelError::DrawRatio(d));
        }
        let unreachable = GameModelError::Unreachable {
            elo,
            draw_ratio,
            model,
        };
        if !elo.is_finite() {
            return Err(unreachable);
        }
        let from_score = |s: f64| GameModel {
            win: s - d / 2.0,
            draw: d,
            loss: 1.0 - s - d / 2.0,
        };
        let game = match model {
            Model::Logistic => from_score(elo_to_score(elo)),
            Model::Normalized => {
                // nElo(s) increases from its value at w = 0 to its value at l = 0; solve for s.
                let nelo = |s: f64| {
                    let variance = s - d / 4.0 - s * s;
                    (s - 0.5) / variance.max(0.0).sqrt() * NELO_PER_T
                };
                let (lo, hi) = (d / 2.0, 1.0 - d / 2.0);
                let f = |s: f64| nelo(s) - elo;
                let (f_lo, f_hi) = (f(lo), f(hi));
                if !(f_lo <= 0.0 && f_hi >= 0.0) {
                    return Err(unreachable);
                }
                let s = brent(f, lo, hi, f_lo, f_hi, 1e-15).ok_or(unreachable.clone())?;
                from_score(s)
            }
            Model::Bayesian => {
                let drawelo = 400.0 * ((1.0 + d) / (1.0 - d)).log10();
                let [win, draw, loss] = bayeselo_to_wdl(elo, drawelo);
                GameModel { win, draw, loss }
            }
        };
        let ok = |p: f64| (-1e-12..=1.0 + 1e-12).contains(&p);
        if !(ok(game.win) && ok(game.loss) && ok(game.draw)) {
            return Err(unreachable);
        }
        Ok(GameModel {
            win: game.win.max(0.0),
            draw: game.draw.max(0.0),
            loss: game.loss.max(0.0),
        })
    }

    /// Expected score of one game.
    pub fn score(&self) -> f64 {
        self.win + 0.5 * self.draw
    }

    /// Probabilities of the five pair buckets (0, ½, 1, 1½, 2 points).
    pub fn pair_probabilities(&self) -> [f64; 5] {
        let (w, d, l) = (self.win, self.draw, self.loss);
        [l * l, 2.0 * l * d, d * d + 2.0 * w * l, 2.0 * w * d, w * w]
    }

    /// Plays one game.
    pub fn play(&self, rng: &mut Xoshiro256) -> PlayerResult {
        let u = rng.next_f64();
        if u < self.loss {
            PlayerResult::Loss
        } else if u < self.loss + self.draw {
            PlayerResult::Draw
        } else {
            PlayerResult::Win
        }
    }
}

/// How often a simulated run recomputes the exact LLR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlrChecks {
    /// After every pair (the reference; slow).
    EveryPair,
    /// As rarely as is safe (see the module documentation).
    Adaptive,
}

/// The end of one simulated SPRT run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunOutcome {
    /// H0, H1, or `Continue` if the pair limit came first.
    pub decision: Decision,
    /// Pairs played.
    pub pairs: u64,
    /// The final LLR.
    pub llr: f64,
}

/// Plays game pairs from `game` until the SPRT decides or `max_pairs` pairs are played.
/// The LLR uses pentanomial counts, or trinomial counts for the bayesian model.
pub fn run_sprt(
    sprt: &Sprt,
    game: &GameModel,
    rng: &mut Xoshiro256,
    max_pairs: u64,
    checks: LlrChecks,
) -> RunOutcome {
    let mut games = Trinomial::default();
    let mut pairs = Pentanomial::default();
    let (lower, upper) = (sprt.lower_bound(), sprt.upper_bound());
    let mut next_check = 1;
    let mut llr = 0.0;
    for played in 1..=max_pairs {
        let (first, second) = (game.play(rng), game.play(rng));
        games.record(first);
        games.record(second);
        pairs.record(first, second);
        if played < next_check && played < max_pairs {
            continue;
        }
        let max_pair_jump;
        if sprt.model() == Model::Bayesian {
            let g = sprt.gsprt_trinomial(&games);
            llr = g.llr();
            max_pair_jump = 2.0 * g.max_jump();
        } else {
            let g = sprt
                .gsprt_pentanomial(&pairs)
                .expect("bayesian handled above");
            llr = g.llr();
            max_pair_jump = g.max_jump();
        }
        let decision = sprt.decide(llr);
        if decision != Decision::Continue {
            return RunOutcome {
                decision,
                pairs: played,
                llr,
            };
        }
        let skip = match checks {
            LlrChecks::EveryPair => 1,
            LlrChecks::Adaptive => {
                let distance = (llr - lower).min(upper - llr);
                let k = distance / (2.0 * max_pair_jump);
                if k.is_finite() && k >= 1.0 {
                    (k as u64).clamp(1, (played / 4).max(1))
                } else {
                    1
                }
            }
        };
        next_check = played + skip;
    }
    RunOutcome {
        decision: Decision::Continue,
        pairs: max_pairs,
        llr,
    }
}

/// What many runs say.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SimulationSummary {
    /// Number of runs.
    pub runs: u64,
    /// Runs ending in H1.
    pub passed: u64,
    /// Runs ending in H0.
    pub failed: u64,
    /// Runs stopped by the pair limit.
    pub undecided: u64,
    /// passed / runs.
    pub pass_rate: f64,
    /// Monte-Carlo standard error of `pass_rate`: √(p(1−p)/runs).
    pub pass_rate_error: f64,
    /// Mean number of games of the decided runs.
    pub mean_games: f64,
    /// Median number of games of the decided runs.
    pub median_games: f64,
    /// 95th percentile of the number of games of the decided runs.
    pub p95_games: f64,
}

impl SimulationSummary {
    /// Summarizes run outcomes. Games are two per pair; percentiles are the nearest-rank
    /// ones. With no decided runs the game statistics are NaN.
    pub fn new(outcomes: &[RunOutcome]) -> SimulationSummary {
        let runs = outcomes.len() as u64;
        let count = |d: Decision| outcomes.iter().filter(|o| o.decision == d).count() as u64;
        let passed = count(Decision::H1);
        let failed = count(Decision::H0);
        let mut games: Vec<u64> = outcomes
            .iter()
            .filter(|o| o.decision != Decision::Continue)
            .map(|o| 2 * o.pairs)
            .collect();
        games.sort_unstable();
        let rank = |q: f64| -> f64 {
            if games.is_empty() {
                return f64::NAN;
            }
            let index = ((q * games.len() as f64).ceil() as usize).clamp(1, games.len()) - 1;
            games[index] as f64
        };
        let pass_rate = passed as f64 / runs as f64;
        SimulationSummary {
            runs,
            passed,
            failed,
            undecided: runs - passed - failed,
            pass_rate,
            pass_rate_error: (pass_rate * (1.0 - pass_rate) / runs as f64).sqrt(),
            mean_games: games.iter().sum::<u64>() as f64 / games.len() as f64,
            median_games: rank(0.5),
            p95_games: rank(0.95),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_models_hit_their_strength() {
        for d in [0.0, 0.3, 0.6] {
            let g = GameModel::new(12.0, d, Model::Logistic).unwrap();
            assert!((g.score() - elo_to_score(12.0)).abs() < 1e-12);
            assert!((g.draw - d).abs() < 1e-12);
            let g = GameModel::new(7.0, d, Model::Normalized).unwrap();
            let var = g.win + g.draw / 4.0 - g.score() * g.score();
            let nelo = (g.score() - 0.5) / var.sqrt() * NELO_PER_T;
            assert!((nelo - 7.0).abs() < 1e-9, "{nelo}");
            let g = GameModel::new(0.0, d, Model::Bayesian).unwrap();
            assert!((g.draw - d).abs() < 1e-12 && (g.win - g.loss).abs() < 1e-12);
        }
        let p = GameModel::new(30.0, 0.4, Model::Logistic)
            .unwrap()
            .pair_probabilities();
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(GameModel::new(1000.0, 0.9, Model::Logistic).is_err());
        assert!(GameModel::new(0.0, 1.0, Model::Logistic).is_err());
        assert!(GameModel::new(f64::NAN, 0.5, Model::Normalized).is_err());
    }

    #[test]
    fn rng_is_uniform_enough() {
        let mut rng = Xoshiro256::for_run(1, 2);
        let n = 100_000;
        let mean = (0..n).map(|_| rng.next_f64()).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 0.005);
        assert_ne!(
            Xoshiro256::for_run(1, 2).next_u64(),
            Xoshiro256::for_run(1, 3).next_u64()
        );
        assert_ne!(
            Xoshiro256::for_run(1, 2).next_u64(),
            Xoshiro256::for_run(2, 2).next_u64()
        );
    }

    #[test]
    fn summary_percentiles() {
        let outcome = |pairs| RunOutcome {
            decision: Decision::H1,
            pairs,
            llr: 3.0,
        };
        let outcomes: Vec<_> = (1..=100).map(outcome).collect();
        let s = SimulationSummary::new(&outcomes);
        assert_eq!(s.median_games, 100.0);
        assert_eq!(s.p95_games, 190.0);
        assert_eq!(s.pass_rate, 1.0);
    }
}
