//! Files, ranks and squares (a1 = 0, b1 = 1, …, h8 = 63).

use core::fmt;
use core::str::FromStr;

use super::Color;

/// A column of the board, a to h.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum File {
    A,
    B,
    C,
    D,
    E,
    F,
    G,
    H,
}

impl File {
    /// All files, a first.
    pub const ALL: [File; 8] = [
        File::A,
        File::B,
        File::C,
        File::D,
        File::E,
        File::F,
        File::G,
        File::H,
    ];

    /// The file for index 0..8 (masked).
    #[inline(always)]
    pub const fn from_index(i: usize) -> File {
        // SAFETY: `File` is `repr(u8)` with the eight discriminants 0..=7, and `i & 7` is one
        // of them. (A table lookup here cost 5 % of perft; this compiles to nothing.)
        unsafe { core::mem::transmute::<u8, File>((i & 7) as u8) }
    }

    /// Lower-case letter.
    pub const fn char(self) -> char {
        (b'a' + self as u8) as char
    }

    /// Parses `a`..`h` (either case).
    pub fn from_char(c: char) -> Option<File> {
        let c = c.to_ascii_lowercase();
        ('a'..='h')
            .contains(&c)
            .then(|| File::from_index(c as usize - 'a' as usize))
    }
}

/// A row of the board, 1 to 8.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Rank {
    First,
    Second,
    Third,
    Fourth,
    Fifth,
    Sixth,
    Seventh,
    Eighth,
}

impl Rank {
    /// All ranks, first rank first.
    pub const ALL: [Rank; 8] = [
        Rank::First,
        Rank::Second,
        Rank::Third,
        Rank::Fourth,
        Rank::Fifth,
        Rank::Sixth,
        Rank::Seventh,
        Rank::Eighth,
    ];

    /// The rank for index 0..8 (masked).
    #[inline(always)]
    pub const fn from_index(i: usize) -> Rank {
        // SAFETY: `Rank` is `repr(u8)` with the eight discriminants 0..=7, and `i & 7` is one
        // of them.
        unsafe { core::mem::transmute::<u8, Rank>((i & 7) as u8) }
    }

    /// The digit `1`..`8`.
    pub const fn char(self) -> char {
        (b'1' + self as u8) as char
    }

    /// Parses `1`..`8`.
    pub fn from_char(c: char) -> Option<Rank> {
        ('1'..='8')
            .contains(&c)
            .then(|| Rank::from_index(c as usize - '1' as usize))
    }

    /// This rank seen from `color`'s side (`Rank::First` is Black's eighth).
    #[inline(always)]
    pub const fn relative_to(self, color: Color) -> Rank {
        Rank::from_index(self as usize ^ (7 * color as usize))
    }
}

/// A square, numbered rank by rank from a1 = 0 to h8 = 63.
#[repr(u8)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Square {
    A1,
    B1,
    C1,
    D1,
    E1,
    F1,
    G1,
    H1,
    A2,
    B2,
    C2,
    D2,
    E2,
    F2,
    G2,
    H2,
    A3,
    B3,
    C3,
    D3,
    E3,
    F3,
    G3,
    H3,
    A4,
    B4,
    C4,
    D4,
    E4,
    F4,
    G4,
    H4,
    A5,
    B5,
    C5,
    D5,
    E5,
    F5,
    G5,
    H5,
    A6,
    B6,
    C6,
    D6,
    E6,
    F6,
    G6,
    H6,
    A7,
    B7,
    C7,
    D7,
    E7,
    F7,
    G7,
    H7,
    A8,
    B8,
    C8,
    D8,
    E8,
    F8,
    G8,
    H8,
}

impl Square {
    /// All 64 squares, a1 first.
    pub const ALL: [Square; 64] = [
        Square::A1,
        Square::B1,
        Square::C1,
        Square::D1,
        Square::E1,
        Square::F1,
        Square::G1,
        Square::H1,
        Square::A2,
        Square::B2,
        Square::C2,
        Square::D2,
        Square::E2,
        Square::F2,
        Square::G2,
        Square::H2,
        Square::A3,
        Square::B3,
        Square::C3,
        Square::D3,
        Square::E3,
        Square::F3,
        Square::G3,
        Square::H3,
        Square::A4,
        Square::B4,
        Square::C4,
        Square::D4,
        Square::E4,
        Square::F4,
        Square::G4,
        Square::H4,
        Square::A5,
        Square::B5,
        Square::C5,
        Square::D5,
        Square::E5,
        Square::F5,
        Square::G5,
        Square::H5,
        Square::A6,
        Square::B6,
        Square::C6,
        Square::D6,
        Square::E6,
        Square::F6,
        Square::G6,
        Square::H6,
        Square::A7,
        Square::B7,
        Square::C7,
        Square::D7,
        Square::E7,
        Square::F7,
        Square::G7,
        Square::H7,
        Square::A8,
        Square::B8,
        Square::C8,
        Square::D8,
        Square::E8,
        Square::F8,
        Square::G8,
        Square::H8,
    ];

    /// The square for index 0..64 (masked).
    #[inline(always)]
    pub const fn from_index(i: usize) -> Square {
        // SAFETY: `Square` is `repr(u8)` with the 64 discriminants 0..=63, and `i & 63` is one
        // of them. (The table lookup this replaces cost 5 % of perft's instructions.)
        unsafe { core::mem::transmute::<u8, Square>((i & 63) as u8) }
    }

    /// The square for index 0..64, or `None`.
    #[inline(always)]
    pub const fn try_from_index(i: usize) -> Option<Square> {
        if i < 64 {
            Some(Square::ALL[i])
        } else {
            None
        }
    }

    /// The square on this file and rank.
    #[inline(always)]
    pub const fn new(file: File, rank: Rank) -> Square {
        Square::from_index(rank as usize * 8 + file as usize)
    }

    /// Its file.
    #[inline(always)]
    pub const fn file(self) -> File {
        File::from_index(self as usize)
    }

    /// Its rank.
    #[inline(always)]
    pub const fn rank(self) -> Rank {
        Rank::from_index(self as usize >> 3)
    }

    /// Its index 0..64.
    #[inline(always)]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The square mirrored top to bottom (a1 ↔ a8).
    #[inline(always)]
    pub const fn flip_rank(self) -> Square {
        Square::from_index(self as usize ^ 56)
    }

    /// This square from `color`'s point of view (mirrored for Black).
    #[inline(always)]
    pub const fn relative_to(self, color: Color) -> Square {
        Square::from_index(self as usize ^ (56 * color as usize))
    }

    /// The square `df` files and `dr` ranks away, if it is on the board.
    #[inline]
    pub const fn offset(self, df: i32, dr: i32) -> Option<Square> {
        let f = self.file() as i32 + df;
        let r = self.rank() as i32 + dr;
        if f >= 0 && f < 8 && r >= 0 && r < 8 {
            Some(Square::from_index((r * 8 + f) as usize))
        } else {
            None
        }
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().char(), self.rank().char())
    }
}

impl fmt::Debug for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl FromStr for Square {
    type Err = ();

    /// Parses `e4`-style names.
    fn from_str(s: &str) -> Result<Square, ()> {
        let mut chars = s.chars();
        let file = chars.next().and_then(File::from_char).ok_or(())?;
        let rank = chars.next().and_then(Rank::from_char).ok_or(())?;
        if chars.next().is_some() {
            return Err(());
        }
        Ok(Square::new(file, rank))
    }
}
