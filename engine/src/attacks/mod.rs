//! Attack tables. Leapers (knight, king, pawn) and the `between`/`line` tables are built at
//! compile time; sliders go through one of four backends chosen by cargo feature:
//!
//! | feature | backend |
//! |---|---|
//! | (default) | [`magic`]: fixed-shift magics, table built at compile time |
//! | `magic_runtime` | [`magic_runtime`]: the same magics, table built at start-up |
//! | `kindergarten` | [`kindergarten`]: kindergarten bitboards |
//! | `pext` | [`pext`]: BMI2 PEXT (falls back to magic without `target-feature=+bmi2`) |
//!
//! All four are compiled in every build (and tested against [`mod@reference`]); the feature
//! only picks the one behind [`rook_attacks`] and [`bishop_attacks`]. If several features are
//! on, the first in the order pext, kindergarten, magic_runtime wins.

pub mod kindergarten;
pub mod magic;
pub mod magic_runtime;
pub mod pext;
pub mod reference;

use crate::types::{Bitboard, Color, Square};

#[cfg(feature = "pext")]
use pext as backend;

#[cfg(all(feature = "kindergarten", not(feature = "pext")))]
use kindergarten as backend;

#[cfg(all(
    feature = "magic_runtime",
    not(any(feature = "pext", feature = "kindergarten"))
))]
use magic_runtime as backend;

#[cfg(not(any(feature = "pext", feature = "kindergarten", feature = "magic_runtime")))]
use magic as backend;

/// The name of the slider backend this build uses, with a note when PEXT fell back.
pub const fn backend_name() -> &'static str {
    if cfg!(feature = "pext") {
        if pext::ACTIVE {
            "pext"
        } else {
            "pext (fallback to magic: built without BMI2)"
        }
    } else if cfg!(feature = "kindergarten") {
        "kindergarten"
    } else if cfg!(feature = "magic_runtime") {
        "magic_runtime"
    } else {
        "magic"
    }
}

/// Builds any start-up tables now (only the `magic_runtime` backend has any).
pub fn init() {
    magic_runtime::init();
}

/// Rook attacks from `sq` through the selected backend.
#[inline(always)]
pub fn rook_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    backend::rook(sq, occ)
}

/// Bishop attacks from `sq` through the selected backend.
#[inline(always)]
pub fn bishop_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    backend::bishop(sq, occ)
}

/// Queen attacks from `sq`.
#[inline(always)]
pub fn queen_attacks(sq: Square, occ: Bitboard) -> Bitboard {
    rook_attacks(sq, occ) | bishop_attacks(sq, occ)
}

const fn leaper(steps: &[(i32, i32)]) -> [u64; 64] {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        let mut i = 0;
        while i < steps.len() {
            let f = (sq % 8) as i32 + steps[i].0;
            let r = (sq / 8) as i32 + steps[i].1;
            if f >= 0 && f < 8 && r >= 0 && r < 8 {
                t[sq] |= 1 << (r * 8 + f);
            }
            i += 1;
        }
        sq += 1;
    }
    t
}

static KNIGHT: [u64; 64] = leaper(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
static KING: [u64; 64] = leaper(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
static PAWN: [[u64; 64]; 2] = [leaper(&[(-1, 1), (1, 1)]), leaper(&[(-1, -1), (1, -1)])];

/// Squares a knight on `sq` attacks.
#[inline(always)]
pub fn knight_attacks(sq: Square) -> Bitboard {
    Bitboard(KNIGHT[sq as usize])
}

/// Squares a king on `sq` attacks.
#[inline(always)]
pub fn king_attacks(sq: Square) -> Bitboard {
    Bitboard(KING[sq as usize])
}

/// Squares a pawn of `color` on `sq` attacks.
#[inline(always)]
pub fn pawn_attacks(color: Color, sq: Square) -> Bitboard {
    Bitboard(PAWN[color as usize][sq as usize])
}

const fn rays(rook: bool) -> [u64; 64] {
    let mut t = [0u64; 64];
    let mut sq = 0;
    while sq < 64 {
        t[sq] = if rook {
            reference::rook(sq, 0)
        } else {
            reference::bishop(sq, 0)
        };
        sq += 1;
    }
    t
}

static ROOK_RAYS: [u64; 64] = rays(true);
static BISHOP_RAYS: [u64; 64] = rays(false);

/// Rook attacks from `sq` on an empty board.
#[inline(always)]
pub fn rook_rays(sq: Square) -> Bitboard {
    Bitboard(ROOK_RAYS[sq as usize])
}

/// Bishop attacks from `sq` on an empty board.
#[inline(always)]
pub fn bishop_rays(sq: Square) -> Bitboard {
    Bitboard(BISHOP_RAYS[sq as usize])
}

/// `BETWEEN[a][b]`: squares strictly between two squares on a line, plus `b` itself
/// (so a check evasion mask is `between(king, checker)` for any checker); just `b` when the
/// squares share no line.
static BETWEEN: [[u64; 64]; 64] = {
    let mut t = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            let bit_b = 1u64 << b;
            let mut ray = 0;
            if reference::rook(a, 0) & bit_b != 0 {
                ray = reference::rook(a, bit_b) & reference::rook(b, 1 << a);
            } else if reference::bishop(a, 0) & bit_b != 0 {
                ray = reference::bishop(a, bit_b) & reference::bishop(b, 1 << a);
            }
            t[a][b] = ray | bit_b;
            b += 1;
        }
        a += 1;
    }
    t
};

/// `LINE[a][b]`: the whole line through both squares (edge to edge), or empty.
static LINE: [[u64; 64]; 64] = {
    let mut t = [[0u64; 64]; 64];
    let mut a = 0;
    while a < 64 {
        let mut b = 0;
        while b < 64 {
            let (ba, bb) = (1u64 << a, 1u64 << b);
            if a != b && reference::rook(a, 0) & bb != 0 {
                t[a][b] = (reference::rook(a, 0) & reference::rook(b, 0)) | ba | bb;
            } else if a != b && reference::bishop(a, 0) & bb != 0 {
                t[a][b] = (reference::bishop(a, 0) & reference::bishop(b, 0)) | ba | bb;
            }
            b += 1;
        }
        a += 1;
    }
    t
};

/// Squares strictly between `a` and `b` plus `b` (just `b` if they share no line).
#[inline(always)]
pub fn between(a: Square, b: Square) -> Bitboard {
    Bitboard(BETWEEN[a as usize][b as usize])
}

/// The full line through `a` and `b`, or empty when they share none.
#[inline(always)]
pub fn line(a: Square, b: Square) -> Bitboard {
    Bitboard(LINE[a as usize][b as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occupancies() -> impl Iterator<Item = u64> {
        let mut s = 0x1234_5678_9ABC_DEF1u64;
        (0..4000).map(move |i| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let t = s;
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            // Mix dense, medium and sparse boards.
            match i % 3 {
                0 => t,
                1 => t & s,
                _ => t & s & s.rotate_left(17),
            }
        })
    }

    type Backend = (
        &'static str,
        fn(Square, Bitboard) -> Bitboard,
        fn(Square, Bitboard) -> Bitboard,
    );

    #[test]
    fn every_backend_matches_the_reference() {
        let backends: [Backend; 6] = [
            ("magic", magic::rook, magic::bishop),
            ("magic_runtime", magic_runtime::rook, magic_runtime::bishop),
            ("kindergarten", kindergarten::rook, kindergarten::bishop),
            ("pext table", pext::rook_table, pext::bishop_table),
            ("pext", pext::rook, pext::bishop),
            ("selected", rook_attacks, bishop_attacks),
        ];
        for sq in Square::ALL {
            for occ in occupancies().chain([0, !0]) {
                let want_r = reference::rook(sq as usize, occ);
                let want_b = reference::bishop(sq as usize, occ);
                for (name, r, b) in backends {
                    assert_eq!(
                        r(sq, Bitboard(occ)).0,
                        want_r,
                        "{name} rook {sq} occ {occ:#x}"
                    );
                    assert_eq!(
                        b(sq, Bitboard(occ)).0,
                        want_b,
                        "{name} bishop {sq} occ {occ:#x}"
                    );
                }
            }
        }
    }

    #[test]
    fn leapers() {
        assert_eq!(knight_attacks(Square::A1).count(), 2);
        assert_eq!(knight_attacks(Square::E4).count(), 8);
        assert_eq!(king_attacks(Square::H8).count(), 3);
        assert_eq!(
            pawn_attacks(Color::White, Square::E4),
            Bitboard::from_square(Square::D5) | Square::F5
        );
        assert_eq!(
            pawn_attacks(Color::Black, Square::A5),
            Bitboard::from_square(Square::B4)
        );
    }

    #[test]
    fn between_and_line() {
        assert_eq!(
            between(Square::A1, Square::D4),
            Bitboard::from_square(Square::B2) | Square::C3 | Square::D4
        );
        assert_eq!(
            between(Square::A1, Square::B3),
            Bitboard::from_square(Square::B3)
        );
        assert_eq!(line(Square::A1, Square::C3).count(), 8);
        assert_eq!(line(Square::A1, Square::B3), Bitboard::EMPTY);
        assert_eq!(
            line(Square::E1, Square::E5),
            Bitboard::file(crate::types::File::E)
        );
    }

    #[test]
    fn pext_soft_extracts() {
        assert_eq!(pext::pext_soft(0b1011_0000, 0b1111_0000), 0b1011);
        assert_eq!(pext::pext_soft(!0, 0x8001), 0b11);
    }
}
