//! King shelter: the pawn shield in front of the king and open files next to it. (Attacks on
//! the king zone are counted with the attacking pieces, in `pieces.rs`.)

use super::weights::feature;
use super::Sink;
use crate::position::Position;
use crate::types::{Bitboard, Color, File, PieceType};

/// Adds the pawn-shield and open-file features of both kings.
#[inline]
pub(crate) fn evaluate_king_shelter<T: Sink>(pos: &Position, t: &mut T) {
    let mut shield = [0i32; 2];
    let mut open_files = 0;
    for us in Color::ALL {
        let sign = us.sign();
        let own = pos.colored(us, PieceType::Pawn);
        let king = pos.king(us);
        let k = Bitboard::from_square(king);
        let row = k | k.east() | k.west();
        let first = row.forward(us);
        let second = first.forward(us);
        shield[0] += sign * (own & first).count() as i32;
        shield[1] += sign * (own & second).count() as i32;
        let f = king.file() as usize;
        let mut open = 0;
        for file in f.saturating_sub(1)..=(f + 1).min(7) {
            open += (Bitboard::file(File::from_index(file)) & own).is_empty() as i32;
        }
        open_files += sign * open;
    }
    t.add(feature::KING_SHIELD, shield[0]);
    t.add(feature::KING_SHIELD + 1, shield[1]);
    t.add(feature::KING_OPEN_FILE, open_files);
}
