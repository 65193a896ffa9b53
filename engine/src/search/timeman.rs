//! Time management: how long a search may take.
//!
//! Two bounds come out of the limits: the **soft** bound, checked between iterations (do not
//! start another iteration after it), and the **hard** bound, checked every few thousand
//! nodes (stop at once).

use std::time::Duration;

use crate::types::Color;

use super::Limits;

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

/// Computes the time bounds for the side to move.
///
/// ```
/// use std::time::Duration;
/// use engine::search::{Limits, timeman::bounds};
/// use engine::types::Color;
/// let limits = Limits { wtime: Some(Duration::from_secs(60)), winc: Some(Duration::from_secs(1)), ..Limits::default() };
/// let b = bounds(&limits, Color::White);
/// assert!(b.soft.unwrap() < b.hard.unwrap());
/// assert!(b.hard.unwrap() < Duration::from_secs(60));
/// ```
pub fn bounds(limits: &Limits, side: Color) -> TimeBounds {
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
        let mtg = limits.movestogo.map_or(30, |m| m.clamp(1, 50));
        let ideal = avail / mtg + inc * 3 / 4;
        let s = (ideal * 6 / 10).min(avail / 2);
        let h = (ideal * 5 / 2).min(avail * 3 / 4);
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
        let none = bounds(&Limits::default(), Color::White);
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
        );
        assert_eq!(mt.hard, Some(Duration::from_millis(100)));
        let l = Limits {
            wtime: Some(Duration::from_millis(1000)),
            btime: Some(Duration::from_millis(100_000)),
            ..Limits::default()
        };
        let w = bounds(&l, Color::White);
        let b = bounds(&l, Color::Black);
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
        );
        assert!(tiny.hard.unwrap() < Duration::from_millis(5));
    }
}
