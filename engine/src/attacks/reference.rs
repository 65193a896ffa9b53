//! Plain ray-walking slider attacks: the reference every fast backend is tested against,
//! and the `const fn` the compile-time tables are built from.

/// Rook directions as (file, rank) steps.
pub const ROOK_DIRS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
/// Bishop directions as (file, rank) steps.
pub const BISHOP_DIRS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Squares attacked from `sq` along `dirs`, each ray stopping at (and including) the first
/// occupied square.
pub const fn slider(sq: usize, occ: u64, dirs: &[(i32, i32); 4]) -> u64 {
    let mut result = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = dirs[d];
        let mut f = (sq % 8) as i32 + df;
        let mut r = (sq / 8) as i32 + dr;
        while f >= 0 && f < 8 && r >= 0 && r < 8 {
            let bit = 1u64 << (r * 8 + f);
            result |= bit;
            if occ & bit != 0 {
                break;
            }
            f += df;
            r += dr;
        }
        d += 1;
    }
    result
}

/// Rook attacks from square index `sq`.
pub const fn rook(sq: usize, occ: u64) -> u64 {
    slider(sq, occ, &ROOK_DIRS)
}

/// Bishop attacks from square index `sq`.
pub const fn bishop(sq: usize, occ: u64) -> u64 {
    slider(sq, occ, &BISHOP_DIRS)
}

/// The relevant-occupancy mask of a slider: its empty-board rays without the last square
/// of each ray (an edge square never blocks anything beyond it).
pub const fn relevant_mask(sq: usize, dirs: &[(i32, i32); 4]) -> u64 {
    let mut result = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = dirs[d];
        let mut f = (sq % 8) as i32 + df;
        let mut r = (sq / 8) as i32 + dr;
        while f + df >= 0 && f + df < 8 && r + dr >= 0 && r + dr < 8 {
            result |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
        d += 1;
    }
    result
}

/// Rook relevant-occupancy mask.
pub const fn rook_mask(sq: usize) -> u64 {
    relevant_mask(sq, &ROOK_DIRS)
}

/// Bishop relevant-occupancy mask.
pub const fn bishop_mask(sq: usize) -> u64 {
    relevant_mask(sq, &BISHOP_DIRS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_board_counts() {
        assert_eq!(rook(0, 0).count_ones(), 14);
        assert_eq!(bishop(27, 0).count_ones(), 13);
        assert_eq!(rook_mask(0).count_ones(), 12);
        assert_eq!(bishop_mask(27).count_ones(), 9);
        assert_eq!(bishop_mask(0).count_ones(), 6);
    }

    #[test]
    fn rays_stop_at_blockers() {
        // Rook on a1, blocker on a3 and c1.
        let occ = (1 << 16) | (1 << 2);
        assert_eq!(rook(0, occ), (1 << 8) | (1 << 16) | (1 << 1) | (1 << 2));
    }
}
