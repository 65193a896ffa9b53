//! PEXT bitboards: the BMI2 `pext` instruction turns the relevant occupancy straight into a
//! dense index (107 648 entries in all, built at compile time).
//!
//! Only when compiled with `target-feature=+bmi2` (e.g. `RUSTFLAGS="-C target-cpu=native"`
//! on a BMI2 machine) does this backend use `pext`; otherwise it falls back to
//! [`super::magic`] and [`ACTIVE`] is `false`. The tables are tested either way through a
//! software `pext`.

use crate::types::{Bitboard, Square};

use super::reference;

/// Whether the hardware `pext` instruction is compiled in.
pub const ACTIVE: bool = cfg!(all(target_arch = "x86_64", target_feature = "bmi2"));

/// Mask and table offset of one square.
#[derive(Clone, Copy)]
struct Entry {
    mask: u64,
    offset: usize,
}

const fn entries(dirs: &[(i32, i32); 4]) -> ([Entry; 64], usize) {
    let mut out = [Entry { mask: 0, offset: 0 }; 64];
    let mut offset = 0;
    let mut sq = 0;
    while sq < 64 {
        let m = reference::relevant_mask(sq, dirs);
        out[sq] = Entry { mask: m, offset };
        offset += 1 << m.count_ones();
        sq += 1;
    }
    (out, offset)
}

const ROOK_ENTRIES: ([Entry; 64], usize) = entries(&reference::ROOK_DIRS);
const BISHOP_ENTRIES: ([Entry; 64], usize) = entries(&reference::BISHOP_DIRS);
static ROOK: [Entry; 64] = ROOK_ENTRIES.0;
static BISHOP: [Entry; 64] = BISHOP_ENTRIES.0;

/// Subsets of a mask come out of the Carry-Rippler walk in increasing order, which is
/// exactly the order of their `pext` values: the k-th subset has index k.
const fn fill<const N: usize>(entries: &[Entry; 64], dirs: &[(i32, i32); 4]) -> [u64; N] {
    let mut table = [0u64; N];
    let mut sq = 0;
    while sq < 64 {
        let Entry { mask, offset } = entries[sq];
        let mut sub = 0u64;
        let mut k = 0;
        loop {
            table[offset + k] = reference::slider(sq, sub, dirs);
            k += 1;
            sub = sub.wrapping_sub(mask) & mask;
            if sub == 0 {
                break;
            }
        }
        sq += 1;
    }
    table
}

#[allow(long_running_const_eval)]
static ROOK_TABLE: [u64; ROOK_ENTRIES.1] = fill(&ROOK, &reference::ROOK_DIRS);
static BISHOP_TABLE: [u64; BISHOP_ENTRIES.1] = fill(&BISHOP, &reference::BISHOP_DIRS);

/// Software parallel bit extract: the bits of `x` selected by `mask`, packed low.
pub const fn pext_soft(x: u64, mut mask: u64) -> u64 {
    let mut out = 0;
    let mut bit = 1;
    while mask != 0 {
        if x & mask & mask.wrapping_neg() != 0 {
            out |= bit;
        }
        mask &= mask - 1;
        bit <<= 1;
    }
    out
}

#[inline(always)]
fn pext(x: u64, mask: u64) -> u64 {
    #[cfg(all(target_arch = "x86_64", target_feature = "bmi2"))]
    {
        // SAFETY: this code is compiled only when the target supports BMI2.
        unsafe { core::arch::x86_64::_pext_u64(x, mask) }
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "bmi2")))]
    {
        pext_soft(x, mask)
    }
}

/// Rook attacks through the PEXT table (software `pext` when BMI2 is missing).
#[inline(always)]
pub fn rook_table(sq: Square, occ: Bitboard) -> Bitboard {
    let e = &ROOK[sq as usize];
    Bitboard(ROOK_TABLE[e.offset + pext(occ.0, e.mask) as usize])
}

/// Bishop attacks through the PEXT table (software `pext` when BMI2 is missing).
#[inline(always)]
pub fn bishop_table(sq: Square, occ: Bitboard) -> Bitboard {
    let e = &BISHOP[sq as usize];
    Bitboard(BISHOP_TABLE[e.offset + pext(occ.0, e.mask) as usize])
}

/// Rook attacks from `sq`: PEXT with BMI2, else magic bitboards.
#[inline(always)]
pub fn rook(sq: Square, occ: Bitboard) -> Bitboard {
    if ACTIVE {
        rook_table(sq, occ)
    } else {
        super::magic::rook(sq, occ)
    }
}

/// Bishop attacks from `sq`: PEXT with BMI2, else magic bitboards.
#[inline(always)]
pub fn bishop(sq: Square, occ: Bitboard) -> Bitboard {
    if ACTIVE {
        bishop_table(sq, occ)
    } else {
        super::magic::bishop(sq, occ)
    }
}
