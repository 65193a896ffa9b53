//! The same fixed-shift magics as [`super::magic`], with the tables built at start-up
//! (the "dynamic" build): one 2.3 MB heap allocation filled the first time any slider
//! attack is asked for, or earlier by [`init`].

use std::sync::OnceLock;

use crate::types::{Bitboard, Square};

use super::magic::{Magic, BISHOP, BISHOP_BITS, ROOK, ROOK_BITS};
use super::reference;

struct Tables {
    rook: Box<[u64]>,
    bishop: Box<[u64]>,
}

static TABLES: OnceLock<Tables> = OnceLock::new();

fn build(magics: &[Magic; 64], bits: u32, attacks: fn(usize, u64) -> u64) -> Box<[u64]> {
    let mut table = vec![0u64; 64 << bits];
    for (sq, m) in magics.iter().enumerate() {
        let mut sub = 0u64;
        loop {
            let idx = (sub.wrapping_mul(m.magic) >> (64 - bits)) as usize;
            table[(sq << bits) | idx] = attacks(sq, sub);
            sub = sub.wrapping_sub(m.mask) & m.mask;
            if sub == 0 {
                break;
            }
        }
    }
    table.into_boxed_slice()
}

/// Builds the tables now (otherwise the first lookup does).
pub fn init() {
    tables();
}

#[inline(always)]
fn tables() -> &'static Tables {
    TABLES.get_or_init(|| Tables {
        rook: build(&ROOK, ROOK_BITS, reference::rook),
        bishop: build(&BISHOP, BISHOP_BITS, reference::bishop),
    })
}

/// Rook attacks from `sq` given the occupancy.
#[inline(always)]
pub fn rook(sq: Square, occ: Bitboard) -> Bitboard {
    let m = &ROOK[sq as usize];
    let idx = ((occ.0 & m.mask).wrapping_mul(m.magic) >> (64 - ROOK_BITS)) as usize;
    Bitboard(tables().rook[(sq as usize) << ROOK_BITS | idx])
}

/// Bishop attacks from `sq` given the occupancy.
#[inline(always)]
pub fn bishop(sq: Square, occ: Bitboard) -> Bitboard {
    let m = &BISHOP[sq as usize];
    let idx = ((occ.0 & m.mask).wrapping_mul(m.magic) >> (64 - BISHOP_BITS)) as usize;
    Bitboard(tables().bishop[(sq as usize) << BISHOP_BITS | idx])
}
