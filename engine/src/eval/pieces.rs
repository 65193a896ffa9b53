//! Piece activity: mobility, attacks on the enemy king zone, rooks on open files, threats.

use super::weights::feature;
use super::Sink;
use crate::attacks::{bishop_attacks, king_attacks, knight_attacks, queen_attacks, rook_attacks};
use crate::position::Position;
use crate::types::{Bitboard, Color, PieceType};

/// Adds mobility, king-zone attack, rook-file and threat features of both sides;
/// `pawn_att[c]` are the squares attacked by `c`'s pawns.
#[inline]
pub(crate) fn evaluate_pieces<T: Sink>(pos: &Position, pawn_att: &[Bitboard; 2], t: &mut T) {
    let occ = pos.occupied();
    let pawns = pos.pieces(PieceType::Pawn);
    let mut zone_attacks = [0i32; 4];
    let mut rook_open = 0;
    let mut rook_semi_open = 0;
    let mut threat_pawn = 0;
    let mut threat_minor = 0;
    for us in Color::ALL {
        let them = !us;
        let sign = us.sign();
        let area = !(pos.color(us) | pawn_att[them as usize]);
        let king = pos.king(them);
        let zone = king_attacks(king) | Bitboard::from_square(king);
        let mut hits = [0i32; 4];
        let mut attackers = 0usize;
        let mut minor_att = Bitboard::EMPTY;

        for sq in pos.colored(us, PieceType::Knight) {
            let a = knight_attacks(sq);
            t.add(feature::MOB_KNIGHT + (a & area).count() as usize, sign);
            let h = (a & zone).count() as i32;
            hits[0] += h;
            attackers += (h > 0) as usize;
            minor_att |= a;
        }
        for sq in pos.colored(us, PieceType::Bishop) {
            let a = bishop_attacks(sq, occ);
            t.add(feature::MOB_BISHOP + (a & area).count() as usize, sign);
            let h = (a & zone).count() as i32;
            hits[1] += h;
            attackers += (h > 0) as usize;
            minor_att |= a;
        }
        let own_pawns = pos.colored(us, PieceType::Pawn);
        for sq in pos.colored(us, PieceType::Rook) {
            let a = rook_attacks(sq, occ);
            t.add(feature::MOB_ROOK + (a & area).count() as usize, sign);
            let h = (a & zone).count() as i32;
            hits[2] += h;
            attackers += (h > 0) as usize;
            let file = Bitboard::file(sq.file());
            if (file & pawns).is_empty() {
                rook_open += sign;
            } else if (file & own_pawns).is_empty() {
                rook_semi_open += sign;
            }
        }
        for sq in pos.colored(us, PieceType::Queen) {
            let a = queen_attacks(sq, occ);
            t.add(feature::MOB_QUEEN + (a & area).count() as usize, sign);
            let h = (a & zone).count() as i32;
            hits[3] += h;
            attackers += (h > 0) as usize;
        }
        for (total, h) in zone_attacks.iter_mut().zip(hits) {
            *total += sign * h;
        }
        t.add(feature::KING_ATTACKERS + attackers.min(7), sign);

        let targets = pos.color(them) & !(pawns | pos.pieces(PieceType::King));
        threat_pawn += sign * (pawn_att[us as usize] & targets).count() as i32;
        let majors = pos.colored(them, PieceType::Rook) | pos.colored(them, PieceType::Queen);
        threat_minor += sign * (minor_att & majors).count() as i32;
    }
    for (i, n) in zone_attacks.into_iter().enumerate() {
        t.add(feature::KING_ZONE_ATTACK + i, n);
    }
    t.add(feature::ROOK_OPEN, rook_open);
    t.add(feature::ROOK_SEMI_OPEN, rook_semi_open);
    t.add(feature::THREAT_BY_PAWN, threat_pawn);
    t.add(feature::THREAT_BY_MINOR, threat_minor);
}
