//! The builtin engine with Syzygy tables (`option.SyzygyPath=DIR`) in `spar match`: it
//! converts won endgames and holds drawn ones against Stockfish, and a bad path is a usage
//! error before any game.
//!
//! The 3-4-piece tables are found through `SPAR_SYZYGY` or in `${XDG_CACHE_HOME:-$HOME/
//! .cache}/spar/syzygy/3-4`, where `.ci/setup` puts them; Stockfish at `/usr/games/stockfish`.
//! Without either a test prints a `NOTICE` and returns; under `CI=true` it fails.

mod common;

use common::*;

/// Openings (white to move) and whether white wins (`true`) or it is a draw (`false`), as
/// the tables say.
const ENDGAMES: [(&str, bool); 5] = [
    ("8/8/8/4k3/8/8/8/4K2Q w - - 0 1", true),   // KQvK, DTZ 13
    ("8/8/8/3k4/8/8/8/R3K3 w - - 0 1", true),   // KRvK, DTZ 27
    ("8/8/8/8/3k4/8/8/KBN5 w - - 0 1", true),   // KBNvK, DTZ 58
    ("4k3/8/4K3/4P3/8/8/8/8 w - - 0 1", true),  // KPvK won
    ("8/8/8/4k3/8/8/3P4/3K4 w - - 0 1", false), // KPvK drawn
];

/// One game of a PGN file: its tags.
fn games(pgn: &str) -> Vec<std::collections::HashMap<String, String>> {
    let mut out = Vec::new();
    for block in pgn.split("[Event ").skip(1) {
        let mut tags = std::collections::HashMap::new();
        for line in block.lines() {
            if let Some((k, v)) = line
                .trim()
                .strip_prefix('[')
                .and_then(|l| l.split_once(' '))
            {
                tags.insert(
                    k.to_string(),
                    v.trim_end_matches(']').trim_matches('"').to_string(),
                );
            }
        }
        out.push(tags);
    }
    out
}

#[test]
fn the_tablebase_engine_converts_wins_and_holds_draws_against_stockfish() {
    let test = "the_tablebase_engine_converts_wins_and_holds_draws_against_stockfish";
    let Some(tables) = syzygy_tables(test) else {
        return;
    };
    let Some(sf) = stockfish() else {
        missing_client(
            test,
            "stockfish is not installed (apt-get install stockfish)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("endgames.epd");
    let epd: Vec<String> = ENDGAMES
        .iter()
        .map(|(fen, _)| fen.rsplitn(3, ' ').nth(2).unwrap().to_string())
        .collect();
    std::fs::write(&book, epd.join("\n") + "\n").unwrap();
    let (pgn, js) = (dir.path().join("g.pgn"), dir.path().join("s.json"));
    let (cmd, path) = (
        format!("cmd={sf}"),
        format!("option.SyzygyPath={}", tables.display()),
    );
    let o = run(&[
        "match",
        "--engine",
        "name=tb",
        &path,
        "nodes=1000",
        "--engine",
        "name=sf",
        &cmd,
        "option.Hash=8",
        "option.Threads=1",
        "nodes=20000",
        "--book",
        path_str(&book),
        "format=epd",
        "order=sequential",
        "--games",
        "10",
        "--concurrency",
        "2",
        "--maxmoves",
        "200",
        "--pgnout",
        path_str(&pgn),
        "--json",
        path_str(&js),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(json(&js)["crashes"], 0);
    let games = games(&std::fs::read_to_string(&pgn).unwrap());
    assert_eq!(games.len(), 10);
    for g in &games {
        let fen = &g["FEN"];
        let &(_, won) = ENDGAMES
            .iter()
            .find(|(f, _)| f.split(' ').take(4).eq(fen.split(' ').take(4)))
            .unwrap_or_else(|| panic!("unexpected opening {fen}"));
        let result = g["Result"].as_str();
        let tb_white = g["White"] == "tb";
        let want: &[&str] = match (won, tb_white) {
            // The tables' engine has the win: it must take it.
            (true, true) => &["1-0"],
            // Stockfish has it: the tables' engine may lose or draw, never win.
            (true, false) => &["1-0", "1/2-1/2"],
            (false, _) => &["1/2-1/2"],
        };
        assert!(
            want.contains(&result),
            "{fen}: tb as {}: {result} ({g:?})",
            if tb_white { "white" } else { "black" }
        );
    }
}

#[test]
fn a_bad_syzygy_path_is_a_usage_error_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::create_dir(&garbage).unwrap();
    std::fs::write(garbage.join("KQvK.rtbw"), b"no table").unwrap();
    let file = dir.path().join("file.rtbw");
    std::fs::write(&file, b"x").unwrap();
    let csv = dir.path().join("r.csv");
    for (value, needle) in [
        ("/nonexistent/syzygy".to_string(), "does not exist"),
        (path_str(&file).to_string(), "is a file"),
        (
            path_str(&garbage).to_string(),
            "is not a valid Syzygy table",
        ),
        (path_str(dir.path()).to_string(), "no Syzygy tables"),
    ] {
        let word = format!("option.SyzygyPath={value}");
        let o = run(&[
            "match",
            "--engine",
            "name=tb",
            &word,
            "--engine",
            "name=base",
            "--each",
            "nodes=100",
            "--games",
            "2",
            "--results",
            path_str(&csv),
            "--quiet",
        ]);
        usage_error(&o, &format!("engine 'tb': {word}: "));
        usage_error(&o, needle);
        assert!(!csv.exists(), "no game was played");
    }
}

#[test]
fn bench_with_syzygy_counts_hits_and_keeps_the_far_positions_unchanged() {
    let o = run(&["bench", "--syzygy", "/nonexistent/syzygy"]);
    usage_error(&o, "--syzygy /nonexistent/syzygy: tablebase directory");
    let Some(tables) = syzygy_tables("bench_with_syzygy_counts_hits") else {
        return;
    };
    let lines = |dirs: &str| -> Vec<String> {
        let out = ok(&run(&["bench", "4", "--eval", "hce", "--syzygy", dirs]));
        out.lines().map(str::to_string).collect()
    };
    let with = lines(path_str(&tables));
    let without = lines("<empty>");
    assert_eq!(with.len(), 3, "{with:?}");
    assert_eq!(
        with[0],
        format!("syzygy {}: 70 files, up to 4 pieces", tables.display())
    );
    assert_eq!(without[0], "syzygy: none");
    assert!(!with[1].starts_with("0 tbhits") && without[1].starts_with("0 tbhits"));
    // Far from the tables, the search is the same: the same node count there.
    let far = |l: &str| {
        l.split("pieces: ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(far(&with[1]), far(&without[1]));
    // Without tables, the signature line is the plain bench's.
    let plain = ok(&run(&["bench", "4", "--eval", "hce"]));
    let nodes = |l: &str| l.split(' ').next().unwrap().to_string();
    assert_eq!(nodes(&without[2]), nodes(plain.trim()));
}

/// Node-limited games with tables are the same at any concurrency: the probes (and the
/// shared, lazily mapped tables) add nothing that depends on timing.
#[test]
fn games_with_tables_do_not_depend_on_concurrency() {
    let Some(tables) = syzygy_tables("games_with_tables_do_not_depend_on_concurrency") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let book = dir.path().join("near.epd");
    std::fs::write(
        &book,
        "8/8/4k3/3r4/8/2N5/3PK3/8 w - -\n8/5k2/8/3p4/3P4/2K5/5N2/8 w - -\n\
         8/8/2k5/8/2P1n3/8/4K3/5B2 w - -\n",
    )
    .unwrap();
    let path = format!("option.SyzygyPath={}", tables.display());
    let mut outputs = Vec::new();
    for c in ["1", "2"] {
        let csv = dir.path().join(format!("r{c}.csv"));
        let o = run(&[
            "match",
            "--engine",
            "name=tb",
            &path,
            "--engine",
            "name=plain",
            "--each",
            "nodes=400",
            "--book",
            path_str(&book),
            "order=sequential",
            "--games",
            "6",
            "--concurrency",
            c,
            "--results",
            path_str(&csv),
            "--quiet",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        outputs.push(rows_without_time(&csv));
    }
    assert_eq!(outputs[0].len(), 7, "header + 6 rows");
    assert_eq!(outputs[0], outputs[1]);
}
