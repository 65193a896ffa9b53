//! Castling rights, stored as the files of the castling rooks (so Chess960 needs no special case).

use super::{Color, File, Rank, Square};

/// Kingside (towards the h-file) or queenside.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastleSide {
    /// Towards the h-file: the king ends on g, the rook on f.
    King,
    /// Towards the a-file: the king ends on c, the rook on d.
    Queen,
}

impl CastleSide {
    /// Both sides, kingside first.
    pub const ALL: [CastleSide; 2] = [CastleSide::King, CastleSide::Queen];

    /// The file the king ends on.
    pub const fn king_target(self) -> File {
        match self {
            CastleSide::King => File::G,
            CastleSide::Queen => File::C,
        }
    }

    /// The file the rook ends on.
    pub const fn rook_target(self) -> File {
        match self {
            CastleSide::King => File::F,
            CastleSide::Queen => File::D,
        }
    }

    /// Where king and rook end when `us` castles king-takes-rook from `king` with the rook
    /// on `rook` (the side follows from which of the two is further towards the h-file):
    /// `(king target, rook target)`.
    #[inline(always)]
    pub fn targets(us: Color, king: Square, rook: Square) -> (Square, Square) {
        let side = if rook > king {
            CastleSide::King
        } else {
            CastleSide::Queen
        };
        let back = Rank::First.relative_to(us);
        (
            Square::new(side.king_target(), back),
            Square::new(side.rook_target(), back),
        )
    }
}

/// Which castling moves are still allowed: for each colour and side, the file of the rook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CastlingRights {
    rooks: [[Option<File>; 2]; 2],
}

impl CastlingRights {
    /// No rights.
    pub const NONE: CastlingRights = CastlingRights {
        rooks: [[None; 2]; 2],
    };

    /// The rook file of a right, if it is held.
    #[inline(always)]
    pub const fn rook(&self, color: Color, side: CastleSide) -> Option<File> {
        self.rooks[color as usize][side as usize]
    }

    /// Grants (or, with `None`, removes) a right.
    #[inline(always)]
    pub fn set(&mut self, color: Color, side: CastleSide, file: Option<File>) {
        self.rooks[color as usize][side as usize] = file;
    }

    /// Removes both rights of a colour.
    #[inline(always)]
    pub fn clear(&mut self, color: Color) {
        self.rooks[color as usize] = [None; 2];
    }

    /// Whether no right is held.
    pub const fn is_empty(&self) -> bool {
        matches!(self.rooks, [[None, None], [None, None]])
    }

    /// Four bits, one per right (white king, white queen, black king, black queen): for hashing.
    #[inline(always)]
    pub const fn bits(&self) -> usize {
        (self.rooks[0][0].is_some() as usize)
            | (self.rooks[0][1].is_some() as usize) << 1
            | (self.rooks[1][0].is_some() as usize) << 2
            | (self.rooks[1][1].is_some() as usize) << 3
    }
}
