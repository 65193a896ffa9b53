//! Static exchange evaluation: does a move win at least `threshold` centipawns once every
//! capture on its destination square has been played out, cheapest attacker first?

use crate::attacks::{bishop_attacks, rook_attacks};
use crate::position::Position;
use crate::types::{Bitboard, Move, PieceType, Square};

/// Piece values used by the exchange evaluation (pawn, knight, bishop, rook, queen, king).
pub const SEE_VALUES: [i32; 6] = [100, 320, 330, 500, 950, 0];

/// The SEE value of a piece type.
#[inline(always)]
pub const fn see_value(kind: PieceType) -> i32 {
    SEE_VALUES[kind as usize]
}

/// What a move gains immediately: the captured piece, plus the promotion's gain.
#[inline(always)]
pub fn move_gain(pos: &Position, mv: Move) -> i32 {
    let mut gain = pos.captured(mv).map_or(0, see_value);
    if let Some(p) = mv.promotion() {
        gain += see_value(p) - see_value(PieceType::Pawn);
    }
    gain
}

/// Whether the exchange started by `mv` gains at least `threshold` centipawns for the side
/// to move (threshold form: no exchange value is computed, only compared).
///
/// Castling always counts as an exchange of value 0. Pins are ignored (a pinned piece may
/// appear to recapture), as in most engines.
///
/// ```
/// use engine::position::Position;
/// use engine::search::see::see_ge;
/// // Rook takes a pawn defended by a pawn: loses the exchange.
/// let pos = Position::from_fen("4k3/8/3p4/4p3/8/8/8/4RK2 w - - 0 1").unwrap();
/// let mv = pos.parse_uci_move("e1e5").unwrap();
/// assert!(see_ge(&pos, mv, -400) && !see_ge(&pos, mv, 0));
/// ```
pub fn see_ge(pos: &Position, mv: Move, threshold: i32) -> bool {
    if mv.is_castle() {
        return threshold <= 0;
    }
    let from = mv.from();
    let to = mv.to();

    // After the move, the opponent may take back what landed on `to`.
    let mut swap = move_gain(pos, mv) - threshold;
    if swap < 0 {
        return false;
    }
    let on_square = mv.promotion().unwrap_or_else(|| pos.moved(mv));
    swap = see_value(on_square) - swap;
    if swap <= 0 {
        return true;
    }

    let mut occ = pos.occupied() ^ Bitboard::from_square(from) ^ Bitboard::from_square(to);
    if mv.is_en_passant() {
        occ ^= Bitboard::from_square(Square::new(to.file(), from.rank()));
    }
    let diag = pos.diagonal_sliders();
    let orth = pos.orthogonal_sliders();
    let mut attackers = pos.attackers_to(to, occ) & occ;
    let mut stm = pos.side_to_move();
    let mut res = true;

    loop {
        stm = !stm;
        attackers &= occ;
        let ours = attackers & pos.color(stm);
        if ours.is_empty() {
            break;
        }
        res = !res;

        // The least valuable attacker takes.
        let mut taken = None;
        for kind in [
            PieceType::Pawn,
            PieceType::Knight,
            PieceType::Bishop,
            PieceType::Rook,
            PieceType::Queen,
        ] {
            let bb = ours & pos.pieces(kind);
            if bb.any() {
                taken = Some((kind, bb.lsb()));
                break;
            }
        }
        let Some((kind, sq)) = taken else {
            // Only the king is left: it may take only if the opponent has no attacker left.
            return if (attackers & !pos.color(stm)).any() {
                !res
            } else {
                res
            };
        };
        swap = see_value(kind) - swap;
        if swap < res as i32 {
            break;
        }
        occ ^= Bitboard::from_square(sq);
        match kind {
            PieceType::Pawn | PieceType::Bishop => {
                attackers |= bishop_attacks(to, occ) & diag;
            }
            PieceType::Rook => attackers |= rook_attacks(to, occ) & orth,
            PieceType::Queen => {
                attackers |= (bishop_attacks(to, occ) & diag) | (rook_attacks(to, occ) & orth);
            }
            _ => {}
        }
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(fen: &str, uci: &str, value: i32) {
        let pos = Position::from_fen(fen).unwrap();
        let mv = pos
            .parse_uci_move(uci)
            .unwrap_or_else(|| panic!("{uci} illegal in {fen}"));
        assert!(
            see_ge(&pos, mv, value),
            "{fen} {uci}: SEE should be >= {value}"
        );
        assert!(
            !see_ge(&pos, mv, value + 1),
            "{fen} {uci}: SEE should be < {}",
            value + 1
        );
    }

    #[test]
    fn known_exchanges() {
        // Undefended pawn.
        check(
            "1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1",
            "e1e5",
            100,
        );
        // Pawn defended by a pawn: R takes P, P takes R.
        check("4k3/8/3p4/4p3/8/8/8/4RK2 w - - 0 1", "e1e5", 100 - 500);
        // N takes defended pawn on d5 with many attackers (classic x-ray test).
        check(
            "1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1",
            "d3e5",
            100 - 320,
        );
        // Equal trade: pawn takes pawn defended by pawn.
        check("4k3/8/2p5/3p4/4P3/8/8/4K3 w - - 0 1", "e4d5", 0);
        // Quiet move to an attacked square loses the piece.
        check("4k3/8/2p5/8/8/8/8/1N2K3 w - - 0 1", "b1d2", 0);
        check("4k3/8/4p3/8/8/2N5/8/4K3 w - - 0 1", "c3d5", -320);
        // Rook behind rook (x-ray): RxP, PxR... defended twice, attacked twice.
        check("3rk3/3r4/8/3p4/8/8/3R4/3RK3 w - - 0 1", "d2d5", 100 - 500);
        // Queen takes a knight defended by a pawn.
        check("4k3/8/2p5/3n4/8/8/8/3QK3 w - - 0 1", "d1d5", 320 - 950);
        // Promotion without capture on a safe square.
        check("4k3/P7/8/8/8/8/8/4K3 w - - 0 1", "a7a8q", 950 - 100);
        // En passant.
        check("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100);
        // Castling counts as 0.
        check("4k3/8/8/8/8/8/8/4K2R w K - 0 1", "e1g1", 0);
    }
}
