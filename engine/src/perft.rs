//! Perft: the number of leaf nodes of the legal move tree, the standard move-generator check.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::position::Position;
use crate::types::Move;

/// Leaf nodes at `depth` plies, counting the last ply in bulk.
///
/// ```
/// use engine::{perft::perft, position::Position};
/// assert_eq!(perft(&Position::startpos(), 3), 8902);
/// ```
pub fn perft(pos: &Position, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => pos.count_legal_moves(),
        _ => {
            let mut nodes = 0;
            pos.for_each_legal_move(|m| {
                // Not `pos.play(m)`: a position returned by value is copied twice.
                let mut child = pos.clone();
                child.play_mut(m);
                nodes += perft(&child, depth - 1)
            });
            nodes
        }
    }
}

/// Leaf nodes below each legal move (`divide`), in generation order.
pub fn divide(pos: &Position, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    pos.legal_moves()
        .iter()
        .map(|&m| {
            let mut child = pos.clone();
            child.play_mut(m);
            (m, perft(&child, depth - 1))
        })
        .collect()
}

/// [`perft`] that gives up (`None`) soon after `stop` is set: the flag is read once per
/// node two or more plies above the leaves, so it costs nothing measurable.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use engine::{perft::perft_until, position::Position};
/// let pos = Position::startpos();
/// assert_eq!(perft_until(&pos, 3, &AtomicBool::new(false)), Some(8902));
/// assert_eq!(perft_until(&pos, 3, &AtomicBool::new(true)), None);
/// assert_eq!(perft_until(&pos, 0, &AtomicBool::new(false)), Some(1));
/// ```
pub fn perft_until(pos: &Position, depth: u32, stop: &AtomicBool) -> Option<u64> {
    if stop.load(Ordering::Relaxed) {
        return None;
    }
    if depth <= 2 {
        return Some(perft(pos, depth));
    }
    let mut nodes = Some(0u64);
    pos.for_each_legal_move(|m| {
        if let Some(sum) = nodes {
            let mut child = pos.clone();
            child.play_mut(m);
            nodes = perft_until(&child, depth - 1, stop).map(|n| sum + n);
        }
    });
    nodes
}

/// [`divide`] that reports each root move's count to `on_move` as soon as it is known, and
/// gives up (`None`) soon after `stop` is set; otherwise the total. Depth 0 is one node (the
/// position itself) and no moves.
pub fn divide_until(
    pos: &Position,
    depth: u32,
    stop: &AtomicBool,
    mut on_move: impl FnMut(Move, u64),
) -> Option<u64> {
    if depth == 0 {
        return Some(1);
    }
    let mut total = 0;
    for &m in pos.legal_moves().iter() {
        let mut child = pos.clone();
        child.play_mut(m);
        let n = perft_until(&child, depth - 1, stop)?;
        on_move(m, n);
        total += n;
    }
    Some(total)
}

/// One perft suite line: `FEN ;D1 n ;D2 n …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteEntry {
    /// The position's FEN as written.
    pub fen: String,
    /// `(depth, expected leaf count)` pairs.
    pub depths: Vec<(u32, u64)>,
}

/// Parses one suite line (already stripped of comments and blank lines).
pub fn parse_suite_line(line: &str) -> Result<SuiteEntry, String> {
    let mut parts = line.split(';');
    let fen = parts.next().unwrap_or("").trim().to_string();
    let mut depths = Vec::new();
    for field in parts {
        let field = field.trim();
        if field.is_empty() {
            continue;
        }
        let mut words = field.split_whitespace();
        let (Some(d), Some(n), None) = (words.next(), words.next(), words.next()) else {
            return Err(format!("expected ';D<depth> <count>', found ';{field}'"));
        };
        let depth = d
            .strip_prefix('D')
            .and_then(|d| d.parse().ok())
            .ok_or_else(|| format!("expected a depth like D3, found '{d}'"))?;
        let count = n
            .parse()
            .map_err(|_| format!("expected a leaf count, found '{n}'"))?;
        depths.push((depth, count));
    }
    if depths.is_empty() {
        return Err("no ';D<depth> <count>' fields".to_string());
    }
    Ok(SuiteEntry { fen, depths })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stoppable_perft_agrees_and_stops() {
        let pos = Position::startpos();
        let go = AtomicBool::new(false);
        for depth in 0..=4 {
            assert_eq!(perft_until(&pos, depth, &go), Some(perft(&pos, depth)));
            let mut moves = Vec::new();
            let total = divide_until(&pos, depth, &go, |m, n| moves.push((m, n)));
            assert_eq!(total, Some(perft(&pos, depth)));
            assert_eq!(moves, divide(&pos, depth));
        }
        let stop = AtomicBool::new(true);
        assert_eq!(divide_until(&pos, 5, &stop, |_, _| panic!("stopped")), None);
    }

    #[test]
    fn kiwipete_shallow() {
        let pos = Position::from_fen(
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        )
        .unwrap();
        assert_eq!(perft(&pos, 1), 48);
        assert_eq!(perft(&pos, 2), 2039);
        assert_eq!(perft(&pos, 3), 97862);
        assert_eq!(divide(&pos, 2).iter().map(|(_, n)| n).sum::<u64>(), 2039);
    }

    #[test]
    fn suite_lines() {
        let e = parse_suite_line("4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66").unwrap();
        assert_eq!(e.fen, "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert_eq!(e.depths, vec![(1, 15), (2, 66)]);
        assert!(parse_suite_line("4k3/8/8/8/8/8/8/4K2R w K - 0 1").is_err());
        assert!(parse_suite_line("4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;X1 15").is_err());
        assert!(parse_suite_line("4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 many").is_err());
    }
}
