//! Kindergarten bitboards: a line's occupancy is gathered into six bits by a multiplication,
//! then looked up in a shared 8×64 first-rank table (filled up to all ranks) — or, for files,
//! an 8×64 a-file table. About 8 KiB of tables in all, built at compile time.

use crate::types::{Bitboard, Square};

use super::reference;

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_B: u64 = 0x0202_0202_0202_0202;
const DIAG_C2_H7: u64 = 0x0080_4020_1008_0400;

/// `FIRST_RANK_FILL[file][inner]`: attacks of a rook on `file` of a rank whose inner six
/// squares (b..g) hold `inner`, copied onto every rank.
static FIRST_RANK_FILL: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut f = 0;
    while f < 8 {
        let mut inner = 0;
        while inner < 64 {
            let first_rank = reference::rook(f, (inner as u64) << 1) & 0xFF;
            t[f][inner] = first_rank.wrapping_mul(FILE_A);
            inner += 1;
        }
        f += 1;
    }
    t
};

/// `A_FILE[rank][index]`: attacks along the a-file of a rook on `rank`, for the inner
/// occupancy gathered by the c2–h7 multiplication.
static A_FILE: [[u64; 64]; 8] = {
    let mut t = [[0u64; 64]; 8];
    let mut r = 0;
    while r < 8 {
        let inner_mask = FILE_A & !1 & !(1 << 56);
        let mut sub = 0u64;
        loop {
            let idx = (sub.wrapping_mul(DIAG_C2_H7) >> 58) as usize;
            t[r][idx] = reference::rook(r * 8, sub) & FILE_A;
            sub = sub.wrapping_sub(inner_mask) & inner_mask;
            if sub == 0 {
                break;
            }
        }
        r += 1;
    }
    t
};

const fn line_masks(df: i32, dr: i32) -> [u64; 64] {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let dirs = [(df, dr), (-df, -dr), (df, dr), (-df, -dr)];
        t[sq] = reference::slider(sq, 0, &dirs);
        sq += 1;
    }
    t
}

static DIAG: [u64; 64] = line_masks(1, 1);
static ANTI_DIAG: [u64; 64] = line_masks(1, -1);

#[inline(always)]
fn line_attacks(sq: Square, occ: u64, mask: u64) -> u64 {
    let idx = ((mask & occ).wrapping_mul(FILE_B) >> 58) as usize;
    mask & FIRST_RANK_FILL[sq as usize & 7][idx]
}

#[inline(always)]
fn rank_attacks(sq: Square, occ: u64) -> u64 {
    let shift = sq as u32 & 56;
    let idx = ((occ >> (shift + 1)) & 63) as usize;
    FIRST_RANK_FILL[sq as usize & 7][idx] & (0xFF << shift)
}

#[inline(always)]
fn file_attacks(sq: Square, occ: u64) -> u64 {
    let file = sq as u32 & 7;
    let a = FILE_A & (occ >> file);
    let idx = (a.wrapping_mul(DIAG_C2_H7) >> 58) as usize;
    A_FILE[sq as usize >> 3][idx] << file
}

/// Rook attacks from `sq` given the occupancy.
#[inline(always)]
pub fn rook(sq: Square, occ: Bitboard) -> Bitboard {
    Bitboard(rank_attacks(sq, occ.0) | file_attacks(sq, occ.0))
}

/// Bishop attacks from `sq` given the occupancy.
#[inline(always)]
pub fn bishop(sq: Square, occ: Bitboard) -> Bitboard {
    Bitboard(
        line_attacks(sq, occ.0, DIAG[sq as usize])
            | line_attacks(sq, occ.0, ANTI_DIAG[sq as usize]),
    )
}
