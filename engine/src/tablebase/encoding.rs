//! The index of a position inside a table.
//!
//! A Syzygy table stores one value per *index*, and the index of a position is built from
//! its piece squares after the board is mirrored into a canonical corner: the leading group
//! (the three unique pieces, or the two kings, or the leading pawns) is encoded with the
//! special square maps below, every further group of like pieces as a combination
//! (`C(n, k)` ways to place `k` like pieces on the `n` squares left). The maps and binomial
//! coefficients are built at compile time.

/// `BINOMIAL[k][n]` = `C(n, k)`, the ways to choose `k` of `n` squares.
pub(super) const BINOMIAL: [[u64; 64]; 8] = binomials();

const fn binomials() -> [[u64; 64]; 8] {
    let mut t = [[0u64; 64]; 8];
    let mut n = 0;
    while n < 64 {
        t[0][n] = 1;
        let mut k = 1;
        while k < 8 && k <= n {
            t[k][n] = t[k - 1][n - 1] + t[k][n - 1];
            k += 1;
        }
        n += 1;
    }
    t
}

/// Rank minus file: negative below the a1-h8 diagonal, zero on it, positive above.
#[inline(always)]
const fn off_diagonal(sq: u8) -> i32 {
    (sq >> 3) as i32 - (sq & 7) as i32
}

/// The square mirrored in the a1-h8 diagonal.
#[inline(always)]
const fn flip_diagonal(sq: u8) -> u8 {
    ((sq >> 3) | (sq << 3)) & 63
}

/// Squares of the a1-d1-d4 triangle numbered 0..10: below the diagonal first (b1 = 0),
/// the four diagonal squares a1, b2, c3, d4 last.
const MAP_A1D1D4: [u8; 64] = map_a1d1d4();

const fn map_a1d1d4() -> [u8; 64] {
    let mut map = [0u8; 64];
    let mut code = 0;
    let mut sq = 0u8;
    while sq < 64 {
        if sq & 7 <= 3 && sq >> 3 <= 3 && off_diagonal(sq) < 0 {
            map[sq as usize] = code;
            code += 1;
        }
        sq += 1;
    }
    let mut sq = 0u8;
    while sq < 64 {
        if sq & 7 <= 3 && off_diagonal(sq) == 0 {
            map[sq as usize] = code;
            code += 1;
        }
        sq += 1;
    }
    map
}

/// Squares below the a1-h8 diagonal numbered 0..28 (b1 = 0, h7 = 27).
const MAP_B1H1H7: [u8; 64] = map_b1h1h7();

const fn map_b1h1h7() -> [u8; 64] {
    let mut map = [0u8; 64];
    let mut code = 0;
    let mut sq = 0u8;
    while sq < 64 {
        if off_diagonal(sq) < 0 {
            map[sq as usize] = code;
            code += 1;
        }
        sq += 1;
    }
    map
}

/// Marks an impossible pair of king squares in [`MAP_KK`].
const NO_KK: u16 = u16::MAX;

/// The number of canonical placements of two kings.
pub(super) const KK_PLACEMENTS: u64 = 462;

/// The number of canonical placements of three unique pieces.
pub(super) const UNIQUE3_PLACEMENTS: u64 = 31332;

/// `MAP_KK[a][s]`: the 462 legal, canonical placements of two kings, the first on triangle
/// square `a` (numbered as in [`MAP_A1D1D4`]) and the second on `s`. With the first king on
/// the diagonal the second is never above it; placements with both on the diagonal come last.
const MAP_KK: [[u16; 64]; 10] = map_kk();

const fn kings_touch(a: u8, b: u8) -> bool {
    let df = (a & 7) as i32 - (b & 7) as i32;
    let dr = (a >> 3) as i32 - (b >> 3) as i32;
    df >= -1 && df <= 1 && dr >= -1 && dr <= 1
}

const fn map_kk() -> [[u16; 64]; 10] {
    let mut map = [[NO_KK; 64]; 10];
    let mut both_on_diagonal = [(0u8, 0u8); 64];
    let mut pending = 0;
    let mut code = 0u16;
    let mut triangle = 0;
    while triangle < 10 {
        // The first king's square: the one triangle square numbered `triangle`.
        let mut first = 0u8;
        while first < 64 {
            let in_triangle = first & 7 <= 3 && first >> 3 <= 3 && off_diagonal(first) <= 0;
            if in_triangle && MAP_A1D1D4[first as usize] as usize == triangle {
                break;
            }
            first += 1;
        }
        let mut second = 0u8;
        while second < 64 {
            let on_diagonal = off_diagonal(first) == 0;
            if kings_touch(first, second) || (on_diagonal && off_diagonal(second) > 0) {
                // Illegal, or the mirror image of a canonical placement.
            } else if on_diagonal && off_diagonal(second) == 0 {
                both_on_diagonal[pending] = (triangle as u8, second);
                pending += 1;
            } else {
                map[triangle][second as usize] = code;
                code += 1;
            }
            second += 1;
        }
        triangle += 1;
    }
    let mut i = 0;
    while i < pending {
        let (t, s) = both_on_diagonal[i];
        map[t as usize][s as usize] = code;
        code += 1;
        i += 1;
    }
    map
}

/// Pawn squares a2..h7 numbered from 47 down, a and h files first, then b and g, …: the
/// leading pawn is the one with the highest number.
const MAP_PAWNS: [u8; 64] = map_pawns();

const fn map_pawns() -> [u8; 64] {
    let mut map = [0u8; 64];
    let mut available = 47u8;
    let mut file = 0;
    while file < 4 {
        let mut rank = 1;
        while rank <= 6 {
            map[rank * 8 + file] = available;
            map[rank * 8 + 7 - file] = available - 1;
            available = available.saturating_sub(2);
            rank += 1;
        }
        file += 1;
    }
    map
}

/// `LEAD_PAWN_INDEX[k][s]`: where the encodings with `k` leading pawns, the first on `s`
/// (files a-d), start within the table of its file.
const LEAD_PAWN_INDEX: [[u64; 64]; 7] = lead_pawns().0;

/// `LEAD_PAWN_PLACEMENTS[k][f]`: the number of placements of `k` leading pawns whose
/// leader stands on file `f` (a-d).
pub(super) const LEAD_PAWN_PLACEMENTS: [[u64; 4]; 7] = lead_pawns().1;

const fn lead_pawns() -> ([[u64; 64]; 7], [[u64; 4]; 7]) {
    let mut index = [[0u64; 64]; 7];
    let mut size = [[0u64; 4]; 7];
    let mut count = 1;
    while count < 7 {
        let mut file = 0;
        while file < 4 {
            let mut idx = 0;
            let mut rank = 1;
            while rank <= 6 {
                let sq = rank * 8 + file;
                index[count][sq] = idx;
                idx += BINOMIAL[count - 1][MAP_PAWNS[sq] as usize];
                rank += 1;
            }
            size[count][file] = idx;
            file += 1;
        }
        count += 1;
    }
    (index, size)
}

/// The ordering key of a candidate leading pawn: nearer the a or h file first, then lower
/// rank (the pawn with the smallest key leads).
#[inline(always)]
pub(super) fn pawn_lead_key(sq: u8) -> u8 {
    let file = sq & 7;
    6 * file.min(7 - file) + (sq >> 3).saturating_sub(1)
}

/// The table file (0..4 for a..d) of a leading pawn.
#[inline(always)]
pub(super) fn pawn_file(sq: u8) -> usize {
    let file = sq & 7;
    usize::from(file.min(7 - file))
}

/// How a table splits its pieces into groups and weighs each group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Groups {
    /// `len[i]` is the size of the group starting at piece `i` (zero inside a group).
    pub(super) len: [u8; 7],
    /// `factor[i]` multiplies the encoding of the group starting at piece `i`.
    pub(super) factor: [u64; 7],
}

/// Adds the encodings of the groups from piece `from` on: each group's squares, sorted, as
/// a combination of the squares not taken by earlier pieces.
#[inline]
fn encode_groups(squares: &mut [u8], from: usize, groups: &Groups, mut idx: u64) -> Option<u64> {
    let mut i = from;
    while i < squares.len() {
        let len = usize::from(*groups.len.get(i)?);
        let end = i
            .checked_add(len)
            .filter(|&e| len > 0 && e <= squares.len())?;
        let (earlier, group) = squares.split_at_mut(i);
        let group = &mut group[..len];
        group.sort_unstable();
        let mut sum = 0u64;
        for (k, &sq) in group.iter().enumerate() {
            let below = earlier.iter().filter(|&&e| sq > e).count();
            let free = usize::from(sq).checked_sub(below)?;
            sum = sum.checked_add(*BINOMIAL.get(k + 1)?.get(free)?)?;
        }
        idx = idx.checked_add(sum.checked_mul(*groups.factor.get(i)?)?)?;
        i = end;
    }
    Some(idx)
}

/// The index of a position in a table without pawns. `squares` lists the pieces in the
/// table's order; `unique` says whether the leading group is three unique pieces (else the
/// two kings). `None` for an impossible placement (touching kings).
pub(super) fn encode_pieces(squares: &mut [u8], unique: bool, groups: &Groups) -> Option<u64> {
    let lead = if unique { 3 } else { 2 };
    if squares.len() < lead {
        return None;
    }
    // Mirror the first piece into the a1-d1-d4 triangle ...
    if squares[0] & 4 != 0 {
        squares.iter_mut().for_each(|s| *s ^= 7);
    }
    if squares[0] & 0x20 != 0 {
        squares.iter_mut().for_each(|s| *s ^= 0x38);
    }
    // ... and the first leading piece off the diagonal below it.
    if let Some(&sq) = squares[..lead].iter().find(|&&s| off_diagonal(s) != 0) {
        if off_diagonal(sq) > 0 {
            squares.iter_mut().for_each(|s| *s = flip_diagonal(*s));
        }
    }
    let idx = if unique {
        let (s0, s1, s2) = (squares[0], squares[1], squares[2]);
        let adjust1 = i64::from(s1 > s0);
        let adjust2 = i64::from(s2 > s0) + i64::from(s2 > s1);
        let (r0, r1, r2) = (i64::from(s0 >> 3), i64::from(s1 >> 3), i64::from(s2 >> 3));
        let v = if off_diagonal(s0) != 0 {
            (i64::from(MAP_A1D1D4[usize::from(s0)]) * 63 + i64::from(s1) - adjust1) * 62
                + i64::from(s2)
                - adjust2
        } else if off_diagonal(s1) != 0 {
            (6 * 63 + r0 * 28 + i64::from(MAP_B1H1H7[usize::from(s1)])) * 62 + i64::from(s2)
                - adjust2
        } else if off_diagonal(s2) != 0 {
            6 * 63 * 62
                + 4 * 28 * 62
                + r0 * 7 * 28
                + (r1 - adjust1) * 28
                + i64::from(MAP_B1H1H7[usize::from(s2)])
        } else {
            6 * 63 * 62 + 4 * 28 * 62 + 4 * 7 * 28 + r0 * 7 * 6 + (r1 - adjust1) * 6 + r2 - adjust2
        };
        u64::try_from(v).ok()?
    } else {
        let kk = MAP_KK[usize::from(MAP_A1D1D4[usize::from(squares[0])])][usize::from(squares[1])];
        if kk == NO_KK {
            return None;
        }
        u64::from(kk)
    };
    encode_groups(squares, lead, groups, idx.checked_mul(groups.factor[0])?)
}

/// The index of a position in a table with pawns. `squares` lists the pieces in the
/// table's order with the leading pawn (see [`pawn_lead_key`]) first; `lead` and `other`
/// count the leading pawns and the other side's pawns.
pub(super) fn encode_pawns(
    squares: &mut [u8],
    lead: usize,
    other: usize,
    groups: &Groups,
) -> Option<u64> {
    if lead == 0 || lead >= 7 || squares.len() < lead + other {
        return None;
    }
    if squares[0] & 4 != 0 {
        squares.iter_mut().for_each(|s| *s ^= 7);
    }
    let rest = &mut squares[1..lead];
    rest.sort_unstable_by_key(|&s| std::cmp::Reverse(MAP_PAWNS[usize::from(s & 63)]));
    let mut idx = LEAD_PAWN_INDEX[lead][usize::from(squares[0] & 63)];
    for (i, &sq) in squares[1..lead].iter().enumerate() {
        // The pawns after the first, sorted from the highest number down, weigh C(n, lead - 1 - i).
        idx += BINOMIAL[lead - 1 - i][usize::from(MAP_PAWNS[usize::from(sq & 63)])];
    }
    idx = idx.checked_mul(groups.factor[0])?;
    let mut from = lead;
    if other > 0 {
        let end = lead + other;
        let (leaders, group) = squares.split_at_mut(lead);
        let group = &mut group[..other];
        group.sort_unstable();
        let mut sum = 0u64;
        for (k, &sq) in group.iter().enumerate() {
            let below = leaders.iter().filter(|&&e| sq > e).count();
            let free = usize::from(sq).checked_sub(below + 8)?;
            sum = sum.checked_add(*BINOMIAL.get(k + 1)?.get(free)?)?;
        }
        idx = idx.checked_add(sum.checked_mul(groups.factor[lead])?)?;
        from = end;
    }
    encode_groups(squares, from, groups, idx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomials() {
        assert_eq!(BINOMIAL[0][0], 1);
        assert_eq!(BINOMIAL[2][5], 10);
        assert_eq!(BINOMIAL[3][62], 62 * 61 * 60 / 6);
        assert_eq!(BINOMIAL[4][3], 0);
    }

    #[test]
    fn triangle_maps() {
        // b1 c1 d1 c2 d2 d3, then the diagonal a1 b2 c3 d4.
        let order = [1, 2, 3, 10, 11, 19, 0, 9, 18, 27];
        for (code, &sq) in order.iter().enumerate() {
            assert_eq!(MAP_A1D1D4[sq], code as u8);
        }
        assert_eq!(MAP_B1H1H7[1], 0);
        assert_eq!(MAP_B1H1H7[7], 6);
        assert_eq!(MAP_B1H1H7[10], 7);
        assert_eq!(MAP_B1H1H7[55], 27);
    }

    #[test]
    fn king_pairs_are_numbered_densely() {
        let mut seen = vec![false; KK_PLACEMENTS as usize];
        for row in MAP_KK {
            for code in row.into_iter().filter(|&c| c != NO_KK) {
                assert!(!seen[code as usize], "code {code} twice");
                seen[code as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
        // Touching kings and a king on its own square have no code.
        assert_eq!(MAP_KK[0][1], NO_KK);
        assert_eq!(MAP_KK[0][10], NO_KK);
    }

    #[test]
    fn unique_triples_fill_their_range() {
        assert_eq!(
            6 * 63 * 62 + 4 * 28 * 62 + 4 * 7 * 28 + 4 * 7 * 6,
            UNIQUE3_PLACEMENTS as i64
        );
    }

    #[test]
    fn pawn_maps() {
        assert_eq!(MAP_PAWNS[8], 47); // a2
        assert_eq!(MAP_PAWNS[15], 46); // h2
        assert_eq!(MAP_PAWNS[16], 45); // a3
        assert_eq!(MAP_PAWNS[9], 35); // b2
        assert_eq!(LEAD_PAWN_PLACEMENTS[1], [6, 6, 6, 6]);
        assert_eq!(pawn_lead_key(8), 0);
        assert_eq!(pawn_lead_key(15), 0);
        assert_eq!(pawn_lead_key(9), 6);
        assert_eq!(pawn_file(14), 1);
    }

    #[test]
    fn encodings_stay_below_the_table_size() {
        // K, R, K: unique leading group, no further group.
        let groups = Groups {
            len: [3, 0, 0, 0, 0, 0, 0],
            factor: [1, 0, 0, 0, 0, 0, 0],
        };
        for a in 0..64u8 {
            for b in [0u8, 17, 63] {
                for c in [5u8, 40] {
                    if a == b || b == c || a == c {
                        continue;
                    }
                    if let Some(i) = encode_pieces(&mut [a, b, c], true, &groups) {
                        assert!(i < UNIQUE3_PLACEMENTS, "{a} {b} {c}: {i}");
                    }
                }
            }
        }
    }
}
