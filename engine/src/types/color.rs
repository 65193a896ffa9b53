//! The two sides.

use core::ops::Not;

/// A side: White or Black.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// The side that moves first.
    White,
    /// The side that moves second.
    Black,
}

impl Color {
    /// Both colours, White first.
    pub const ALL: [Color; 2] = [Color::White, Color::Black];

    /// The colour for index 0 (White) or 1 (Black); other values are masked.
    #[inline(always)]
    pub const fn from_index(i: usize) -> Color {
        if i & 1 == 0 {
            Color::White
        } else {
            Color::Black
        }
    }

    /// `1` for White, `-1` for Black: turns a side-relative score into a White-relative one.
    #[inline(always)]
    pub const fn sign(self) -> i32 {
        1 - 2 * (self as i32)
    }

    /// The FEN letter: `w` or `b`.
    pub const fn fen_char(self) -> char {
        match self {
            Color::White => 'w',
            Color::Black => 'b',
        }
    }
}

impl Not for Color {
    type Output = Color;
    #[inline(always)]
    fn not(self) -> Color {
        Color::from_index(self as usize ^ 1)
    }
}
