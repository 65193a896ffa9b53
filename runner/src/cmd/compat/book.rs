//! fastchess's opening order for `-openings … order=random`: so that `spar fastchess` plays
//! the openings fastchess plays for the same `-srand`, the personality puts the EPD book's
//! lines in fastchess's order (its Fisher–Yates shuffle over `std::mt19937_64` seeded with
//! `-srand`, rotated by `start=`, cut to `-rounds`) into a temporary book that spar reads
//! sequentially.

use std::path::Path;

use crate::error::{CliError, CliResult};

/// `std::mt19937_64`: the 64-bit Mersenne Twister, as C++'s standard library defines it.
pub(super) struct Mt19937_64 {
    state: [u64; 312],
    index: usize,
}

impl Mt19937_64 {
    const N: usize = 312;
    const M: usize = 156;
    const UPPER: u64 = !0 << 31;
    const LOWER: u64 = (1 << 31) - 1;

    /// Seeded as `std::mt19937_64::seed(seed)`.
    pub(super) fn new(seed: u64) -> Mt19937_64 {
        let mut state = [0u64; 312];
        state[0] = seed;
        for i in 1..Self::N {
            let prev = state[i - 1];
            state[i] = 6364136223846793005u64
                .wrapping_mul(prev ^ (prev >> 62))
                .wrapping_add(i as u64);
        }
        Mt19937_64 {
            state,
            index: Self::N,
        }
    }

    fn twist(&mut self) {
        for i in 0..Self::N {
            let x = (self.state[i] & Self::UPPER) | (self.state[(i + 1) % Self::N] & Self::LOWER);
            let mut xa = x >> 1;
            if x & 1 != 0 {
                xa ^= 0xB502_6F5A_A966_19E9;
            }
            self.state[i] = self.state[(i + Self::M) % Self::N] ^ xa;
        }
        self.index = 0;
    }

    /// The next number, as `operator()`.
    pub(super) fn next_u64(&mut self) -> u64 {
        if self.index >= Self::N {
            self.twist();
        }
        let mut y = self.state[self.index];
        self.index += 1;
        y ^= (y >> 29) & 0x5555_5555_5555_5555;
        y ^= (y << 17) & 0x71D6_7FFF_EDA6_0000;
        y ^= (y << 37) & 0xFFF7_EEE0_0000_0000;
        y ^ (y >> 43)
    }
}

/// The indices of `n` openings in fastchess's order for `seed`, `start` (1-based) and
/// `rounds`: shuffled (`j = i + rand % (n − i)`), rotated left by `start − 1`, cut to
/// `rounds`.
pub(super) fn fastchess_order(n: usize, seed: u64, start: usize, rounds: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = Mt19937_64::new(seed);
    let mut i = 0;
    while i + 2 <= n {
        let j = i + (rng.next_u64() % (n - i) as u64) as usize;
        order.swap(i, j);
        i += 1;
    }
    if n > 0 {
        order.rotate_left(start.saturating_sub(1) % n);
    }
    order.truncate(rounds);
    order
}

/// A temporary book, removed when dropped.
pub struct TemporaryBook {
    _dir: tempfile::TempDir,
}

/// Rewrites the `--book FILE … order=random …` words of a fastchess translation into a
/// temporary EPD book in fastchess's order, read sequentially (same file name, so that the
/// reports name the book as fastchess does). Only EPD books: a PGN book keeps spar's own
/// random order. `None` when there is nothing to rewrite.
pub fn fastchess_random_book(argv: &mut Vec<String>) -> CliResult<Option<TemporaryBook>> {
    let Some(at) = argv.iter().position(|w| w == "--book") else {
        return Ok(None);
    };
    let end = argv[at + 1..]
        .iter()
        .position(|w| w.starts_with("--"))
        .map_or(argv.len(), |p| at + 1 + p);
    let words = &argv[at + 1..end];
    let Some(file) = words.first().cloned() else {
        return Ok(None);
    };
    let value = |key: &str| words.iter().find_map(|w| w.strip_prefix(key));
    let epd = match value("format=") {
        Some(f) => f == "epd",
        None => file.ends_with(".epd"),
    };
    if value("order=") != Some("random") || !epd {
        return Ok(None);
    }
    let start: usize = value("start=").and_then(|s| s.parse().ok()).unwrap_or(1);
    let number_after = |flag: &str| -> Option<u64> {
        let i = argv.iter().position(|w| w == flag)?;
        argv.get(i + 1)?.parse().ok()
    };
    // Without -srand fastchess draws a seed; spar's is 1.
    let seed = number_after("--seed").unwrap_or(1);
    let rounds = number_after("--games").map_or(usize::MAX, |g| (g / 2) as usize);
    let text = std::fs::read_to_string(&file).map_err(|e| {
        CliError::usage(format!(
            "fastchess -openings file={file}: cannot read it ({e}): give an EPD book that exists"
        ))
    })?;
    // fastchess's EpdReader: every non-empty line (a trailing \r is not part of it).
    let lines: Vec<&str> = text
        .split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .filter(|l| !l.is_empty())
        .collect();
    if lines.is_empty() {
        // spar's own check says so, naming the file.
        return Ok(None);
    }
    let order = fastchess_order(lines.len(), seed, start, rounds);
    let dir = tempfile::Builder::new()
        .prefix("spar-fastchess-book")
        .tempdir()
        .map_err(|e| CliError::failure(format!("cannot make a temporary book: {e}")))?;
    let name = Path::new(&file).file_name().unwrap_or(file.as_ref());
    let path = dir.path().join(name);
    let mut out = String::new();
    for i in order {
        out.push_str(lines[i]);
        out.push('\n');
    }
    std::fs::write(&path, out).map_err(|e| {
        CliError::failure(format!(
            "cannot write the temporary book {}: {e}",
            path.display()
        ))
    })?;
    let mut book = vec![
        path.to_string_lossy().into_owned(),
        "format=epd".to_string(),
        "order=sequential".to_string(),
    ];
    // plies= does not apply to EPD; start= and the order are in the file now.
    book.extend(
        words
            .iter()
            .skip(1)
            .filter(|w| {
                !["format=", "order=", "start=", "plies="]
                    .iter()
                    .any(|k| w.starts_with(k))
            })
            .cloned(),
    );
    argv.splice(at + 1..end, book);
    Ok(Some(TemporaryBook { _dir: dir }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_64_is_the_standard_one() {
        // The C++ standard's check: the 10000th number of a default-seeded mt19937_64.
        let mut rng = Mt19937_64::new(5489);
        let mut x = 0;
        for _ in 0..10000 {
            x = rng.next_u64();
        }
        assert_eq!(x, 9981545732273789042);
    }

    #[test]
    fn the_order_is_a_rotated_cut_permutation() {
        let all = fastchess_order(50, 7, 1, usize::MAX);
        let mut sorted = all.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..50).collect::<Vec<_>>());
        assert_ne!(all, sorted);
        let rotated = fastchess_order(50, 7, 4, 10);
        assert_eq!(rotated, all[3..13].to_vec());
    }

    #[test]
    fn a_random_epd_book_becomes_a_sequential_one() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("b.epd");
        let lines: Vec<String> = (0..20).map(|i| format!("line {i}")).collect();
        std::fs::write(&file, lines.join("\r\n") + "\r\n\r\n").unwrap();
        let mut argv: Vec<String> = format!(
            "match --book {} order=random start=3 --seed 9 --games 8",
            file.display()
        )
        .split(' ')
        .map(String::from)
        .collect();
        let guard = fastchess_random_book(&mut argv)
            .unwrap()
            .expect("rewritten");
        assert_eq!(argv[3], "format=epd");
        assert_eq!(argv[4], "order=sequential");
        assert_eq!(argv[5], "--seed");
        let written = std::fs::read_to_string(&argv[2]).unwrap();
        let want: Vec<String> = fastchess_order(20, 9, 3, 4)
            .into_iter()
            .map(|i| format!("line {i}\n"))
            .collect();
        assert_eq!(written, want.concat());
        assert!(argv[2].ends_with("/b.epd"));
        drop(guard);
        assert!(!Path::new(&argv[2]).exists());
        // Sequential books and PGN books are left alone.
        let mut seq: Vec<String> = ["match", "--book", "x.epd", "order=sequential"]
            .map(String::from)
            .to_vec();
        assert!(fastchess_random_book(&mut seq).unwrap().is_none());
    }
}
