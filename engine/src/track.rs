//! `track!` instrumentation: what the search is doing, measured in self-play.
//!
//! Wrap any integer or `bool` expression in [`track!`](macro@crate::track) and it is returned
//! unchanged; with the cargo feature `track` every evaluation is also *recorded* at its
//! site. A site's statistics are its record count, exact sums of `x`, `|x|` and `x²`, the
//! minimum, the maximum and a histogram ([`Accumulator`]).
//!
//! ```
//! use engine::track;
//! let depth = 7;
//! let margin = track!("rfp/margin"; 75 * depth); // an explicit site name
//! let fired = track!(margin > 500); // named after the expression text: "margin > 500"
//! assert_eq!((margin, fired), (525, true));
//! ```
//!
//! # How recording works (feature `track`)
//!
//! * Each `track!` call declares one static [`Site`] in the [`TRACK_SITES`] distributed
//!   slice (linkme); its position in the slice is its index.
//! * A record goes into a **per-thread** table of accumulators indexed by site (no atomics,
//!   no locks, no allocation after the thread's first record).
//! * The thread's records belong to the *current variant* of the thread
//!   ([`set_variant`]), so builtin variants playing each other in one process get separate
//!   statistics. Switching variant, [`flush`], [`flush_counted`] and the end of the thread
//!   move the records into the process-wide registry, where [`snapshot`] reads them.
//! * Game boundaries are known to the runner only: [`end_game`] adds one game's per-site
//!   record counts and value sums, from which per-game statistics (and their variances, for
//!   significance tests) are computed.
//!
//! Without the feature, `track!(e)` is `e` (through an `#[inline(always)]` identity function)
//! and nothing is registered: the search costs exactly what it did before. The containers,
//! the histogram and the registry are compiled (and tested) either way.
//!
//! # Histogram buckets
//!
//! Buckets are fixed, so accumulators merge by adding counts. Magnitudes 0 to 63 get one
//! bucket each (exact); larger magnitudes get four buckets per power of two
//! (`[64, 80)`, `[80, 96)`, `[96, 112)`, `[112, 128)`, `[128, 160)`, …), up to `i64::MAX`.
//! Negative values mirror the positive side. See [`bucket_of`] and [`bucket_range`].

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::Mutex;

/// Whether this build records `track!` sites (the cargo feature `track`).
pub const ENABLED: bool = cfg!(feature = "track");

#[doc(hidden)]
pub use linkme;

/// One `track!` call in the source.
#[derive(Debug)]
pub struct Site {
    /// The explicit name (`track!("name"; e)`) or the expression's text.
    pub name: &'static str,
    /// Whether the name was given explicitly.
    pub named: bool,
    /// Source file of the call.
    pub file: &'static str,
    /// Source line of the call.
    pub line: u32,
}

impl Site {
    /// Position of this site in [`TRACK_SITES`].
    ///
    /// # Panics
    /// If the site is not an element of the slice (it always is when made by `track!`).
    #[inline(always)]
    pub fn index(&'static self) -> usize {
        let base = TRACK_SITES.as_ptr() as usize;
        let i = (self as *const Site as usize).wrapping_sub(base) / std::mem::size_of::<Site>();
        debug_assert!(i < TRACK_SITES.len() && std::ptr::eq(&TRACK_SITES[i], self));
        i
    }

    /// `file:line`.
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// Every `track!` site linked into the program (empty without the `track` feature, except
/// for sites declared with the internal always-on form in tests).
#[linkme::distributed_slice]
pub static TRACK_SITES: [Site];

/// Every registered site, in link order (the index order of the accumulator tables).
pub fn sites() -> &'static [Site] {
    &TRACK_SITES
}

/// Returns its argument: the expansion of `track!` without the `track` feature.
#[doc(hidden)]
#[inline(always)]
pub fn pass<T>(value: T) -> T {
    value
}

/// A value `track!` can record: integers (saturated to `i64`) and `bool` (0 or 1).
pub trait Trackable {
    /// The recorded value.
    fn track_value(&self) -> i64;

    /// Records the value at `site` in this thread's table.
    #[inline(always)]
    fn record_at(&self, site: &'static Site) {
        record(site, self.track_value());
    }
}

impl Trackable for bool {
    #[inline(always)]
    fn track_value(&self) -> i64 {
        *self as i64
    }

    #[inline(always)]
    fn record_at(&self, site: &'static Site) {
        record_flag(site, *self);
    }
}

macro_rules! trackable_lossless {
    ($($t:ty),*) => {$(
        impl Trackable for $t {
            #[inline(always)]
            fn track_value(&self) -> i64 {
                *self as i64
            }
        }
    )*};
}
trackable_lossless!(i8, i16, i32, i64, u8, u16, u32);

macro_rules! trackable_saturating {
    ($($t:ty),*) => {$(
        impl Trackable for $t {
            #[inline(always)]
            fn track_value(&self) -> i64 {
                i64::try_from(*self).unwrap_or(if *self > 0 as $t { i64::MAX } else { i64::MIN })
            }
        }
    )*};
}
trackable_saturating!(u64, usize, isize, i128, u128);

impl<T: Trackable + ?Sized> Trackable for &T {
    #[inline(always)]
    fn track_value(&self) -> i64 {
        (**self).track_value()
    }

    #[inline(always)]
    fn record_at(&self, site: &'static Site) {
        (**self).record_at(site);
    }
}

/// Records the value of an expression at a site and returns the value.
///
/// `track!(expr)` names the site after the expression's text; `track!("name"; expr)` names
/// it explicitly (a `/` groups sites in reports: `"rfp"`, `"rfp/margin"`). The expression may
/// be any integer type or `bool` (recorded as 0 or 1). Without the cargo feature `track` the
/// macro is the bare expression.
#[cfg(feature = "track")]
#[macro_export]
macro_rules! track {
    ($name:literal; $e:expr) => {
        $crate::__track_site!($name, true, $e)
    };
    ($e:expr) => {
        $crate::__track_site!(stringify!($e), false, $e)
    };
}

/// Records the value of an expression at a site and returns the value.
///
/// `track!(expr)` names the site after the expression's text; `track!("name"; expr)` names
/// it explicitly (a `/` groups sites in reports: `"rfp"`, `"rfp/margin"`). The expression may
/// be any integer type or `bool` (recorded as 0 or 1). Without the cargo feature `track` the
/// macro is the bare expression.
#[cfg(not(feature = "track"))]
#[macro_export]
macro_rules! track {
    ($name:literal; $e:expr) => {
        $crate::track::pass($e)
    };
    ($e:expr) => {
        $crate::track::pass($e)
    };
}

/// The recording form of `track!`, independent of the feature (used by `track!` with the
/// feature, and by tests).
#[doc(hidden)]
#[macro_export]
macro_rules! __track_site {
    ($name:expr, $named:expr, $e:expr) => {{
        #[$crate::track::linkme::distributed_slice($crate::track::TRACK_SITES)]
        #[linkme(crate = $crate::track::linkme)]
        static SITE: $crate::track::Site = $crate::track::Site {
            name: $name,
            named: $named,
            file: file!(),
            line: line!(),
        };
        let value = $e;
        $crate::track::Trackable::record_at(&value, &SITE);
        value
    }};
}

// ---------------------------------------------------------------------------------------
// Histogram buckets.

/// Magnitudes below this have one bucket each.
pub const EXACT: u64 = 64;
/// Buckets per power of two above [`EXACT`].
pub const SUB_BUCKETS: usize = 4;
const FIRST_OCTAVE: u32 = EXACT.trailing_zeros(); // 6
const LAST_OCTAVE: u32 = 62; // i64::MAX < 2^63
/// Buckets on one side, zero included.
const MAGNITUDES: usize = EXACT as usize + (LAST_OCTAVE - FIRST_OCTAVE + 1) as usize * SUB_BUCKETS;
/// Bucket index of the value 0.
pub const ZERO_BUCKET: usize = MAGNITUDES - 1;
/// Number of histogram buckets (negative side, zero, positive side).
pub const BUCKETS: usize = 2 * MAGNITUDES - 1;

#[inline(always)]
fn magnitude_class(a: u64) -> usize {
    if a < EXACT {
        a as usize
    } else {
        let octave = 63 - a.leading_zeros();
        let sub = (a >> (octave - 2)) & 3;
        EXACT as usize + (octave - FIRST_OCTAVE) as usize * SUB_BUCKETS + sub as usize
    }
}

/// The histogram bucket of a value; buckets are in value order.
///
/// ```
/// use engine::track::{bucket_of, bucket_range, ZERO_BUCKET};
/// assert_eq!(bucket_of(0), ZERO_BUCKET);
/// assert_eq!(bucket_range(bucket_of(63)), (63, 63));
/// assert_eq!(bucket_range(bucket_of(70)), (64, 79));
/// assert_eq!(bucket_range(bucket_of(-70)), (-79, -64));
/// ```
#[inline(always)]
pub fn bucket_of(x: i64) -> usize {
    // i64::MIN is counted with -i64::MAX.
    let m = magnitude_class(x.unsigned_abs().min(i64::MAX as u64));
    if x < 0 {
        ZERO_BUCKET - m
    } else {
        ZERO_BUCKET + m
    }
}

/// The smallest and largest value (inclusive) of a bucket. The lowest bucket also holds
/// `i64::MIN`, which it reports as its low end.
///
/// # Panics
/// If `bucket >= BUCKETS`.
pub fn bucket_range(bucket: usize) -> (i64, i64) {
    assert!(bucket < BUCKETS, "bucket {bucket} out of range");
    let (m, negative) = if bucket >= ZERO_BUCKET {
        (bucket - ZERO_BUCKET, false)
    } else {
        (ZERO_BUCKET - bucket, true)
    };
    let (lo, hi) = if (m as u64) < EXACT {
        (m as i64, m as i64)
    } else {
        let k = m - EXACT as usize;
        let octave = FIRST_OCTAVE + (k / SUB_BUCKETS) as u32;
        let width = 1u64 << (octave - 2);
        let lo = (1u64 << octave) + (k % SUB_BUCKETS) as u64 * width;
        (lo as i64, (lo + (width - 1)) as i64)
    };
    if negative {
        let low = if bucket == 0 { i64::MIN } else { -hi };
        (low, -lo)
    } else {
        (lo, hi)
    }
}

// ---------------------------------------------------------------------------------------
// Accumulators.

/// Statistics of one site: exact integer sums (so merging is exact and order-independent),
/// extremes and a histogram.
#[derive(Clone, PartialEq, Eq)]
pub struct Accumulator {
    count: u64,
    sum: i128,
    sum_abs: u128,
    sum_sq: u128,
    min: i64,
    max: i64,
    buckets: [u64; BUCKETS],
}

impl std::fmt::Debug for Accumulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accumulator")
            .field("count", &self.count)
            .field("sum", &self.sum)
            .field("sum_abs", &self.sum_abs)
            .field("sum_sq", &self.sum_sq)
            .field("min", &self.min)
            .field("max", &self.max)
            .field("buckets", &self.nonzero_buckets().collect::<Vec<_>>())
            .finish()
    }
}

impl Default for Accumulator {
    fn default() -> Self {
        Accumulator::new()
    }
}

impl Accumulator {
    /// No records.
    pub const fn new() -> Accumulator {
        Accumulator {
            count: 0,
            sum: 0,
            sum_abs: 0,
            sum_sq: 0,
            min: i64::MAX,
            max: i64::MIN,
            buckets: [0; BUCKETS],
        }
    }

    /// Rebuilds an accumulator from its parts (a statistics file). Checks that the bucket
    /// counts add up to `count` and that the extremes fall in occupied buckets.
    pub fn from_parts(
        count: u64,
        sum: i128,
        sum_abs: u128,
        sum_sq: u128,
        min: i64,
        max: i64,
        buckets: &[(usize, u64)],
    ) -> Result<Accumulator, String> {
        let mut a = Accumulator::new();
        for &(b, n) in buckets {
            if b >= BUCKETS {
                return Err(format!("histogram bucket {b} out of range (0..{BUCKETS})"));
            }
            a.buckets[b] += n;
        }
        let total: u64 = a.buckets.iter().sum();
        if total != count {
            return Err(format!(
                "histogram counts add up to {total}, but the record count is {count}"
            ));
        }
        if count > 0
            && (min > max || a.buckets[bucket_of(min)] == 0 || a.buckets[bucket_of(max)] == 0)
        {
            return Err(format!("min {min} / max {max} do not match the histogram"));
        }
        a.count = count;
        a.sum = sum;
        a.sum_abs = sum_abs;
        a.sum_sq = sum_sq;
        if count > 0 {
            a.min = min;
            a.max = max;
        }
        Ok(a)
    }

    /// Adds one record.
    #[inline(always)]
    pub fn add(&mut self, x: i64) {
        // Wrapping arithmetic: no overflow checks in the hot path (a u64 count cannot
        // overflow in practice; the 128-bit sums cannot for |x| < 2^32 and < 2^64 records).
        let a = x.unsigned_abs();
        self.count = self.count.wrapping_add(1);
        self.sum = self.sum.wrapping_add(x as i128);
        self.sum_abs = self.sum_abs.wrapping_add(a as u128);
        self.sum_sq = self.sum_sq.wrapping_add(a as u128 * a as u128);
        self.min = self.min.min(x);
        self.max = self.max.max(x);
        let b = &mut self.buckets[bucket_of(x)];
        *b = b.wrapping_add(1);
    }

    /// Adds `zeros` records of 0 and `ones` records of 1 (how `bool` sites are recorded).
    pub fn add_flags(&mut self, zeros: u64, ones: u64) {
        if zeros > 0 {
            self.min = self.min.min(0);
            self.max = self.max.max(0);
        }
        if ones > 0 {
            self.min = self.min.min(1);
            self.max = self.max.max(1);
        }
        self.count += zeros + ones;
        self.sum += ones as i128;
        self.sum_abs += ones as u128;
        self.sum_sq += ones as u128;
        self.buckets[ZERO_BUCKET] += zeros;
        self.buckets[ZERO_BUCKET + 1] += ones;
    }

    /// Adds every record of `other` (exact: the result is what recording both streams into
    /// one accumulator gives).
    pub fn merge(&mut self, other: &Accumulator) {
        if other.count == 0 {
            return;
        }
        self.count += other.count;
        self.sum += other.sum;
        self.sum_abs += other.sum_abs;
        self.sum_sq = self.sum_sq.wrapping_add(other.sum_sq);
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        for (a, b) in self.buckets.iter_mut().zip(other.buckets.iter()) {
            *a += b;
        }
    }

    /// Forgets every record.
    pub fn clear(&mut self) {
        *self = Accumulator::new();
    }

    /// Number of records.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Σx.
    pub fn sum(&self) -> i128 {
        self.sum
    }

    /// Σ|x|.
    pub fn sum_abs(&self) -> u128 {
        self.sum_abs
    }

    /// Σx² (exact while it stays below 2¹²⁸).
    pub fn sum_sq(&self) -> u128 {
        self.sum_sq
    }

    /// Smallest record (`None` without records).
    pub fn min(&self) -> Option<i64> {
        (self.count > 0).then_some(self.min)
    }

    /// Largest record (`None` without records).
    pub fn max(&self) -> Option<i64> {
        (self.count > 0).then_some(self.max)
    }

    /// Histogram counts, indexed by bucket ([`bucket_range`]).
    pub fn buckets(&self) -> &[u64; BUCKETS] {
        &self.buckets
    }

    /// `(bucket, count)` of the occupied buckets, in value order.
    pub fn nonzero_buckets(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.buckets
            .iter()
            .enumerate()
            .filter(|(_, &n)| n > 0)
            .map(|(i, &n)| (i, n))
    }

    /// Mean of the records (NaN without records).
    pub fn mean(&self) -> f64 {
        self.sum as f64 / self.count as f64
    }

    /// Mean of the absolute values (NaN without records).
    pub fn mean_abs(&self) -> f64 {
        self.sum_abs as f64 / self.count as f64
    }

    /// Population variance Σ(x − μ)²/n, computed from the exact sums (exactly while
    /// n·Σx² fits in 128 bits). NaN without records.
    pub fn variance(&self) -> f64 {
        if self.count == 0 {
            return f64::NAN;
        }
        let n = self.count as u128;
        let s = self.sum.unsigned_abs();
        let exact = n
            .checked_mul(self.sum_sq)
            .zip(s.checked_mul(s))
            .and_then(|(a, b)| a.checked_sub(b));
        match exact {
            Some(num) => num as f64 / (n as f64 * n as f64),
            None => {
                let mean = self.mean();
                (self.sum_sq as f64 / self.count as f64 - mean * mean).max(0.0)
            }
        }
    }

    /// Population standard deviation (σ).
    pub fn stddev(&self) -> f64 {
        self.variance().sqrt()
    }
}

// ---------------------------------------------------------------------------------------
// Per-game sums.

/// Per-game sums of one site for one variant: over games g, the record count n_g and the
/// value sum s_g, as Σn, Σn², Σs, Σs², Σns (for the variance of per-game counts and of the
/// ratio estimate of the mean).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GameSums {
    /// Σ n_g.
    pub n: f64,
    /// Σ n_g².
    pub n2: f64,
    /// Σ s_g.
    pub s: f64,
    /// Σ s_g².
    pub s2: f64,
    /// Σ n_g·s_g.
    pub ns: f64,
}

impl GameSums {
    /// Adds one game with `n` records summing to `s`.
    pub fn add_game(&mut self, n: u64, s: i128) {
        let (n, s) = (n as f64, s as f64);
        self.n += n;
        self.n2 += n * n;
        self.s += s;
        self.s2 += s * s;
        self.ns += n * s;
    }

    /// Adds the sums of other games.
    pub fn merge(&mut self, other: &GameSums) {
        self.n += other.n;
        self.n2 += other.n2;
        self.s += other.s;
        self.s2 += other.s2;
        self.ns += other.ns;
    }
}

/// What one game contributed to each site: its record counts and value sums (the runner
/// keeps one per player, filled by [`flush_counted`] and emptied by [`end_game`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GamePart {
    counts: Vec<u64>,
    sums: Vec<i128>,
    moves: u64,
}

impl GamePart {
    /// An empty part.
    pub fn new() -> GamePart {
        GamePart::default()
    }

    /// Whether anything was searched since the last [`end_game`].
    pub fn is_empty(&self) -> bool {
        self.moves == 0
    }

    fn add(&mut self, index: usize, acc: &Accumulator) {
        if self.counts.len() <= index {
            self.counts.resize(index + 1, 0);
            self.sums.resize(index + 1, 0);
        }
        self.counts[index] += acc.count;
        self.sums[index] += acc.sum;
    }
}

// ---------------------------------------------------------------------------------------
// The per-thread table and the registry.

/// Everything recorded for one variant: one accumulator and one [`GameSums`] per site.
#[derive(Clone, Debug, Default)]
pub struct VariantTotals {
    /// Games reported by [`end_game`].
    pub games: u64,
    /// Accumulators by site index.
    pub sites: Vec<Accumulator>,
    /// Per-game sums by site index (sites without records in any game stay zero).
    pub per_game: Vec<GameSums>,
}

impl VariantTotals {
    fn grow(&mut self) {
        let n = TRACK_SITES.len();
        if self.sites.len() < n {
            self.sites.resize_with(n, Accumulator::new);
            self.per_game.resize(n, GameSums::default());
        }
    }
}

/// A site's records in a thread's table: `bool` records are only counted (two counters),
/// the rest go into a full accumulator.
#[derive(Clone)]
struct LocalSite {
    acc: Accumulator,
    flags: [u64; 2],
}

struct Local {
    variant: usize,
    sites: Vec<LocalSite>,
}

impl Local {
    #[cold]
    #[inline(never)]
    fn grow(&mut self) -> &mut [LocalSite] {
        let empty = LocalSite {
            acc: Accumulator::new(),
            flags: [0; 2],
        };
        self.sites.resize(TRACK_SITES.len(), empty);
        &mut self.sites
    }

    #[inline(always)]
    fn site(&mut self, index: usize) -> &mut LocalSite {
        if index < self.sites.len() {
            &mut self.sites[index]
        } else {
            &mut self.grow()[index]
        }
    }

    /// Moves the records into the registry under the current variant.
    fn flush(&mut self, mut part: Option<&mut GamePart>) {
        let dirty = |s: &LocalSite| s.acc.count > 0 || s.flags != [0, 0];
        if !self.sites.iter().any(dirty) {
            return;
        }
        let mut registry = lock_registry();
        let totals = registry.entry(self.variant).or_default();
        totals.grow();
        for (i, s) in self.sites.iter_mut().enumerate() {
            if dirty(s) {
                s.acc.add_flags(s.flags[0], s.flags[1]);
                totals.sites[i].merge(&s.acc);
                if let Some(p) = part.as_deref_mut() {
                    p.add(i, &s.acc);
                }
                s.acc.clear();
                s.flags = [0, 0];
            }
        }
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        self.flush(None);
    }
}

thread_local! {
    static LOCAL: RefCell<Local> = const {
        RefCell::new(Local { variant: 0, sites: Vec::new() })
    };
}

/// Runs `f` on this thread's table.
#[inline(always)]
fn with_local<R>(f: impl FnOnce(&mut Local) -> R) -> R {
    // A `RefCell`, not an `UnsafeCell`: its borrow-flag check per record was within the
    // noise of `spar bench` (see docs/report.md). Nothing passed here re-enters.
    LOCAL.with(|local| f(&mut local.borrow_mut()))
}

static REGISTRY: Mutex<BTreeMap<usize, VariantTotals>> = Mutex::new(BTreeMap::new());

fn lock_registry() -> std::sync::MutexGuard<'static, BTreeMap<usize, VariantTotals>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records `value` at `site` in this thread's table (called by `track!`).
#[inline(always)]
pub fn record(site: &'static Site, value: i64) {
    let index = site.index();
    with_local(|local| local.site(index).acc.add(value));
}

/// Records a `bool` at `site` (called by `track!`): one counter increment.
#[inline(always)]
pub fn record_flag(site: &'static Site, flag: bool) {
    let index = site.index();
    with_local(|local| local.site(index).flags[flag as usize] += 1);
}

/// Makes `variant` the owner of this thread's next records (the runner sets it before a
/// variant searches). Records made so far go to the previous variant first.
pub fn set_variant(variant: usize) {
    with_local(|local| {
        if local.variant != variant {
            local.flush(None);
            local.variant = variant;
        }
    });
}

/// The variant this thread records for (0 unless set).
pub fn current_variant() -> usize {
    with_local(|local| local.variant)
}

/// Moves this thread's records into the registry. Threads also do this when they end.
pub fn flush() {
    with_local(|local| local.flush(None));
}

/// Like [`flush`], and adds what was moved to `part` (one player's share of the game
/// being played).
pub fn flush_counted(part: &mut GamePart) {
    part.moves += 1;
    with_local(|local| local.flush(Some(part)));
}

/// Registers a finished game of `variant` with the per-site counts and sums collected in
/// `part`, and empties `part`.
pub fn end_game(variant: usize, part: &mut GamePart) {
    let mut registry = lock_registry();
    let totals = registry.entry(variant).or_default();
    totals.grow();
    totals.games += 1;
    for (i, g) in totals.per_game.iter_mut().enumerate() {
        let n = part.counts.get(i).copied().unwrap_or(0);
        let s = part.sums.get(i).copied().unwrap_or(0);
        g.add_game(n, s);
    }
    part.counts.iter_mut().for_each(|c| *c = 0);
    part.sums.iter_mut().for_each(|s| *s = 0);
    part.moves = 0;
}

/// A copy of everything flushed so far, by variant.
pub fn snapshot() -> BTreeMap<usize, VariantTotals> {
    let mut copy = lock_registry().clone();
    for totals in copy.values_mut() {
        totals.grow();
    }
    copy
}

/// Empties the registry (this thread's unflushed records too).
pub fn reset() {
    with_local(|local| {
        for s in &mut local.sites {
            s.acc.clear();
            s.flags = [0, 0];
        }
    });
    lock_registry().clear();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tests that touch the registry run one at a time.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn site_named(name: &str) -> usize {
        TRACK_SITES
            .iter()
            .position(|s| s.name == name)
            .unwrap_or_else(|| panic!("no site {name}"))
    }

    #[test]
    fn macro_passes_values_through() {
        // The feature-dependent form: the bare expression without `track`.
        let x = 5i32;
        assert_eq!(crate::track!(x * 3), 15);
        assert_eq!(crate::track!("zz/named"; x - 9), -4);
        assert!(crate::track!(x > 2));
        let big = u64::MAX;
        assert_eq!(crate::track!("zz/big"; big), u64::MAX);
    }

    fn recorded(x: i32, flag: bool) -> (i32, bool) {
        let a = crate::__track_site!(stringify!(x * 2 + 1), false, x * 2 + 1);
        let b = crate::__track_site!("zz_test/flag", true, flag);
        (a, b)
    }

    #[test]
    fn recording_sites_are_named_and_count_bools() {
        let _g = serial();
        reset();
        set_variant(3);
        for x in [1, -2, 70] {
            assert_eq!(recorded(x, x > 0), (x * 2 + 1, x > 0));
        }
        flush();
        let i = site_named("x * 2 + 1");
        let site = &TRACK_SITES[i];
        assert!(!site.named);
        assert!(site.file.ends_with("track.rs"), "{}", site.file);
        assert!(site.location().contains("track.rs:"));
        assert_eq!(site.index(), i);
        let snap = snapshot();
        let t = &snap[&3];
        let a = &t.sites[i];
        assert_eq!(a.count(), 3);
        // 3 + (-3) + 141.
        assert_eq!(a.sum(), 141);
        assert_eq!((a.min(), a.max()), (Some(-3), Some(141)));
        let f = &t.sites[site_named("zz_test/flag")];
        assert!(TRACK_SITES[site_named("zz_test/flag")].named);
        assert_eq!(
            (f.count(), f.sum(), f.min(), f.max()),
            (3, 2, Some(0), Some(1))
        );
        reset();
    }

    #[test]
    fn records_go_to_the_current_variant_and_games_are_counted() {
        let _g = serial();
        reset();
        let mut parts = [GamePart::new(), GamePart::new()];
        for game in 0..2 {
            for mv in 0..3 {
                for (v, part) in parts.iter_mut().enumerate() {
                    set_variant(v);
                    for _ in 0..(v + 1) * (game + 1) {
                        recorded(mv, true);
                    }
                    flush_counted(part);
                }
            }
            for (v, part) in parts.iter_mut().enumerate() {
                assert!(!part.is_empty());
                end_game(v, part);
                assert!(part.is_empty());
            }
        }
        // Records on another thread (a Lazy SMP helper, a UCI `go` thread) are flushed
        // when it ends.
        std::thread::spawn(|| {
            set_variant(1);
            recorded(100, false);
        })
        .join()
        .unwrap();
        let snap = snapshot();
        let i = site_named("x * 2 + 1");
        let (a, b) = (&snap[&0], &snap[&1]);
        assert_eq!((a.games, b.games), (2, 2));
        // Variant 0: 1 record per move in game 0, 2 in game 1; variant 1 twice that.
        assert_eq!(a.sites[i].count(), 3 + 6);
        assert_eq!(b.sites[i].count(), 6 + 12 + 1);
        let g = a.per_game[i];
        assert_eq!((g.n, g.n2), (9.0, 9.0 + 36.0));
        // Values 1, 3, 5 per move: game 0 sums 9, game 1 sums 18.
        assert_eq!(
            (g.s, g.s2, g.ns),
            (27.0, 81.0 + 324.0, 3.0 * 9.0 + 6.0 * 18.0)
        );
        reset();
        // (Other tests' search threads may flush into variant 0 at any time; variant 1 is ours.)
        assert!(!matches!(snapshot().get(&1), Some(t) if t.sites[i].count() > 0));
    }

    #[test]
    fn bucket_boundaries() {
        // Exact buckets for small magnitudes, in value order.
        for x in -63..=63 {
            assert_eq!(bucket_range(bucket_of(x)), (x, x), "{x}");
            assert_eq!(bucket_of(x), (ZERO_BUCKET as i64 + x) as usize);
        }
        // Four buckets per power of two above.
        let expect = [
            (64, (64, 79)),
            (79, (64, 79)),
            (80, (80, 95)),
            (127, (112, 127)),
            (128, (128, 159)),
            (159, (128, 159)),
            (160, (160, 191)),
            (5658, (5120, 6143)),
        ];
        for (x, range) in expect {
            assert_eq!(bucket_range(bucket_of(x)), range, "{x}");
            assert_eq!(bucket_range(bucket_of(-x)), (-range.1, -range.0), "-{x}");
        }
        assert_eq!(bucket_of(i64::MAX), BUCKETS - 1);
        assert_eq!(bucket_range(BUCKETS - 1).1, i64::MAX);
        assert_eq!(bucket_of(i64::MIN), 0);
        assert_eq!(bucket_of(-i64::MAX), 0);
        assert_eq!(bucket_range(0), (i64::MIN, -(1 << 62) - 3 * (1 << 60)));
        // Buckets tile the whole i64 range without gaps or overlaps.
        for b in 1..BUCKETS {
            assert_eq!(bucket_range(b - 1).1 + 1, bucket_range(b).0, "bucket {b}");
            let (lo, hi) = bucket_range(b);
            assert_eq!((bucket_of(lo), bucket_of(hi)), (b, b));
        }
    }

    /// A small deterministic generator (xorshift) with heavy tails.
    fn values(seed: u64, n: usize) -> Vec<i64> {
        let mut s = seed | 1;
        (0..n)
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                let shift = s % 40;
                ((s >> 24) as i64 >> shift) * if s & 1 == 0 { 1 } else { -1 }
            })
            .collect()
    }

    #[test]
    fn merged_accumulators_equal_one_accumulator_and_the_direct_formulas() {
        let xs = values(7, 10_000);
        let mut whole = Accumulator::new();
        xs.iter().for_each(|&x| whole.add(x));
        // Split unevenly over "threads" and merge in another order.
        let mut parts: Vec<Accumulator> = vec![Accumulator::new(); 5];
        for (k, &x) in xs.iter().enumerate() {
            parts[(k * k) % 5].add(x);
        }
        let mut merged = Accumulator::new();
        for p in parts.iter().rev() {
            merged.merge(p);
        }
        assert_eq!(merged, whole);

        let n = xs.len() as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        let mean_abs = xs.iter().map(|&x| x.unsigned_abs() as f64).sum::<f64>() / n;
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
        assert!(close(merged.mean(), mean), "{} {mean}", merged.mean());
        assert!(close(merged.variance(), var), "{} {var}", merged.variance());
        assert!(close(merged.mean_abs(), mean_abs));
        assert_eq!(merged.sum(), xs.iter().map(|&x| x as i128).sum::<i128>());
        assert_eq!(merged.min(), xs.iter().copied().min());
        assert_eq!(merged.max(), xs.iter().copied().max());
        for (b, n) in merged.nonzero_buckets() {
            let (lo, hi) = bucket_range(b);
            let direct = xs.iter().filter(|&&x| lo <= x && x <= hi).count() as u64;
            assert_eq!(n, direct, "bucket {lo}..={hi}");
        }
        assert_eq!(merged.buckets().iter().sum::<u64>(), merged.count());

        // Small exact case: 1, 2, 3, 4 → μ 2.5, σ² 1.25.
        let mut a = Accumulator::new();
        [1, 2, 3, 4].iter().for_each(|&x| a.add(x));
        assert_eq!((a.mean(), a.variance(), a.mean_abs()), (2.5, 1.25, 2.5));
        assert!(Accumulator::new().mean().is_nan());
        assert_eq!(Accumulator::new().min(), None);
    }

    #[test]
    fn accumulators_rebuild_from_their_parts() {
        let mut a = Accumulator::new();
        values(3, 500).iter().for_each(|&x| a.add(x));
        let buckets: Vec<(usize, u64)> = a.nonzero_buckets().collect();
        let b = Accumulator::from_parts(
            a.count(),
            a.sum(),
            a.sum_abs(),
            a.sum_sq(),
            a.min().unwrap(),
            a.max().unwrap(),
            &buckets,
        )
        .unwrap();
        assert_eq!(a, b);
        let err = Accumulator::from_parts(7, 0, 0, 0, 0, 0, &buckets).unwrap_err();
        assert!(err.contains("add up"), "{err}");
        assert!(Accumulator::from_parts(1, 0, 0, 0, 0, 0, &[(BUCKETS, 1)]).is_err());
        assert!(Accumulator::from_parts(1, 5, 5, 25, 5, 5, &[(bucket_of(4), 1)]).is_err());
    }
}
