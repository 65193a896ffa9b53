//! The fastchess personality: `spar fastchess …` and spar under a `fastchess*` program name
//! run fastchess's command line as the equivalent `spar match`/`sprt`.

mod common;
mod personality;

use common::{argv, ok, run, run_in, stdout};

/// The games of a PGN, whatever its layout (`spar match` writes its own PGN, `spar
/// fastchess` fastchess's: other tags, other comments): per game its `White`, `Black`,
/// `Result` and `FEN` tags and its SAN moves.
fn games_of(pgn: &std::path::Path) -> String {
    let text = std::fs::read_to_string(pgn).unwrap();
    let mut out = Vec::new();
    let mut in_comment = false;
    for line in text.lines() {
        if let Some(tag) = line.strip_prefix('[') {
            if ["White ", "Black ", "Result ", "FEN "]
                .iter()
                .any(|t| tag.starts_with(t))
            {
                out.push(line.to_string());
            }
            continue;
        }
        for w in line.split_whitespace() {
            let was_comment = in_comment || w.starts_with('{');
            in_comment = was_comment && !w.ends_with('}');
            let number = w.ends_with('.') && w.starts_with(|c: char| c.is_ascii_digit());
            if !was_comment && !number {
                out.push(w.to_string());
            }
        }
    }
    out.join(" ")
}

#[test]
fn a_fastchess_line_plays_what_the_spar_match_line_plays() {
    let dir = tempfile::tempdir().unwrap();
    let fc = ok(&run_in(
        dir.path(),
        &argv(
            "fastchess -engine name=dev option.rfp_margin=120 -engine name=base -each nodes=300 \
             -rounds 3 -games 2 -srand 7 -concurrency 2 -pgnout file=fc.pgn",
        ),
    ));
    ok(&run_in(
        dir.path(),
        &argv(
            "match --engine name=dev option.rfp_margin=120 --engine name=base --each nodes=300 \
             --games 6 --seed 7 --concurrency 2 --pgnout sp.pgn --json sp.json --no-recover",
        ),
    ));
    // fastchess's per-game lines, then its results block (every 10 pairs and at the end)
    // with spar match's counts.
    let is_game_line = |l: &&str| l.starts_with("Started game") || l.starts_with("Finished game");
    let lines: Vec<&str> = fc.lines().take_while(is_game_line).collect();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("sp.json")).unwrap())
            .unwrap();
    let games_line = format!(
        "Games: 6, Wins: {}, Losses: {}, Draws: {},",
        json["wins"], json["losses"], json["draws"]
    );
    assert!(fc.contains(&games_line), "{games_line}\n{fc}");
    let p = &json["ptnml"];
    let ptnml = format!(
        "Ptnml(0-2): [{}, {}, {}, {}, {}], WL/DD Ratio: ",
        p[0], p[1], p[2], p[3], p[4]
    );
    assert!(fc.contains(&ptnml), "{ptnml}\n{fc}");
    assert!(fc.contains("\nFinished match\nTotal Time: "), "{fc}");
    assert!(fc.ends_with(" (hours:minutes:seconds)\n\n"), "{fc}");
    let pgn = games_of(&dir.path().join("fc.pgn"));
    assert_eq!(pgn.matches("[Result ").count(), 6, "{pgn}");
    assert_eq!(pgn, games_of(&dir.path().join("sp.pgn")));
    // Game N of the lines is the PGN's N-th game: same players, same result.
    assert_eq!(lines.len(), 12, "{fc}");
    let results: Vec<&str> = pgn
        .split("[Result \"")
        .skip(1)
        .map(|r| &r[..r.find('"').unwrap()])
        .collect();
    for (k, result) in results.iter().enumerate() {
        let n = k + 1;
        let (white, black) = if k % 2 == 0 {
            ("dev", "base")
        } else {
            ("base", "dev")
        };
        assert_eq!(
            lines[2 * k],
            format!("Started game {n} of 6 ({white} vs {black})")
        );
        let finished = format!("Finished game {n} ({white} vs {black}): {result} {{");
        assert!(
            lines[2 * k + 1].starts_with(&finished),
            "{}",
            lines[2 * k + 1]
        );
        assert!(lines[2 * k + 1].ends_with('}'), "{}", lines[2 * k + 1]);
    }
}

#[test]
fn finished_lines_give_fastchess_reasons() {
    let finished = personality::finished_lines(
        "fastchess -engine name=a -engine name=b -each nodes=200 -rounds 2 -repeat -maxmoves 5",
    );
    assert_eq!(finished.len(), 4, "{finished:?}");
    for l in finished {
        assert!(l.ends_with(": 1/2-1/2 {Draw by adjudication}"), "{l}");
    }
}

#[test]
fn an_external_engine_by_cmd_and_args() {
    let spar = env!("CARGO_BIN_EXE_spar");
    let line = format!(
        "fastchess -engine cmd={spar} args=uci name=ext proto=uci -engine name=base \
         -each nodes=300 -rounds 1 -repeat -recover"
    );
    let out = ok(&run(&argv(&line)));
    assert!(out.contains("Games: 2,"), "{out}");
}

#[test]
fn a_symlink_named_fastchess_ob_speaks_fastchess() {
    let (line, o) = personality::through_symlink(
        "fastchess-ob",
        "-engine name=a -engine name=b -each nodes=200 -rounds 2 -repeat -concurrency 1",
    );
    assert!(line.starts_with("fastchess 1.8.1 "), "{line}");
    assert!(line.contains("spar"), "{line}");
    let out = ok(&o);
    assert!(out.contains("Games: 4,"), "{out}");
}

#[test]
fn version_under_the_subcommand() {
    for flag in ["-version", "--version"] {
        let out = ok(&run(&["fastchess", flag]));
        assert_eq!(out.lines().count(), 1, "{out}");
        assert!(out.starts_with("fastchess 1.8.1 (spar "), "{out}");
    }
}

#[test]
fn an_sprt_stops_at_rounds_times_games() {
    let out = ok(&run(&argv(
        "fastchess -engine name=a -engine name=b -each nodes=200 -rounds 2 -games 2 \
         -sprt elo0=0 elo1=5 alpha=0.05 beta=0.05 model=normalized -concurrency 1",
    )));
    assert!(out.contains("Games: 4,"), "{out}");
}

#[test]
fn refused_options_are_one_line_and_exit_2() {
    let two = "-engine name=a -engine name=b -each nodes=100";
    let extras = [
        "-games 1",
        "-games 3",
        "-noswap",
        "-reverse",
        "-wait 10",
        "-log file=x.log level=info",
        "-config file=c.json",
        "-epdout file=x.epd",
        "-report penta=false",
        "-event E",
        "-site S",
        "-seeds 1",
        "-tournament gauntlet",
        "-quick cmd=a cmd=b book=c",
        "-help",
        "-pgnout file=x.pgn nps=true",
        "-pgnout file=x.pgn notation=lan",
        "-pgnout nodes=false",
        "-openings file=b.epd policy=encounter",
        "-engine name=c restart=on",
        "-variant fischerandom",
        "-variant crazyhouse",
        "-tbpieces 5",
        "-sprt elo0=0 elo1=5 bogus=1",
        "-bogus",
        "-maxmoves many",
        "-sprt elo0=x elo1=5",
        "-engine name=c",
    ];
    personality::all_refused("fastchess", two, &extras);
}

/// Issue 33: fastchess's `-sprt` is checked as `spar sprt` checks its options (elo0 < elo1,
/// rates between 0 and 1, negative numbers read as values), and so is cutechess's.
#[test]
fn sprt_bounds_are_checked_as_spar_sprt_checks_them() {
    personality::sprt_bounds_checked(
        "fastchess",
        "-engine name=a -engine name=b -each nodes=300 -rounds 1",
    );
}

/// fastchess 1.8.1's `-concurrency 0` (all hardware threads) and `-concurrency -N` (all but
/// N, at least 1) play.
#[test]
fn concurrency_zero_and_minus_n_count_from_the_hardware_threads() {
    for n in ["0", "-1", "-1000"] {
        let out = ok(&run(&argv(&format!(
            "fastchess -engine name=a -engine name=b -each nodes=300 -rounds 2 -concurrency {n}"
        ))));
        assert!(out.contains("Games: 4,"), "-concurrency {n}: {out}");
    }
}

/// A misspelt option is answered with the option meant (as fastchess 1.8.2 does), exit 2.
#[test]
fn a_misspelt_option_names_the_one_meant() {
    let base = "fastchess -engine name=a -engine name=b -each nodes=100";
    for (typo, meant) in [
        ("-concurency 2", "-concurency; did you mean -concurrency?"),
        ("-round 2", "-round; did you mean -rounds?"),
        ("-pgnot file=x.pgn", "-pgnot; did you mean -pgnout?"),
    ] {
        let o = run(&argv(&format!("{base} {typo}")));
        common::usage_error(&o, &format!("fastchess: unknown option {meant}"));
        assert!(stdout(&o).is_empty());
    }
    let o = run(&argv(&format!("{base} -zzzzzz")));
    common::usage_error(&o, "unknown option -zzzzzz (see docs/compat.md)");
}

/// What fastchess 1.8.1 and 1.8.2 have that spar does not do: each refused with its reason
/// (docs/compat.md), exit 2, before any game.
#[test]
fn options_of_newer_fastchess_are_refused_with_their_reason() {
    let base = "fastchess -engine name=a -engine name=b -each nodes=100";
    for (extra, why) in [
        (
            "-strict",
            "-strict is not supported by spar: it is fastchess 1.8.2's",
        ),
        ("-check-mate-pvs", "spar does not check the mate PVs"),
        ("-pgnout file=x.pgn append=false", "append=false"),
        ("-pgnout nodes=true", "needs file=NAME"),
        ("-epdout file=x.epd", "spar writes no EPD"),
        ("-crc32 pgn=true", "no CRC-32"),
        ("-ping-ms 100", "--stall-timeout"),
    ] {
        let o = run(&argv(&format!("{base} {extra}")));
        common::usage_error(&o, why);
        assert!(stdout(&o).is_empty(), "{extra}");
    }
}

/// fastchess 1.8.1's engine names and PGN tags: an engine without `name=` plays under its
/// `cmd=` file name, and the PGN has no `EngineWhiteName`-style tags (newer fastchess's).
#[test]
fn an_engine_without_a_name_and_the_pgn_tags_of_fastchess_1_8_1() {
    let dir = tempfile::tempdir().unwrap();
    let spar = env!("CARGO_BIN_EXE_spar");
    let line = format!(
        "fastchess -engine cmd={spar} args=uci -engine name=base -each nodes=300 -rounds 1 \
         -pgnout file=g.pgn"
    );
    let out = ok(&run_in(dir.path(), &argv(&line)));
    assert!(out.contains("Started game 1 of 2 (spar vs base)"), "{out}");
    let pgn = std::fs::read_to_string(dir.path().join("g.pgn")).unwrap();
    assert!(pgn.contains("[White \"spar\"]"), "{pgn}");
    assert!(!pgn.contains("[Engine"), "{pgn}");
}
