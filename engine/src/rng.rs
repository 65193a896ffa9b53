//! The one deterministic random number generator of spar (SplitMix64) and the seed-mixing
//! functions built on it.
//!
//! Hand-written so that everything derived from a seed (Zobrist keys, book order, pair
//! seeds, datagen openings, SPSA perturbations, Texel shuffles) depends only on the seed,
//! never on a dependency's version. Every crate that needs random numbers uses this module;
//! the only exception is `sprt`'s simulator, which must not depend on `engine` and keeps
//! its own copy.

/// SplitMix64's increment: 2^64 / φ, rounded to odd.
pub const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's output function (a variant of MurmurHash3's finalizer, "Mix13"): a
/// bijection of `u64` that spreads every input bit over the whole output.
///
/// ```
/// use engine::rng::mix64;
/// assert_eq!(mix64(0), 0);
/// assert_ne!(mix64(1), mix64(2));
/// ```
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// SplitMix64 (Steele, Lea and Flood 2014): one `u64` of state, passes BigCrush, and
/// every seed (including 0) gives a good sequence.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator starting from `seed`.
    pub const fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    ///
    /// ```
    /// let mut rng = engine::rng::SplitMix64::new(0);
    /// assert_eq!(rng.next_u64(), 0xe220a8397b1dcdaf);
    /// ```
    #[inline]
    pub const fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        mix64(self.state)
    }

    /// A number in `0..n` (0 when `n` is 0), by Lemire's multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Shuffles a slice in place (Fisher–Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// Mixes two numbers into one well-spread seed: the first output of a [`SplitMix64`] seeded
/// with `a ^ b · 0xd6e8feb86659fd93`. Used for per-game, per-iteration and per-epoch seeds
/// (datagen games, SPSA perturbations, Texel shuffles); the values are part of what those
/// runs write, so they must never change.
///
/// ```
/// use engine::rng::mix_seed;
/// assert_ne!(mix_seed(1, 0), mix_seed(1, 1));
/// assert_eq!(mix_seed(7, 3), mix_seed(7, 3));
/// ```
pub fn mix_seed(a: u64, b: u64) -> u64 {
    SplitMix64::new(a ^ b.wrapping_mul(0xd6e8_feb8_6659_fd93)).next_u64()
}

/// The seed of pair `pair` of a match or SPRT run seeded with `run_seed`:
/// [`mix64`]`(run_seed ^ pair · GOLDEN_GAMMA)`, independent of scheduling. Differs from
/// [`mix_seed`] (another multiplier, no increment); it is written to the results CSV, so
/// its values must never change either.
///
/// ```
/// use engine::rng::pair_seed;
/// assert_ne!(pair_seed(1, 0), pair_seed(1, 1));
/// ```
pub const fn pair_seed(run_seed: u64, pair: u64) -> u64 {
    mix64(run_seed ^ pair.wrapping_mul(GOLDEN_GAMMA))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shuffle_is_a_deterministic_permutation() {
        let mut a: Vec<u32> = (0..100).collect();
        let mut b = a.clone();
        SplitMix64::new(42).shuffle(&mut a);
        SplitMix64::new(42).shuffle(&mut b);
        assert_eq!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        let mut sorted = a.clone();
        sorted.sort();
        assert_eq!(sorted, (0..100).collect::<Vec<_>>());
        let mut empty: [u8; 0] = [];
        SplitMix64::new(1).shuffle(&mut empty);
        assert_eq!(SplitMix64::new(1).below(0), 0);
    }

    /// Values computed with the implementations these functions replaced (`data::rng` and
    /// the pair scheduler's own `pair_seed`): files written by earlier versions depend on them.
    #[test]
    fn seeds_are_pinned() {
        let mut rng = SplitMix64::new(0);
        assert_eq!(
            [rng.next_u64(), rng.next_u64(), rng.next_u64()],
            PINNED_SPLITMIX_0
        );
        for (&(a, b), &want) in PINNED_ARGS.iter().zip(&PINNED_MIX_SEED) {
            assert_eq!(mix_seed(a, b), want, "mix_seed({a}, {b})");
        }
        for (&(a, b), &want) in PINNED_ARGS.iter().zip(&PINNED_PAIR_SEED) {
            assert_eq!(pair_seed(a, b), want, "pair_seed({a}, {b})");
        }
    }

    const PINNED_ARGS: [(u64, u64); 5] = [(0, 0), (1, 0), (7, 3), (9, 11), (u64::MAX, 1 << 40)];
    const PINNED_SPLITMIX_0: [u64; 3] =
        [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f];
    const PINNED_MIX_SEED: [u64; 5] = [
        0xe220a8397b1dcdaf,
        0x910a2dec89025cc1,
        0x14e3a7e06fcc4e26,
        0x8c3a049ec9114e3d,
        0xdecdacf6a1f7d38e,
    ];
    const PINNED_PAIR_SEED: [u64; 5] = [
        0x0000000000000000,
        0x5692161d100b05e5,
        0xe8313fe1d7350611,
        0x1a82e79b05b5faeb,
        0x4892d54673af0c0c,
    ];
}
