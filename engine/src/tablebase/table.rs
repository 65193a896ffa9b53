//! One table file (`.rtbw` or `.rtbz`): its header read into a [`Layout`], and the raw value
//! of a position in it (no captures or en passant considered: that is `probe`'s job).
//!
//! A file starts with four magic bytes and a flags byte (bit 0: two sides to move stored,
//! bit 1: pawns). Then, per pawn file (four for tables with pawns, else one), the order in
//! which the piece groups are encoded and the pieces in table order; then per part (pawn
//! file × side to move) the compressed-value header; a DTZ table's value maps; and the
//! parts' sparse indexes, block lengths and blocks.

use std::fs::File;
use std::path::{Path, PathBuf};

use memmap2::Mmap;

use super::bytes::{u16_le, u8_at};
use super::encoding::{
    encode_pawns, encode_pieces, pawn_file, pawn_lead_key, Groups, BINOMIAL, KK_PLACEMENTS,
    LEAD_PAWN_PLACEMENTS, UNIQUE3_PLACEMENTS,
};
use super::error::{Corrupt, TbError};
use super::material::{piece_of_code, MaterialKey, TableName};
use super::pairs::{Pairs, Sections};
use crate::position::Position;
use crate::types::{Color, PieceType};

/// Win-draw-loss or distance-to-zeroing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    /// `.rtbw`: win, draw or loss under the 50-move rule.
    Wdl,
    /// `.rtbz`: plies to the next capture or pawn move.
    Dtz,
}

impl Kind {
    fn magic(self) -> [u8; 4] {
        match self {
            Kind::Wdl => [0x71, 0xE8, 0x23, 0x5D],
            Kind::Dtz => [0xD7, 0x66, 0x0C, 0xA5],
        }
    }
}

/// DTZ part flag: the side to move the part is stored for (0 white-to-move in table colours).
const DTZ_BLACK_TO_MOVE: u8 = 1;
/// DTZ part flag: values go through a map.
const DTZ_MAPPED: u8 = 2;
/// DTZ part flag: wins are stored in plies, not moves.
const DTZ_WIN_PLIES: u8 = 4;
/// DTZ part flag: losses are stored in plies, not moves.
const DTZ_LOSS_PLIES: u8 = 8;
/// DTZ part flag: the maps hold 16-bit values.
const DTZ_WIDE: u8 = 16;

/// One part: the pieces in table order, their groups and the compressed values, for one side
/// to move (and, with pawns, one file of the leading pawn).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Part {
    pieces: [u8; 7],
    groups: Groups,
    positions: u64,
    flags: u8,
    pairs: Pairs,
    /// Where this part's four DTZ value maps start, relative to the maps section (in bytes,
    /// or in 16-bit words for wide maps).
    map_start: [usize; 4],
}

/// A table file's header, read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    kind: Kind,
    pieces: usize,
    symmetric: bool,
    /// Leading and other pawns; `(0, 0)` without pawns.
    pawns: (usize, usize),
    /// Without pawns: the leading group is three unique pieces (else the two kings).
    unique: bool,
    /// The material of the side the table calls white.
    white: MaterialKey,
    /// Stored sides to move: 2 for WDL tables of unequal material, else 1.
    sides: usize,
    /// `parts[file * sides + side]`.
    parts: Vec<Part>,
    /// Where the DTZ maps start.
    maps: usize,
}

/// A value read from a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Raw {
    /// The value (WDL -2..=2, or DTZ in plies).
    Value(i32),
    /// A DTZ table stores only one side to move, and it is not this one.
    OtherSide,
}

const fn bad(reason: &'static str) -> Corrupt {
    Corrupt(reason)
}

impl Layout {
    /// Reads the header of a table for the material `name`.
    pub(super) fn parse(file: &[u8], name: &TableName, kind: Kind) -> Result<Layout, Corrupt> {
        if file.len() < 16 || file.len() % 64 != 16 {
            return Err(bad(
                "file size is not 16 more than a multiple of 64: truncated?",
            ));
        }
        if file.get(..4) != Some(&kind.magic()[..]) {
            return Err(bad("wrong magic bytes"));
        }
        let byte = |at: usize| u8_at(file, at).ok_or(bad("header past end of file"));
        let flags = byte(4)?;
        let has_pawns = name.has_pawns();
        if (flags & 2 != 0) != has_pawns {
            return Err(bad("pawn flag disagrees with the file name"));
        }
        let symmetric = name.is_symmetric();
        let sides = match kind {
            Kind::Wdl => {
                if (flags & 1 != 0) == symmetric {
                    return Err(bad("side flag disagrees with the file name"));
                }
                if symmetric {
                    1
                } else {
                    2
                }
            }
            Kind::Dtz => 1,
        };
        let pieces = name.key.total() as usize;
        let pawns = if has_pawns {
            let w = name.key.count(Color::White, PieceType::Pawn) as usize;
            let b = name.key.count(Color::Black, PieceType::Pawn) as usize;
            let lead = match (w, b) {
                (0, b) => b,
                (w, 0) => w,
                (w, b) => w.min(b),
            };
            (lead, w + b - lead)
        } else {
            (0, 0)
        };
        let unique = !has_pawns && {
            let unique_kinds = Color::ALL
                .iter()
                .flat_map(|&c| PieceType::ALL.iter().map(move |&k| (c, k)))
                .filter(|&(c, k)| name.key.count(c, k) == 1)
                .count();
            unique_kinds >= 3
        };
        let files = if has_pawns { 4 } else { 1 };

        // Piece orders and pieces, per file and side.
        let mut at = 5;
        let order_bytes = 1 + usize::from(pawns.1 > 0);
        let mut parts_pieces = Vec::with_capacity(files * sides);
        for file_no in 0..files {
            for side in 0..sides {
                let nibble = |b: u8| if side == 0 { b & 0xF } else { b >> 4 };
                let order = nibble(byte(at)?);
                let order2 = if pawns.1 > 0 {
                    nibble(byte(at + 1)?)
                } else {
                    0xF
                };
                let mut list = [0u8; 7];
                for (i, slot) in list.iter_mut().enumerate().take(pieces) {
                    *slot = nibble(byte(at + order_bytes + i)?);
                }
                let (groups, positions) =
                    groups(&list[..pieces], pawns, unique, order, order2, file_no)?;
                check_material(&list[..pieces], pawns, name)?;
                parts_pieces.push((list, groups, positions));
            }
            at += pieces + order_bytes;
        }
        at += at & 1;

        // Compressed-value headers.
        let mut parts = Vec::with_capacity(files * sides);
        let mut sizes = Vec::with_capacity(files * sides);
        for (list, groups, positions) in parts_pieces {
            let parsed = Pairs::parse(file, at, positions, kind == Kind::Wdl)?;
            at = parsed.next;
            sizes.push(parsed.sizes);
            parts.push(Part {
                pieces: list,
                groups,
                positions,
                flags: parsed.flags,
                pairs: parsed.pairs,
                map_start: [0; 4],
            });
        }

        // DTZ value maps: four per mapped part (for wins, losses, cursed wins, blessed
        // losses), each a length then the values.
        let maps = at;
        if kind == Kind::Dtz {
            for part in parts.iter_mut() {
                if part.flags & DTZ_MAPPED == 0 {
                    continue;
                }
                if part.flags & DTZ_WIDE == 0 {
                    for start in part.map_start.iter_mut() {
                        *start = at + 1 - maps;
                        at += 1 + usize::from(byte(at)?);
                    }
                } else {
                    at += at & 1;
                    for start in part.map_start.iter_mut() {
                        *start = (at + 2 - maps) / 2;
                        let len = u16_le(file, at).ok_or(bad("value map past end of file"))?;
                        at += 2 + 2 * usize::from(len);
                    }
                }
            }
            at += at & 1;
        }

        // The sections: all sparse indexes, all block lengths, then the 64-byte aligned data.
        let mut sections = vec![Sections::default(); parts.len()];
        for (s, size) in sections.iter_mut().zip(&sizes) {
            s.index = at;
            at = at
                .checked_add(size.index)
                .ok_or(bad("section sizes overflow"))?;
        }
        for (s, size) in sections.iter_mut().zip(&sizes) {
            s.sizes = at;
            at = at
                .checked_add(size.sizes)
                .ok_or(bad("section sizes overflow"))?;
        }
        for (s, size) in sections.iter_mut().zip(&sizes) {
            at = at.checked_add(63).ok_or(bad("section sizes overflow"))? & !63;
            s.data = at;
            at = at
                .checked_add(size.data)
                .ok_or(bad("section sizes overflow"))?;
        }
        if at > file.len() {
            return Err(bad("sections run past the end of the file: truncated?"));
        }
        for (part, s) in parts.iter_mut().zip(sections) {
            if let Pairs::Coded(coded) = &mut part.pairs {
                coded.at = s;
            }
        }

        // The material the table calls white (for tables without pawns, as its piece list
        // says: a few files are named with the sides the other way round).
        let white = if has_pawns {
            name.key
        } else {
            parts[0]
                .pieces
                .iter()
                .take(pieces)
                .filter_map(|&c| piece_of_code(c))
                .fold(MaterialKey::default(), |k, (c, p)| k.add(c, p))
        };
        Ok(Layout {
            kind,
            pieces,
            symmetric,
            pawns,
            unique,
            white,
            sides,
            parts,
            maps,
        })
    }

    /// The value of `pos` (whose material is `key`) stored in the table: WDL from -2 to 2,
    /// or DTZ in plies for a position whose WDL value is `wdl`.
    pub(super) fn probe(
        &self,
        file: &[u8],
        pos: &Position,
        key: MaterialKey,
        wdl: i32,
    ) -> Result<Raw, Corrupt> {
        let stm = pos.side_to_move();
        // Flip colours (and, with pawns, ranks) so that the position matches the table.
        let (flip, side) = if self.symmetric {
            (stm == Color::Black, 0)
        } else if key != self.white {
            (true, usize::from(stm == Color::White))
        } else {
            (false, usize::from(stm == Color::Black))
        };
        let mirror = if flip { 0x38 } else { 0 };
        let color = |c: Color| if flip { !c } else { c };
        let n = self.pieces;
        let mut squares = [0u8; 7];

        let (part_no, idx) = if self.pawns.0 == 0 {
            let part_no = if self.kind == Kind::Wdl { side } else { 0 };
            let part = self.parts.get(part_no).ok_or(bad("missing part"))?;
            if self.kind == Kind::Dtz
                && usize::from(part.flags & DTZ_BLACK_TO_MOVE) != side
                && !self.symmetric
            {
                return Ok(Raw::OtherSide);
            }
            fill(&mut squares, 0, n, &part.pieces, pos, color, 0)?;
            let idx = encode_pieces(&mut squares[..n], self.unique, &part.groups)
                .ok_or(bad("position cannot be encoded"))?;
            (part_no, idx)
        } else {
            let lead = self.pawns.0;
            let first = self.parts.first().ok_or(bad("missing part"))?;
            let lead_code = first.pieces[0];
            let (c, _) = piece_of_code(lead_code).ok_or(bad("bad piece code"))?;
            let leaders = pos.colored(color(c), PieceType::Pawn);
            if leaders.count() as usize != lead {
                return Err(bad("piece list disagrees with the material"));
            }
            for (slot, sq) in squares.iter_mut().zip(leaders) {
                *slot = sq as u8 ^ mirror;
            }
            // The leading pawn: nearest the edge, then lowest.
            let best = (0..lead)
                .min_by_key(|&i| (pawn_lead_key(squares[i]), i))
                .unwrap_or(0);
            squares.swap(0, best);
            let file_no = pawn_file(squares[0]);
            let part_no = file_no * self.sides + if self.kind == Kind::Wdl { side } else { 0 };
            let part = self.parts.get(part_no).ok_or(bad("missing part"))?;
            if self.kind == Kind::Dtz && usize::from(part.flags & DTZ_BLACK_TO_MOVE) != side {
                return Ok(Raw::OtherSide);
            }
            fill(&mut squares, lead, n, &part.pieces, pos, color, mirror)?;
            let idx = encode_pawns(&mut squares[..n], lead, self.pawns.1, &part.groups)
                .ok_or(bad("position cannot be encoded"))?;
            (part_no, idx)
        };

        let part = &self.parts[part_no];
        if idx >= part.positions {
            return Err(bad("position index beyond the table"));
        }
        let value = part.pairs.value(file, idx, self.kind == Kind::Wdl)?;
        match self.kind {
            Kind::Wdl => {
                let v = i32::from(value) - 2;
                if (-2..=2).contains(&v) {
                    Ok(Raw::Value(v))
                } else {
                    Err(bad("WDL value out of range"))
                }
            }
            Kind::Dtz => Ok(Raw::Value(self.dtz_value(file, part, value, wdl)?)),
        }
    }

    /// A DTZ table's stored value turned into plies.
    fn dtz_value(&self, file: &[u8], part: &Part, value: u16, wdl: i32) -> Result<i32, Corrupt> {
        let mut res = i32::from(value);
        if part.flags & DTZ_MAPPED != 0 {
            // Which map: wins, losses, cursed wins, blessed losses.
            let map = match wdl {
                -2 => 1,
                -1 => 3,
                1 => 2,
                _ => 0,
            };
            let start = part.map_start[map];
            res = if part.flags & DTZ_WIDE == 0 {
                i32::from(
                    u8_at(file, self.maps + start + value as usize)
                        .ok_or(bad("value map past end of file"))?,
                )
            } else {
                i32::from(
                    u16_le(file, self.maps + 2 * (start + value as usize))
                        .ok_or(bad("value map past end of file"))?,
                )
            };
        }
        let in_plies = match wdl {
            2 => part.flags & DTZ_WIN_PLIES != 0,
            -2 => part.flags & DTZ_LOSS_PLIES != 0,
            _ => false,
        };
        if !in_plies {
            res *= 2;
        }
        Ok(res)
    }
}

/// Puts the squares of the pieces `codes[from..n]` (table order, colours flipped by `color`,
/// squares xored with `mirror`) into `squares[from..n]`, each piece type's squares in
/// ascending order.
fn fill(
    squares: &mut [u8; 7],
    from: usize,
    n: usize,
    codes: &[u8; 7],
    pos: &Position,
    color: impl Fn(Color) -> Color,
    mirror: u8,
) -> Result<(), Corrupt> {
    let mut i = from;
    while i < n {
        let (c, kind) = piece_of_code(codes[i]).ok_or(bad("bad piece code"))?;
        let bb = pos.colored(color(c), kind);
        if bb.is_empty() || i + bb.count() as usize > n {
            return Err(bad("piece list disagrees with the material"));
        }
        for sq in bb {
            squares[i] = sq as u8 ^ mirror;
            i += 1;
        }
    }
    Ok(())
}

/// Checks that a part's piece list holds the table's material (in either colour order) and,
/// with pawns, starts with the leading pawns and then the other side's.
fn check_material(list: &[u8], pawns: (usize, usize), name: &TableName) -> Result<(), Corrupt> {
    let mut key = MaterialKey::default();
    for &code in list {
        let (c, k) = piece_of_code(code).ok_or(bad("bad piece code"))?;
        key = key.add(c, k);
    }
    if key != name.key && key != name.key.mirrored() {
        return Err(bad("piece list disagrees with the file name"));
    }
    let (lead, other) = pawns;
    let is_pawn = |c: u8| c & 7 == 1;
    if lead > 0 {
        let lead_ok = list[..lead].iter().all(|&c| c == list[0] && is_pawn(c));
        let other_ok = list[lead..lead + other]
            .iter()
            .all(|&c| is_pawn(c) && c != list[0]);
        if !lead_ok || !other_ok {
            return Err(bad("pawns are not listed first"));
        }
    }
    Ok(())
}

/// The groups of a part's piece list and their factors, and the part's number of positions.
/// `order` is where the leading group comes in the encoding, `order2` where the other side's
/// pawns come (0xF: no such group).
fn groups(
    list: &[u8],
    pawns: (usize, usize),
    unique: bool,
    order: u8,
    order2: u8,
    file_no: usize,
) -> Result<(Groups, u64), Corrupt> {
    let n = list.len();
    let (lead, other) = pawns;
    let mut g = Groups::default();
    let lead_len = if lead > 0 {
        lead
    } else if unique {
        3
    } else {
        2
    };
    if n < lead_len + other {
        return Err(bad("too few pieces"));
    }
    g.len[0] = lead_len as u8;
    let mut i = lead_len;
    if other > 0 {
        g.len[i] = other as u8;
        i += other;
    }
    let mut rest = Vec::with_capacity(n);
    while i < n {
        let j = (i..n).find(|&j| list[j] != list[i]).unwrap_or(n);
        g.len[i] = (j - i) as u8;
        rest.push(i);
        i = j;
    }

    let lead_size = if lead > 0 {
        LEAD_PAWN_PLACEMENTS[lead][file_no]
    } else if unique {
        UNIQUE3_PLACEMENTS
    } else {
        KK_PLACEMENTS
    };
    let total_groups = 1 + usize::from(other > 0) + rest.len();
    let mut free = 64 - lead_len - other;
    let mut factor = 1u64;
    let mut rest = rest.into_iter();
    let overflow = bad("table size overflows");
    for k in 0..total_groups {
        let (at, ways) = if k == usize::from(order) {
            (0, lead_size)
        } else if other > 0 && k == usize::from(order2) {
            (lead_len, BINOMIAL[other][48 - lead_len])
        } else {
            let at = rest.next().ok_or(bad("group order out of range"))?;
            let len = usize::from(g.len[at]);
            let ways = BINOMIAL[len][free];
            free = free.checked_sub(len).ok_or(overflow)?;
            (at, ways)
        };
        g.factor[at] = factor;
        factor = factor.checked_mul(ways).ok_or(overflow)?;
    }
    if rest.next().is_some() || usize::from(order) >= total_groups {
        return Err(bad("group order out of range"));
    }
    Ok((g, factor))
}

/// Refuses a table path that exists but is not a regular file (links followed), before
/// any open: a FIFO's open blocks until a writer comes, a directory is no table. A path
/// that cannot be read is left to the open, whose error names it.
pub(super) fn check_regular(path: &Path) -> Result<(), TbError> {
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => Err(TbError::NotAFile {
            path: path.to_path_buf(),
        }),
        _ => Ok(()),
    }
}

/// A table file, mapped into memory, with its header read.
pub(super) struct Table {
    path: PathBuf,
    bytes: Mmap,
    layout: Layout,
}

impl Table {
    /// Maps and reads the table at `path` for the material `name`.
    pub(super) fn open(path: &Path, name: &TableName, kind: Kind) -> Result<Table, TbError> {
        let io = |e: std::io::Error| TbError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        check_regular(path)?;
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        if len < 16 || len % 64 != 16 {
            return Err(bad("file size is not 16 more than a multiple of 64: truncated?").at(path));
        }
        // SAFETY: a mapped file must not change while mapped. Tablebase files are read-only
        // data that nothing rewrites while an engine runs, and the map is only ever read
        // through bounds-checked slice accesses. (Mapping instead of reading the file is
        // what makes 7-piece sets, 18 TB, usable at all.)
        let bytes = unsafe { Mmap::map(&file) }.map_err(io)?;
        // Probes read a few scattered blocks: no read-ahead. (Only a hint; errors are moot.)
        #[cfg(unix)]
        let _ = bytes.advise(memmap2::Advice::Random);
        let layout = Layout::parse(&bytes, name, kind).map_err(|c| c.at(path))?;
        Ok(Table {
            path: path.to_path_buf(),
            bytes,
            layout,
        })
    }

    /// The value of `pos` (material `key`) in the table; see [`Layout::probe`].
    #[inline]
    pub(super) fn probe(&self, pos: &Position, key: MaterialKey, wdl: i32) -> Result<Raw, TbError> {
        self.layout
            .probe(&self.bytes, pos, key, wdl)
            .map_err(|c| c.at(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> TableName {
        TableName::parse(s).unwrap()
    }

    #[test]
    fn groups_of_a_pawnless_table() {
        // K R K with the leading group first: one group of three.
        let (g, size) = groups(&[6, 4, 14], (0, 0), true, 0, 0xF, 0).unwrap();
        assert_eq!(g.len[0], 3);
        assert_eq!(size, UNIQUE3_PLACEMENTS);
        // K K R R: the kings, then the rooks as one group of two.
        let (g, size) = groups(&[6, 14, 4, 4], (0, 0), false, 0, 0xF, 0).unwrap();
        assert_eq!(g.len[..3], [2, 0, 2]);
        assert_eq!((g.factor[0], g.factor[2]), (1, KK_PLACEMENTS));
        assert_eq!(size, KK_PLACEMENTS * BINOMIAL[2][62]);
        // Order 1: the kings come second.
        let (g, _) = groups(&[6, 14, 4, 4], (0, 0), false, 1, 0xF, 0).unwrap();
        assert_eq!((g.factor[0], g.factor[2]), (BINOMIAL[2][62], 1));
        // An order past the last group is refused.
        assert!(groups(&[6, 14, 4, 4], (0, 0), false, 5, 0xF, 0).is_err());
    }

    #[test]
    fn groups_of_a_pawn_table() {
        // P (lead), then K, K.
        let (g, size) = groups(&[1, 6, 14], (1, 0), false, 0, 0xF, 0).unwrap();
        assert_eq!(g.len[..3], [1, 1, 1]);
        assert_eq!(size, 6 * 63 * 62);
    }

    #[test]
    fn headers_are_checked() {
        let mut file = vec![0u8; 80];
        assert_eq!(
            Layout::parse(&file, &name("KRvK"), Kind::Wdl),
            Err(bad("wrong magic bytes"))
        );
        file[..4].copy_from_slice(&Kind::Wdl.magic());
        file[4] = 3; // split, pawns: but KRvK has none
        assert_eq!(
            Layout::parse(&file, &name("KRvK"), Kind::Wdl),
            Err(bad("pawn flag disagrees with the file name"))
        );
        assert!(Layout::parse(&file[..79], &name("KRvK"), Kind::Wdl).is_err());
        file[4] = 1;
        // Order 0, pieces K R K (white king, white rook, black king) twice over.
        file[5] = 0;
        file[6..9].copy_from_slice(&[0xE6, 0x64, 0x4E]);
        // Single-value parts for both sides.
        file[10..14].copy_from_slice(&[0x80, 4, 0x80, 2]);
        let layout = Layout::parse(&file, &name("KRvK"), Kind::Wdl).unwrap();
        let pos = Position::from_fen("8/8/8/4k3/8/8/8/4K2R w - - 0 1").unwrap();
        let key = MaterialKey::of_position(&pos);
        assert_eq!(layout.probe(&file, &pos, key, 0), Ok(Raw::Value(2)));
        let pos = Position::from_fen("8/8/8/4k3/8/8/8/4K2R b - - 0 1").unwrap();
        assert_eq!(layout.probe(&file, &pos, key, 0), Ok(Raw::Value(0)));
    }
}
