//! Zobrist hashing keys, generated at compile time from a fixed seed.

use crate::types::{CastlingRights, File, Piece, Square};

/// All Zobrist keys.
pub(crate) struct Keys {
    pub pieces: [[u64; 64]; 12],
    pub castling: [u64; 16],
    pub en_passant: [u64; 8],
    pub side: u64,
}

const fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

pub(crate) static KEYS: Keys = {
    let mut s = 0x5350_4152_u64; // "SPAR"
    let mut pieces = [[0u64; 64]; 12];
    let mut p = 0;
    while p < 12 {
        let mut sq = 0;
        while sq < 64 {
            pieces[p][sq] = splitmix(&mut s);
            sq += 1;
        }
        p += 1;
    }
    let mut single = [0u64; 4];
    let mut i = 0;
    while i < 4 {
        single[i] = splitmix(&mut s);
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
        en_passant[f] = splitmix(&mut s);
        f += 1;
    }
    Keys {
        pieces,
        castling,
        en_passant,
        side: splitmix(&mut s),
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
