//! Property tests of every reader of outside input in `data`: EPD and PGN books, PGN games,
//! parameter files, the results CSV, viriformat and text training data, and the bounded
//! line reader under them. Arbitrary and mutated inputs give errors, never panics, hangs or
//! unbounded memory; what can be written reads back as written.
//!
//! Each property runs [`cases`] cases: 128 by default, so that the whole set takes seconds;
//! `PROPTEST_CASES=20000 cargo test --profile ci -p data --test properties` runs a long
//! campaign.

use std::io::BufReader;
use std::path::Path;

use data::book::{parse_epd, parse_pgn, BookOptions};
use data::pgn::{format_game, read_games, result_text, GameRecord, MoveInfo, MoveRecord};
use data::results::{parse_results, read_results, ResultRow, ResultsWriter};
use data::text::{read_all, LineReader};
use data::training::text::{format_line, parse_line, TextReader};
use data::training::viriformat::result_from_wdl_byte;
use data::training::viriformat::{decode_game, encode_game, GameReader};
use data::training::{ScoredMove, TrainingGame};
use engine::params::Params;
use engine::position::Position;
use engine::search::Score;
use engine::types::GameResult;
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
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

const STARTS: [&str; 4] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
];

/// A start position and the moves of a random playout from it.
fn playout(start: usize, choices: &[u16]) -> (Position, Vec<engine::types::Move>) {
    let start = Position::from_fen(STARTS[start % STARTS.len()]).unwrap();
    let mut pos = start.clone();
    let mut moves = Vec::new();
    for &c in choices {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let mv = legal.as_slice()[c as usize % legal.len()];
        moves.push(mv);
        pos.play_mut(mv);
    }
    (start, moves)
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    proptest::collection::vec(any::<u8>(), 0..max)
}

/// `text` with byte edits (replace, insert, delete) from an alphabet of the formats' syntax.
fn mutate(text: &str, edits: &[(u32, u8, u8)]) -> Vec<u8> {
    const ALPHABET: &[u8] =
        b" \n\r\t{}()[];$\"\\/.,|-=+#!?0123456789abcdefghxKQRBNPkqrbnpwO*%\xef\xbb\xbf\xff\x00";
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
    bytes
}

fn edits() -> impl Strategy<Value = Vec<(u32, u8, u8)>> {
    proptest::collection::vec((any::<u32>(), any::<u8>(), any::<u8>()), 1..6)
}

const EPD: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\r\n\
                   bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9 bm e4;\n";
const PGN: &str = "[Event \"x\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\n\
                   1. O-O {c} Kd7 (1... Ke7) $1 2. Rf2 ; x\nKe6 *\n";
const HEADER: &str =
    "pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n";

fn record(
    start: &Position,
    moves: &[engine::types::Move],
    r: u64,
    names: (String, String),
) -> GameRecord {
    let chess960 = start.is_chess960();
    GameRecord {
        white: names.0,
        black: names.1,
        result: [
            Some(GameResult::WhiteWins),
            Some(GameResult::BlackWins),
            Some(GameResult::Draw),
            None,
        ][r as usize % 4],
        start_fen: start.to_fen(),
        chess960,
        moves: moves
            .iter()
            .enumerate()
            .map(|(i, &mv)| {
                if i < 2 {
                    MoveRecord::book(mv)
                } else {
                    let x = r.rotate_left(i as u32);
                    MoveRecord::engine(
                        mv,
                        Some(MoveInfo {
                            score: match x % 5 {
                                0 => Score::Mate((x % 9) as i32 - 4),
                                _ => Score::Cp((x % 3001) as i32 - 1500),
                            },
                            depth: (x >> 8) as u32 % 50,
                            nodes: x >> 30,
                            time_ms: (x >> 16) % 10_000,
                        }),
                    )
                }
            })
            .collect(),
        ..GameRecord::default()
    }
}

/// A player name: printable text (quotes and backslashes included, which PGN escapes).
fn name() -> impl Strategy<Value = String> {
    "[ -~]{1,16}"
}

fn row() -> impl Strategy<Value = ResultRow> {
    (
        any::<(u64, u8, u64, u64)>(),
        ("[ -~]{0,12}", "\\PC{0,8}"),
        prop_oneof![Just("1-0"), Just("0-1"), Just("1/2-1/2"), Just("*")],
        "[a-z ]{0,12}",
        any::<(u32, u64, u64, u64)>(),
    )
        .prop_map(
            |(
                (pair, game, opening, seed),
                (white, black),
                result,
                termination,
                (plies, wn, bn, ms),
            )| {
                ResultRow {
                    pair,
                    game,
                    opening,
                    seed,
                    white,
                    black,
                    result: result.to_string(),
                    termination,
                    plies,
                    white_nodes: wn,
                    black_nodes: bn,
                    duration_ms: ms,
                }
            },
        )
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn books_of_arbitrary_or_mutated_text_never_panic(raw in bytes(400), e in edits()) {
        let opts = BookOptions::default();
        let text = String::from_utf8_lossy(&raw);
        let _ = parse_epd(&text, "a.epd", false);
        let _ = parse_pgn(&text, "a.pgn", &opts);
        let _ = read_games(&text);
        let epd = mutate(EPD, &e);
        let _ = parse_epd(&String::from_utf8_lossy(&epd), "m.epd", true);
        let pgn = mutate(PGN, &e);
        let _ = parse_pgn(&String::from_utf8_lossy(&pgn), "m.pgn", &opts);
        if let Ok(games) = read_games(&String::from_utf8_lossy(&pgn)) {
            for g in games {
                let _ = g.replay(None);
            }
        }
    }

    #[test]
    fn pgn_written_reads_back_as_written(
        start in 0usize..STARTS.len(),
        choices in proptest::collection::vec(any::<u16>(), 0..80),
        r in any::<u64>(),
        white in name(),
        black in name(),
    ) {
        let (start, moves) = playout(start, &choices);
        let game = record(&start, &moves, r, (white, black));
        let text = format_game(&game).unwrap();
        let games = read_games(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        prop_assert_eq!(games.len(), 1);
        let g = &games[0];
        // A blank name is written as PGN's "unknown", `?`.
        let shown = |n: &str| if n.trim().is_empty() { "?".to_string() } else { n.to_string() };
        prop_assert_eq!(g.tag("White").map(str::to_string), Some(shown(&game.white)));
        prop_assert_eq!(g.tag("Black").map(str::to_string), Some(shown(&game.black)));
        prop_assert_eq!(g.result.as_deref(), Some(result_text(game.result)));
        let (from, read) = g.replay(None).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
        prop_assert_eq!(&read, &moves, "{}", text);
        prop_assert_eq!(from.to_fen(), start.to_fen());
        // And as a book: the same start and moves.
        let opts = BookOptions::default();
        let book = parse_pgn(&text, "w.pgn", &opts).unwrap();
        prop_assert_eq!(book.len(), 1);
    }

    #[test]
    fn params_files_of_arbitrary_bytes_never_panic(raw in bytes(300), e in edits()) {
        let mut params = Params::defaults();
        let _ = data::params_file::parse(&raw[..], "a.txt", &mut params);
        let spec = &engine::params::specs()[0];
        let good = format!("{}, {}\n{}, int, 1, 0, 9, 1, 0.002\n", spec.name, spec.default, spec.name);
        let _ = data::params_file::parse(&mutate(&good, &e)[..], "m.txt", &mut params);
    }

    #[test]
    fn results_csv_of_arbitrary_or_mutated_text_never_panics(raw in bytes(300), e in edits()) {
        let _ = parse_results(&String::from_utf8_lossy(&raw), Path::new("a.csv"));
        let good = format!("{HEADER}0,0,1,2,a,b,1-0,normal,3,4,5,6\n");
        let _ = parse_results(&String::from_utf8_lossy(&mutate(&good, &e)), Path::new("m.csv"));
    }

    #[test]
    fn results_rows_read_back_as_written(rows in proptest::collection::vec(row(), 0..6)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let (mut w, old) = ResultsWriter::create_or_resume(&path, false).unwrap();
        prop_assert!(old.is_empty());
        for r in &rows {
            w.append(r).unwrap();
        }
        drop(w);
        prop_assert_eq!(&read_results(&path).unwrap(), &rows);
        let (_, resumed) = ResultsWriter::create_or_resume(&path, true).unwrap();
        prop_assert_eq!(&resumed, &rows);
    }

    #[test]
    fn viriformat_of_arbitrary_bytes_never_panics(raw in bytes(600)) {
        let mut n = 0;
        for game in GameReader::new(&raw[..]) {
            n += 1;
            // At most one game per 36 bytes (board and terminator), and it ends.
            prop_assert!(n <= raw.len() / 36 + 1);
            if game.is_err() {
                break;
            }
        }
        let _ = decode_game(&raw);
    }

    #[test]
    fn viriformat_games_read_back_as_written(
        start in 0usize..STARTS.len(),
        choices in proptest::collection::vec(any::<u16>(), 0..150),
        scores in proptest::collection::vec(any::<i16>(), 150),
        result in 0u8..3,
        e in edits(),
    ) {
        let (start, moves) = playout(start, &choices);
        let game = TrainingGame {
            start,
            moves: moves
                .iter()
                .zip(&scores)
                .map(|(&mv, &score)| ScoredMove { mv, score })
                .collect(),
            result: result_from_wdl_byte(result).unwrap(),
        };
        let mut bytes = Vec::new();
        encode_game(&game, &mut bytes);
        let back = decode_game(&bytes).unwrap_or_else(|e| panic!("{e:?}"));
        prop_assert_eq!(back, game);
        // Flipped bits give an error or a valid game, never a panic.
        let mut bad = bytes.clone();
        for &(at, _, c) in &e {
            let i = at as usize % bad.len();
            bad[i] ^= c;
        }
        let _ = decode_game(&bad);
        for g in GameReader::new(&bad[..]) {
            if g.is_err() {
                break;
            }
        }
    }

    #[test]
    fn text_training_of_arbitrary_bytes_never_panics(raw in bytes(400), e in edits()) {
        for p in TextReader::new(&raw[..]) {
            if p.is_err() {
                break;
            }
        }
        let good = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 31 | 0.5\n";
        let _ = parse_line(&String::from_utf8_lossy(&mutate(good, &e)));
    }

    #[test]
    fn text_training_lines_read_back_as_written(
        start in 0usize..STARTS.len(),
        choices in proptest::collection::vec(any::<u16>(), 0..100),
        score in any::<i16>(),
        result in 0u8..3,
    ) {
        let (start, moves) = playout(start, &choices);
        let mut pos = start;
        for m in moves {
            pos.play_mut(m);
        }
        let result = result_from_wdl_byte(result).unwrap();
        let line = format_line(&pos, score, result);
        let back = parse_line(&line).unwrap_or_else(|e| panic!("{line}: {e}"));
        prop_assert_eq!(back.score, score);
        prop_assert_eq!(back.result, result);
        prop_assert_eq!(back.position.to_fen(), pos.to_fen());
        let text = format!("\u{feff}{line}\r\n\n{line}\n");
        let read: Vec<_> = TextReader::new(text.as_bytes()).collect();
        prop_assert_eq!(read.len(), 2);
    }

    #[test]
    fn line_reader_returns_the_lines_of_text(lines in proptest::collection::vec("[^\r\n\u{feff}]{0,40}", 0..8)) {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        prop_assert_eq!(read_all(text.as_bytes(), "t").unwrap(), text.clone());
        let crlf = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        prop_assert_eq!(read_all(BufReader::with_capacity(3, crlf.as_bytes()), "t").unwrap(), text);
    }

    #[test]
    fn line_reader_bounds_every_line(raw in bytes(2000), max in 1usize..64) {
        let mut r = LineReader::new(BufReader::with_capacity(7, &raw[..]), "t").with_max_line(max);
        loop {
            match r.next_line() {
                Ok(Some(line)) => prop_assert!(line.len() <= max),
                Ok(None) => break,
                Err(e) => {
                    prop_assert!(e.line >= 1);
                    prop_assert!(r.next_line().unwrap().is_none());
                    break;
                }
            }
        }
        prop_assert!(r.offset() <= raw.len() as u64);
    }
}
