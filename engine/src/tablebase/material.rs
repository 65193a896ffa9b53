//! Material signatures: which pieces of each colour a position or a table holds, and the
//! table names (`KRvKP`) that spell them.

use crate::position::Position;
use crate::types::{Color, PieceType};

/// How many of each (colour, piece type) there are, four bits per count: white's six types
/// in the low 24 bits, black's above them. Two positions with the same key probe the same
/// table in the same orientation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub(super) struct MaterialKey(u64);

impl MaterialKey {
    #[inline(always)]
    const fn shift(color: Color, kind: PieceType) -> u32 {
        (color as u32 * 6 + kind as u32) * 4
    }

    /// The material of a position.
    #[inline]
    pub(super) fn of_position(pos: &Position) -> MaterialKey {
        let mut key = 0u64;
        for color in Color::ALL {
            for kind in PieceType::ALL {
                key |= u64::from(pos.colored(color, kind).count()) << Self::shift(color, kind);
            }
        }
        MaterialKey(key)
    }

    /// One more piece (counts saturate at 15).
    pub(super) fn add(self, color: Color, kind: PieceType) -> MaterialKey {
        if self.count(color, kind) == 15 {
            return self;
        }
        MaterialKey(self.0 + (1 << Self::shift(color, kind)))
    }

    /// How many pieces of a colour and type.
    pub(super) fn count(self, color: Color, kind: PieceType) -> u32 {
        ((self.0 >> Self::shift(color, kind)) & 15) as u32
    }

    /// The same material with the colours swapped.
    #[inline]
    pub(super) fn mirrored(self) -> MaterialKey {
        MaterialKey((self.0 >> 24) | ((self.0 & 0xFF_FFFF) << 24))
    }

    /// All pieces of both colours.
    pub(super) fn total(self) -> u32 {
        (0..12).map(|i| ((self.0 >> (4 * i)) & 15) as u32).sum()
    }
}

/// Piece letters in the order table names list them (king first, pawn last).
const ORDER: [(char, PieceType); 6] = [
    ('K', PieceType::King),
    ('Q', PieceType::Queen),
    ('R', PieceType::Rook),
    ('B', PieceType::Bishop),
    ('N', PieceType::Knight),
    ('P', PieceType::Pawn),
];

/// The most pieces a Syzygy table holds.
pub(super) const MAX_TABLE_PIECES: u32 = 7;

/// A table name such as `KRPvKR`, read and normalised.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct TableName {
    /// The name in canonical form (stronger side first, pieces in `KQRBNP` order).
    pub(super) name: String,
    /// The material with the name's first side as white.
    pub(super) key: MaterialKey,
}

impl TableName {
    /// Reads a file stem such as `KRvK`; `None` unless it is a plausible table name (only
    /// `KQRBNP`, one `v`, one king a side, 3 to 7 pieces).
    pub(super) fn parse(stem: &str) -> Option<TableName> {
        let (first, second) = stem.split_once('v')?;
        let letters = |side: &str| -> Option<Vec<u8>> {
            let mut idx: Vec<u8> = side
                .chars()
                .map(|c| ORDER.iter().position(|&(l, _)| l == c).map(|i| i as u8))
                .collect::<Option<_>>()?;
            idx.sort_unstable();
            (idx.iter().filter(|&&i| i == 0).count() == 1).then_some(idx)
        };
        let (mut w, mut b) = (letters(first)?, letters(second)?);
        let total = (w.len() + b.len()) as u32;
        if !(3..=MAX_TABLE_PIECES).contains(&total) {
            return None;
        }
        // The stronger side first: more pieces, then the lexicographically smaller list of
        // piece letters in `KQRBNP` order (as the table generator names its files).
        if (w.len(), &b) < (b.len(), &w) {
            std::mem::swap(&mut w, &mut b);
        }
        let spell = |idx: &[u8]| -> String { idx.iter().map(|&i| ORDER[i as usize].0).collect() };
        let mut key = MaterialKey::default();
        for (color, side) in [(Color::White, &w), (Color::Black, &b)] {
            for &i in side.iter() {
                key = key.add(color, ORDER[i as usize].1);
            }
        }
        Some(TableName {
            name: format!("{}v{}", spell(&w), spell(&b)),
            key,
        })
    }

    /// Whether both sides have the same pieces.
    pub(super) fn is_symmetric(&self) -> bool {
        self.key == self.key.mirrored()
    }

    /// Whether either side has a pawn.
    pub(super) fn has_pawns(&self) -> bool {
        self.key.count(Color::White, PieceType::Pawn)
            + self.key.count(Color::Black, PieceType::Pawn)
            > 0
    }
}

/// The piece a table file's 4-bit code stands for: `1..=6` pawn, knight, bishop, rook, queen,
/// king, plus 8 for black.
pub(super) fn piece_of_code(code: u8) -> Option<(Color, PieceType)> {
    let kind = match code & 7 {
        1 => PieceType::Pawn,
        2 => PieceType::Knight,
        3 => PieceType::Bishop,
        4 => PieceType::Rook,
        5 => PieceType::Queen,
        6 => PieceType::King,
        _ => return None,
    };
    let color = if code & 8 == 0 {
        Color::White
    } else {
        Color::Black
    };
    Some((color, kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_read_and_normalised() {
        let t = TableName::parse("KRvK").unwrap();
        assert_eq!(t.name, "KRvK");
        assert_eq!(t.key.count(Color::White, PieceType::Rook), 1);
        assert_eq!(t.key.total(), 3);
        assert!(!t.is_symmetric() && !t.has_pawns());
        // The weaker side written first is swapped.
        let t = TableName::parse("KvKR").unwrap();
        assert_eq!(t.name, "KRvK");
        let t = TableName::parse("KPvKR").unwrap();
        assert_eq!(t.name, "KRvKP");
        assert!(t.has_pawns());
        assert!(TableName::parse("KPvKP").unwrap().is_symmetric());
        assert_eq!(TableName::parse("KBvKNP").unwrap().name, "KNPvKB");
    }

    #[test]
    fn non_table_names_are_refused() {
        for bad in [
            "KvK",
            "KRK",
            "KRvKX",
            "RvK",
            "KKvK",
            "KQQQQQQvK",
            "SOURCE",
            "vK",
            "",
        ] {
            assert_eq!(TableName::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn material_of_a_position_and_its_mirror() {
        let pos = Position::from_fen("8/8/8/4k3/8/8/1P6/4K2R w - - 0 1").unwrap();
        let key = MaterialKey::of_position(&pos);
        assert_eq!(key, TableName::parse("KRPvK").unwrap().key);
        assert_eq!(key.mirrored().count(Color::Black, PieceType::Rook), 1);
        assert_eq!(key.mirrored().mirrored(), key);
    }

    #[test]
    fn piece_codes() {
        assert_eq!(piece_of_code(1), Some((Color::White, PieceType::Pawn)));
        assert_eq!(piece_of_code(14), Some((Color::Black, PieceType::King)));
        assert_eq!(piece_of_code(0), None);
        assert_eq!(piece_of_code(7), None);
    }
}
