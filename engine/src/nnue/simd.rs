//! The two hot kernels of the network, each in a scalar and an AVX2 version:
//!
//! - [`Kernel::update`]: an accumulator row plus some weight rows minus others (a move);
//!   [`Kernel::update_in_place`] the same on one row (a refresh-table entry);
//! - [`Kernel::screlu_dot`]: `Σ clamp(acc, 0, QA)² · w` (the output layer).
//!
//! The kernel is chosen **at run time** ([`Kernel::detect`]): spar is built for generic
//! x86-64 (no `-C target-cpu`), so a compile-time `cfg(target_feature = "avx2")` would leave
//! every ordinary build on the scalar path. AVX2 code lives in `#[target_feature]` functions
//! that are only called after `is_x86_feature_detected!("avx2")` said yes, which is what
//! makes calling them sound. The scalar kernel is compiled on every target and the tests
//! check that both give identical results.
//!
//! Arithmetic is exact and identical in both: accumulators add and subtract with wrapping
//! `i16` (the sum of a move's changes is exact whenever the result fits, whatever the order),
//! and the dot product sums in wrapping `i32`.

use super::network::QA;

/// Sixteen `i16` values aligned to 32 bytes: one AVX2 register, the unit in which weight rows
/// and accumulators are stored (so no load crosses a cache line).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C, align(32))]
pub struct Lanes(pub [i16; 16]);

/// The values of a slice of [`Lanes`], in order.
#[inline(always)]
pub fn flat(lanes: &[Lanes]) -> &[i16] {
    // SAFETY: `Lanes` is `repr(C)` around `[i16; 16]` with size 32 and no padding, so a slice
    // of n `Lanes` is 16·n initialised, properly aligned `i16` values borrowed for as long.
    unsafe { std::slice::from_raw_parts(lanes.as_ptr().cast::<i16>(), lanes.len() * 16) }
}

/// The values of a mutable slice of [`Lanes`], in order.
#[inline(always)]
pub fn flat_mut(lanes: &mut [Lanes]) -> &mut [i16] {
    // SAFETY: as in `flat`; the mutable borrow is unique for the returned lifetime.
    unsafe { std::slice::from_raw_parts_mut(lanes.as_mut_ptr().cast::<i16>(), lanes.len() * 16) }
}

/// Which implementation of the kernels runs. Only [`Kernel::SCALAR`] can be named; the AVX2
/// kernel comes from [`Kernel::detect`] or [`Kernel::available`], after the CPU said it has
/// AVX2, which is what makes running it sound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Kernel(Isa);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Isa {
    Scalar,
    Avx2,
}

impl Kernel {
    /// Plain Rust, any target.
    pub const SCALAR: Kernel = Kernel(Isa::Scalar);

    /// The fastest kernel this CPU runs.
    pub fn detect() -> Kernel {
        if avx2_available() {
            Kernel(Isa::Avx2)
        } else {
            Kernel::SCALAR
        }
    }

    /// Every kernel this CPU runs (the scalar one first).
    pub fn available() -> Vec<Kernel> {
        let mut all = vec![Kernel::SCALAR];
        if avx2_available() {
            all.push(Kernel(Isa::Avx2));
        }
        all
    }

    /// The kernel's name, for `info string` and bench lines.
    pub fn name(self) -> &'static str {
        match self.0 {
            Isa::Scalar => "scalar",
            Isa::Avx2 => "avx2",
        }
    }

    /// `out = input − Σ subs + Σ adds`, element-wise with wrapping `i16`. Every slice has the
    /// length of `out`, a multiple of 16.
    #[inline(always)]
    pub fn update(self, out: &mut [i16], input: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
        let n = out.len();
        assert!(
            n & 15 == 0
                && input.len() == n
                && adds.iter().all(|a| a.len() == n)
                && subs.iter().all(|s| s.len() == n)
        );
        match self.0 {
            Isa::Scalar => update_scalar(out, input, adds, subs),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `Isa::Avx2` is private and only made by `detect`/`available`, after
            // `is_x86_feature_detected!("avx2")`; the lengths were checked above.
            Isa::Avx2 => unsafe { avx2::update(out, input, adds, subs) },
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => update_scalar(out, input, adds, subs),
        }
    }

    /// `acc = acc − Σ subs + Σ adds` in place, element-wise with wrapping `i16` (the
    /// refresh table's entries). Every slice has the length of `acc`, a multiple of 16.
    #[inline(always)]
    pub fn update_in_place(self, acc: &mut [i16], adds: &[&[i16]], subs: &[&[i16]]) {
        let n = acc.len();
        assert!(
            n & 15 == 0 && adds.iter().all(|a| a.len() == n) && subs.iter().all(|s| s.len() == n)
        );
        match self.0 {
            Isa::Scalar => update_in_place_scalar(acc, adds, subs),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `update`: AVX2 was detected, and the lengths were checked.
            Isa::Avx2 => unsafe { avx2::update_in_place(acc, adds, subs) },
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => update_in_place_scalar(acc, adds, subs),
        }
    }

    /// `Σ_i clamp(acc[i], 0, QA)² · w[i]` in wrapping `i32`. Both slices have the same length,
    /// a multiple of 16, and every `|w[i]|` is at most 127.
    #[inline(always)]
    pub fn screlu_dot(self, acc: &[i16], w: &[i16]) -> i32 {
        assert!(acc.len() == w.len() && acc.len() & 15 == 0);
        match self.0 {
            Isa::Scalar => screlu_dot_scalar(acc, w),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as in `update`: AVX2 was detected, and the lengths were checked.
            Isa::Avx2 => unsafe { avx2::screlu_dot(acc, w) },
            #[cfg(not(target_arch = "x86_64"))]
            Isa::Avx2 => screlu_dot_scalar(acc, w),
        }
    }
}

fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

fn update_scalar(out: &mut [i16], input: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
    out.copy_from_slice(input);
    for s in subs {
        for (o, &v) in out.iter_mut().zip(s.iter()) {
            *o = o.wrapping_sub(v);
        }
    }
    for a in adds {
        for (o, &v) in out.iter_mut().zip(a.iter()) {
            *o = o.wrapping_add(v);
        }
    }
}

fn update_in_place_scalar(acc: &mut [i16], adds: &[&[i16]], subs: &[&[i16]]) {
    for s in subs {
        for (o, &v) in acc.iter_mut().zip(s.iter()) {
            *o = o.wrapping_sub(v);
        }
    }
    for a in adds {
        for (o, &v) in acc.iter_mut().zip(a.iter()) {
            *o = o.wrapping_add(v);
        }
    }
}

fn screlu_dot_scalar(acc: &[i16], w: &[i16]) -> i32 {
    acc.iter().zip(w).fold(0i32, |sum, (&a, &w)| {
        let u = i32::from(a).clamp(0, QA);
        sum.wrapping_add(u * u * i32::from(w))
    })
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::QA;

    /// AVX2 version of [`super::update_scalar`].
    ///
    /// # Safety
    /// The CPU must have AVX2; every slice must have the length of `out`, a multiple of 16.
    #[target_feature(enable = "avx2")]
    pub unsafe fn update(out: &mut [i16], input: &[i16], adds: &[&[i16]], subs: &[&[i16]]) {
        let n = out.len();
        let mut i = 0;
        while i < n {
            // SAFETY (all loads and stores): i + 16 <= n and every slice has length n.
            let mut v = _mm256_loadu_si256(input.as_ptr().add(i).cast());
            for s in subs {
                v = _mm256_sub_epi16(v, _mm256_loadu_si256(s.as_ptr().add(i).cast()));
            }
            for a in adds {
                v = _mm256_add_epi16(v, _mm256_loadu_si256(a.as_ptr().add(i).cast()));
            }
            _mm256_storeu_si256(out.as_mut_ptr().add(i).cast(), v);
            i += 16;
        }
    }

    /// AVX2 version of [`super::update_in_place_scalar`].
    ///
    /// # Safety
    /// The CPU must have AVX2; every slice must have the length of `acc`, a multiple of 16.
    #[target_feature(enable = "avx2")]
    pub unsafe fn update_in_place(acc: &mut [i16], adds: &[&[i16]], subs: &[&[i16]]) {
        let n = acc.len();
        let mut i = 0;
        while i < n {
            // SAFETY (all loads and stores): i + 16 <= n and every slice has length n.
            let mut v = _mm256_loadu_si256(acc.as_ptr().add(i).cast());
            for s in subs {
                v = _mm256_sub_epi16(v, _mm256_loadu_si256(s.as_ptr().add(i).cast()));
            }
            for a in adds {
                v = _mm256_add_epi16(v, _mm256_loadu_si256(a.as_ptr().add(i).cast()));
            }
            _mm256_storeu_si256(acc.as_mut_ptr().add(i).cast(), v);
            i += 16;
        }
    }

    /// AVX2 version of [`super::screlu_dot_scalar`]: `v = clamp(acc, 0, QA)`, `v·w` fits an
    /// `i16` (|w| ≤ 127, v ≤ 255) so `mullo_epi16` is exact, then `madd_epi16(v·w, v)` widens
    /// to `i32` pairs.
    ///
    /// # Safety
    /// The CPU must have AVX2; both slices have the same length, a multiple of 16.
    #[target_feature(enable = "avx2")]
    pub unsafe fn screlu_dot(acc: &[i16], w: &[i16]) -> i32 {
        let zero = _mm256_setzero_si256();
        let qa = _mm256_set1_epi16(QA as i16);
        let mut sum = _mm256_setzero_si256();
        let mut i = 0;
        while i < acc.len() {
            // SAFETY: i + 16 <= len of both slices.
            let a = _mm256_loadu_si256(acc.as_ptr().add(i).cast());
            let wv = _mm256_loadu_si256(w.as_ptr().add(i).cast());
            let v = _mm256_min_epi16(_mm256_max_epi16(a, zero), qa);
            let vw = _mm256_mullo_epi16(v, wv);
            sum = _mm256_add_epi32(sum, _mm256_madd_epi16(vw, v));
            i += 16;
        }
        let hi = _mm256_extracti128_si256::<1>(sum);
        let s = _mm_add_epi32(_mm256_castsi256_si128(sum), hi);
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b01_00_11_10>(s));
        let s = _mm_add_epi32(s, _mm_shuffle_epi32::<0b10_11_00_01>(s));
        _mm_cvtsi128_si32(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    fn random_row(rng: &mut SplitMix64, n: usize, range: i32) -> Vec<i16> {
        (0..n)
            .map(|_| (rng.below(2 * range as usize + 1) as i32 - range) as i16)
            .collect()
    }

    #[test]
    fn kernels_agree_on_random_rows() {
        assert_eq!(Kernel::available()[0], Kernel::SCALAR);
        let mut rng = SplitMix64::new(7);
        for n in [16, 32, 128, 256, 1024] {
            for _ in 0..50 {
                let acc = random_row(&mut rng, n, 600);
                let w = random_row(&mut rng, n, 127);
                let rows: Vec<Vec<i16>> = (0..4).map(|_| random_row(&mut rng, n, 30_000)).collect();
                let expect_dot = screlu_dot_scalar(&acc, &w);
                let mut expect = vec![0; n];
                update_scalar(
                    &mut expect,
                    &acc,
                    &[&rows[0], &rows[1]],
                    &[&rows[2], &rows[3]],
                );
                for k in Kernel::available() {
                    assert_eq!(k.screlu_dot(&acc, &w), expect_dot, "{k:?} n={n}");
                    let mut out = vec![0; n];
                    k.update(&mut out, &acc, &[&rows[0], &rows[1]], &[&rows[2], &rows[3]]);
                    assert_eq!(out, expect, "{k:?} n={n}");
                    let mut in_place = acc.clone();
                    k.update_in_place(&mut in_place, &[&rows[0], &rows[1]], &[&rows[2], &rows[3]]);
                    assert_eq!(in_place, expect, "{k:?} n={n} in place");
                }
            }
        }
    }

    #[test]
    fn the_dot_product_clamps_to_zero_and_qa() {
        let acc = [-5i16, 0, 1, 255, 300, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        let w = [1i16; 16];
        let expect = 1 + 255 * 255 * 2 + (2..=12).map(|x| x * x).sum::<i32>();
        for k in Kernel::available() {
            assert_eq!(k.screlu_dot(&acc, &w), expect, "{k:?}");
        }
    }
}
