//! Pawn structure: passed pawns (by rank, with king distances), isolated, doubled, backward,
//! supported and phalanx pawns.

use super::weights::feature;
use super::Sink;
use crate::position::Position;
use crate::types::{Bitboard, Color, PieceType, Square};

const FILE_A: u64 = 0x0101_0101_0101_0101;

/// Squares strictly in front of a square on its file, from each colour's point of view.
static FORWARD_FILE: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut sq = 0;
    while sq < 64 {
        let file = FILE_A << (sq % 8);
        let rank = sq / 8;
        // Ranks above `rank` (White) and below it (Black).
        let above = if rank == 7 {
            0
        } else {
            !0u64 << ((rank + 1) * 8)
        };
        let below = if rank == 0 {
            0
        } else {
            !0u64 >> ((8 - rank) * 8)
        };
        t[0][sq] = file & above;
        t[1][sq] = file & below;
        sq += 1;
    }
    t
};

/// The files next to each file.
static ADJACENT_FILES: [u64; 8] = {
    let mut t = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        if f > 0 {
            t[f] |= FILE_A << (f - 1);
        }
        if f < 7 {
            t[f] |= FILE_A << (f + 1);
        }
        f += 1;
    }
    t
};

/// Squares in front of a pawn on its own and the adjacent files: a pawn is passed when no
/// enemy pawn stands there.
static PASSED_SPAN: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 64 {
            let f = sq % 8;
            let mut span = FORWARD_FILE[c][sq];
            if f > 0 {
                span |= FORWARD_FILE[c][sq - 1];
            }
            if f < 7 {
                span |= FORWARD_FILE[c][sq + 1];
            }
            t[c][sq] = span;
            sq += 1;
        }
        c += 1;
    }
    t
};

/// Squares on the adjacent files level with or behind a pawn: the friendly pawns that could
/// still defend it or its stop square.
static SUPPORT_SPAN: [[u64; 64]; 2] = {
    let mut t = [[0u64; 64]; 2];
    let mut c = 0;
    while c < 2 {
        let mut sq = 0;
        while sq < 64 {
            let ahead = PASSED_SPAN[c][sq] & !FORWARD_FILE[c][sq];
            t[c][sq] = ADJACENT_FILES[sq % 8] & !ahead;
            sq += 1;
        }
        c += 1;
    }
    t
};

/// Squares attacked by a set of pawns of `color`.
#[inline(always)]
pub(crate) fn pawn_attack_span(pawns: Bitboard, color: Color) -> Bitboard {
    let fwd = pawns.forward(color);
    fwd.east() | fwd.west()
}

/// Chebyshev (king-move) distance between two squares.
#[inline(always)]
pub(crate) fn distance(a: Square, b: Square) -> i32 {
    let df = (a.file() as i32 - b.file() as i32).abs();
    let dr = (a.rank() as i32 - b.rank() as i32).abs();
    df.max(dr)
}

/// Adds the pawn-structure features of both sides; `pawn_att[c]` are the squares attacked by
/// `c`'s pawns.
#[inline]
pub(crate) fn evaluate_pawns<T: Sink>(pos: &Position, pawn_att: &[Bitboard; 2], t: &mut T) {
    let mut isolated = 0;
    let mut doubled = 0;
    let mut backward = 0;
    let mut supported = 0;
    let mut phalanx = 0;
    let mut own_dist = 0;
    let mut enemy_dist = 0;
    for us in Color::ALL {
        let them = !us;
        let sign = us.sign();
        let own = pos.colored(us, PieceType::Pawn);
        let theirs = pos.colored(them, PieceType::Pawn);
        let (mut iso, mut dbl, mut bwd, mut own_d, mut enemy_d) = (0, 0, 0, 0, 0);
        for sq in own {
            let i = sq as usize;
            let c = us as usize;
            let in_front = Bitboard(FORWARD_FILE[c][i]) & own;
            let is_doubled = in_front.any();
            dbl += is_doubled as i32;
            if (Bitboard(ADJACENT_FILES[i % 8]) & own).is_empty() {
                iso += 1;
            } else if (Bitboard(SUPPORT_SPAN[c][i]) & own).is_empty() {
                let stop = Bitboard::from_square(sq).forward(us);
                bwd += (stop & pawn_att[them as usize]).any() as i32;
            }
            if !is_doubled && (Bitboard(PASSED_SPAN[c][i]) & theirs).is_empty() {
                let rank = sq.rank().relative_to(us) as usize;
                t.add(feature::PASSED + rank, sign);
                let stop = Bitboard::from_square(sq).forward(us).lsb();
                own_d += distance(pos.king(us), stop);
                enemy_d += distance(pos.king(them), stop);
            }
        }
        isolated += sign * iso;
        doubled += sign * dbl;
        backward += sign * bwd;
        own_dist += sign * own_d;
        enemy_dist += sign * enemy_d;
        supported += sign * (own & pawn_att[us as usize]).count() as i32;
        phalanx += sign * (own & (own.east() | own.west())).count() as i32;
    }
    t.add(feature::ISOLATED, isolated);
    t.add(feature::DOUBLED, doubled);
    t.add(feature::BACKWARD, backward);
    t.add(feature::SUPPORTED, supported);
    t.add(feature::PHALANX, phalanx);
    t.add(feature::PASSED_OWN_KING_DIST, own_dist);
    t.add(feature::PASSED_ENEMY_KING_DIST, enemy_dist);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_look_right() {
        let e4 = Square::E4 as usize;
        assert_eq!(Bitboard(FORWARD_FILE[0][e4]).count(), 4);
        assert_eq!(Bitboard(FORWARD_FILE[1][e4]).count(), 3);
        assert_eq!(Bitboard(PASSED_SPAN[0][e4]).count(), 12);
        assert_eq!(Bitboard(PASSED_SPAN[1][Square::A2 as usize]).count(), 2);
        // d/f files on ranks 1..=4.
        assert_eq!(Bitboard(SUPPORT_SPAN[0][e4]).count(), 8);
        assert!(Bitboard(SUPPORT_SPAN[0][e4]).has(Square::D4));
        assert!(!Bitboard(SUPPORT_SPAN[0][e4]).has(Square::D5));
        assert!(Bitboard(SUPPORT_SPAN[1][e4]).has(Square::F8));
        assert_eq!(distance(Square::A1, Square::H8), 7);
        assert_eq!(distance(Square::E4, Square::F6), 2);
    }
}
