//! The compressed value stream of one table part: its header, and the decoder.
//!
//! Values are compressed by *recursive pairing* (the most frequent pair of adjacent symbols
//! becomes a new symbol, again and again) and the symbols then coded with a canonical
//! Huffman code. The stream is cut into blocks; a sparse index gives, for every `2^idx_bits`
//! values, the block and the offset within it, and a table of block lengths (in values)
//! lets the decoder walk from there to the block that holds the wanted value.

use super::bytes::{u16_le, u32_be_padded, u32_le, u64_be_padded, u8_at};
use super::error::Corrupt;

/// One symbol of the pairing grammar: a pair of smaller symbols, or a value (a leaf).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Symbol {
    /// The left symbol, or the value for a leaf.
    left: u16,
    /// The right symbol; [`LEAF`] for a leaf.
    right: u16,
}

/// The `right` field of a leaf symbol.
const LEAF: u16 = 0xFFF;

/// Where the three sections of a compressed part lie in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Sections {
    /// The sparse index: 6 bytes per entry (block `u32`, offset `u16`).
    pub(super) index: usize,
    /// The block lengths: a `u16` per block, each one less than the values in the block.
    pub(super) sizes: usize,
    /// The blocks themselves.
    pub(super) data: usize,
}

/// A compressed part, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Pairs {
    /// Every position of the part has the same value.
    Single(u16),
    /// Values coded as described in the module documentation.
    Coded(Box<Coded>),
}

/// The decoder state of a coded part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Coded {
    block_bits: u32,
    idx_bits: u32,
    /// Blocks with data.
    blocks: usize,
    /// Entries in the block-length table (the blocks plus padding).
    block_lengths: usize,
    index_entries: usize,
    min_len: u32,
    /// `base[l - min_len]`: the smallest left-aligned code of length `l`.
    base: Vec<u64>,
    /// `lowest[l - min_len]`: the symbol of that code.
    lowest: Vec<u16>,
    symbols: Vec<Symbol>,
    /// How many values, less one, each symbol expands to.
    expansion: Vec<u32>,
    /// Where the sections lie (set once the whole header is read).
    pub(super) at: Sections,
}

/// The sizes in bytes of a part's three sections.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct SectionSizes {
    /// Sparse index bytes.
    pub(super) index: usize,
    /// Block length bytes.
    pub(super) sizes: usize,
    /// Block data bytes.
    pub(super) data: usize,
}

/// A part header, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    /// The decoder.
    pub(super) pairs: Pairs,
    /// The flags byte (DTZ tables keep the side to move and the value map's kind in it).
    pub(super) flags: u8,
    /// The offset just past the header.
    pub(super) next: usize,
    /// The sizes of the part's sections.
    pub(super) sizes: SectionSizes,
}

const fn bad(reason: &'static str) -> Corrupt {
    Corrupt(reason)
}

impl Pairs {
    /// Reads a part header at `at` for a part of `positions` values; `wdl` says whether the
    /// table is a WDL table (its single-value parts store the value; DTZ ones store 0).
    /// Returns the part, its flags byte, the offset just past its header, and its section
    /// sizes.
    pub(super) fn parse(
        file: &[u8],
        at: usize,
        positions: u64,
        wdl: bool,
    ) -> Result<Parsed, Corrupt> {
        let byte = |off: usize| u8_at(file, at + off).ok_or(bad("header past end of file"));
        let flags = byte(0)?;
        if flags & 0x80 != 0 {
            let value = if wdl { u16::from(byte(1)?) } else { 0 };
            return Ok(Parsed {
                pairs: Pairs::Single(value),
                flags,
                next: at + 2,
                sizes: SectionSizes::default(),
            });
        }
        let block_bits = u32::from(byte(1)?);
        let idx_bits = u32::from(byte(2)?);
        let padding = usize::from(byte(3)?);
        let blocks = u32_le(file, at + 4).ok_or(bad("header past end of file"))? as usize;
        let max_len = u32::from(byte(8)?);
        let min_len = u32::from(byte(9)?);
        if !(1..=32).contains(&block_bits) || !(1..=40).contains(&idx_bits) {
            return Err(bad("block or index size out of range"));
        }
        if min_len == 0 || max_len < min_len || max_len > 64 {
            return Err(bad("Huffman code lengths out of range"));
        }
        let lengths = (max_len - min_len + 1) as usize;
        let mut lowest = Vec::with_capacity(lengths);
        for i in 0..lengths {
            lowest.push(u16_le(file, at + 10 + 2 * i).ok_or(bad("header past end of file"))?);
        }
        let count_at = at + 10 + 2 * lengths;
        let count = usize::from(u16_le(file, count_at).ok_or(bad("header past end of file"))?);
        let symbols_at = count_at + 2;
        let raw = file
            .get(symbols_at..symbols_at + 3 * count)
            .ok_or(bad("symbol table past end of file"))?;
        let symbols: Vec<Symbol> = raw
            .chunks_exact(3)
            .map(|b| Symbol {
                left: u16::from(b[0]) | (u16::from(b[1] & 0xF) << 8),
                right: u16::from(b[1] >> 4) | (u16::from(b[2]) << 4),
            })
            .collect();
        let expansion = expansions(&symbols)?;

        // Canonical Huffman: longer codes have smaller values; base[i] is the smallest code
        // of length min_len + i, left-aligned in 64 bits.
        let mut base = vec![0u64; lengths];
        for i in (0..lengths - 1).rev() {
            base[i] = base[i + 1]
                .wrapping_add(u64::from(lowest[i]))
                .wrapping_sub(u64::from(lowest[i + 1]))
                / 2;
        }
        for (i, b) in base.iter_mut().enumerate() {
            let shift = 64 - (min_len + i as u32);
            *b = b.checked_shl(shift).unwrap_or(0);
        }

        let index_entries = positions.div_ceil(1u64 << idx_bits);
        let index_entries = usize::try_from(index_entries).map_err(|_| bad("table too large"))?;
        let too_large = bad("table too large");
        let block_lengths = blocks.checked_add(padding).ok_or(too_large)?;
        let sizes = SectionSizes {
            index: index_entries.checked_mul(6).ok_or(too_large)?,
            sizes: block_lengths.checked_mul(2).ok_or(too_large)?,
            data: 1usize
                .checked_shl(block_bits)
                .and_then(|block| blocks.checked_mul(block))
                .ok_or(too_large)?,
        };
        let next = symbols_at + 3 * count + (count & 1);
        let coded = Coded {
            block_bits,
            idx_bits,
            blocks,
            block_lengths,
            index_entries,
            min_len,
            base,
            lowest,
            symbols,
            expansion,
            at: Sections::default(),
        };
        Ok(Parsed {
            pairs: Pairs::Coded(Box::new(coded)),
            flags,
            next,
            sizes,
        })
    }

    /// The value at `index` (which must be below the part's number of positions). WDL values
    /// are the low byte; DTZ values all 12 bits.
    pub(super) fn value(&self, file: &[u8], index: u64, wdl: bool) -> Result<u16, Corrupt> {
        let coded = match self {
            Pairs::Single(v) => return Ok(*v),
            Pairs::Coded(c) => c,
        };
        let sym = coded.decode(file, index)?;
        let leaf = coded.symbols[sym].left;
        Ok(if wdl { leaf & 0xFF } else { leaf })
    }
}

/// For every symbol, the number of values it expands to, less one; refuses pairs that point
/// out of the table or back at themselves.
fn expansions(symbols: &[Symbol]) -> Result<Vec<u32>, Corrupt> {
    const TODO: u8 = 0;
    const BUSY: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![TODO; symbols.len()];
    let mut len = vec![0u32; symbols.len()];
    let mut stack = Vec::new();
    for start in 0..symbols.len() {
        if state[start] != TODO {
            continue;
        }
        state[start] = BUSY;
        stack.push(start);
        while let Some(&s) = stack.last() {
            let sym = symbols[s];
            if sym.right == LEAF {
                len[s] = 0;
                state[s] = DONE;
                stack.pop();
                continue;
            }
            let (l, r) = (usize::from(sym.left), usize::from(sym.right));
            if l >= symbols.len() || r >= symbols.len() {
                return Err(bad("symbol pair out of range"));
            }
            let mut waiting = false;
            for child in [l, r] {
                match state[child] {
                    TODO => {
                        state[child] = BUSY;
                        stack.push(child);
                        waiting = true;
                        break;
                    }
                    BUSY => return Err(bad("symbol pairs form a cycle")),
                    _ => {}
                }
            }
            if waiting {
                continue;
            }
            len[s] = len[l]
                .checked_add(len[r])
                .and_then(|v| v.checked_add(1))
                .ok_or(bad("symbol expansion too long"))?;
            state[s] = DONE;
            stack.pop();
        }
    }
    Ok(len)
}

impl Coded {
    /// The leaf symbol that holds value number `index`.
    fn decode(&self, file: &[u8], index: u64) -> Result<usize, Corrupt> {
        let main = usize::try_from(index >> self.idx_bits).map_err(|_| bad("index too large"))?;
        if main >= self.index_entries {
            return Err(bad("index beyond the sparse index"));
        }
        let entry = self.at.index + 6 * main;
        let mut block = u32_le(file, entry).ok_or(bad("sparse index past end of file"))? as usize;
        let offset = u16_le(file, entry + 4).ok_or(bad("sparse index past end of file"))?;
        let half = 1i64 << (self.idx_bits - 1);
        let mut lit = (index & ((1u64 << self.idx_bits) - 1)) as i64 - half + i64::from(offset);

        let length = |block: usize| -> Result<i64, Corrupt> {
            if block >= self.block_lengths {
                return Err(bad("block number out of range"));
            }
            u16_le(file, self.at.sizes + 2 * block)
                .map(i64::from)
                .ok_or(bad("block lengths past end of file"))
        };
        while lit < 0 {
            block = block
                .checked_sub(1)
                .ok_or(bad("block number out of range"))?;
            lit += length(block)? + 1;
        }
        loop {
            let len = length(block)?;
            if lit <= len {
                break;
            }
            lit -= len + 1;
            block += 1;
        }
        if block >= self.blocks {
            return Err(bad("block number out of range"));
        }

        // Walk the block's Huffman codes until the one whose expansion holds value `lit`.
        let mut at = self.at.data + (block << self.block_bits);
        let mut code = u64_be_padded(file, at);
        at += 8;
        let mut spare_bits = 0u32;
        let mut sym;
        loop {
            let mut l = 0usize;
            while code < *self.base.get(l).ok_or(bad("Huffman code out of range"))? {
                l += 1;
            }
            let bits = self.min_len + l as u32;
            let shift = 64 - bits;
            let offset = (code - self.base[l]).checked_shr(shift).unwrap_or(0);
            sym = usize::from(self.lowest[l]).wrapping_add(offset as usize);
            let expansion = i64::from(
                *self
                    .expansion
                    .get(sym)
                    .ok_or(bad("Huffman symbol out of range"))?,
            );
            if lit <= expansion {
                break;
            }
            lit -= expansion + 1;
            code = code.checked_shl(bits).unwrap_or(0);
            spare_bits += bits;
            if spare_bits >= 32 {
                spare_bits -= 32;
                code |= u64::from(u32_be_padded(file, at))
                    .checked_shl(spare_bits)
                    .unwrap_or(0);
                at += 4;
            }
        }

        // Descend the pairs to the leaf.
        while self.expansion[sym] != 0 {
            let pair = self.symbols[sym];
            let left = usize::from(pair.left);
            let left_len = i64::from(self.expansion[left]);
            if lit <= left_len {
                sym = left;
            } else {
                lit -= left_len + 1;
                sym = usize::from(pair.right);
            }
        }
        Ok(sym)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_of_a_small_grammar() {
        let leaf = |v| Symbol {
            left: v,
            right: LEAF,
        };
        let pair = |l, r| Symbol { left: l, right: r };
        // 0, 1 leaves; 2 = (0 1); 3 = (2 2).
        let syms = [leaf(7), leaf(9), pair(0, 1), pair(2, 2)];
        assert_eq!(expansions(&syms).unwrap(), vec![0, 0, 1, 3]);
    }

    #[test]
    fn cycles_and_dangling_pairs_are_refused() {
        let pair = |l, r| Symbol { left: l, right: r };
        assert!(expansions(&[pair(0, 0)]).is_err());
        assert!(expansions(&[pair(1, 1), pair(0, 0)]).is_err());
        assert!(expansions(&[pair(5, 5)]).is_err());
    }

    #[test]
    fn single_value_parts() {
        let file = [0x80, 3];
        let parsed = Pairs::parse(&file, 0, 100, true).unwrap();
        assert_eq!(parsed.pairs, Pairs::Single(3));
        assert_eq!((parsed.flags, parsed.next), (0x80, 2));
        assert_eq!(parsed.sizes, SectionSizes::default());
        assert_eq!(parsed.pairs.value(&file, 99, true), Ok(3));
        let parsed = Pairs::parse(&file, 0, 100, false).unwrap();
        assert_eq!(parsed.pairs, Pairs::Single(0));
    }

    #[test]
    fn truncated_headers_are_refused() {
        let header = [0u8, 5, 10, 0, 1, 0, 0, 0, 3, 1, 0, 0];
        for cut in 0..header.len() {
            assert!(
                Pairs::parse(&header[..cut], 0, 1000, true).is_err(),
                "{cut}"
            );
        }
        // Code lengths out of range.
        let bad_lengths = [0u8, 5, 10, 0, 1, 0, 0, 0, 1, 3, 0, 0, 0, 0];
        assert!(Pairs::parse(&bad_lengths, 0, 1000, true).is_err());
    }
}
