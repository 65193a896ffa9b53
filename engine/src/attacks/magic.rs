//! Fixed-shift magic bitboards with the whole table built at compile time.
//!
//! Every rook square indexes 12 bits (shift 52) and every bishop square 9 bits (shift 55), so
//! the shift is a constant and each square owns a dense 4096- or 512-entry slice. The magic
//! numbers were found by `cargo run --release -p engine --example find_magics`.

use crate::types::{Bitboard, Square};

use super::reference;

/// Index bits of every rook square.
pub const ROOK_BITS: u32 = 12;
/// Index bits of every bishop square.
pub const BISHOP_BITS: u32 = 9;

/// Rook magic numbers, a1 first.
pub const ROOK_MAGICS: [u64; 64] = [
    0x2080002080400010,
    0x2810100840006100,
    0x8090001020028411,
    0x2080080010000402,
    0x0300080201001004,
    0x0480008002000400,
    0xA01001010A408020,
    0x0100008050210002,
    0x0AB0060100100403,
    0x0218400510220140,
    0x0080082014020008,
    0x0480481100028004,
    0x0002100D00020080,
    0xC106081400082088,
    0x0028200116410088,
    0x40A0040020104004,
    0x6040018002402080,
    0x0080084000100020,
    0x2001404004080270,
    0x1181100800220028,
    0x0008100100202840,
    0x0400008004000200,
    0x2610800942200A01,
    0x4000002000411484,
    0x0500800080400015,
    0x0041128204010200,
    0x1001094008000480,
    0x8008020020041000,
    0x8200048080080001,
    0x0008892A20008001,
    0x10088020440A0002,
    0x0414800180105300,
    0x0080001021200100,
    0x0804080200180402,
    0x0C48400400106145,
    0x0002002110900080,
    0x0008420045008900,
    0x0003040004042006,
    0x8449A40221A02200,
    0x0002820040120220,
    0x0040200010086000,
    0x0002040100101400,
    0x0110800800040C00,
    0x0020080610809000,
    0x0000884020100100,
    0x0040008044009011,
    0x0010900401004A00,
    0x1008100080080500,
    0x1090281102088A00,
    0x0801100248204004,
    0x02008421840080A0,
    0x1090000402042202,
    0x0024404001C08440,
    0x000004810A003040,
    0x000101C001003080,
    0x0004002082104008,
    0x1002001900204482,
    0x2044082131204082,
    0x1002050008102041,
    0x001220104002000A,
    0x0200010800110003,
    0x8004008500008801,
    0x048808100140C104,
    0x004000840B0044A2,
];

/// Bishop magic numbers, a1 first.
pub const BISHOP_MAGICS: [u64; 64] = [
    0xE2412048000C8820,
    0x0020620009410010,
    0x00040C10040C4100,
    0x0920901040010200,
    0x02490040C0824028,
    0x1220222002000800,
    0x0000081C20020019,
    0x0020020010851080,
    0x40000E8A05808410,
    0x0000040088002888,
    0xA080100012101000,
    0xC000104040402440,
    0x02124120080100C0,
    0x0004800809400001,
    0x1304100824100800,
    0x0001004008480600,
    0x11400005014012C0,
    0x0022084742002020,
    0x1030049800403403,
    0x1048000101400400,
    0x07088010068E2000,
    0x804A003406802420,
    0x0008080410420200,
    0x0042210020044128,
    0x4002880050004044,
    0x0004208010822080,
    0x0000480240420040,
    0x0420104108004040,
    0x0230840082020200,
    0x0188002006900028,
    0x4800092100084A02,
    0x0400800880200C00,
    0x0204108828008200,
    0x0000C42002700200,
    0x200120182010000A,
    0x0201020080080082,
    0x0050020080101004,
    0x4024010402004048,
    0x6001088160001400,
    0x00A4821140001100,
    0x0002248C1000B048,
    0x000486CA26060240,
    0x19C0800808108100,
    0x00000208200A0200,
    0x0092082008048100,
    0x2A40240111400108,
    0x04D000B014008180,
    0x0501348940028514,
    0x2400208022144000,
    0x0000221081A40000,
    0x9001206481201080,
    0x2000508100628000,
    0x20820542023C0000,
    0x1002200243116003,
    0x1010A00284004400,
    0x0062018030400210,
    0x0080202201200440,
    0x00C1020250422000,
    0x0400000210060100,
    0x082800A010CA0A00,
    0x5300015022202060,
    0x0002100048084121,
    0x0000440204801010,
    0x80C0120030088088,
];

/// Mask and magic of one square, side by side so one lookup touches one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub(crate) struct Magic {
    pub(crate) mask: u64,
    pub(crate) magic: u64,
}

const fn magics(dirs: &[(i32, i32); 4], numbers: &[u64; 64]) -> [Magic; 64] {
    let mut out = [Magic { mask: 0, magic: 0 }; 64];
    let mut sq = 0;
    while sq < 64 {
        out[sq] = Magic {
            mask: reference::relevant_mask(sq, dirs),
            magic: numbers[sq],
        };
        sq += 1;
    }
    out
}

pub(crate) static ROOK: [Magic; 64] = magics(&reference::ROOK_DIRS, &ROOK_MAGICS);
pub(crate) static BISHOP: [Magic; 64] = magics(&reference::BISHOP_DIRS, &BISHOP_MAGICS);

/// Fills `table` (64 slices of `1 << bits` entries) for one slider kind.
pub(crate) const fn fill<const N: usize>(
    magics: &[Magic; 64],
    bits: u32,
    dirs: &[(i32, i32); 4],
) -> [u64; N] {
    let mut table = [0u64; N];
    let mut sq = 0;
    while sq < 64 {
        let Magic { mask, magic } = magics[sq];
        // Carry-Rippler walk over every subset of the mask.
        let mut sub = 0u64;
        loop {
            let idx = (sub.wrapping_mul(magic) >> (64 - bits)) as usize;
            table[(sq << bits) + idx] = reference::slider(sq, sub, dirs);
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
static ROOK_TABLE: [u64; 64 << ROOK_BITS] = fill(&ROOK, ROOK_BITS, &reference::ROOK_DIRS);
#[allow(long_running_const_eval)]
static BISHOP_TABLE: [u64; 64 << BISHOP_BITS] = fill(&BISHOP, BISHOP_BITS, &reference::BISHOP_DIRS);

/// Rook attacks from `sq` given the occupancy.
#[inline(always)]
pub fn rook(sq: Square, occ: Bitboard) -> Bitboard {
    let m = &ROOK[sq as usize];
    let idx = ((occ.0 & m.mask).wrapping_mul(m.magic) >> (64 - ROOK_BITS)) as usize;
    Bitboard(ROOK_TABLE[(sq as usize) << ROOK_BITS | idx])
}

/// Bishop attacks from `sq` given the occupancy.
#[inline(always)]
pub fn bishop(sq: Square, occ: Bitboard) -> Bitboard {
    let m = &BISHOP[sq as usize];
    let idx = ((occ.0 & m.mask).wrapping_mul(m.magic) >> (64 - BISHOP_BITS)) as usize;
    Bitboard(BISHOP_TABLE[(sq as usize) << BISHOP_BITS | idx])
}
