//! Text of a user's file quoted in an error message, and where it is withheld.
//!
//! The command line quotes the line or token at fault (`b.epd:3: bad FEN … in 'LINE'`): the
//! person who runs spar reads their own files. A message that leaves for the network (the
//! check of a run's words in `spar serve`) must name the file and what is wrong, never the
//! file's bytes: the server may read files the sender may not. So every message that
//! interpolates text read from a file does it through [`Quoted`] (or asks
//! [`is_withheld`]), and the server runs its check inside [`withheld`]: there a quote
//! renders as [`MARK`] and the typed errors ([`crate::book::BookError`],
//! [`crate::params_file::ParamsFileError`]) render their network form.
//!
//! [`scrub`] is a second, independent layer: it removes from a message every run of at
//! least a few bytes that also occurs in a given file.

use std::cell::Cell;
use std::fmt;

/// What a withheld quote renders as.
pub const MARK: &str = "…";

thread_local! {
    /// How many [`withheld`] scopes this thread is inside.
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// Leaves one [`withheld`] scope when dropped (also when the closure panics).
struct Scope;

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// Runs `f` with every quote of a file's text that this thread formats withheld: the
/// messages `f` makes name files, lines and what is expected, never the files' bytes.
pub fn withheld<T>(f: impl FnOnce() -> T) -> T {
    DEPTH.with(|d| d.set(d.get() + 1));
    let _scope = Scope;
    f()
}

/// Whether this thread is inside [`withheld`].
pub fn is_withheld() -> bool {
    DEPTH.with(|d| d.get() > 0)
}

/// Text read from a user's file, as a message shows it: as it is, or [`MARK`] inside
/// [`withheld`]. The caller writes the quotes around it (`'{}'`).
#[derive(Clone, Copy, Debug)]
pub struct Quoted<'a>(pub &'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if is_withheld() {
            f.write_str(MARK)
        } else {
            f.write_str(self.0)
        }
    }
}

/// `full()` outside [`withheld`], `safe` inside it: for a message built from another
/// crate's error that quotes a file's text (a FEN's field, a parameter's name).
pub fn unless_withheld(full: impl FnOnce() -> String, safe: impl FnOnce() -> String) -> String {
    if is_withheld() {
        safe()
    } else {
        full()
    }
}

/// A FEN's problem as a message says it: `bad FEN FIELD: REASON` (the reason quotes the
/// field's text), or inside [`withheld`] `bad FEN FIELD: expected …` from the field alone.
pub fn fen_error(e: &engine::position::FenError) -> String {
    unless_withheld(
        || e.to_string(),
        || format!("bad FEN {}: expected {}", e.field, fen_expected(e.field)),
    )
}

/// What a FEN's field must hold (for [`fen_error`]'s network form).
pub fn fen_expected(field: &str) -> &'static str {
    match field {
        "placement" => {
            "8 ranks separated by '/' of piece letters (PNBRQK, pnbrqk) and empty-square \
             counts, one king a side, pawns off the first and eighth ranks"
        }
        "side to move" => "'w' or 'b'",
        "castling" => "KQkq, Shredder files like HFhf, or '-', each with its king and rook",
        "en passant" => "a square a pawn just skipped, like e3, or '-'",
        "halfmove clock" | "fullmove number" => "a number",
        _ => "4 to 6 space-separated fields describing a legal position",
    }
}

/// The shortest run of a message's bytes that [`scrub`] removes when a file has it.
pub const MIN_RUN: usize = 8;

/// Streams `file` (at most `limit` bytes) and returns `message` with every run of at least
/// [`MIN_RUN`] bytes that also occurs in those bytes replaced by [`MARK`] (widened to whole
/// characters). A message that shares no such run is returned as it is.
pub fn scrub(message: &str, mut file: impl std::io::Read, limit: u64) -> String {
    let bytes = message.as_bytes();
    if bytes.len() < MIN_RUN {
        return message.to_string();
    }
    // Each window of MIN_RUN bytes of the message as a number; a small bitmap of their
    // hashes lets most of the file's windows be passed over without a search.
    let windows: Vec<u64> = bytes.windows(MIN_RUN).map(word).collect();
    let mut sorted = windows.clone();
    sorted.sort_unstable();
    sorted.dedup();
    let mut bitmap = vec![0u64; 1 << 10];
    for w in &sorted {
        let h = slot(*w);
        bitmap[h >> 6] |= 1 << (h & 63);
    }
    let mut found = vec![false; windows.len()];
    let mut any = false;
    let mut rolling = 0u64;
    let mut seen = 0u64;
    let mut buf = vec![0u8; 1 << 16];
    while seen < limit {
        let n = match file.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n.min(usize::try_from(limit - seen).unwrap_or(usize::MAX)),
        };
        for &b in &buf[..n] {
            rolling = (rolling << 8) | u64::from(b);
            seen += 1;
            if seen < MIN_RUN as u64 {
                continue;
            }
            let h = slot(rolling);
            if bitmap[h >> 6] & (1 << (h & 63)) == 0 || sorted.binary_search(&rolling).is_err() {
                continue;
            }
            for (i, w) in windows.iter().enumerate() {
                if *w == rolling && !found[i] {
                    found[i] = true;
                    any = true;
                }
            }
        }
    }
    if !any {
        return message.to_string();
    }
    let mut hidden = vec![false; bytes.len()];
    for (i, _) in found.iter().enumerate().filter(|(_, f)| **f) {
        hidden[i..i + MIN_RUN].iter_mut().for_each(|h| *h = true);
    }
    // Whole characters: a character any of whose bytes is hidden is hidden.
    let mut out = String::with_capacity(message.len());
    let mut in_run = false;
    for (at, c) in message.char_indices() {
        if hidden[at..at + c.len_utf8()].iter().any(|h| *h) {
            if !in_run {
                out.push_str(MARK);
                in_run = true;
            }
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// [`MIN_RUN`] bytes as one number (big-endian, as the rolling window of [`scrub`]).
fn word(w: &[u8]) -> u64 {
    w.iter().fold(0, |acc, &b| (acc << 8) | u64::from(b))
}

/// A window's place in [`scrub`]'s bitmap of 2^16 bits.
fn slot(w: u64) -> usize {
    (w.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 48) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quote_is_shown_outside_the_scope_and_withheld_inside() {
        let line = || format!("b.epd:3: bad FEN in '{}'", Quoted("SECRET line"));
        assert_eq!(line(), "b.epd:3: bad FEN in 'SECRET line'");
        assert!(!is_withheld());
        let inside = withheld(|| {
            assert!(is_withheld());
            // Nested scopes end with the outer one only.
            withheld(|| ());
            assert!(is_withheld());
            line()
        });
        assert_eq!(inside, "b.epd:3: bad FEN in '…'");
        assert!(!is_withheld());
        assert_eq!(
            withheld(|| unless_withheld(|| "full".into(), || "safe".into())),
            "safe"
        );
        assert_eq!(unless_withheld(|| "full".into(), || "safe".into()), "full");
    }

    #[test]
    fn a_fen_error_names_its_field_and_what_it_expects_when_withheld() {
        let e = engine::position::Position::from_fen("4k3/8/8/8/8/8/8/4K3 SECRET - -")
            .err()
            .unwrap();
        assert_eq!(fen_error(&e), e.to_string());
        assert!(fen_error(&e).contains("SECRET"), "{e}");
        let safe = withheld(|| fen_error(&e));
        assert_eq!(safe, "bad FEN side to move: expected 'w' or 'b'");
    }

    #[test]
    fn the_scope_ends_when_the_closure_panics() {
        let r = std::panic::catch_unwind(|| withheld(|| panic!("boom")));
        assert!(r.is_err());
        assert!(!is_withheld());
    }

    #[test]
    fn the_scope_is_this_threads_only() {
        withheld(|| {
            let other = std::thread::spawn(is_withheld).join().unwrap();
            assert!(!other);
        });
    }

    #[test]
    fn scrub_removes_every_run_the_file_has_and_keeps_the_rest() {
        let file = b"first line\nroot:x:0:0:SECRET-1234:/root\nlast\n";
        let m = "/etc/f:2: bad FEN placement in 'root:x:0:0:SECRET-1234:/root' (fix it)";
        let s = scrub(m, &file[..], u64::MAX);
        assert_eq!(s, "/etc/f:2: bad FEN placement in '…' (fix it)");
        // Runs shorter than MIN_RUN stay: 'line' and 'last' are common words.
        assert_eq!(
            scrub("a line, the last", &file[..], u64::MAX),
            "a line, the last"
        );
        // Two runs apart, and one at each end of the message.
        let s = scrub("SECRET-1234 and first line", &file[..], u64::MAX);
        assert_eq!(s, "… and …");
        // Only the first `limit` bytes are read.
        assert_eq!(scrub("SECRET-1234", &file[..], 12), "SECRET-1234");
        // Whole characters: a hidden run that ends inside a character hides it.
        let s = scrub("é:SECRET-1234é", "SECRET-1234\u{e9}".as_bytes(), u64::MAX);
        assert_eq!(s, "é:…");
        assert_eq!(scrub("short", &b"short"[..], u64::MAX), "short");
    }

    #[test]
    fn scrub_finds_a_run_that_crosses_the_reads_buffers() {
        let mut file = vec![b'.'; (1 << 16) - 4];
        file.extend_from_slice(b"SECRET-WXYZ-42");
        let s = scrub("x SECRET-WXYZ-42 y", &file[..], u64::MAX);
        assert_eq!(s, "x … y");
    }
}
