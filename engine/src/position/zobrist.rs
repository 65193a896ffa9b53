//! Zobrist hashing keys, generated at compile time from a fixed seed.

use crate::rng::SplitMix64;
use crate::types::{CastlingRights, File, Piece, Square};

/// All Zobrist keys.
pub(crate) struct Keys {
    pub pieces: [[u64; 64]; 12],
    pub castling: [u64; 16],
    pub en_passant: [u64; 8],
    pub side: u64,
}

pub(crate) static KEYS: Keys = {
    let mut s = SplitMix64::new(0x5350_4152); // "SPAR"
    let mut pieces = [[0u64; 64]; 12];
    let mut p = 0;
    while p < 12 {
        let mut sq = 0;
        while sq < 64 {
            pieces[p][sq] = s.next_u64();
            sq += 1;
        }
        p += 1;
    }
    let mut single = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        single[i] = s.next_u64();
        i += 1;
    }
    let mut castling = [0u64; 16];
    let mut mask = 0;
    while mask < 16 {
        let mut bit = 0;
        while bit < 4 {
            if mask >> bit & 1 != 0 {
                castling[mask] ^= single[bit];
            }
            bit += 1;
        }
        mask += 1;
    }
    let mut en_passant = [0u64; 8];
    let mut f = 0;
    while f < 8 {
        en_passant[f] = s.next_u64();
        f += 1;
    }
    Keys {
        pieces,
        castling,
        en_passant,
        side: s.next_u64(),
    }
};

/// Key of a piece on a square.
#[inline(always)]
pub(crate) fn piece(piece: Piece, sq: Square) -> u64 {
    KEYS.pieces[piece as usize][sq as usize]
}

/// Key of a set of castling rights.
#[inline(always)]
pub(crate) fn castling(rights: &CastlingRights) -> u64 {
    KEYS.castling[rights.bits()]
}

/// Key of an en-passant file.
#[inline(always)]
pub(crate) fn en_passant(file: File) -> u64 {
    KEYS.en_passant[file as usize]
}
