//! Piece types and coloured pieces.

use super::Color;

/// A kind of piece regardless of colour.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PieceType {
    /// Pawn.
    Pawn,
    /// Knight.
    Knight,
    /// Bishop.
    Bishop,
    /// Rook.
    Rook,
    /// Queen.
    Queen,
    /// King.
    King,
}

impl PieceType {
    /// All six types, pawn first.
    pub const ALL: [PieceType; 6] = [
        PieceType::Pawn,
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
        PieceType::King,
    ];

    /// The type for index 0..6; other values are clamped into range.
    #[inline(always)]
    pub const fn from_index(i: usize) -> PieceType {
        PieceType::ALL[if i < 6 { i } else { 5 }]
    }

    /// Lower-case letter (`p n b r q k`).
    pub const fn char(self) -> char {
        [b'p', b'n', b'b', b'r', b'q', b'k'][self as usize] as char
    }

    /// Parses a letter of either case.
    pub fn from_char(c: char) -> Option<PieceType> {
        match c.to_ascii_lowercase() {
            'p' => Some(PieceType::Pawn),
            'n' => Some(PieceType::Knight),
            'b' => Some(PieceType::Bishop),
            'r' => Some(PieceType::Rook),
            'q' => Some(PieceType::Queen),
            'k' => Some(PieceType::King),
            _ => None,
        }
    }
}

/// A coloured piece, numbered `color * 6 + type` (0 = white pawn … 11 = black king).
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[allow(missing_docs)]
pub enum Piece {
    WhitePawn,
    WhiteKnight,
    WhiteBishop,
    WhiteRook,
    WhiteQueen,
    WhiteKing,
    BlackPawn,
    BlackKnight,
    BlackBishop,
    BlackRook,
    BlackQueen,
    BlackKing,
}

impl Piece {
    /// All twelve pieces, white first.
    pub const ALL: [Piece; 12] = [
        Piece::WhitePawn,
        Piece::WhiteKnight,
        Piece::WhiteBishop,
        Piece::WhiteRook,
        Piece::WhiteQueen,
        Piece::WhiteKing,
        Piece::BlackPawn,
        Piece::BlackKnight,
        Piece::BlackBishop,
        Piece::BlackRook,
        Piece::BlackQueen,
        Piece::BlackKing,
    ];

    /// The piece of this colour and type.
    #[inline(always)]
    pub const fn new(color: Color, kind: PieceType) -> Piece {
        Piece::ALL[color as usize * 6 + kind as usize]
    }

    /// Its colour.
    #[inline(always)]
    pub const fn color(self) -> Color {
        Color::from_index((self as usize >= 6) as usize)
    }

    /// Its type.
    #[inline(always)]
    pub const fn kind(self) -> PieceType {
        PieceType::from_index(self as usize % 6)
    }

    /// FEN letter: upper case for White.
    pub const fn char(self) -> char {
        let c = self.kind().char();
        match self.color() {
            Color::White => c.to_ascii_uppercase(),
            Color::Black => c,
        }
    }

    /// Parses a FEN letter.
    pub fn from_char(c: char) -> Option<Piece> {
        let kind = PieceType::from_char(c)?;
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        Some(Piece::new(color, kind))
    }
}
