//! The cutechess-cli personality: `spar cutechess …` and spar under a `cutechess*` program
//! name run cutechess-cli's command line as `spar match`/`sprt` and print cutechess-cli's
//! lines (its enginematch.cpp and tournament.cpp formats; docs/compat.md).

mod common;
mod personality;

use common::{argv, ok, run, run_in};

/// The results of the games of a PGN, in order.
fn results(pgn: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(pgn)
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("[Result \""))
        .map(|r| r.trim_end_matches("\"]").to_string())
        .collect()
}

#[test]
fn a_cutechess_line_prints_cutechess_lines_for_the_games_spar_match_plays() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&run_in(
        dir.path(),
        &argv(
            "cutechess -engine name=dev option.rfp_margin=120 -engine name=base \
             -each proto=uci tc=inf nodes=300 -games 2 -rounds 3 -repeat -srand 7 \
             -concurrency 2 -pgnout cc.pgn fi",
        ),
    ));
    ok(&run_in(
        dir.path(),
        &argv(
            "match --engine name=dev option.rfp_margin=120 --engine name=base --each nodes=300 \
             --games 6 --seed 7 --concurrency 2 --pgnout sp.pgn --json sp.json --no-recover",
        ),
    ));
    let games = results(&dir.path().join("cc.pgn"));
    assert_eq!(games, results(&dir.path().join("sp.pgn")));
    assert_eq!(games.len(), 6);
    let lines: Vec<&str> = out.lines().collect();
    // Per game: Started, Finished, then the running score of the first engine.
    let (mut w, mut l, mut d) = (0, 0, 0);
    for (k, result) in games.iter().enumerate() {
        let n = k + 1;
        let (white, black) = if k % 2 == 0 {
            ("dev", "base")
        } else {
            ("base", "dev")
        };
        assert_eq!(
            lines[3 * k],
            format!("Started game {n} of 6 ({white} vs {black})")
        );
        assert!(
            lines[3 * k + 1].starts_with(&format!(
                "Finished game {n} ({white} vs {black}): {result} {{"
            )),
            "{}",
            lines[3 * k + 1]
        );
        let dev_white = k % 2 == 0;
        match (result.as_str(), dev_white) {
            ("1-0", true) | ("0-1", false) => w += 1,
            ("1/2-1/2", _) => d += 1,
            _ => l += 1,
        }
        let score = (2 * w + d) as f64 / (2 * n) as f64;
        assert_eq!(
            lines[3 * k + 2],
            format!("Score of dev vs base: {w} - {l} - {d}  [{score:.3}] {n}")
        );
    }
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("sp.json")).unwrap())
            .unwrap();
    assert_eq!(
        (json["wins"].as_u64(), json["losses"].as_u64()),
        (Some(w), Some(l))
    );
    // Then cutechess's two-player results, its outcomes per player, and the last line.
    let rest = &lines[18..];
    assert!(rest[0].starts_with("...      dev playing White: "), "{out}");
    assert!(rest[1].starts_with("...      dev playing Black: "), "{out}");
    assert!(rest[2].starts_with("...      White vs Black: "), "{out}");
    assert!(rest[3].starts_with("Elo difference: "), "{out}");
    assert!(
        rest[3].contains(", LOS: ") && rest[3].ends_with(" %"),
        "{out}"
    );
    // cutechess prints its SPRT line even without -sprt: its null test.
    assert_eq!(rest[4], "SPRT: llr 0 (0.0%), lbound -inf, ubound inf");
    assert_eq!(rest[5], "");
    assert_eq!(rest[6], "Player: dev");
    assert!(rest.contains(&"Player: base"), "{out}");
    assert_eq!(rest.last(), Some(&"Finished match"));
    // Each outcome line is `   "REASON": N`, and each player's add up to the games.
    let counts: Vec<u64> = rest
        .iter()
        .filter_map(|l| l.strip_prefix("   \""))
        .map(|l| l.rsplit(": ").next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(counts.iter().sum::<u64>(), 12, "{out}");
}

#[test]
fn an_sprt_prints_cutechess_results_every_rating_interval() {
    let out = ok(&run(&argv(
        "cutechess -engine name=a -engine name=b -each nodes=200 -games 4 -repeat \
         -ratinginterval 2 -outcomeinterval 4 -sprt elo0=0 elo1=10 alpha=0.05 beta=0.05",
    )));
    let elo = out
        .lines()
        .filter(|l| l.starts_with("Elo difference: "))
        .count();
    // After games 2 and 4; the end (4 games) prints none again.
    assert_eq!(elo, 2, "{out}");
    let sprt: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("SPRT: llr "))
        .collect();
    assert_eq!(sprt.len(), 2, "{out}");
    assert!(sprt[1].contains(", lbound -2.94, ubound 2.94"), "{out}");
    // The game runs as a match that cutechess's own test may stop.
    assert!(!out.contains("lbound -inf"), "{out}");
    assert_eq!(out.matches("Player: a").count(), 1, "{out}");
    assert!(out.ends_with("Finished match\n"), "{out}");
}

#[test]
fn maxmoves_is_cutechess_wording() {
    let line =
        "cutechess -engine name=a -engine name=b -each nodes=200 -games 2 -repeat -maxmoves 5";
    let finished = personality::finished_lines(line);
    assert_eq!(finished.len(), 2, "{finished:?}");
    for l in finished {
        assert!(
            l.ends_with(": 1/2-1/2 {Draw by adjudication: maximal game length}"),
            "{l}"
        );
    }
    let out = ok(&run(&argv(line)));
    assert!(
        out.contains("   \"Draw by adjudication: maximal game length\": 2"),
        "{out}"
    );
}

#[test]
fn a_symlink_named_cutechess_cli_speaks_cutechess() {
    let (line, o) = personality::through_symlink(
        "cutechess-cli",
        "-engine name=a -engine name=b -each nodes=200 -games 2 -rounds 2 -repeat",
    );
    assert!(line.starts_with("cutechess-cli 1.5.1 (spar "), "{line}");
    let out = ok(&o);
    assert!(out.contains("Score of a vs b: "), "{out}");
    assert!(out.contains("Started game 4 of 4 (b vs a)"), "{out}");
}

#[test]
fn refused_options_are_one_line_and_exit_2() {
    let two = "-engine name=a -engine name=b -each nodes=100";
    let extras = [
        "-games 10",
        "-games 3 -repeat",
        "-games 4 -repeat 4",
        "-games 2 -repeat -noswap",
        "-games 2 -repeat -reverse",
        "-games 2 -repeat -pgnout x.pgn min",
        "-games 2 -repeat -pgnout x.pgn everything",
        "-games 2 -repeat -epdout x.epd",
        "-games 2 -repeat -resultformat wide",
        "-games 2 -repeat -tournament knockout",
        "-games 2 -repeat -engines",
        "-games 2 -repeat -each book=b.bin",
        "-games 2 -repeat -engine name=c conf=x",
        "-games 2 -repeat -each whitepov",
        "-games 2 -repeat -variant atomic",
        "-games 2 -repeat -openings file=b.pgn policy=encounter",
        "-games 2 -repeat -sprt elo0=0 elo1=5 model=normalized",
        "-games 2 -repeat -output format=fastchess",
        "-games 2 -repeat -debug",
        "-games 2 -repeat -bogus",
        "-games 2 -repeat -wait 100",
        "-games 2 -repeat -concurrency 0",
        "-games 2 -repeat -concurrency -1",
    ];
    personality::all_refused("cutechess", two, &extras);
}

/// Issue 33: cutechess's `-sprt` is checked as `spar sprt` and `spar fastchess` check theirs
/// (it played with elo0 = elo1 before).
#[test]
fn sprt_bounds_are_checked_as_spar_sprt_checks_them() {
    personality::sprt_bounds_checked(
        "cutechess",
        "-engine name=a -engine name=b -each nodes=300 -games 2 -repeat",
    );
}

/// A misspelt option is answered with the option meant, exit 2.
#[test]
fn a_misspelt_option_names_the_one_meant() {
    let base = "cutechess -engine name=a -engine name=b -each nodes=100 -games 2 -repeat";
    for (typo, meant) in [
        ("-concurency 2", "-concurency; did you mean -concurrency?"),
        (
            "-outcomeintervall 2",
            "-outcomeintervall; did you mean -outcomeinterval?",
        ),
    ] {
        let o = run(&argv(&format!("{base} {typo}")));
        common::usage_error(&o, &format!("cutechess: unknown option {meant}"));
    }
}
