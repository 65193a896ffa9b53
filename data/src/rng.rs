//! A small deterministic random number generator (SplitMix64) for shuffling books.
//!
//! Hand-written so that the order of a shuffled book depends only on the seed, never on
//! a dependency's version.

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
    /// let mut rng = data::rng::SplitMix64::new(0);
    /// assert_eq!(rng.next_u64(), 0xe220a8397b1dcdaf);
    /// ```
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
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

/// Mixes two numbers into one well-spread seed, e.g. a run seed and a pair index.
///
/// ```
/// use data::rng::mix_seed;
/// assert_ne!(mix_seed(1, 0), mix_seed(1, 1));
/// assert_eq!(mix_seed(7, 3), mix_seed(7, 3));
/// ```
pub fn mix_seed(a: u64, b: u64) -> u64 {
    let mut rng = SplitMix64::new(a ^ b.wrapping_mul(0xd6e8_feb8_6659_fd93));
    rng.next_u64()
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
}
