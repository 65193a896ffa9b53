//! A fast legality test for moves that come from elsewhere (the transposition table,
//! killer and counter-move slots): it checks the move against the board directly instead of
//! generating every move like [`Position::is_legal`].

use crate::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
};
use crate::position::Position;
use crate::types::{Move, MoveKind, PieceType, Rank};

/// Whether `mv` is legal in `pos`. Agrees with [`Position::is_legal`] on every move value.
#[inline]
pub fn is_legal(pos: &Position, mv: Move) -> bool {
    let us = pos.side_to_move();
    let from = mv.from();
    let to = mv.to();
    let Some(piece) = pos.piece_on(from) else {
        return false;
    };
    if piece.color() != us {
        return false;
    }
    let kind = mv.kind();
    // Unused kind codes decode as `Quiet`: such a value is not a move.
    if kind as u16 != mv.bits() >> 12 {
        return false;
    }
    // Rare kinds go through the full generator.
    if matches!(kind, MoveKind::Castle | MoveKind::EnPassant) {
        return pos.is_legal(mv);
    }
    let occ = pos.occupied();
    let target = pos.piece_on(to);
    if mv.is_capture() {
        match target {
            Some(p) if p.color() != us && p.kind() != PieceType::King => {}
            _ => return false,
        }
    } else if target.is_some() {
        return false;
    }

    let last = Rank::Eighth.relative_to(us);
    let moves_ok = match piece.kind() {
        PieceType::Pawn => {
            if mv.is_promotion() != (to.rank() == last) {
                return false;
            }
            let up = if us == crate::types::Color::White {
                8
            } else {
                -8
            };
            if mv.is_capture() {
                pawn_attacks(us, from).has(to)
            } else if kind == MoveKind::DoublePush {
                from.rank() == Rank::Second.relative_to(us)
                    && to as i32 == from as i32 + 2 * up
                    && !occ.has(crate::types::Square::from_index(
                        (from as i32 + up) as usize,
                    ))
            } else {
                to as i32 == from as i32 + up
            }
        }
        other => {
            if !matches!(kind, MoveKind::Quiet | MoveKind::Capture) {
                return false;
            }
            let attacks = match other {
                PieceType::Knight => knight_attacks(from),
                PieceType::Bishop => bishop_attacks(from, occ),
                PieceType::Rook => rook_attacks(from, occ),
                PieceType::Queen => bishop_attacks(from, occ) | rook_attacks(from, occ),
                _ => king_attacks(from),
            };
            attacks.has(to)
        }
    };
    if !moves_ok {
        return false;
    }

    // Legality: the king may not step into check; other pieces must resolve a check and
    // stay on their pin line.
    let ksq = pos.king(us);
    if piece.kind() == PieceType::King {
        return !pos.is_attacked(to, !us, occ.without(from));
    }
    let checkers = pos.checkers();
    if checkers.any() && (checkers.more_than_one() || !between(ksq, checkers.lsb()).has(to)) {
        return false;
    }
    !pos.pinned().has(from) || line(ksq, from).has(to)
}

/// Whether the legal move `mv` gives check, without playing it.
#[inline]
pub fn gives_check(pos: &Position, mv: Move) -> bool {
    if matches!(mv.kind(), MoveKind::Castle | MoveKind::EnPassant) {
        return pos.gives_check(mv);
    }
    let us = pos.side_to_move();
    let ksq = pos.king(!us);
    let from = mv.from();
    let to = mv.to();
    let occ = (pos.occupied().without(from)).with(to);
    let kind = mv.promotion().unwrap_or_else(|| pos.moved(mv));
    let direct = match kind {
        PieceType::Pawn => pawn_attacks(us, to).has(ksq),
        PieceType::Knight => knight_attacks(to).has(ksq),
        PieceType::Bishop => bishop_attacks(to, occ).has(ksq),
        PieceType::Rook => rook_attacks(to, occ).has(ksq),
        PieceType::Queen => (bishop_attacks(to, occ) | rook_attacks(to, occ)).has(ksq),
        PieceType::King => false,
    };
    if direct {
        return true;
    }
    // Discovered check: one of our sliders behind the square the piece left.
    let ours = pos.color(us).without(from);
    ((bishop_attacks(ksq, occ) & pos.diagonal_sliders() & ours)
        | (rook_attacks(ksq, occ) & pos.orthogonal_sliders() & ours))
        .any()
}

/// Every move value that the legality test must judge, for tests: all 16-bit patterns with
/// from ≠ to.
#[cfg(test)]
pub(crate) fn all_move_values() -> impl Iterator<Item = Move> {
    (1u16..=u16::MAX)
        .filter_map(Move::from_bits)
        .filter(|m| m.from() != m.to())
}

#[cfg(test)]
mod tests {
    use super::*;

    const FENS: &[&str] = &[
        crate::position::STARTPOS_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        "4k3/8/8/8/1b6/8/3P4/4K3 w - - 0 1",
        "4k3/4r3/8/8/8/8/3N4/4K2R w K - 0 1",
        "3k4/8/8/8/8/8/2q5/K7 w - - 0 1",
        "8/8/8/2k5/3Pp3/8/8/4K2Q b - d3 0 1",
    ];

    #[test]
    fn agrees_with_the_generator() {
        for fen in FENS {
            let pos = Position::from_fen(fen).unwrap();
            let mut both = vec![pos.clone()];
            if !pos.in_check() {
                both.push(pos.play_null());
            }
            for p in both {
                let legal = p.legal_moves();
                for mv in all_move_values() {
                    assert_eq!(
                        is_legal(&p, mv),
                        legal.contains(mv),
                        "{} {:?}",
                        p.to_fen(),
                        mv
                    );
                }
                for &mv in legal.iter() {
                    assert_eq!(
                        gives_check(&p, mv),
                        p.play(mv).in_check(),
                        "{} {:?}",
                        p.to_fen(),
                        mv
                    );
                }
            }
        }
    }
}
