//! Display bins of a histogram: one bin per value for small ranges, powers of two (on each
//! side of zero) for wide ones. Display bins are unions of the engine's fixed buckets, so
//! every stored bucket falls into exactly one display bin.

use super::stats::Bucket;

/// Ranges of at most this many values are shown one bin per value.
pub const MAX_EXACT_BINS: i64 = 40;

/// One display bin, `lo..=hi`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bin {
    /// Smallest value.
    pub lo: i64,
    /// Largest value.
    pub hi: i64,
}

impl Bin {
    /// `v` or `lo..hi`.
    pub fn label(&self) -> String {
        if self.lo == self.hi {
            self.lo.to_string()
        } else {
            format!("{}..{}", self.lo, self.hi)
        }
    }
}

/// How the bins of a histogram were chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// One bin per value.
    Exact,
    /// 0, ±1, ±2..3, ±4..7, … (powers of two).
    Log2,
}

/// Magnitude class for the log scale: 0 → 0, 1 → 1, 2..3 → 2, 4..7 → 3, …
fn class(magnitude: u64) -> u32 {
    64 - magnitude.leading_zeros()
}

fn class_range(c: u32) -> (i64, i64) {
    match c {
        0 => (0, 0),
        63 => (1 << 62, i64::MAX),
        c => (1i64 << (c - 1), (1i64 << c) - 1),
    }
}

/// The display bins covering `min..=max` (the union of the variants' ranges).
pub fn bins(min: i64, max: i64) -> (Scale, Vec<Bin>) {
    let (min, max) = (min.min(max), max.max(min));
    let exact_region = min > -(engine::track::EXACT as i64) && max < engine::track::EXACT as i64;
    if exact_region && (max as i128 - min as i128) < MAX_EXACT_BINS as i128 {
        return (
            Scale::Exact,
            (min..=max).map(|v| Bin { lo: v, hi: v }).collect(),
        );
    }
    let mut out = Vec::new();
    if min < 0 {
        let top = class(min.unsigned_abs().min(i64::MAX as u64));
        let bottom = if max < 0 {
            class(max.unsigned_abs())
        } else {
            1
        };
        for c in (bottom..=top).rev() {
            let (lo, hi) = class_range(c);
            let low = if c == top && min == i64::MIN {
                i64::MIN
            } else {
                -hi
            };
            out.push(Bin { lo: low, hi: -lo });
        }
    }
    if max >= 0 {
        let bottom = if min > 0 { class(min as u64) } else { 0 };
        for c in bottom..=class(max as u64) {
            let (lo, hi) = class_range(c);
            out.push(Bin { lo, hi });
        }
    }
    (Scale::Log2, out)
}

/// Counts per display bin.
pub fn fill(bins: &[Bin], buckets: &[Bucket]) -> Vec<u64> {
    let mut counts = vec![0; bins.len()];
    for b in buckets {
        // Bins are sorted and disjoint; a bucket lies inside one bin.
        let i = bins.partition_point(|bin| bin.hi < b.lo);
        if let Some(c) = counts.get_mut(i) {
            *c += b.count;
        }
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_ranges_are_exact() {
        let (scale, b) = bins(1, 22);
        assert_eq!(scale, Scale::Exact);
        assert_eq!(b.len(), 22);
        assert_eq!((b[0].lo, b[21].hi), (1, 22));
        let (scale, b) = bins(0, 1);
        assert_eq!((scale, b.len()), (Scale::Exact, 2));
    }

    #[test]
    fn wide_ranges_are_powers_of_two_on_each_side() {
        let (scale, b) = bins(0, 5658);
        assert_eq!(scale, Scale::Log2);
        let labels: Vec<String> = b.iter().map(Bin::label).collect();
        assert_eq!(labels[..4], ["0", "1", "2..3", "4..7"]);
        assert_eq!(labels.last().unwrap(), "4096..8191");
        let (_, b) = bins(-300, 100);
        let labels: Vec<String> = b.iter().map(Bin::label).collect();
        assert_eq!(labels[0], "-511..-256");
        assert!(labels.contains(&"-1".to_string()) && labels.contains(&"0".to_string()));
        assert_eq!(labels.last().unwrap(), "64..127");
        let (_, b) = bins(-900, -70);
        assert_eq!((b[0].lo, b.last().unwrap().hi), (-1023, -64));
        let (_, b) = bins(i64::MIN, i64::MAX);
        assert_eq!((b[0].lo, b.last().unwrap().hi), (i64::MIN, i64::MAX));
        // Contiguous and sorted.
        for w in b.windows(2) {
            assert_eq!(w[0].hi + 1, w[1].lo);
        }
    }

    #[test]
    fn every_engine_bucket_falls_in_one_bin() {
        let (_, b) = bins(-5000, 5000);
        for i in 0..engine::track::BUCKETS {
            let (lo, hi) = engine::track::bucket_range(i);
            if lo < -5000 || hi > 5000 {
                continue;
            }
            let k = b.partition_point(|bin| bin.hi < lo);
            assert!(b[k].lo <= lo && hi <= b[k].hi, "bucket {lo}..{hi}");
        }
        let counts = fill(
            &b,
            &[
                Bucket {
                    lo: 64,
                    hi: 79,
                    count: 2,
                },
                Bucket {
                    lo: 112,
                    hi: 127,
                    count: 3,
                },
                Bucket {
                    lo: -1,
                    hi: -1,
                    count: 1,
                },
            ],
        );
        assert_eq!(counts.iter().sum::<u64>(), 6);
        let k = b.iter().position(|bin| bin.lo == 64).unwrap();
        assert_eq!(counts[k], 5);
    }
}
