//! Golden tests of the fastchess and cutechess-cli personalities: `spar fastchess` (`spar
//! cutechess`) given the command lines a real fastchess 1.8.1 (cutechess-cli 1.5.1) was run
//! with (runner/tests/data/compat/*.args, spar's own engine as the UCI engine, node-limited,
//! sequential book) prints what the tool printed, line for line (*.stdout), and plays the
//! same games (*.pgn). README.md there says how the fixtures were made and what was
//! normalised.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::{ok, run_in};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compat")
}

/// The clock in fastchess's last line.
fn without_total_time(text: &str) -> String {
    text.lines()
        .map(|l| match l.strip_prefix("Total Time: ") {
            Some(rest) if rest.len() > 8 => format!("Total Time: HH:MM:SS{}", &rest[8..]),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// One game of a PGN: its tags, its SAN moves, and each move's `score/depth` comment.
#[derive(Debug, PartialEq)]
struct Game {
    tags: BTreeMap<String, String>,
    moves: Vec<String>,
    evals: Vec<Option<String>>,
}

fn games(text: &str) -> Vec<Game> {
    let mut out = Vec::new();
    for chunk in text.split("[Event ").skip(1) {
        let mut tags = BTreeMap::new();
        let mut movetext = String::new();
        for (i, line) in chunk.lines().enumerate() {
            let line = if i == 0 {
                format!("[Event {line}")
            } else {
                line.to_string()
            };
            if let Some(tag) = line.strip_prefix('[') {
                let (name, value) = tag.split_once(' ').unwrap();
                tags.insert(
                    name.to_string(),
                    value.trim_end_matches(']').trim_matches('"').to_string(),
                );
            } else {
                movetext.push_str(&line);
                movetext.push(' ');
            }
        }
        // Each move and the first word of the comment after it (`None`: no comment).
        let mut moves = Vec::new();
        let mut evals: Vec<Option<String>> = Vec::new();
        let mut rest = movetext.as_str();
        loop {
            let open = rest.find('{').unwrap_or(rest.len());
            for w in rest[..open].split_whitespace() {
                if !w.ends_with('.') && !["1-0", "0-1", "1/2-1/2", "*"].contains(&w) {
                    moves.push(w.to_string());
                    evals.push(None);
                }
            }
            if open == rest.len() {
                break;
            }
            let close = rest[open..].find('}').unwrap() + open;
            let comment = &rest[open + 1..close];
            if let Some(e) = evals.last_mut() {
                *e = Some(comment.split_whitespace().next().unwrap_or("").to_string());
            }
            rest = &rest[close + 1..];
        }
        out.push(Game { tags, moves, evals });
    }
    out
}

/// spar's `score/depth` comment in the tools' convention: mate scores count plies (`+M2`
/// moves is `+M3` plies, `-M1` is `-M2`), a zero score has no sign, a move without a score
/// is fastchess's `0.00/0` (cutechess, as spar, writes no comment there). (spar's own PGN
/// keeps its convention; README.md there.)
fn in_tool_words(eval: Option<&str>, cutechess: bool) -> Option<String> {
    // A move without a score: fastchess writes `0.00/0` (its empty score and depth).
    let Some(eval) = eval else {
        return (!cutechess).then(|| "0.00/0".to_string());
    };
    let Some((score, depth)) = eval.split_once('/') else {
        return Some(eval.to_string());
    };
    let score = match score.split_once('M') {
        Some((sign, n)) => {
            let n: u64 = n.parse().unwrap();
            let plies = if sign == "-" { 2 * n } else { 2 * n - 1 };
            format!("{sign}M{plies}")
        }
        None if score == "+0.00" || score == "-0.00" => "0.00".to_string(),
        None => score.to_string(),
    };
    Some(format!("{score}/{depth}"))
}

/// Runs the fixture's command line through `spar fastchess` or `spar cutechess` (by the
/// case's name) and compares its stdout and games with the tool's.
fn golden(case: &str) {
    let cutechess = case.starts_with("cutechess");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures().join("book.epd"), dir.path().join("book.epd")).unwrap();
    let args = std::fs::read_to_string(fixtures().join(format!("{case}.args")))
        .unwrap()
        .replace("{SPAR}", env!("CARGO_BIN_EXE_spar"));
    let mut argv: Vec<&str> = vec![if cutechess { "cutechess" } else { "fastchess" }];
    argv.extend(args.split_whitespace());
    argv.extend([
        "-pgnout",
        if cutechess {
            "games.pgn"
        } else {
            "file=games.pgn"
        },
    ]);
    let out = ok(&run_in(dir.path(), &argv));
    let want = std::fs::read_to_string(fixtures().join(format!("{case}.stdout"))).unwrap();
    let got = without_total_time(&out);
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) = (
        want.trim_end().lines().collect(),
        got.trim_end().lines().collect(),
    );
    for (i, (w, g)) in want_lines.iter().zip(&got_lines).enumerate() {
        assert_eq!(g, w, "{case}: stdout line {} differs\n{got}", i + 1);
    }
    assert_eq!(
        got_lines.len(),
        want_lines.len(),
        "{case}: stdout has {} lines, fastchess printed {}\n{got}",
        got_lines.len(),
        want_lines.len()
    );

    // The same games: colours, opening, moves, the engines' scores and depths, results.
    let want = games(&std::fs::read_to_string(fixtures().join(format!("{case}.pgn"))).unwrap());
    let got = games(&std::fs::read_to_string(dir.path().join("games.pgn")).unwrap());
    assert_eq!(got.len(), want.len(), "{case}: games");
    assert!(!want.is_empty());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        // cutechess writes no Termination for a game that ended by the rules, and restarts
        // the FEN's clocks (`0 1`): the FEN up to the en-passant square is compared there.
        let tags: &[&str] = if cutechess {
            &["White", "Black", "Result", "PlyCount"]
        } else {
            &[
                "White",
                "Black",
                "Result",
                "FEN",
                "SetUp",
                "PlyCount",
                "Termination",
            ]
        };
        for tag in tags {
            assert_eq!(
                g.tags.get(*tag),
                w.tags.get(*tag),
                "{case}: game {} tag {tag}",
                k + 1
            );
        }
        let fen = |g: &Game| {
            let f = g.tags.get("FEN").cloned().unwrap_or_default();
            let fields = if cutechess { 4 } else { 6 };
            f.split(' ').take(fields).collect::<Vec<_>>().join(" ")
        };
        assert_eq!(fen(g), fen(w), "{case}: game {} FEN", k + 1);
        assert_eq!(g.moves, w.moves, "{case}: game {} moves", k + 1);
        let evals: Vec<Option<String>> = g
            .evals
            .iter()
            .map(|e| in_tool_words(e.as_deref(), cutechess))
            .collect();
        assert_eq!(
            evals,
            w.evals,
            "{case}: game {} score/depth comments",
            k + 1
        );
    }
}

#[test]
fn a_match_prints_what_fastchess_prints() {
    golden("fastchess_match");
}

#[test]
fn an_sprt_prints_what_fastchess_prints() {
    golden("fastchess_sprt");
}

#[test]
fn a_random_book_plays_fastchess_openings() {
    // -openings order=random start=3 -srand 42: fastchess's shuffle, so its games.
    golden("fastchess_random");
}

#[test]
fn cutechess_output_prints_what_fastchess_prints() {
    golden("fastchess_cutechess_output");
}

#[test]
fn a_cutechess_match_prints_what_cutechess_prints() {
    golden("cutechess_match");
}

#[test]
fn a_cutechess_sprt_prints_what_cutechess_prints() {
    golden("cutechess_sprt");
}

#[test]
fn cutechess_adjudications_print_what_cutechess_prints() {
    golden("cutechess_adjudication");
}

#[test]
fn the_fixtures_are_fastchess_output() {
    // The fixtures are what a real fastchess printed: its Event tag, its summary lines.
    let pgn = std::fs::read_to_string(fixtures().join("fastchess_match.pgn")).unwrap();
    assert!(pgn.starts_with("[Event \"Fastchess Tournament\"]"));
    let out = std::fs::read_to_string(fixtures().join("fastchess_sprt.stdout")).unwrap();
    assert!(out.contains("SPRT ([0.00, 200.00]) completed - "), "{out}");
    assert!(out.ends_with("Total Time: HH:MM:SS (hours:minutes:seconds)\n\n"));
}
