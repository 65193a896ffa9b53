//! Property tests of the engine's parsers of outside input: FEN and UCI input lines.
//!
//! Each property runs [`cases`] cases: 128 by default, so that the whole set takes seconds;
//! `PROPTEST_CASES=20000 cargo test --profile ci -p engine --test properties` runs a long
//! campaign.

use std::io::Write;
use std::sync::{Arc, Mutex};

use engine::position::Position;
use proptest::prelude::*;

/// The number of cases per property: `PROPTEST_CASES` if set, else `default`.
fn cases(default: u32) -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(128),
        // Failures are reported with their minimal input; no files are written.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Start positions for random playouts: standard, Kiwipete, Chess960, en-passant and
/// promotion-rich positions.
const STARTS: [&str; 6] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
];

/// The position after `choices.len()` random legal moves (fewer if the game ends).
fn playout(start: usize, choices: &[u16]) -> Position {
    let mut pos = Position::from_fen(STARTS[start % STARTS.len()]).unwrap();
    for &c in choices {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        pos = pos.play(legal.as_slice()[c as usize % legal.len()]);
    }
    pos
}

/// `text` with byte edits (replace, insert, delete) from an alphabet that FENs are made of.
fn mutate(text: &str, edits: &[(u16, u8, u8)]) -> String {
    const ALPHABET: &[u8] = b" /-012345678\x009KQRBNPkqrbnpwxabcdefghHA\xff\xfe";
    let mut bytes = text.as_bytes().to_vec();
    for &(at, kind, c) in edits {
        let i = at as usize % (bytes.len() + 1);
        let c = ALPHABET[c as usize % ALPHABET.len()];
        match kind % 3 {
            0 if i < bytes.len() => bytes[i] = c,
            1 => bytes.insert(i, c),
            _ if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Checks what every accepted FEN must satisfy: it writes back to a FEN that reads as the
/// same position with a consistent key.
fn check_accepted(pos: &Position) {
    let fen = pos.to_fen();
    let again = Position::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
    assert_eq!(&again, pos, "{fen}");
    assert_eq!(again.to_fen(), fen);
    assert_eq!(again.key(), again.compute_key(), "{fen}");
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn fen_of_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..120)) {
        if let Ok(pos) = Position::from_fen(&String::from_utf8_lossy(&bytes)) {
            check_accepted(&pos);
        }
    }

    #[test]
    fn fen_of_arbitrary_text_never_panics(text in "\\PC{0,100}") {
        if let Ok(pos) = Position::from_fen(&text) {
            check_accepted(&pos);
        }
    }

    #[test]
    fn fen_round_trips_for_random_playouts(
        start in 0usize..STARTS.len(),
        choices in proptest::collection::vec(any::<u16>(), 0..120),
    ) {
        let pos = playout(start, &choices);
        let fen = pos.to_fen();
        let mut back = Position::from_fen(&fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        // A FEN does not say whether the game is Chess960 once castling rights are gone
        // (the variant comes from UCI_Chess960 or the book): only a 960 game may read as one.
        prop_assert!(!back.is_chess960() || pos.is_chess960(), "{}", fen);
        back.set_chess960(pos.is_chess960());
        prop_assert_eq!(&back, &pos, "{}", fen);
        prop_assert_eq!(back.key(), pos.key());
        prop_assert_eq!(back.to_fen(), fen);
    }

    #[test]
    fn mutated_fens_are_refused_or_consistent(
        start in 0usize..STARTS.len(),
        choices in proptest::collection::vec(any::<u16>(), 0..60),
        edits in proptest::collection::vec((any::<u16>(), any::<u8>(), any::<u8>()), 1..5),
    ) {
        let fen = mutate(&playout(start, &choices).to_fen(), &edits);
        if let Ok(pos) = Position::from_fen(&fen) {
            check_accepted(&pos);
            // Whatever was accepted can be searched: move generation must not break.
            let _ = engine::perft::perft(&pos, 2);
        }
    }
}

/// Collects what the UCI loop writes.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Words UCI input is made of, with bad values among them. Limits stay small so that every
/// session ends quickly: the input ends after the last line, which stops any search (and
/// `bench`, which is not interruptible, is left out).
const WORDS: &[&str] = &[
    "uci",
    "isready",
    "ucinewgame",
    "position",
    "startpos",
    "fen",
    "moves",
    "go",
    "stop",
    "ponderhit",
    "setoption",
    "name",
    "value",
    "Hash",
    "Threads",
    "UCI_Chess960",
    "Clear",
    "MultiPV",
    "rfp_margin",
    "true",
    "false",
    "depth",
    "nodes",
    "movetime",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "mate",
    "perft",
    "infinite",
    "ponder",
    "searchmoves",
    "e2e4",
    "e7e5",
    "g1f3",
    "e1g1",
    "a7a8q",
    "0000",
    "1",
    "2",
    "3",
    "-5",
    "0",
    "abc",
    "x",
    "99999999999999999999999",
    "d",
    "eval",
    "w",
    "b",
    "KQkq",
    "-",
    "8/8/8/8/8/8/8/8",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
    "4k3/8/8/8/8/8/8/4K2R",
    "\t",
    "\u{feff}",
];

/// One input line: words from [`WORDS`] and raw bytes (which may not be UTF-8).
fn line() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(|w| w.as_bytes().to_vec()),
        1 => proptest::collection::vec(any::<u8>(), 1..6),
    ];
    proptest::collection::vec(piece, 0..8).prop_map(|pieces| {
        let mut line = pieces.join(&b' ');
        // A raw piece may hold a newline: it splits the line, which is fine. `bench`
        // (possibly from raw bytes) would run a long uninterruptible search: drop it.
        while let Some(i) = line.windows(5).position(|w| w == b"bench") {
            line.drain(i..i + 5);
        }
        line.push(b'\n');
        line
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(64), ..config() })]

    #[test]
    fn uci_sessions_of_arbitrary_lines_end_without_panicking(
        lines in proptest::collection::vec(line(), 0..12),
    ) {
        let input: Vec<u8> = lines.concat();
        let out = Sink::default();
        engine::uci::run(&input[..], Box::new(out.clone()), None);
        let written = out.0.lock().unwrap().clone();
        // Every line the engine wrote is UTF-8 (it never echoes a bad byte raw).
        let written = String::from_utf8(written);
        prop_assert!(written.is_ok());
        let written = written.unwrap();
        // Every `go` but `go perft` gets exactly one bestmove (the end of the input stops
        // the search); `quit` ends the session early.
        let mut searches = 0;
        for line in input.split(|&b| b == b'\n') {
            let Ok(line) = std::str::from_utf8(line) else { continue };
            let mut words = line.split_whitespace();
            match words.next() {
                Some("quit") => break,
                Some("go") if !words.any(|w| w == "perft") => searches += 1,
                _ => {}
            }
        }
        let bestmoves = written.lines().filter(|l| l.starts_with("bestmove")).count();
        prop_assert_eq!(bestmoves, searches, "{}", written);
    }
}

/// The committed network's bytes, for the damaged-net properties.
fn embedded_net() -> &'static [u8] {
    engine::nnue::embedded::DEFAULT_NET_BYTES
}

proptest! {
    #![proptest_config(config())]

    /// A network file cut anywhere, with bytes flipped or garbage appended, or with its
    /// header's width and version set to anything: an error (one line) or a network that
    /// evaluates, never a panic or an allocation abort.
    #[test]
    fn damaged_network_files_are_errors_not_panics(
        cut in 0usize..200_000,
        flips in proptest::collection::vec((any::<usize>(), 1u8..), 0..4),
        tail in proptest::collection::vec(any::<u8>(), 0..16),
        hidden in any::<u32>(),
        version in any::<u32>(),
        header in 0u8..3,
    ) {
        let mut bytes = embedded_net().to_vec();
        match header {
            0 => bytes[12..16].copy_from_slice(&hidden.to_le_bytes()),
            1 => bytes[8..12].copy_from_slice(&version.to_le_bytes()),
            _ => {}
        }
        for (i, b) in &flips {
            let n = bytes.len();
            bytes[i % n] ^= b;
        }
        bytes.truncate(cut.min(bytes.len()));
        bytes.extend_from_slice(&tail);
        match engine::nnue::net::Net::from_bytes(&bytes) {
            Ok(net) => {
                let _ = net.evaluate(&Position::startpos());
            }
            Err(e) => prop_assert!(!e.contains('\n'), "{e}"),
        }
    }
}
