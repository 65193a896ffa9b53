//! Syzygy tablebases in the search: the settings (UCI `SyzygyProbeDepth`,
//! `SyzygyProbeLimit`, `Syzygy50MoveRule`), the scores of probe results, and the ranking of
//! root moves by DTZ (or WDL) that restricts the search to the moves that keep the
//! tablebase result and make progress, after Stockfish's `rank_root_moves`.

use crate::position::Position;
use crate::tablebase::{Tablebases, Wdl};
use crate::types::Move;

use super::tt::Bound;
use super::TB_WIN;

/// How the search uses the tables (the UCI options of the same names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SyzygyConfig {
    /// `SyzygyProbeDepth`: the least remaining depth at which a node with as many pieces as
    /// the probe limit is probed (positions with fewer pieces are probed at any depth).
    pub probe_depth: i32,
    /// `SyzygyProbeLimit`: the most pieces a probed position may have (0: no probes).
    pub probe_limit: u32,
    /// `Syzygy50MoveRule`: cursed wins and blessed losses are draws (else wins and losses).
    pub rule50: bool,
}

impl Default for SyzygyConfig {
    /// Stockfish's defaults: depth 1, limit 7, the 50-move rule on.
    fn default() -> Self {
        SyzygyConfig {
            probe_depth: 1,
            probe_limit: 7,
            rule50: true,
        }
    }
}

/// The score and bound of a WDL probe at `ply` (the score from the side to move's view):
/// a win is a lower bound, a loss an upper bound, a draw exact.
#[inline]
pub(crate) fn wdl_score(wdl: Wdl, ply: usize, rule50: bool) -> (i32, Bound) {
    let draw = rule50 as i32;
    let v = wdl.to_i32();
    if v > draw {
        (TB_WIN - ply as i32, Bound::Lower)
    } else if v < -draw {
        (-TB_WIN + ply as i32, Bound::Upper)
    } else {
        (0, Bound::Exact)
    }
}

/// Ranks beyond any DTZ (2^18, as Stockfish's `MAX_DTZ`).
const MAX_DTZ: i32 = 1 << 18;

/// The root moves ranked by the tables.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RootRanking {
    /// The moves that keep the best result (and, for a win, reach the next zeroing move
    /// soonest), in move-generation order.
    pub best: Vec<Move>,
    /// The root's score for reports: a win `TB_WIN - 1`, a loss its negation, else 0.
    pub score: i32,
    /// Whether the moves were ranked by DTZ (else by WDL only).
    pub by_dtz: bool,
    /// Probes made.
    pub probes: u64,
}

/// Ranks `moves` of `pos` (the root, whose earlier positions are `history`) by the tables;
/// `None` when the tables do not cover the position or a probe fails.
pub(crate) fn rank_root_moves(
    tb: &Tablebases,
    pos: &Position,
    history: &[u64],
    moves: &[Move],
    rule50: bool,
) -> Option<RootRanking> {
    if moves.is_empty() || !pos.castling().is_empty() || pos.occupied().count() > tb.max_pieces() {
        return None;
    }
    let ranked = rank_by_dtz(tb, pos, history, moves)
        .map(|r| (r, true))
        .or_else(|| rank_by_wdl(tb, pos, moves, rule50).map(|r| (r, false)))?;
    let (ranks, by_dtz) = ranked;
    let top = *ranks.iter().max()?;
    let best = moves
        .iter()
        .zip(&ranks)
        .filter(|(_, &r)| r == top)
        .map(|(&m, _)| m)
        .collect();
    let bound = if rule50 { MAX_DTZ / 2 - 100 } else { 1 };
    let score = if top >= bound {
        TB_WIN - 1
    } else if top <= -bound {
        -(TB_WIN - 1)
    } else {
        0
    };
    Some(RootRanking {
        best,
        score,
        by_dtz,
        probes: moves.len() as u64,
    })
}

/// Stockfish's `root_probe` with DTZ ranking: wins that zero soonest rank highest, losses
/// that last longest; a win or loss that the 50-move rule turns into a draw ranks between.
fn rank_by_dtz(
    tb: &Tablebases,
    pos: &Position,
    history: &[u64],
    moves: &[Move],
) -> Option<Vec<i32>> {
    let cnt50 = pos.halfmove_clock() as i32;
    // Positions since the last zeroing move (the root's included).
    let since = &history[history.len().saturating_sub(cnt50 as usize)..];
    let rep = since.contains(&pos.key());
    let mut ranks = Vec::with_capacity(moves.len());
    for &mv in moves {
        let child = pos.play(mv);
        let dtz = if !child.has_legal_move() {
            // Mate is the best zeroing move there is; stalemate a draw.
            i32::from(child.in_check())
        } else if child.halfmove_clock() == 0 {
            match tb.probe_wdl(&child).ok()?? {
                Wdl::Loss => 1,
                Wdl::BlessedLoss => 101,
                Wdl::Draw => 0,
                Wdl::CursedWin => -101,
                Wdl::Win => -1,
            }
        } else if child.halfmove_clock() >= 100 || since.contains(&child.key()) {
            // A draw by the 50-move rule or repetition.
            0
        } else {
            // The child's DTZ, counted from the root.
            match -tb.probe_dtz(&child).ok()?? {
                d if d > 0 => d + 1,
                d if d < 0 => d - 1,
                _ => 0,
            }
        };
        let r = if dtz > 0 {
            if dtz + cnt50 <= 99 && !rep {
                MAX_DTZ - dtz
            } else {
                MAX_DTZ / 2 - (dtz + cnt50)
            }
        } else if dtz < 0 {
            if -dtz * 2 + cnt50 < 100 {
                -MAX_DTZ - dtz
            } else {
                -MAX_DTZ / 2 + (-dtz + cnt50)
            }
        } else {
            0
        };
        ranks.push(r);
    }
    Some(ranks)
}

/// Stockfish's `root_probe_wdl`: moves ranked by the WDL value they leave.
fn rank_by_wdl(tb: &Tablebases, pos: &Position, moves: &[Move], rule50: bool) -> Option<Vec<i32>> {
    const RANK: [i32; 5] = [-MAX_DTZ, -MAX_DTZ + 101, 0, MAX_DTZ - 101, MAX_DTZ];
    let mut ranks = Vec::with_capacity(moves.len());
    for &mv in moves {
        let child = pos.play(mv);
        let mut wdl = if !child.has_legal_move() {
            if child.in_check() {
                2
            } else {
                0
            }
        } else {
            -tb.probe_wdl(&child).ok()??.to_i32()
        };
        if !rule50 {
            wdl = 2 * wdl.signum();
        }
        ranks.push(RANK[(wdl + 2) as usize]);
    }
    Some(ranks)
}

/// The directory of the 3-4-piece tables for unit tests: `SPAR_SYZYGY` or the cache
/// `.ci/setup` fills. Without them, a `NOTICE` and `None`; under `CI=true`, a failure.
#[cfg(test)]
pub(crate) fn test_tables_dir(test: &str) -> Option<String> {
    let dir = crate::tablebase::cached_tables();
    if dir.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{test}: no Syzygy 3-4-piece tables and CI=true; bash .ci/setup installs them"
        );
        eprintln!(
            "NOTICE: {test} skipped: no Syzygy 3-4-piece tables (set SPAR_SYZYGY or run \
             .ci/setup)"
        );
    }
    dir.map(|d| d.to_str().expect("a UTF-8 path").to_string())
}

/// The 3-4-piece tables for unit tests, opened (see [`test_tables_dir`]).
#[cfg(test)]
pub(crate) fn test_tables(test: &str) -> Option<std::sync::Arc<Tablebases>> {
    let dir = test_tables_dir(test)?;
    Some(std::sync::Arc::new(
        Tablebases::open(&dir).expect("the tables open"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Params;
    use crate::search::{Limits, Score, Searcher, MATE_IN_MAX, TB_WIN_IN_MAX};

    /// Tablebase positions: won, drawn and lost for the side to move.
    const ROOTS: [&str; 12] = [
        "8/8/8/4k3/8/8/8/4K2Q w - - 0 1",
        "8/8/8/3k4/8/8/8/R3K3 w - - 0 1",
        "8/8/8/8/3k4/8/8/KBN5 w - - 0 1",
        "8/8/8/4k3/8/8/3P4/3K4 w - - 0 1",
        "4k3/8/4K3/4P3/8/8/8/8 b - - 0 1",
        "8/8/4k3/8/8/8/4P3/4K3 b - - 0 1",
        "8/8/8/8/8/2k5/8/K6q w - - 0 1",
        "k7/8/1K6/8/8/8/8/7R b - - 0 1",
        "8/8/8/3k4/8/8/2B5/K1N5 b - - 0 1",
        "8/2k5/8/8/8/8/8/4K1NN w - - 0 1",
        "8/8/8/8/8/k7/p7/2K5 w - - 0 1",
        "4k3/4p3/8/8/8/8/8/R3K3 b - - 0 1",
    ];

    #[test]
    fn wdl_scores_follow_the_fifty_move_rule_setting() {
        assert_eq!(wdl_score(Wdl::Win, 3, true), (TB_WIN - 3, Bound::Lower));
        assert_eq!(wdl_score(Wdl::Loss, 3, true), (-TB_WIN + 3, Bound::Upper));
        assert_eq!(wdl_score(Wdl::CursedWin, 3, true), (0, Bound::Exact));
        assert_eq!(wdl_score(Wdl::BlessedLoss, 3, true), (0, Bound::Exact));
        assert_eq!(wdl_score(Wdl::CursedWin, 3, false).1, Bound::Lower);
        assert_eq!(wdl_score(Wdl::BlessedLoss, 3, false).1, Bound::Upper);
        assert_eq!(wdl_score(Wdl::Draw, 3, false), (0, Bound::Exact));
        const _: () = assert!(TB_WIN_IN_MAX > 20_000 && TB_WIN < MATE_IN_MAX);
        assert_eq!(Score::from_internal(TB_WIN - 1), Score::Cp(19_999));
        assert_eq!(Score::from_internal(-TB_WIN + 4), Score::Cp(-19_996));
    }

    /// At depth 1 and at 100 nodes, with one thread and three, the move played keeps the
    /// result the tables give the root: the opponent's value after it is the negation.
    #[test]
    fn tablebase_roots_get_a_result_keeping_move_at_any_limit() {
        let Some(tb) = test_tables("tablebase_roots_get_a_result_keeping_move_at_any_limit") else {
            return;
        };
        let mut searcher = Searcher::new(Params::defaults());
        searcher.set_tablebases(Some(tb.clone()));
        for threads in [1, 3] {
            searcher.set_threads(threads);
            for limits in [
                Limits {
                    depth: Some(1),
                    ..Limits::default()
                },
                Limits {
                    nodes: Some(100),
                    ..Limits::default()
                },
            ] {
                for fen in ROOTS {
                    let pos = Position::from_fen(fen).unwrap();
                    let root = tb.probe_wdl(&pos).unwrap().unwrap();
                    searcher.clear();
                    let result = searcher.search(&pos, &[], &limits, &mut |_| {});
                    let mv = result.best_move.unwrap();
                    let child = pos.play(mv);
                    let after = if child.has_legal_move() {
                        tb.probe_wdl(&child).unwrap().unwrap()
                    } else {
                        assert!(child.in_check(), "{fen}: {mv:?} stalemates");
                        Wdl::Loss
                    };
                    assert_eq!(
                        after.to_i32(),
                        -root.to_i32(),
                        "{fen} ({root:?}), {limits:?}: {} gives {after:?}",
                        mv.to_uci(false)
                    );
                    assert!(result.tbhits > 0, "{fen}");
                    let want = match root {
                        Wdl::Win => Score::Cp(19_999),
                        Wdl::Loss => Score::Cp(-19_999),
                        _ => Score::Cp(0),
                    };
                    if !result.score.is_mate() {
                        assert_eq!(result.score, want, "{fen}");
                    }
                }
            }
        }
    }

    /// Positions above the tables reach them by captures: the search probes there, and a
    /// node-limited search stays deterministic.
    #[test]
    fn the_search_probes_after_captures_and_stays_deterministic() {
        let Some(tb) = test_tables("the_search_probes_after_captures_and_stays_deterministic")
        else {
            return;
        };
        let pos = Position::from_fen("8/8/4k3/3r4/8/2N5/3PK3/8 w - - 0 1").unwrap();
        let limits = Limits {
            nodes: Some(20_000),
            ..Limits::default()
        };
        let mut runs = Vec::new();
        for _ in 0..2 {
            let mut searcher = Searcher::new(Params::defaults());
            searcher.set_tablebases(Some(tb.clone()));
            let r = searcher.search(&pos, &[], &limits, &mut |_| {});
            runs.push((r.best_move, r.nodes, r.tbhits, r.score));
        }
        assert_eq!(runs[0], runs[1]);
        assert!(runs[0].2 > 0, "{:?}", runs[0]);
        // SyzygyProbeLimit 0 turns the probes off.
        let mut searcher = Searcher::new(Params::defaults());
        searcher.set_tablebases(Some(tb));
        searcher.set_syzygy(SyzygyConfig {
            probe_limit: 0,
            ..SyzygyConfig::default()
        });
        let r = searcher.search(&pos, &[], &limits, &mut |_| {});
        assert_eq!(r.tbhits, 0);
    }
}
