//! `spar tune --probe`: a preflight of a tune. For each parameter, a short match of
//! θ + c_end against θ − c_end (every other parameter at its start), with the same engine,
//! limit, book and adjudication as the tune would use, to see whether the step c_end makes
//! a difference the games can measure.
//!
//! Each parameter plays the same `pairs` game pairs (pair j: opening j of the book, once
//! with each colour), in parallel on [`SelfPlay`]'s workers, one pair per job so that the
//! pairs' results are known: the Elo gap and its 95 % error come from the pentanomial counts
//! (the sprt crate's [`Pentanomial::estimate`]), as fishtest and fastchess compute them. The
//! values are θ ± c_end rounded to the nearest integer and clipped to the range; both sides
//! are printed. Under node or depth limits the probe is deterministic.
//!
//! The verdicts, in this order:
//!
//! - `identical`: θ + c_end and θ − c_end round (and clip) to the same value: nothing to
//!   play; c_end is below what an integer parameter can show.
//! - `no effect`: in every pair the two games were the same moves: with the colours
//!   swapped, θ + c_end played exactly what θ − c_end played, so the step changed no move
//!   of any game. (At a node or depth limit two engines that search alike always give
//!   this; under a clock timing can break it even for a parameter without effect.)
//! - `too small`: the 95 % interval of the gap contains 0: the step is too small to measure
//!   in this many games (or θ sits near the parameter's optimum, where the gap of a
//!   symmetric step vanishes; the probe cannot tell the two apart).
//! - `measurable`: the gap is outside its error.
//!
//! Suggestions, with T = [`TARGET_GAP`] Elo between θ + c_end and θ − c_end (a few Elo per
//! ±c_end: large enough for a tune's games to see, small enough to keep the response near
//! linear):
//!
//! - **c_end**: for a locally quadratic response f the gap between θ + c and θ − c is
//!   2c · f′(θ), linear in c. A measurable gap: keep c_end (`keep`). It is not scaled
//!   down even when the gap is far above T: the gap at the start measures the slope
//!   there, which shrinks as θ nears its optimum, and c_end is the step of the end of the
//!   run, near the optimum. A gap within its error e ≤ T: the true gap is probably below
//!   e, so a gap of T needs c_end of at least c_end · T / e (clamped to
//!   [0.5, (max − min) / 2]). A gap within an error e > T says nothing about c_end: the
//!   probe was too short, and the error (∝ 1/√games) falls to T after games · (e / T)²
//!   games, which is suggested as `--probe-games` (`?` in the table).
//! - **r_end**: 0.002, OpenBench's usual value; change c_end rather than r_end.
//! - **games**: a tune adds every iteration's W − L into θ; with d the expected (W − L) per
//!   game of a gap and D the draw rate, that sum over n games grows as n · d while its noise
//!   grows as √(n · (1 − D)), so the gap stands [`Z_BUDGET`] standard deviations above the
//!   noise after n = Z² · (1 − D) / d² games (per parameter: other parameters' flips only
//!   add a little variance). The per-parameter column uses the measured gap; the budget
//!   line uses T (a tune with the suggested c_end values).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use sprt::{elo::elo_to_score, Estimate, Pentanomial, Trinomial};

use super::gains::MIN_INT_C;
use super::selfplay::{tally, SelfPlay};
use super::spsa_params::SpsaParam;
use crate::error::{CliError, CliResult};
use crate::play::game::PlayedGame;
use crate::progress::Progress;

/// Games per parameter when `--probe-games` is not given.
pub const DEFAULT_GAMES: u64 = 200;
/// The Elo gap between θ + c_end and θ − c_end that the suggested c_end aims at.
pub const TARGET_GAP: f64 = 5.0;
/// Standard deviations above the noise for the game budget.
pub const Z_BUDGET: f64 = 3.0;
/// OpenBench's usual r_end.
pub const R_END: f64 = 0.002;

/// What the probe found for one parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flag {
    /// θ ± c_end are the same integer.
    Identical,
    /// Every pair scored 1 point.
    NoEffect,
    /// The gap is within its error.
    TooSmall,
    /// The gap is outside its error.
    Measurable,
}

impl Flag {
    /// The word shown.
    pub fn word(self) -> &'static str {
        match self {
            Flag::Identical => "identical",
            Flag::NoEffect => "no effect",
            Flag::TooSmall => "too small",
            Flag::Measurable => "measurable",
        }
    }
}

/// A suggested c_end: a value, or a lower bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Suggestion {
    /// Keep c_end: the gap is measurable.
    Keep,
    /// At least this value.
    AtLeast(f64),
    /// The error is above the target gap: probe with this many games to tell.
    ProbeLonger(u64),
    /// Nothing to scale from.
    None,
}

/// One parameter's probe.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRow {
    /// The parameter.
    pub param: SpsaParam,
    /// The value θ + c_end played (rounded, clipped).
    pub plus: i64,
    /// The value θ − c_end played.
    pub minus: i64,
    /// Results of the θ + c_end side, by game.
    pub games: Trinomial,
    /// Results of the θ + c_end side, by pair.
    pub pairs: Pentanomial,
    /// Pairs whose two games were the same moves (the sides played alike).
    pub mirrored: u64,
    /// The verdict.
    pub flag: Flag,
}

impl ProbeRow {
    /// The estimate from the pairs (`None` when nothing was played).
    pub fn estimate(&self) -> Option<Estimate> {
        (self.pairs.pairs() > 0).then(|| self.pairs.estimate())
    }

    /// The suggested c_end (see the module documentation).
    pub fn suggestion(&self) -> Suggestion {
        let c = self.param.c_end;
        let clamp = |v: f64| {
            v.clamp(
                MIN_INT_C,
                ((self.param.max - self.param.min) / 2.0).max(MIN_INT_C),
            )
        };
        let Some(e) = self.estimate() else {
            return Suggestion::None;
        };
        match self.flag {
            Flag::Measurable => Suggestion::Keep,
            Flag::TooSmall if e.elo_error.is_finite() && e.elo_error > TARGET_GAP => {
                let games = e.games as f64 * (e.elo_error / TARGET_GAP).powi(2);
                Suggestion::ProbeLonger(round_games(games).next_multiple_of(2))
            }
            Flag::TooSmall if e.elo_error.is_finite() && e.elo_error > 0.0 => {
                Suggestion::AtLeast(clamp(c * TARGET_GAP / e.elo_error))
            }
            _ => Suggestion::None,
        }
    }
}

/// Whether the two games of a pair are the same moves: with the colours swapped, the
/// θ + c_end side played exactly what the θ − c_end side played.
pub fn same_moves(games: &[PlayedGame; 2]) -> bool {
    let [a, b] = games;
    a.start_fen == b.start_fen
        && a.moves.len() == b.moves.len()
        && a.moves.iter().zip(&b.moves).all(|(x, y)| x.mv == y.mv)
}

/// The verdict from the values played, the pairs, and how many pairs were `mirrored`
/// (their two games the same moves).
pub fn flag(plus: i64, minus: i64, pairs: &Pentanomial, mirrored: u64) -> Flag {
    if plus == minus {
        return Flag::Identical;
    }
    let n = pairs.pairs();
    if n > 0 && mirrored == n {
        return Flag::NoEffect;
    }
    let e = pairs.estimate();
    if !(e.elo.is_finite() && e.elo_error.is_finite()) || e.elo.abs() <= e.elo_error {
        // All wins (an infinite gap) is measurable; a NaN error is not.
        if e.elo.is_infinite() {
            return Flag::Measurable;
        }
        return Flag::TooSmall;
    }
    Flag::Measurable
}

/// Games for a gap of `elo` (per game: d = 2·score − 1) to stand [`Z_BUDGET`] standard
/// deviations above the noise of W − L with draw rate `draws`.
pub fn games_to_see(elo: f64, draws: f64) -> Option<f64> {
    let d = 2.0 * elo_to_score(elo.abs()) - 1.0;
    (d > 0.0 && d.is_finite()).then(|| Z_BUDGET * Z_BUDGET * (1.0 - draws).max(0.0) / (d * d))
}

/// The values of θ + c_end and θ − c_end: rounded to the nearest integer, clipped.
pub fn sides(p: &SpsaParam) -> (i64, i64) {
    let v = |x: f64| x.round().clamp(p.min, p.max) as i64;
    (v(p.start + p.c_end), v(p.start - p.c_end))
}

/// Plays the probe of every parameter (`pairs` pairs each) on `selfplay`. Returns the rows
/// done; the second value is true when `abort` stopped it (the parameter in flight is
/// dropped).
pub fn play(
    selfplay: &SelfPlay,
    params: &[SpsaParam],
    pairs: u64,
    abort: &AtomicBool,
    progress: &Progress,
) -> CliResult<(Vec<ProbeRow>, bool)> {
    let names: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    let start: Vec<i64> = params.iter().map(|p| p.start.round() as i64).collect();
    let mut rows = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let (plus, minus) = sides(p);
        let mut games = Trinomial::default();
        let mut pentanomial = Pentanomial::default();
        let mut mirrored = 0;
        if plus != minus {
            let mut dev = start.clone();
            let mut base = start.clone();
            dev[i] = plus;
            base[i] = minus;
            let dev = selfplay.values(&names, &dev)?;
            let base = selfplay.values(&names, &base)?;
            let next = AtomicU64::new(0);
            let results: Mutex<Vec<Option<(Trinomial, bool)>>> =
                Mutex::new(vec![None; pairs as usize]);
            let on_game = || progress.inc();
            std::thread::scope(|s| {
                for worker in 0..selfplay.workers() {
                    let (next, results, dev, base, on_game) =
                        (&next, &results, &dev, &base, &on_game);
                    s.spawn(move || loop {
                        let k = next.fetch_add(1, Ordering::SeqCst);
                        if k >= pairs || abort.load(Ordering::SeqCst) {
                            break;
                        }
                        let Some(games) = selfplay.play_on(worker, k, dev, base, abort, on_game)
                        else {
                            break;
                        };
                        let same = same_moves(&games);
                        results.lock().unwrap_or_else(|e| e.into_inner())[k as usize] =
                            Some((tally(&games), same));
                    });
                }
            });
            let results = results.into_inner().unwrap_or_else(|e| e.into_inner());
            if abort.load(Ordering::SeqCst) || results.iter().any(Option::is_none) {
                return Ok((rows, true));
            }
            for (t, same) in results.into_iter().flatten() {
                games += t;
                mirrored += u64::from(same);
                // A pair's points in half points: 2·W + D, the pentanomial bucket.
                pentanomial.0[(2 * t.wins + t.draws) as usize] += 1;
            }
        } else {
            for _ in 0..2 * pairs {
                progress.inc();
            }
        }
        progress.set_message(&format!("{} done", p.name));
        rows.push(ProbeRow {
            param: p.clone(),
            plus,
            minus,
            games,
            pairs: pentanomial,
            mirrored,
            flag: flag(plus, minus, &pentanomial, mirrored),
        });
    }
    Ok((rows, false))
}

fn num(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// A game count rounded to two significant digits.
fn round_games(g: f64) -> u64 {
    if !(g.is_finite() && g > 0.0) {
        return 0;
    }
    let scale = 10f64.powi((g.log10().floor() as i32 - 1).max(0));
    ((g / scale).ceil() * scale) as u64
}

/// The report: a table with one line per parameter, then the suggestions.
/// `pairs_per_iteration` turns the game budget into iterations.
pub fn lines(rows: &[ProbeRow], pairs: u64, pairs_per_iteration: u64) -> Vec<String> {
    let mut out = vec![format!(
        "Probe: θ + c_end against θ − c_end, {} games ({pairs} pairs) per parameter, the others at their start; Elo of the + side, ± 95 % (from pairs)",
        2 * pairs
    )];
    let w = rows
        .iter()
        .map(|r| r.param.name.chars().count())
        .max()
        .unwrap_or(0)
        .max(9);
    out.push(format!(
        "{:<w$}  {:>6}  {:>6}  {:>6}  {:>11}  {:>9}  {:>16}  {:<10}  {:>11}  {:>10}",
        "parameter",
        "c_end",
        "+",
        "−",
        "W-D-L",
        "same",
        "Elo gap",
        "verdict",
        "c_end→",
        "tune games"
    ));
    let mut draws = (0u64, 0u64);
    for r in rows {
        draws.0 += r.games.draws;
        draws.1 += r.games.games();
        let draw_rate = if r.games.games() > 0 {
            r.games.draws as f64 / r.games.games() as f64
        } else {
            0.0
        };
        let gap = match r.estimate() {
            Some(e) => format!("{:+.1} ± {:.1}", e.elo, e.elo_error),
            None => "-".to_string(),
        };
        let suggestion = match r.suggestion() {
            Suggestion::Keep => "keep".to_string(),
            Suggestion::AtLeast(v) => format!("≥ {}", num(v)),
            Suggestion::ProbeLonger(_) => "?".to_string(),
            Suggestion::None => "-".to_string(),
        };
        let see = match (r.flag, r.estimate()) {
            (Flag::Measurable, Some(e)) => games_to_see(e.elo, draw_rate)
                .map_or("-".to_string(), |g| round_games(g).to_string()),
            (Flag::TooSmall, Some(e)) => games_to_see(e.elo_error, draw_rate)
                .map_or("-".to_string(), |g| format!("> {}", round_games(g))),
            _ => "-".to_string(),
        };
        out.push(format!(
            "{:<w$}  {:>6}  {:>6}  {:>6}  {:>11}  {:>9}  {:>16}  {:<10}  {:>11}  {:>10}",
            r.param.name,
            num(r.param.c_end),
            r.plus,
            r.minus,
            format!("{}-{}-{}", r.games.wins, r.games.draws, r.games.losses),
            format!("{}/{}", r.mirrored, r.pairs.pairs()),
            gap,
            r.flag.word(),
            suggestion,
            see
        ));
    }
    out.push(String::new());
    out.push(
        "same: pairs whose two games were the same moves (with the colours swapped, both sides played alike)."
            .to_string(),
    );
    out.push(format!(
        "c_end→: keep (the gap is measurable), or ≥ the c_end at which θ ± c_end would differ by about {TARGET_GAP} Elo (the gap scales with c_end for a locally quadratic response). tune games: games for this gap to stand {Z_BUDGET}σ above the noise of W − L."
    ));
    let bad: Vec<&str> = rows
        .iter()
        .filter(|r| matches!(r.flag, Flag::Identical | Flag::NoEffect))
        .map(|r| r.param.name.as_str())
        .collect();
    if !bad.is_empty() {
        out.push(format!(
            "No effect at ±c_end: {} (identical: θ ± c_end round to one value; no effect: the two games of every pair were the same moves). Raise c_end or drop the parameter.",
            bad.join(", ")
        ));
    }
    let small: Vec<&str> = rows
        .iter()
        .filter(|r| r.flag == Flag::TooSmall)
        .map(|r| r.param.name.as_str())
        .collect();
    if !small.is_empty() {
        out.push(format!(
            "Step too small to measure in {} games: {} (or θ is near the optimum, where a symmetric step shows no gap).",
            2 * pairs,
            small.join(", ")
        ));
    }
    let longer: Vec<(&str, u64)> = rows
        .iter()
        .filter_map(|r| match r.suggestion() {
            Suggestion::ProbeLonger(g) => Some((r.param.name.as_str(), g)),
            _ => None,
        })
        .collect();
    if let Some(most) = longer.iter().map(|l| l.1).max() {
        let names: Vec<&str> = longer.iter().map(|l| l.0).collect();
        out.push(format!(
            "?: the error is above {TARGET_GAP} Elo, too wide to tell whether c_end is too small ({}); --probe-games {most} narrows it to about {TARGET_GAP}.",
            names.join(", ")
        ));
    }
    let r_end: Vec<String> = rows
        .iter()
        .filter(|r| (r.param.r_end - R_END).abs() > 1e-12)
        .map(|r| format!("{} {}", r.param.name, r.param.r_end))
        .collect();
    out.push(if r_end.is_empty() {
        format!("r_end: {R_END} (OpenBench's usual value) for all; tune c_end, not r_end.")
    } else {
        format!(
            "r_end: {R_END} is OpenBench's usual value (yours: {}); tune c_end, not r_end.",
            r_end.join(", ")
        )
    });
    let draw_rate = if draws.1 > 0 {
        draws.0 as f64 / draws.1 as f64
    } else {
        0.0
    };
    if let Some(g) = games_to_see(TARGET_GAP, draw_rate) {
        let g = round_games(g);
        let per = 2 * pairs_per_iteration.max(1);
        out.push(format!(
            "Budget: about {g} games ({} iterations of {} pairs) for a gap of {TARGET_GAP} Elo at ±c_end to stand {Z_BUDGET}σ above the noise (draw rate {:.0} %); more for the parameters too small to measure.",
            g.div_ceil(per),
            pairs_per_iteration.max(1),
            100.0 * draw_rate
        ));
    }
    out
}

/// Checks `--probe-games`.
pub fn check_games(games: u64) -> CliResult<u64> {
    if games < 2 || !games.is_multiple_of(2) {
        return Err(CliError::usage(format!(
            "--probe-games {games}: give an even number of at least 2 (the games are pairs, each opening once per colour)"
        )));
    }
    Ok(games / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn param(start: f64, c_end: f64) -> SpsaParam {
        SpsaParam {
            name: "p".into(),
            start,
            min: 0.0,
            max: 100.0,
            c_end,
            r_end: 0.002,
        }
    }

    #[test]
    fn flags_follow_the_pairs() {
        let p = |c: [u64; 5]| Pentanomial::new(c);
        assert_eq!(flag(3, 3, &p([0; 5]), 0), Flag::Identical);
        assert_eq!(flag(4, 2, &p([0, 0, 100, 0, 0]), 100), Flag::NoEffect);
        // All 1–1, but one pair's games differ: the engines did not play alike.
        assert_eq!(flag(4, 2, &p([0, 0, 100, 0, 0]), 99), Flag::TooSmall);
        assert_eq!(flag(4, 2, &p([10, 20, 40, 20, 10]), 0), Flag::TooSmall);
        assert_eq!(flag(4, 2, &p([2, 10, 40, 30, 18]), 0), Flag::Measurable);
        assert_eq!(flag(4, 2, &p([0, 0, 0, 0, 5]), 0), Flag::Measurable);
        assert_eq!(sides(&param(10.0, 0.4)), (10, 10));
        assert_eq!(sides(&param(10.0, 0.5)), (11, 10));
        assert_eq!(sides(&param(98.0, 6.0)), (100, 92));
    }

    #[test]
    fn suggestions_raise_c_end_or_ask_for_more_games() {
        let row = |c: [u64; 5]| {
            let pairs = Pentanomial::new(c);
            ProbeRow {
                param: param(50.0, 4.0),
                plus: 54,
                minus: 46,
                games: Trinomial::default(),
                pairs,
                mirrored: 0,
                flag: flag(54, 46, &pairs, 0),
            }
        };
        let r = row([2, 10, 40, 30, 18]);
        let e = r.estimate().unwrap();
        assert!(e.elo > e.elo_error, "{e:?}");
        // Measurable: c_end stays (the slope at the start says nothing of the end).
        assert_eq!(r.suggestion(), Suggestion::Keep);
        // 100 pairs, error ≈ 61 Elo: too wide to tell; the games that bring it to 5 Elo.
        let r = row([10, 20, 40, 20, 10]);
        let e = r.estimate().unwrap();
        assert!(e.elo_error > TARGET_GAP);
        let games = 200.0 * (e.elo_error / TARGET_GAP).powi(2);
        match r.suggestion() {
            Suggestion::ProbeLonger(g) => {
                assert!(
                    g as f64 >= games && (g as f64) < 1.1 * games && g % 2 == 0,
                    "{g} {games}"
                )
            }
            s => panic!("{s:?}"),
        }
        // 40 000 pairs of the same spread: error ≈ 3 Elo, below the target; the c_end must
        // be at least c_end · 5 / error.
        let r = row([4000, 8000, 16000, 8000, 4000]);
        let e = r.estimate().unwrap();
        assert!(e.elo_error < TARGET_GAP, "{e:?}");
        match r.suggestion() {
            Suggestion::AtLeast(v) => {
                assert!((v - 4.0 * TARGET_GAP / e.elo_error).abs() < 1e-9 && v > 4.0)
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(row([0, 0, 100, 0, 0]).suggestion(), Suggestion::None);
    }

    #[test]
    fn budget_is_z_squared_noise_over_signal_squared() {
        // 5 Elo: score 0.507195, d = 0.014390; no draws: 9 / d² ≈ 43 464.
        let g = games_to_see(5.0, 0.0).unwrap();
        let d = 2.0 * elo_to_score(5.0) - 1.0;
        assert!((g - 9.0 / (d * d)).abs() < 1e-6);
        assert!((g - 43_464.0).abs() < 50.0, "{g}");
        // Half the games drawn: half the budget.
        assert!((games_to_see(-5.0, 0.5).unwrap() - g / 2.0).abs() < 1e-6);
        assert!(games_to_see(0.0, 0.0).is_none());
        assert_eq!(round_games(43_464.0), 44_000);
        assert_eq!(round_games(87.0), 87);
        assert!(check_games(3).is_err() && check_games(0).is_err());
        assert_eq!(check_games(200).unwrap(), 100);
    }
}
