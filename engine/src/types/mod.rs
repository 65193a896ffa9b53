//! The chess vocabulary: colours, squares, pieces, bitboards, moves, castling rights, game
//! results.
//!
//! The enums that index arrays are `#[repr(u8)]`, and arrays indexed by them implement `Index`/`IndexMut`
//! through [`ByColor`], [`BySquare`] and friends, so `pieces[Color::White]` needs no cast.

mod bitboard;
mod castling;
mod color;
mod moves;
mod piece;
mod result;
mod square;

pub use bitboard::Bitboard;
pub use castling::{CastleSide, CastlingRights};
pub use color::Color;
pub use moves::{Move, MoveKind};
pub use piece::{Piece, PieceType};
pub use result::GameResult;
pub use square::{File, Rank, Square};

/// Declares a fixed-size array wrapper indexed by an enum without casts.
macro_rules! indexed_array {
    ($(#[$doc:meta])* $name:ident, $index:ty, $len:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub struct $name<T>(pub [T; $len]);

        impl<T> core::ops::Index<$index> for $name<T> {
            type Output = T;
            #[inline(always)]
            fn index(&self, i: $index) -> &T {
                &self.0[i as usize]
            }
        }

        impl<T> core::ops::IndexMut<$index> for $name<T> {
            #[inline(always)]
            fn index_mut(&mut self, i: $index) -> &mut T {
                &mut self.0[i as usize]
            }
        }
    };
}

indexed_array!(
    /// An array with one element per colour.
    ByColor, Color, 2
);
indexed_array!(
    /// An array with one element per piece type.
    ByPieceType, PieceType, 6
);
indexed_array!(
    /// An array with one element per square.
    BySquare, Square, 64
);

impl<T: Copy> BySquare<T> {
    /// An array with every square set to `value`.
    pub const fn splat(value: T) -> Self {
        BySquare([value; 64])
    }
}
