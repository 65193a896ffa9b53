//! The transposition table: a shared cache of search results, written and read by every
//! search thread without locks.
//!
//! Layout: buckets of three entries in 32 aligned bytes. A bucket is four `AtomicU64`s:
//! three data words (move, score, static eval, depth, generation and bound of one entry
//! each) and one word holding the three entries' 16-bit tags. The bucket of a key is the high
//! half of the 128-bit product `num_buckets × key`, which works for any table size; the tag
//! is the key's low 16 bits.
//!
//! Every access is a relaxed atomic load or store, so there is no undefined behaviour and no
//! lock. Two threads writing the same bucket may leave a tag paired with another position's
//! data word; such a torn entry gives a wrong score or move at worst, which the search
//! tolerates: a TT move is always checked for legality before it is played.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use crate::types::Move;

use super::{MAX_PLY, TB_WIN_IN_MAX};

/// How a stored score relates to the true value.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    /// No information (an empty entry).
    None = 0,
    /// The true value is at most the score (fail low).
    Upper = 1,
    /// The true value is at least the score (fail high).
    Lower = 2,
    /// The score is exact.
    Exact = 3,
}

impl Bound {
    #[inline(always)]
    fn from_bits(b: u64) -> Bound {
        match b & 3 {
            1 => Bound::Upper,
            2 => Bound::Lower,
            3 => Bound::Exact,
            _ => Bound::None,
        }
    }
}

/// What a probe found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TtEntry {
    /// The best move found (may be garbage from a torn entry: check legality).
    pub mv: Option<Move>,
    /// The score, already adjusted to the probing ply for mates.
    pub score: i32,
    /// The static evaluation stored with it.
    pub eval: i32,
    /// The depth it was searched to (0 for quiescence).
    pub depth: i32,
    /// The bound type.
    pub bound: Bound,
    /// Whether the node was on a principal variation.
    pub pv: bool,
}

/// Depths are stored as `depth + DEPTH_OFFSET` in one byte; 0 marks an empty entry.
const DEPTH_OFFSET: i32 = 8;
/// Generations take the top five bits of the flags byte.
const GEN_BITS: u64 = 5;
const GEN_CYCLE: u8 = 1 << GEN_BITS;

#[repr(C, align(32))]
#[derive(Default)]
struct Bucket {
    data: [AtomicU64; 3],
    tags: AtomicU64,
}

const _: () = assert!(core::mem::size_of::<Bucket>() == 32);
const _: () = assert!(core::mem::align_of::<Bucket>() == 32);

/// Data word: move (bits 0–15), score (16–31), eval (32–47), depth byte (48–55),
/// flags byte (56–63: bound in bits 0–1, pv in bit 2, generation in bits 3–7).
#[inline(always)]
fn pack(
    mv: Option<Move>,
    score: i32,
    eval: i32,
    depth: i32,
    bound: Bound,
    pv: bool,
    gen: u8,
) -> u64 {
    let mv = mv.map_or(0, Move::bits) as u64;
    let score = score as i16 as u16 as u64;
    let eval = eval as i16 as u16 as u64;
    let depth = (depth + DEPTH_OFFSET).clamp(1, 255) as u64;
    let flags = bound as u64 | (pv as u64) << 2 | (gen as u64) << 3;
    mv | score << 16 | eval << 32 | depth << 48 | flags << 56
}

#[inline(always)]
fn word_depth(w: u64) -> i32 {
    ((w >> 48) & 0xFF) as i32 - DEPTH_OFFSET
}

#[inline(always)]
fn word_gen(w: u64) -> u8 {
    (w >> 59) as u8
}

/// Converts a score to its stored form: mate and tablebase scores count from this node,
/// not the root.
#[inline(always)]
pub fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score >= TB_WIN_IN_MAX {
        score + ply as i32
    } else if score <= -TB_WIN_IN_MAX {
        score - ply as i32
    } else {
        score
    }
}

/// Converts a stored score back to a score relative to the root at `ply`.
#[inline(always)]
pub fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score >= TB_WIN_IN_MAX {
        score - ply as i32
    } else if score <= -TB_WIN_IN_MAX {
        score + ply as i32
    } else {
        score
    }
}

/// A table size that could not be allocated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TtAllocError {
    /// The size asked for, in MiB.
    pub mb: usize,
}

impl std::fmt::Display for TtAllocError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cannot allocate a {} MiB hash table (not enough memory): choose a smaller Hash",
            self.mb
        )
    }
}

impl std::error::Error for TtAllocError {}

/// A zeroed table of `n` buckets, or `None` if the memory cannot be had.
fn allocate(n: usize) -> Option<Box<[Bucket]>> {
    let mut buckets: Vec<Bucket> = Vec::new();
    buckets.try_reserve_exact(n).ok()?;
    buckets.resize_with(n, Bucket::default);
    Some(buckets.into_boxed_slice())
}

/// Buckets in a table of `mb` MiB (0 is treated as 1; at least one bucket).
fn buckets_for(mb: usize) -> usize {
    let bytes = mb.max(1).saturating_mul(1024 * 1024);
    (bytes / core::mem::size_of::<Bucket>()).max(1)
}

/// The shared transposition table.
pub struct TranspositionTable {
    buckets: Box<[Bucket]>,
    generation: u8,
}

impl TranspositionTable {
    /// A table of `mb` MiB (at least one bucket), or an error if the memory cannot be had.
    pub fn try_new(mb: usize) -> Result<TranspositionTable, TtAllocError> {
        Ok(TranspositionTable {
            buckets: allocate(buckets_for(mb)).ok_or(TtAllocError { mb })?,
            generation: 0,
        })
    }

    /// A table of `mb` MiB (at least one bucket); if that much memory cannot be had, the
    /// largest power-of-two size below it that can (down to one bucket).
    pub fn new(mb: usize) -> TranspositionTable {
        let mut tt = TranspositionTable {
            buckets: Box::new([]),
            generation: 0,
        };
        tt.resize(mb);
        tt
    }

    /// Reallocates the table to `mb` MiB (any value; 0 is treated as 1). Contents are lost.
    /// If the memory cannot be had, the table keeps its old size (emptied) and the error says
    /// so; the process never aborts on a failed allocation.
    pub fn try_resize(&mut self, mb: usize) -> Result<(), TtAllocError> {
        let old = self.buckets.len();
        // Free the old table first so that peak memory is not old + new.
        self.buckets = Box::new([]);
        self.generation = 0;
        match allocate(buckets_for(mb)) {
            Some(b) => {
                self.buckets = b;
                Ok(())
            }
            None => {
                self.buckets = Self::largest_up_to(old.max(1));
                Err(TtAllocError { mb })
            }
        }
    }

    /// Like [`TranspositionTable::try_resize`], but on failure falls back to the largest
    /// power-of-two size below `mb` that can be had (at least one bucket) instead of the old
    /// size. Use `try_resize` where the caller can report the error.
    pub fn resize(&mut self, mb: usize) {
        self.buckets = Box::new([]);
        self.generation = 0;
        self.buckets = Self::largest_up_to(buckets_for(mb));
    }

    /// `n` buckets, or the largest smaller power of two that can be allocated.
    fn largest_up_to(mut n: usize) -> Box<[Bucket]> {
        loop {
            if let Some(b) = allocate(n) {
                return b;
            }
            if n <= 1 {
                // Not even one bucket: an empty slice would break `bucket()`, so keep
                // trying the smallest table (the allocator aborts only if 32 bytes fail).
                return (0..1).map(|_| Bucket::default()).collect();
            }
            n = (n / 2).next_power_of_two().min(n - 1).max(1);
        }
    }

    /// The number of buckets.
    pub fn num_buckets(&self) -> usize {
        self.buckets.len()
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.buckets.len() * core::mem::size_of::<Bucket>()
    }

    /// Empties every entry, using up to `threads` threads.
    pub fn clear(&mut self, threads: usize) {
        let threads = threads.clamp(1, 64);
        let chunk = self.buckets.len().div_ceil(threads).max(1);
        if threads == 1 || self.buckets.len() < 1 << 16 {
            self.buckets.iter().for_each(Bucket::clear);
        } else {
            std::thread::scope(|s| {
                for part in self.buckets.chunks(chunk) {
                    s.spawn(move || part.iter().for_each(Bucket::clear));
                }
            });
        }
        self.generation = 0;
    }

    /// Starts a new search: entries from earlier searches age.
    pub fn new_search(&mut self) {
        self.generation = (self.generation + 1) % GEN_CYCLE;
    }

    #[inline(always)]
    fn bucket(&self, key: u64) -> &Bucket {
        let i = ((key as u128 * self.buckets.len() as u128) >> 64) as usize;
        &self.buckets[i]
    }

    /// Hints the CPU to fetch the bucket of `key` (a plain load; no `unsafe`).
    #[inline(always)]
    pub fn prefetch(&self, key: u64) {
        let _ = self.bucket(key).tags.load(Relaxed);
    }

    /// Looks a position up; mate scores are adjusted to `ply`.
    #[inline]
    pub fn probe(&self, key: u64, ply: usize) -> Option<TtEntry> {
        let bucket = self.bucket(key);
        let tag = key as u16 as u64;
        let tags = bucket.tags.load(Relaxed);
        for i in 0..3 {
            if (tags >> (16 * i)) & 0xFFFF == tag {
                let w = bucket.data[i].load(Relaxed);
                if (w >> 48) & 0xFF == 0 {
                    continue;
                }
                return Some(TtEntry {
                    mv: Move::from_bits(w as u16),
                    score: score_from_tt((w >> 16) as u16 as i16 as i32, ply),
                    eval: (w >> 32) as u16 as i16 as i32,
                    depth: word_depth(w),
                    bound: Bound::from_bits(w >> 56),
                    pv: (w >> 58) & 1 != 0,
                });
            }
        }
        None
    }

    /// Stores a search result for `key` at `ply`, keeping an existing move when `mv` is
    /// `None`, and replacing the least valuable entry of the bucket (shallowest, oldest).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn store(
        &self,
        key: u64,
        ply: usize,
        mv: Option<Move>,
        score: i32,
        eval: i32,
        depth: i32,
        bound: Bound,
        pv: bool,
    ) {
        let bucket = self.bucket(key);
        let tag = key as u16 as u64;
        let tags = bucket.tags.load(Relaxed);
        let gen = self.generation;

        let mut slot = 0;
        let mut slot_value = i32::MAX;
        let mut old = 0u64;
        let mut same = false;
        for i in 0..3 {
            let w = bucket.data[i].load(Relaxed);
            if (tags >> (16 * i)) & 0xFFFF == tag && (w >> 48) & 0xFF != 0 {
                slot = i;
                old = w;
                same = true;
                break;
            }
            if (w >> 48) & 0xFF == 0 {
                // Empty entries are the best victims.
                if slot_value > i32::MIN {
                    slot = i;
                    slot_value = i32::MIN;
                    old = w;
                }
                continue;
            }
            let age = (gen.wrapping_sub(word_gen(w)) % GEN_CYCLE) as i32;
            let value = word_depth(w) - 8 * age;
            if value < slot_value {
                slot = i;
                slot_value = value;
                old = w;
            }
        }

        let mut mv = mv;
        if same {
            if mv.is_none() {
                mv = Move::from_bits(old as u16);
            }
            // Keep a deeper result of this search unless the new one is exact.
            if bound != Bound::Exact && word_gen(old) == gen && depth + 4 < word_depth(old) {
                if mv.map(Move::bits) != Move::from_bits(old as u16).map(Move::bits) {
                    let w = (old & !0xFFFF) | mv.map_or(0, Move::bits) as u64;
                    bucket.data[slot].store(w, Relaxed);
                }
                return;
            }
        }
        let score = score_to_tt(score, ply);
        bucket.data[slot].store(pack(mv, score, eval, depth, bound, pv, gen), Relaxed);
        if !same {
            let shift = 16 * slot;
            let new_tags = (tags & !(0xFFFF << shift)) | tag << shift;
            bucket.tags.store(new_tags, Relaxed);
        }
    }

    /// How full the table is, per mille, counting entries written by the current search
    /// in (up to) the first 1000 buckets.
    pub fn hashfull(&self) -> u32 {
        let n = self.buckets.len().min(1000);
        let mut used = 0;
        for b in &self.buckets[..n] {
            for d in &b.data {
                let w = d.load(Relaxed);
                if (w >> 48) & 0xFF != 0 && word_gen(w) == self.generation {
                    used += 1;
                }
            }
        }
        (used * 1000 / (3 * n)) as u32
    }
}

impl Bucket {
    fn clear(&self) {
        for d in &self.data {
            d.store(0, Relaxed);
        }
        self.tags.store(0, Relaxed);
    }
}

const _: () = assert!(MAX_PLY < 200);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::MATE;
    use crate::types::{MoveKind, Square};

    fn mv() -> Move {
        Move::new(Square::E2, Square::E4, MoveKind::DoublePush)
    }

    #[test]
    fn store_and_probe() {
        let mut tt = TranspositionTable::new(1);
        let key = 0x1234_5678_9ABC_DEF0;
        assert!(tt.probe(key, 0).is_none());
        tt.store(key, 0, Some(mv()), 37, -12, 7, Bound::Lower, true);
        let e = tt.probe(key, 0).unwrap();
        assert_eq!(e.mv, Some(mv()));
        assert_eq!(
            (e.score, e.eval, e.depth, e.bound, e.pv),
            (37, -12, 7, Bound::Lower, true)
        );
        // Quiescence depths (0 and below) survive the depth offset.
        tt.store(key, 0, None, -5, 3, 0, Bound::Upper, false);
        assert_eq!(
            tt.probe(key, 0).unwrap().depth,
            7,
            "a much shallower result does not replace"
        );
        tt.new_search();
        tt.store(key, 0, None, -5, 3, 0, Bound::Upper, false);
        let e = tt.probe(key, 0).unwrap();
        assert_eq!(
            (e.depth, e.bound, e.mv),
            (0, Bound::Upper, Some(mv())),
            "move kept"
        );
    }

    #[test]
    fn different_tag_same_bucket_misses() {
        let tt = TranspositionTable::new(1);
        let key = 0xABCD_0000_0000_1111u64;
        tt.store(key, 0, Some(mv()), 1, 1, 3, Bound::Exact, false);
        // Same high bits (same bucket), different low 16 bits: a different tag.
        assert!(tt.probe(key ^ 0x2, 0).is_none());
        // Same tag and bucket but different middle bits: an accepted alias (tag collision).
        let alias = key ^ 0x0000_0000_0100_0000;
        assert_eq!(tt.bucket(alias) as *const _, tt.bucket(key) as *const _);
        assert!(tt.probe(alias, 0).is_some());
        // Three more positions in the same bucket evict one entry, never corrupt others.
        for t in 1..=3u64 {
            tt.store(
                key ^ (t << 4),
                0,
                None,
                t as i32,
                0,
                10,
                Bound::Exact,
                false,
            );
        }
        for t in 1..=3u64 {
            assert_eq!(tt.probe(key ^ (t << 4), 0).unwrap().score, t as i32);
        }
    }

    #[test]
    fn impossible_sizes_are_errors_not_aborts() {
        // The advertised maximum (1 TiB) and beyond: no machine running the tests has it.
        // Under `vm.overcommit_memory = 1` the kernel promises any size and the zeroing
        // would run the machine out of memory: only sizes beyond the address space then.
        let always_overcommit = std::fs::read_to_string("/proc/sys/vm/overcommit_memory")
            .is_ok_and(|s| s.trim() == "1");
        let mut sizes = vec![usize::MAX / (1024 * 1024), usize::MAX];
        if !always_overcommit {
            sizes.push(crate::uci::MAX_HASH_MB);
        }
        for mb in sizes {
            let e = TranspositionTable::try_new(mb)
                .err()
                .expect("allocation must fail");
            assert_eq!(e.mb, mb);
            assert!(e.to_string().contains("choose a smaller Hash"), "{e}");
            let mut tt = TranspositionTable::new(2);
            assert!(tt.try_resize(mb).is_err());
            // The old size is kept and the table still works.
            assert_eq!(tt.size_bytes(), 2 * 1024 * 1024);
            tt.store(42, 0, None, 7, 0, 1, Bound::Exact, false);
            assert_eq!(tt.probe(42, 0).unwrap().score, 7);
        }
        assert!(TranspositionTable::try_new(1).is_ok());
    }

    #[test]
    fn any_size_resizes() {
        for mb in [1, 3, 17] {
            let mut tt = TranspositionTable::new(mb);
            assert_eq!(tt.size_bytes(), mb * 1024 * 1024);
            for i in 0..10_000u64 {
                let key = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
                tt.store(key, 0, None, i as i32 % 1000, 0, 1, Bound::Exact, false);
            }
            assert!(tt.hashfull() > 0);
            tt.resize(mb + 1);
            assert_eq!(tt.hashfull(), 0);
            tt.store(42, 0, None, 1, 0, 1, Bound::Exact, false);
            tt.clear(2);
            assert!(tt.probe(42, 0).is_none());
        }
    }

    #[test]
    fn mate_scores_adjust_by_ply() {
        let tt = TranspositionTable::new(1);
        // Mate in 3 plies found at ply 5 is mate in 8 plies from the root …
        let at_5 = MATE - 8;
        tt.store(99, 5, None, at_5, 0, 4, Bound::Exact, false);
        // … and mate in 3 plies from this node, so at ply 1 it is mate in 4 plies.
        assert_eq!(tt.probe(99, 1).unwrap().score, MATE - 4);
        tt.store(100, 6, None, -(MATE - 10), 0, 4, Bound::Exact, false);
        assert_eq!(tt.probe(100, 2).unwrap().score, -(MATE - 6));
        assert_eq!(score_from_tt(score_to_tt(123, 9), 1), 123);
    }

    #[test]
    fn aging_prefers_replacing_old_entries() {
        let mut tt = TranspositionTable::new(1);
        let key = 0x7777_0000_0000_0001u64;
        for t in 0..3u64 {
            tt.store(key ^ (t << 4), 0, None, 0, 0, 20, Bound::Exact, false);
        }
        tt.new_search();
        tt.new_search();
        tt.new_search();
        // Two fresh shallow entries both displace old deep ones, not each other.
        tt.store(key ^ (8 << 4), 0, None, 0, 0, 2, Bound::Exact, false);
        tt.store(key ^ (9 << 4), 0, None, 0, 0, 2, Bound::Exact, false);
        assert!(tt.probe(key ^ (8 << 4), 0).is_some());
        assert!(tt.probe(key ^ (9 << 4), 0).is_some());
    }
}
