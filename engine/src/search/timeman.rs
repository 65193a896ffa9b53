//! Time management: how long a search may take.
//!
//! Two bounds come out of the limits: the **soft** bound, checked between iterations (do not
//! start another iteration after it), and the **hard** bound, checked every few thousand
//! nodes (stop at once).

use std::time::Duration;

use crate::params::Params;
use crate::types::Color;

use super::Limits;

crate::tunable!(
    /// Time management: the moves still to play assumed when the clock has no `movestogo`.
    pub TM_MOVES_TO_GO = search "tm_moves_to_go": 20, 10..=60, c_end 2.0, r_end 0.002);
crate::tunable!(
    /// Time management: the soft bound in hundredths of the ideal time per move
    /// (time left / moves to go + ¾ of the increment).
    pub TM_SOFT_PCT = search "tm_soft_pct": 75, 20..=200, c_end 5.0, r_end 0.002);
crate::tunable!(
    /// Time management: the hard bound in hundredths of the ideal time per move (at most
    /// ¾ of the time left).
    pub TM_HARD_PCT = search "tm_hard_pct": 250, 100..=600, c_end 15.0, r_end 0.002);

/// How the clock is shared out, from the time-management parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeShares {
    /// See [`TM_MOVES_TO_GO`].
    pub moves_to_go: u32,
    /// See [`TM_SOFT_PCT`].
    pub soft_pct: u32,
    /// See [`TM_HARD_PCT`].
    pub hard_pct: u32,
}

impl TimeShares {
    /// The shares a parameter table sets.
    pub fn new(p: &Params) -> TimeShares {
        TimeShares {
            moves_to_go: p.get(&TM_MOVES_TO_GO) as u32,
            soft_pct: p.get(&TM_SOFT_PCT) as u32,
            hard_pct: p.get(&TM_HARD_PCT) as u32,
        }
    }
}

impl Default for TimeShares {
    /// The default parameters' shares.
    fn default() -> Self {
        TimeShares::new(&Params::defaults())
    }
}

/// Time reserved per move for communication and bookkeeping.
pub const MOVE_OVERHEAD: Duration = Duration::from_millis(10);

/// The time bounds of one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeBounds {
    /// Do not start a new iteration after this much time.
    pub soft: Option<Duration>,
    /// Stop searching after this much time.
    pub hard: Option<Duration>,
}

/// Computes the time bounds for the side to move, the clock shared out by `shares`.
///
/// ```
/// use std::time::Duration;
/// use engine::search::{Limits, timeman::{bounds, TimeShares}};
/// use engine::types::Color;
/// let limits = Limits { wtime: Some(Duration::from_secs(60)), winc: Some(Duration::from_secs(1)), ..Limits::default() };
/// let b = bounds(&limits, Color::White, TimeShares::default());
/// assert!(b.soft.unwrap() < b.hard.unwrap());
/// assert!(b.hard.unwrap() < Duration::from_secs(60));
/// ```
pub fn bounds(limits: &Limits, side: Color, shares: TimeShares) -> TimeBounds {
    if limits.infinite {
        return TimeBounds {
            soft: None,
            hard: None,
        };
    }
    let mut soft: Option<Duration> = None;
    let mut hard: Option<Duration> = None;
    let (time, inc) = match side {
        Color::White => (limits.wtime, limits.winc),
        Color::Black => (limits.btime, limits.binc),
    };
    if let Some(time) = time {
        let inc = inc.unwrap_or_default();
        let overhead = MOVE_OVERHEAD.min(time / 10);
        let avail = time.saturating_sub(overhead);
        let mtg = limits
            .movestogo
            .map_or(shares.moves_to_go.max(1), |m| m.clamp(1, 50));
        let ideal = avail / mtg + inc * 3 / 4;
        let s = (ideal * shares.soft_pct / 100).min(avail / 2);
        let h = (ideal * shares.hard_pct / 100).min(avail * 3 / 4);
        soft = Some(s);
        hard = Some(h.max(s));
    }
    if let Some(mt) = limits.movetime {
        // `movetime` means "search this long": only the hard bound.
        soft = soft.map(|s| s.min(mt));
        hard = Some(hard.map_or(mt, |h| h.min(mt)));
    }
    TimeBounds { soft, hard }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_follow_the_clock() {
        let none = bounds(&Limits::default(), Color::White, TimeShares::default());
        assert_eq!(
            none,
            TimeBounds {
                soft: None,
                hard: None
            }
        );
        let mt = bounds(
            &Limits {
                movetime: Some(Duration::from_millis(100)),
                ..Limits::default()
            },
            Color::Black,
            TimeShares::default(),
        );
        assert_eq!(mt.hard, Some(Duration::from_millis(100)));
        let l = Limits {
            wtime: Some(Duration::from_millis(1000)),
            btime: Some(Duration::from_millis(100_000)),
            ..Limits::default()
        };
        let w = bounds(&l, Color::White, TimeShares::default());
        let b = bounds(&l, Color::Black, TimeShares::default());
        assert!(w.hard.unwrap() < b.hard.unwrap());
        assert!(w.hard.unwrap() <= Duration::from_millis(750));
        // The last move before the time control may use more, but never all of it.
        let last = bounds(
            &Limits {
                btime: Some(Duration::from_millis(1000)),
                movestogo: Some(1),
                ..Limits::default()
            },
            Color::Black,
            TimeShares::default(),
        );
        assert!(last.hard.unwrap() < Duration::from_millis(1000));
        assert!(last.soft.unwrap() >= Duration::from_millis(400));
        // Almost no time left: still a positive, tiny budget.
        let tiny = bounds(
            &Limits {
                wtime: Some(Duration::from_millis(5)),
                ..Limits::default()
            },
            Color::White,
            TimeShares::default(),
        );
        assert!(tiny.hard.unwrap() < Duration::from_millis(5));
    }

    #[test]
    fn shares_scale_the_bounds() {
        let l = Limits {
            wtime: Some(Duration::from_millis(10_000)),
            winc: Some(Duration::from_millis(100)),
            ..Limits::default()
        };
        let base = TimeShares {
            moves_to_go: 20,
            soft_pct: 100,
            hard_pct: 200,
        };
        // Ideal: (10 s − 10 ms) / 20 + ¾ · 100 ms = 574.5 ms.
        let b = bounds(&l, Color::White, base);
        assert_eq!(b.soft, Some(Duration::from_micros(574_500)));
        assert_eq!(b.hard, Some(Duration::from_micros(1_149_000)));
        let fewer = bounds(
            &l,
            Color::White,
            TimeShares {
                moves_to_go: 40,
                ..base
            },
        );
        assert!(fewer.soft < b.soft && fewer.hard < b.hard);
        let half = bounds(
            &l,
            Color::White,
            TimeShares {
                soft_pct: 50,
                ..base
            },
        );
        assert_eq!(half.soft, Some(Duration::from_micros(287_250)));
        assert_eq!(half.hard, b.hard);
        // A `movestogo` from the clock overrides the assumed moves to go.
        let mtg = bounds(
            &Limits {
                movestogo: Some(20),
                ..l
            },
            Color::White,
            TimeShares {
                moves_to_go: 40,
                ..base
            },
        );
        assert_eq!(mtg, b);
    }
}
