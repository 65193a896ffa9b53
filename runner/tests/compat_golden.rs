//! Golden tests of the fastchess and cutechess-cli personalities: `spar fastchess` (`spar
//! cutechess`) given the command lines a real fastchess 1.8.1 (cutechess-cli 1.5.1) was run
//! with (runner/tests/data/compat/*.args, spar's own engine as the UCI engine, node-limited,
//! sequential book) prints what the tool printed, line for line (*.stdout), and plays the
//! same games (*.pgn). README.md there says how the fixtures were made and what was
//! normalised.

mod common;

use std::path::{Path, PathBuf};

use common::{ok, run_in};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compat")
}

/// The net the fixtures' engine plays with (`{NET}` in the args): the generation-1 net that
/// was spar's embedded one when the tools made the fixtures (README.md there).
fn net() -> String {
    fixtures().join("gen1.nnue").to_string_lossy().into_owned()
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

/// One game of a PGN: its tag lines in order and its movetext as words (the line breaks
/// are left out: where the tools break a line depends on the length of each move's
/// measured time, which differs from run to run).
#[derive(Debug, PartialEq)]
struct Game {
    tags: Vec<String>,
    movetext: Vec<String>,
}

/// The clock in a PGN, as regen.sh normalises the fixtures: the `Date`, `GameStartTime`,
/// `GameEndTime` and `GameDuration` values become `?`, each move's measured time (`0.003s`,
/// cutechess's `0.12s`, `1s`) `?s`.
fn without_clock(text: &str) -> Vec<Game> {
    let mut out = Vec::new();
    for chunk in text
        .split("\n[Event ")
        .map(|c| c.trim_start_matches("[Event "))
    {
        if chunk.trim().is_empty() {
            continue;
        }
        let mut tags = Vec::new();
        let mut movetext = Vec::new();
        for (i, line) in chunk.lines().enumerate() {
            let line = if i == 0 {
                format!("[Event {line}")
            } else {
                line.to_string()
            };
            if let Some(tag) = line.strip_prefix('[') {
                let name = tag.split(' ').next().unwrap_or("");
                tags.push(
                    if ["Date", "GameStartTime", "GameEndTime", "GameDuration"].contains(&name) {
                        format!("[{name} \"?\"]")
                    } else {
                        line
                    },
                );
            } else {
                for w in line.split_whitespace() {
                    let bare = w.trim_end_matches([',', '}']);
                    let number = bare.strip_suffix('s').unwrap_or("");
                    let is_time = !number.is_empty()
                        && number.chars().all(|c| c.is_ascii_digit() || c == '.')
                        && number.starts_with(|c: char| c.is_ascii_digit());
                    movetext.push(if is_time {
                        format!("?s{}", &w[bare.len()..])
                    } else {
                        w.to_string()
                    });
                }
            }
        }
        out.push(Game { tags, movetext });
    }
    out
}

/// Runs the fixture's command line through `spar fastchess` or `spar cutechess` (by the
/// case's name) and compares its stdout and games with the tool's.
fn golden(case: &str) {
    let cutechess = case.starts_with("cutechess");
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures().join("book.epd"), dir.path().join("book.epd")).unwrap();
    let args = std::fs::read_to_string(fixtures().join(format!("{case}.args")))
        .unwrap()
        .replace("{SPAR}", env!("CARGO_BIN_EXE_spar"))
        .replace("{NET}", &net());
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

    // The same games in the tool's PGN: its tags in its order, its move comments (scores,
    // mates in plies, depths, the end's reason), everything but the clock.
    let want_text = std::fs::read_to_string(fixtures().join(format!("{case}.pgn"))).unwrap();
    let got_text = std::fs::read_to_string(dir.path().join("games.pgn")).unwrap();
    let (want, got) = (without_clock(&want_text), without_clock(&got_text));
    assert_eq!(got.len(), want.len(), "{case}: games");
    assert!(!want.is_empty());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.tags, w.tags, "{case}: game {} tags", k + 1);
        for (i, (gw, ww)) in g.movetext.iter().zip(&w.movetext).enumerate() {
            assert_eq!(
                gw,
                ww,
                "{case}: game {} movetext word {} differs\n{}\n{}",
                k + 1,
                i + 1,
                g.movetext.join(" "),
                w.movetext.join(" ")
            );
        }
        assert_eq!(
            g.movetext.len(),
            w.movetext.len(),
            "{case}: game {} movetext length",
            k + 1
        );
    }
    // The layout: a blank line after the tags, lines of at most 80 columns, a blank line
    // after each game.
    assert!(got_text.ends_with("\n\n") && !got_text.ends_with("\n\n\n"));
    assert!(
        got_text.lines().all(|l| l.len() <= 80),
        "{case}: a line over 80 columns"
    );
    assert_eq!(
        got_text.matches("]\n\n").count(),
        want.len(),
        "{case}: a blank line after each game's tags"
    );
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

#[test]
fn fastchess_nodes_and_seldepth_add_n_and_sd_to_each_comment() {
    // `-pgnout nodes=true seldepth=true`: fastchess's `n=` and `sd=` after the time, before
    // the end's reason (pgn_builder.cpp's createComment).
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures().join("book.epd"), dir.path().join("book.epd")).unwrap();
    let args = std::fs::read_to_string(fixtures().join("fastchess_match.args"))
        .unwrap()
        .replace("{SPAR}", env!("CARGO_BIN_EXE_spar"))
        .replace("{NET}", &net())
        .replace("-rounds 8", "-rounds 1");
    for (file, on) in [("plain.pgn", "false"), ("both.pgn", "true")] {
        let mut argv: Vec<String> = vec!["fastchess".into()];
        argv.extend(args.split_whitespace().map(String::from));
        argv.extend([
            "-pgnout".into(),
            format!("file={file}"),
            format!("nodes={on}"),
            format!("seldepth={on}"),
        ]);
        ok(&run_in(dir.path(), &argv));
    }
    let comments = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.path().join(file)).unwrap();
        text.split('{')
            .skip(1)
            .map(|c| c[..c.find('}').unwrap()].replace('\n', " "))
            .collect()
    };
    let (plain, both) = (comments("plain.pgn"), comments("both.pgn"));
    assert_eq!(plain.len(), both.len());
    assert!(!plain.is_empty());
    let number = |s: &str| -> (u64, String) {
        let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
        assert!(!digits.is_empty(), "{s}");
        (digits.parse().unwrap(), s[digits.len()..].to_string())
    };
    for (p, b) in plain.iter().zip(&both) {
        assert!(!p.contains("n=") && !p.contains("sd="), "{p}");
        // `+0.17/5 0.003s, n=372, sd=7[, White mates]`: the same score/depth, then n=, sd=.
        let (head, rest) = b.split_once(", n=").unwrap_or_else(|| panic!("{b}"));
        assert_eq!(head.split(' ').next(), p.split(' ').next(), "{b} vs {p}");
        let (nodes, rest) = number(rest);
        let rest = rest.strip_prefix(", sd=").unwrap_or_else(|| panic!("{b}"));
        let (seldepth, rest) = number(rest);
        let depth: u64 = head.split(['/', ' ']).nth(1).unwrap().parse().unwrap();
        // spar's engine reports its selective depth, at least its depth, with its nodes
        // (fastchess's `0.00/0, n=0, sd=0` for a move without a score).
        assert!((nodes > 0 || depth == 0) && seldepth >= depth, "{b}");
        assert_eq!(
            rest.trim_start_matches(", "),
            p.split_once(", ").map_or("", |(_, why)| why),
            "{b} vs {p}"
        );
    }
}

#[test]
fn spar_match_keeps_its_own_pgn() {
    // The personalities' PGN is theirs alone: `spar match` writes spar's (its Event and
    // Round tags, n= in each comment, mate scores in moves).
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(fixtures().join("book.epd"), dir.path().join("book.epd")).unwrap();
    let net = format!("option.EvalFile={}", net());
    ok(&run_in(
        dir.path(),
        &[
            "match",
            "--engine",
            "name=dev",
            "option.rfp_margin=20",
            "--engine",
            "name=base",
            "--each",
            "nodes=400",
            &net,
            // The search the fixtures were played with (see the fixtures' README).
            "option.corr_weight=0",
            "--book",
            "book.epd",
            "order=sequential",
            "--games",
            "2",
            "--concurrency",
            "1",
            "--pgnout",
            "spar.pgn",
        ],
    ));
    let text = std::fs::read_to_string(dir.path().join("spar.pgn")).unwrap();
    assert!(text.starts_with("[Event \"spar match\"]"), "{text}");
    assert!(text.contains("[Round \"1.1\"]"), "{text}");
    assert!(!text.contains("GameStartTime"), "{text}");
    // The fixture's first game ends with the engine's mate in 2, in 1: `+M3`, `+M1` in
    // fastchess's words, `+M2`, `+M1` in spar's.
    assert!(text.contains("{+M2/8 "), "{text}");
    assert!(text.contains(", n="), "{text}");
}
