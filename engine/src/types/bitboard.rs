//! `Bitboard`: a set of squares in one `u64`.

use core::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not, Sub};

use super::{Color, File, Rank, Square};

/// A set of squares, bit `i` standing for square `i` (a1 = bit 0).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// No squares.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// Every square.
    pub const FULL: Bitboard = Bitboard(!0);
    /// The a-file.
    pub const FILE_A: Bitboard = Bitboard(0x0101_0101_0101_0101);
    /// The h-file.
    pub const FILE_H: Bitboard = Bitboard(0x8080_8080_8080_8080);
    /// The first rank.
    pub const RANK_1: Bitboard = Bitboard(0xFF);
    /// The eighth rank.
    pub const RANK_8: Bitboard = Bitboard(0xFF << 56);
    /// The light squares.
    pub const LIGHT: Bitboard = Bitboard(0x55AA_55AA_55AA_55AA);
    /// The dark squares.
    pub const DARK: Bitboard = Bitboard(!0x55AA_55AA_55AA_55AA);

    /// The one-square set.
    #[inline(always)]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1 << sq as u32)
    }

    /// All squares of a file.
    #[inline(always)]
    pub const fn file(file: File) -> Bitboard {
        Bitboard(Self::FILE_A.0 << file as u32)
    }

    /// All squares of a rank.
    #[inline(always)]
    pub const fn rank(rank: Rank) -> Bitboard {
        Bitboard(Self::RANK_1.0 << (8 * rank as u32))
    }

    /// Whether the set is empty.
    #[inline(always)]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether the set has at least one square.
    #[inline(always)]
    pub const fn any(self) -> bool {
        self.0 != 0
    }

    /// Whether the set holds more than one square.
    #[inline(always)]
    pub const fn more_than_one(self) -> bool {
        self.0 & self.0.wrapping_sub(1) != 0
    }

    /// Number of squares in the set.
    #[inline(always)]
    pub const fn count(self) -> u32 {
        self.0.count_ones()
    }

    /// Whether `sq` is in the set.
    #[inline(always)]
    pub const fn has(self, sq: Square) -> bool {
        self.0 >> sq as u32 & 1 != 0
    }

    /// The set with `sq` added.
    #[inline(always)]
    pub const fn with(self, sq: Square) -> Bitboard {
        Bitboard(self.0 | 1 << sq as u32)
    }

    /// The set with `sq` removed.
    #[inline(always)]
    pub const fn without(self, sq: Square) -> Bitboard {
        Bitboard(self.0 & !(1 << sq as u32))
    }

    /// The lowest square of a non-empty set (a1 for an empty one).
    #[inline(always)]
    pub const fn lsb(self) -> Square {
        Square::from_index(self.0.trailing_zeros() as usize)
    }

    /// The lowest square, or `None` if empty.
    #[inline(always)]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Some(self.lsb())
        }
    }

    /// The highest square of a non-empty set.
    #[inline(always)]
    pub const fn msb(self) -> Square {
        Square::from_index(63 - self.0.leading_zeros() as usize)
    }

    /// Every square moved one rank up (towards rank 8); squares on rank 8 fall off.
    #[inline(always)]
    pub const fn north(self) -> Bitboard {
        Bitboard(self.0 << 8)
    }

    /// Every square moved one rank down.
    #[inline(always)]
    pub const fn south(self) -> Bitboard {
        Bitboard(self.0 >> 8)
    }

    /// Every square moved one file right; the h-file falls off.
    #[inline(always)]
    pub const fn east(self) -> Bitboard {
        Bitboard((self.0 & !Self::FILE_H.0) << 1)
    }

    /// Every square moved one file left; the a-file falls off.
    #[inline(always)]
    pub const fn west(self) -> Bitboard {
        Bitboard((self.0 & !Self::FILE_A.0) >> 1)
    }

    /// One rank forward from `color`'s point of view.
    #[inline(always)]
    pub const fn forward(self, color: Color) -> Bitboard {
        match color {
            Color::White => self.north(),
            Color::Black => self.south(),
        }
    }

    /// One rank backward from `color`'s point of view.
    #[inline(always)]
    pub const fn backward(self, color: Color) -> Bitboard {
        match color {
            Color::White => self.south(),
            Color::Black => self.north(),
        }
    }

    /// The set mirrored top to bottom.
    #[inline(always)]
    pub const fn flip_ranks(self) -> Bitboard {
        Bitboard(self.0.swap_bytes())
    }

    /// An iterator over the squares, lowest first.
    #[inline(always)]
    pub const fn iter(self) -> Bitboard {
        self
    }
}

impl Iterator for Bitboard {
    type Item = Square;

    #[inline(always)]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let sq = self.lsb();
        self.0 &= self.0 - 1;
        Some(sq)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.count() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Bitboard {}

impl From<Square> for Bitboard {
    #[inline(always)]
    fn from(sq: Square) -> Bitboard {
        Bitboard::from_square(sq)
    }
}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Bitboard {
        iter.into_iter().fold(Bitboard::EMPTY, Bitboard::with)
    }
}

macro_rules! bit_ops {
    ($($tr:ident $f:ident $tra:ident $fa:ident $op:tt),*) => {$(
        impl $tr for Bitboard {
            type Output = Bitboard;
            #[inline(always)]
            fn $f(self, rhs: Bitboard) -> Bitboard { Bitboard(self.0 $op rhs.0) }
        }
        impl $tr<Square> for Bitboard {
            type Output = Bitboard;
            #[inline(always)]
            fn $f(self, rhs: Square) -> Bitboard { Bitboard(self.0 $op (1u64 << rhs as u32)) }
        }
        impl $tra for Bitboard {
            #[inline(always)]
            fn $fa(&mut self, rhs: Bitboard) { self.0 = self.0 $op rhs.0; }
        }
        impl $tra<Square> for Bitboard {
            #[inline(always)]
            fn $fa(&mut self, rhs: Square) { self.0 = self.0 $op (1u64 << rhs as u32); }
        }
    )*};
}

bit_ops!(
    BitAnd bitand BitAndAssign bitand_assign &,
    BitOr bitor BitOrAssign bitor_assign |,
    BitXor bitxor BitXorAssign bitxor_assign ^
);

impl Sub for Bitboard {
    type Output = Bitboard;
    /// Set difference.
    #[inline(always)]
    fn sub(self, rhs: Bitboard) -> Bitboard {
        Bitboard(self.0 & !rhs.0)
    }
}

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline(always)]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}

impl core::fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        writeln!(f, "Bitboard({:#018x})", self.0)?;
        for rank in (0..8).rev() {
            for file in 0..8 {
                let c = if self.0 >> (rank * 8 + file) & 1 != 0 {
                    'X'
                } else {
                    '.'
                };
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iterates_squares_in_order() {
        let bb = Bitboard::from_square(Square::H8) | Square::A1 | Square::E4;
        assert_eq!(
            bb.collect::<Vec<_>>(),
            vec![Square::A1, Square::E4, Square::H8]
        );
        assert_eq!(bb.count(), 3);
        assert!(bb.more_than_one());
        assert!(!Bitboard::from_square(Square::C3).more_than_one());
    }

    #[test]
    fn shifts_drop_edge_squares() {
        assert_eq!(Bitboard::FILE_H.east(), Bitboard::EMPTY);
        assert_eq!(Bitboard::FILE_A.west(), Bitboard::EMPTY);
        assert_eq!(Bitboard::RANK_8.north(), Bitboard::EMPTY);
        assert_eq!(
            Bitboard::from_square(Square::E4).forward(Color::Black),
            Square::E3.into()
        );
        assert_eq!(
            Bitboard::from_square(Square::A1).flip_ranks(),
            Square::A8.into()
        );
    }

    #[test]
    fn set_operations() {
        let a = Bitboard::file(File::E);
        let b = Bitboard::rank(Rank::Fourth);
        assert_eq!((a & b), Square::E4.into());
        assert_eq!((a | b).count(), 15);
        assert_eq!((a ^ b).count(), 14);
        assert_eq!((a - b).count(), 7);
        assert!((!a).has(Square::D4));
        assert_eq!(a.lsb(), Square::E1);
        assert_eq!(a.msb(), Square::E8);
    }
}
