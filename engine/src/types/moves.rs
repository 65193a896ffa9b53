//! `Move`: from, to and kind packed into a `NonZeroU16`.

use core::fmt;
use core::num::NonZeroU16;

use super::{File, PieceType, Square};

/// What a move does besides moving a piece from one square to another.
///
/// Bit 2 (value 4) marks captures, bit 3 (value 8) promotions; a promotion's low two bits
/// give the piece (knight, bishop, rook, queen).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A plain move to an empty square.
    Quiet = 0,
    /// A pawn moving two squares.
    DoublePush = 1,
    /// Castling, encoded as the king moving onto its own rook's square (Chess960 style).
    Castle = 2,
    /// A capture onto an occupied square.
    Capture = 4,
    /// A pawn capturing en passant.
    EnPassant = 5,
    /// Promotion to a knight.
    PromoteKnight = 8,
    /// Promotion to a bishop.
    PromoteBishop = 9,
    /// Promotion to a rook.
    PromoteRook = 10,
    /// Promotion to a queen.
    PromoteQueen = 11,
    /// Capture with promotion to a knight.
    CapturePromoteKnight = 12,
    /// Capture with promotion to a bishop.
    CapturePromoteBishop = 13,
    /// Capture with promotion to a rook.
    CapturePromoteRook = 14,
    /// Capture with promotion to a queen.
    CapturePromoteQueen = 15,
}

impl MoveKind {
    const ALL: [MoveKind; 16] = [
        MoveKind::Quiet,
        MoveKind::DoublePush,
        MoveKind::Castle,
        MoveKind::Quiet,
        MoveKind::Capture,
        MoveKind::EnPassant,
        MoveKind::Quiet,
        MoveKind::Quiet,
        MoveKind::PromoteKnight,
        MoveKind::PromoteBishop,
        MoveKind::PromoteRook,
        MoveKind::PromoteQueen,
        MoveKind::CapturePromoteKnight,
        MoveKind::CapturePromoteBishop,
        MoveKind::CapturePromoteRook,
        MoveKind::CapturePromoteQueen,
    ];

    /// The promotion kind for a piece (knight..queen), capturing or not.
    #[inline(always)]
    pub const fn promotion(piece: PieceType, capture: bool) -> MoveKind {
        MoveKind::ALL[8 | (capture as usize) << 2 | ((piece as usize).wrapping_sub(1) & 3)]
    }
}

/// A move in 16 bits: from (bits 0–5), to (bits 6–11), [`MoveKind`] (bits 12–15).
///
/// Never zero (from ≠ to), so `Option<Move>` is two bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Move(NonZeroU16);

const _: () = assert!(core::mem::size_of::<Option<Move>>() == 2);

impl Move {
    /// Builds a move. `from` and `to` must differ.
    #[inline(always)]
    pub const fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        let bits = from as u16 | (to as u16) << 6 | (kind as u16) << 12;
        match NonZeroU16::new(bits) {
            Some(n) => Move(n),
            None => panic!("a move from a square to itself"),
        }
    }

    /// The raw 16 bits.
    #[inline(always)]
    pub const fn bits(self) -> u16 {
        self.0.get()
    }

    /// Rebuilds a move from [`Move::bits`]; `None` for zero.
    #[inline(always)]
    pub const fn from_bits(bits: u16) -> Option<Move> {
        match NonZeroU16::new(bits) {
            Some(n) => Some(Move(n)),
            None => None,
        }
    }

    /// The square the moving piece leaves.
    #[inline(always)]
    pub const fn from(self) -> Square {
        Square::from_index((self.0.get() & 63) as usize)
    }

    /// The destination (for castling: the rook's square).
    #[inline(always)]
    pub const fn to(self) -> Square {
        Square::from_index((self.0.get() >> 6 & 63) as usize)
    }

    /// The kind.
    #[inline(always)]
    pub const fn kind(self) -> MoveKind {
        MoveKind::ALL[(self.0.get() >> 12) as usize]
    }

    /// Whether the move captures (including en passant).
    #[inline(always)]
    pub const fn is_capture(self) -> bool {
        self.0.get() & (4 << 12) != 0
    }

    /// Whether the move promotes.
    #[inline(always)]
    pub const fn is_promotion(self) -> bool {
        self.0.get() & (8 << 12) != 0
    }

    /// Captures and promotions: what quiescence search looks at.
    #[inline(always)]
    pub const fn is_noisy(self) -> bool {
        self.0.get() & (12 << 12) != 0
    }

    /// Whether the move castles.
    #[inline(always)]
    pub const fn is_castle(self) -> bool {
        matches!(self.kind(), MoveKind::Castle)
    }

    /// Whether the move is an en-passant capture.
    #[inline(always)]
    pub const fn is_en_passant(self) -> bool {
        matches!(self.kind(), MoveKind::EnPassant)
    }

    /// The promotion piece, if any.
    #[inline(always)]
    pub const fn promotion(self) -> Option<PieceType> {
        if self.is_promotion() {
            Some(PieceType::from_index(
                ((self.0.get() >> 12) & 3) as usize + 1,
            ))
        } else {
            None
        }
    }

    /// The square the king lands on when castling; `to()` for other moves.
    #[inline]
    pub const fn king_destination(self) -> Square {
        if self.is_castle() {
            let file = if (self.to() as u8) > (self.from() as u8) {
                File::G
            } else {
                File::C
            };
            Square::new(file, self.from().rank())
        } else {
            self.to()
        }
    }

    /// The move in UCI notation; castling as king-to-destination unless `chess960`,
    /// where it is king-takes-rook.
    pub fn to_uci(self, chess960: bool) -> String {
        let to = if chess960 {
            self.to()
        } else {
            self.king_destination()
        };
        let mut s = format!("{}{}", self.from(), to);
        if let Some(p) = self.promotion() {
            s.push(p.char());
        }
        s
    }
}

impl fmt::Display for Move {
    /// UCI notation in standard-chess form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_uci(false))
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}{:?}", self.from(), self.to(), self.kind())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_and_unpacks() {
        let m = Move::new(Square::E7, Square::D8, MoveKind::CapturePromoteKnight);
        assert_eq!(m.from(), Square::E7);
        assert_eq!(m.to(), Square::D8);
        assert!(m.is_capture() && m.is_promotion() && m.is_noisy());
        assert_eq!(m.promotion(), Some(PieceType::Knight));
        assert_eq!(m.to_uci(false), "e7d8n");
        assert_eq!(Move::from_bits(m.bits()), Some(m));
        assert_eq!(Move::from_bits(0), None);
    }

    #[test]
    fn promotion_kinds() {
        for (p, c) in [
            (PieceType::Knight, 'n'),
            (PieceType::Bishop, 'b'),
            (PieceType::Rook, 'r'),
            (PieceType::Queen, 'q'),
        ] {
            for capture in [false, true] {
                let m = Move::new(Square::A7, Square::A8, MoveKind::promotion(p, capture));
                assert_eq!(m.promotion(), Some(p));
                assert_eq!(m.is_capture(), capture);
                assert!(m.to_uci(false).ends_with(c));
            }
        }
    }

    #[test]
    fn castling_notation() {
        let m = Move::new(Square::E1, Square::H1, MoveKind::Castle);
        assert_eq!(m.to_uci(false), "e1g1");
        assert_eq!(m.to_uci(true), "e1h1");
        assert!(!m.is_capture());
        let q = Move::new(Square::E8, Square::A8, MoveKind::Castle);
        assert_eq!(q.king_destination(), Square::C8);
        assert!(Move::new(Square::E2, Square::E4, MoveKind::DoublePush).to_uci(false) == "e2e4");
    }
}
