//! `--tb`: Syzygy tablebase adjudication in `spar match` / `spar sprt` and rescoring in
//! `spar datagen`, run as a user would, on the real 3- and 4-piece tables.
//!
//! The tables are found through `SPAR_SYZYGY` or in `${XDG_CACHE_HOME:-$HOME/.cache}/spar/
//! syzygy/3-4`, where `.ci/setup` puts them. Without them a test prints a `NOTICE` and
//! returns; under `CI=true` it fails instead.

mod common;

use std::path::Path;

use common::*;
use data::training::{text, viriformat, TrainingGame};
use engine::position::Position;
use engine::tablebase::{Tablebases, Wdl};
use engine::types::GameResult;

/// A won position (KQvK, White to move) and a drawn one (KRvKR), both with the fifty-move
/// counter at zero (EPD without counters).
const EPD: &str = "8/8/4k3/8/8/4K3/8/Q7 w - -\n8/8/4k3/8/8/4K3/r7/7R w - -\n";

/// A 4-game match (the two openings, each with both colours) from [`EPD`] with `extra`
/// options; returns the CSV rows' (result, termination, plies), the JSON terminations and
/// the PGN.
fn tb_match(dir: &Path, engines: &[&str], extra: &[&str]) -> (Vec<Row>, serde_json::Value, String) {
    let epd = dir.join("tb.epd");
    std::fs::write(&epd, EPD).unwrap();
    let (pgn, csv, json_file) = (dir.join("g.pgn"), dir.join("r.csv"), dir.join("s.json"));
    for f in [&pgn, &csv, &json_file] {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_file(dir.join("r.csv.run.json"));
    let mut args: Vec<&str> = vec![];
    if engines.first() != Some(&"sprt") {
        args.push("match");
    }
    args.extend_from_slice(engines);
    args.extend_from_slice(&[
        "--games",
        "4",
        "--concurrency",
        "2",
        "--quiet",
        "--maxmoves",
        "30",
        "--book",
        path_str(&epd),
        "order=sequential",
        "--pgnout",
        path_str(&pgn),
        "--results",
        path_str(&csv),
        "--json",
        path_str(&json_file),
    ]);
    args.extend_from_slice(extra);
    ok(&run(&args));
    let rows = std::fs::read_to_string(&csv)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                result: f[6].to_string(),
                termination: f[7].to_string(),
                plies: f[8].parse().unwrap(),
            }
        })
        .collect();
    (
        rows,
        json(&json_file)["terminations"].clone(),
        std::fs::read_to_string(&pgn).unwrap(),
    )
}

const BUILTIN: [&str; 6] = [
    "--engine",
    "name=a",
    "--engine",
    "name=b",
    "--each",
    "nodes=300",
];

/// A game of the results CSV.
#[derive(Debug)]
struct Row {
    result: String,
    termination: String,
    plies: u32,
}

const TB: &str = "tablebase_adjudication";

impl Row {
    /// Ended by the tables before its first move, with `result`.
    fn at_once(&self, result: &str) -> bool {
        self.termination == TB && self.plies == 0 && self.result == result
    }

    /// Played on from its start position (the tables may still end it later, after a
    /// capture, with a result the mode adjudicates).
    fn played_on(&self) -> bool {
        self.plies > 0
    }
}

/// The JSON count of tablebase adjudications equals the CSV's.
fn counted(rows: &[Row], terms: &serde_json::Value) {
    let n = rows.iter().filter(|r| r.termination == TB).count() as u64;
    assert_eq!(
        terms.get(TB).and_then(|v| v.as_u64()).unwrap_or(0),
        n,
        "{terms}"
    );
}

#[test]
fn table_positions_are_adjudicated_at_once_by_each_mode() {
    let Some(tb) = syzygy_tables("table_positions_are_adjudicated_at_once_by_each_mode") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let tb = path_str(&tb);

    // both (the default): every game ends before its first move.
    let (r, terms, pgn) = tb_match(dir.path(), &BUILTIN, &["--tb", tb]);
    assert!(r[0].at_once("1-0") && r[1].at_once("1-0"), "{r:?}");
    assert!(r[2].at_once("1/2-1/2") && r[3].at_once("1/2-1/2"), "{r:?}");
    assert_eq!(terms, serde_json::json!({ TB: 4 }));
    assert_eq!(
        pgn.matches("{White wins by adjudication: SyzygyTB} 1-0")
            .count(),
        2
    );
    assert_eq!(
        pgn.matches("{Draw by adjudication: SyzygyTB} 1/2-1/2")
            .count(),
        2
    );
    assert_eq!(pgn.matches("[Termination \"adjudication\"]").count(), 4);
    assert_eq!(pgn.matches("[PlyCount \"0\"]").count(), 4);
    // The summary says how many games the tables ended.
    let epd = dir.path().join("tb.epd");
    let o = run(&argv(&format!(
        "match {} --games 4 --quiet --book {} order=sequential --tb {tb}",
        BUILTIN.join(" "),
        path_str(&epd)
    )));
    assert!(
        ok(&o).contains("Tablebase adjudications: 4 of 4 games (SyzygyTB)"),
        "{}",
        stdout(&o)
    );

    // win_loss: the won position is adjudicated, the drawn one is played on (and never
    // ends in a tablebase draw).
    let (r, terms, _) = tb_match(dir.path(), &BUILTIN, &["--tb", tb, "adjudicate=win_loss"]);
    assert!(r[0].at_once("1-0") && r[1].at_once("1-0"), "{r:?}");
    assert!(r[2].played_on() && r[3].played_on(), "{r:?}");
    assert!(
        r.iter()
            .all(|g| !(g.termination == TB && g.result == "1/2-1/2")),
        "{r:?}"
    );
    counted(&r, &terms);

    // draw: the drawn position is adjudicated, the won one is played on (never a
    // tablebase win).
    let (r, terms, _) = tb_match(dir.path(), &BUILTIN, &["--tb", tb, "adjudicate=draw"]);
    assert!(r[0].played_on() && r[1].played_on(), "{r:?}");
    assert!(r[2].at_once("1/2-1/2") && r[3].at_once("1/2-1/2"), "{r:?}");
    assert!(
        r.iter()
            .all(|g| !(g.termination == TB && g.result != "1/2-1/2")),
        "{r:?}"
    );
    counted(&r, &terms);

    // pieces=3: the 4-piece drawn position is beyond the limit.
    let (r, terms, _) = tb_match(dir.path(), &BUILTIN, &["--tb", tb, "pieces=3"]);
    assert!(r[0].at_once("1-0") && r[1].at_once("1-0"), "{r:?}");
    assert!(r[2].played_on() && r[3].played_on(), "{r:?}");
    counted(&r, &terms);

    // Without --tb nothing is adjudicated by the tables.
    let (r, terms, pgn) = tb_match(dir.path(), &BUILTIN, &[]);
    assert!(
        r.iter().all(|g| g.played_on() && g.termination != TB),
        "{r:?}"
    );
    assert!(terms.get(TB).is_none());
    assert!(!pgn.contains("SyzygyTB"));
}

#[test]
fn external_engines_are_adjudicated_by_the_runner() {
    let Some(tb) = syzygy_tables("external_engines_are_adjudicated_by_the_runner") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let cmd = format!("cmd={}", env!("CARGO_BIN_EXE_spar"));
    let engines = [
        "--engine",
        &cmd,
        "args=uci",
        "name=ext",
        "--engine",
        "name=builtin",
        "--each",
        "nodes=300",
    ];
    let (r, terms, _) = tb_match(dir.path(), &engines, &["--tb", path_str(&tb)]);
    assert!(r[0].at_once("1-0") && r[1].at_once("1-0"), "{r:?}");
    assert!(r[2].at_once("1/2-1/2") && r[3].at_once("1/2-1/2"), "{r:?}");
    assert_eq!(terms[TB], 4);
}

#[test]
fn sprt_adjudicates_the_same_way() {
    let Some(tb) = syzygy_tables("sprt_adjudicates_the_same_way") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut engines = vec!["sprt"];
    engines.extend_from_slice(&BUILTIN);
    let (r, terms, _) = tb_match(dir.path(), &engines, &["--tb", path_str(&tb)]);
    assert!(r[0].at_once("1-0") && r[1].at_once("1-0"), "{r:?}");
    assert!(r[2].at_once("1/2-1/2") && r[3].at_once("1/2-1/2"), "{r:?}");
    assert_eq!(terms[TB], 4);
}

/// The position after every move of `g` (the start first).
fn positions(g: &TrainingGame) -> Vec<Position> {
    let mut all = vec![g.start.clone()];
    for m in &g.moves {
        let next = all.last().unwrap().play(m.mv);
        all.push(next);
    }
    all
}

/// The tables' result for `pos` under `--tb` (fifty-move counter at zero, no castling),
/// cursed wins and blessed losses as draws.
fn table_result(tb: &Tablebases, pos: &Position) -> Option<GameResult> {
    if pos.halfmove_clock() != 0 || !pos.castling().is_empty() {
        return None;
    }
    let us = pos.side_to_move();
    Some(match tb.probe_wdl(pos).unwrap()? {
        Wdl::Win => GameResult::win_for(us),
        Wdl::Loss => GameResult::win_for(!us),
        _ => GameResult::Draw,
    })
}

#[test]
fn datagen_ends_games_in_the_tables_and_labels_them_with_their_result() {
    let Some(dir_tb) =
        syzygy_tables("datagen_ends_games_in_the_tables_and_labels_them_with_their_result")
    else {
        return;
    };
    let tb = Tablebases::open(path_str(&dir_tb)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (plain, with) = (dir.path().join("plain.vf"), dir.path().join("tb.vf"));
    let common_args = [
        "datagen",
        "--games",
        "40",
        "--nodes",
        "400",
        "--seed",
        "3",
        "--format",
        "both",
        "--min-ply",
        "0",
        "--max-score",
        "40000",
        "--keep-check",
        "--keep-tactical",
        "--concurrency",
        "2",
        "--quiet",
    ];
    let mut a: Vec<&str> = common_args.to_vec();
    a.extend_from_slice(&["--out", path_str(&plain)]);
    ok(&run(&a));
    let mut b: Vec<&str> = common_args.to_vec();
    b.extend_from_slice(&["--out", path_str(&with), "--tb", path_str(&dir_tb)]);
    ok(&run(&b));

    let read = |p: &Path| -> Vec<TrainingGame> {
        viriformat::read_games(p)
            .unwrap()
            .map(|g| g.expect("decodes"))
            .collect()
    };
    let (g0, g1) = (read(&plain), read(&with));
    assert_eq!((g0.len(), g1.len()), (40, 40));
    let mut ended_in_tables = 0;
    for (k, (a, b)) in g0.iter().zip(&g1).enumerate() {
        assert_eq!(a.start.to_fen(), b.start.to_fen(), "game {k}: same opening");
        assert!(b.moves.len() <= a.moves.len(), "game {k}");
        let prefix = a.moves[..b.moves.len()].iter().map(|m| m.mv);
        assert!(
            prefix.eq(b.moves.iter().map(|m| m.mv)),
            "game {k}: the same moves up to the tables"
        );
        let pos = positions(b);
        let (last, before) = pos.split_last().unwrap();
        for p in before {
            assert_eq!(
                table_result(&tb, p),
                None,
                "game {k}: played on from a table position {}",
                p.to_fen()
            );
        }
        match table_result(&tb, last) {
            Some(r) => {
                assert_eq!(b.result, r, "game {k}: the tables' result");
                if b.moves.len() < a.moves.len() {
                    ended_in_tables += 1;
                }
            }
            None => {
                assert_eq!(b.moves.len(), a.moves.len(), "game {k}");
                assert_eq!(b.result, a.result, "game {k}");
            }
        }
    }
    assert!(
        ended_in_tables > 0,
        "some games of this seed reach the tables"
    );
    // The text file labels every position of a game with the game's (the tables') result.
    let lines: Vec<_> = text::read_positions(dir.path().join("tb.vf.txt"))
        .unwrap()
        .map(|l| l.expect("line"))
        .collect();
    let labels: Vec<GameResult> = g1
        .iter()
        .flat_map(|g| std::iter::repeat_n(g.result, g.moves.len()))
        .collect();
    assert_eq!(lines.len(), labels.len());
    for (i, (l, r)) in lines.iter().zip(&labels).enumerate() {
        assert_eq!(l.result, *r, "text line {i}");
    }
}

#[test]
fn resume_treats_tb_as_part_of_the_run() {
    let Some(tb) = syzygy_tables("resume_treats_tb_as_part_of_the_run") else {
        return;
    };
    let tb = path_str(&tb);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("r.csv");
    let base = format!(
        "match --engine name=a --engine name=b --each nodes=200 --quiet --maxmoves 20 --results {}",
        path_str(&csv)
    );
    ok(&run(&argv(&format!("{base} --games 2 --tb {tb}"))));
    usage_error(
        &run(&argv(&format!("{base} --games 4 --resume"))),
        "--resign/--draw/--maxmoves/--tb",
    );
    usage_error(
        &run(&argv(&format!(
            "{base} --games 4 --resume --tb {tb} adjudicate=draw"
        ))),
        "differs",
    );
    ok(&run(&argv(&format!("{base} --games 4 --resume --tb {tb}"))));

    let out = dir.path().join("d.vf");
    let base = format!("datagen --nodes 200 --quiet --out {}", path_str(&out));
    ok(&run(&argv(&format!("{base} --games 2 --tb {tb}"))));
    usage_error(&run(&argv(&format!("{base} --games 3 --resume"))), "--tb");
    usage_error(
        &run(&argv(&format!(
            "{base} --games 3 --resume --tb {tb} pieces=3"
        ))),
        "differs",
    );
    ok(&run(&argv(&format!("{base} --games 3 --resume --tb {tb}"))));
}

#[test]
fn bad_tables_and_words_are_one_line_and_exit_2_before_any_game() {
    let Some(tb) = syzygy_tables("bad_tables_and_words_are_one_line_and_exit_2_before_any_game")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let truncated = dir.path().join("truncated");
    std::fs::create_dir(&truncated).unwrap();
    let krvk = std::fs::read(tb.join("KRvK.rtbw")).unwrap();
    std::fs::write(truncated.join("KRvK.rtbw"), &krvk[..krvk.len() / 2]).unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::create_dir(&garbage).unwrap();
    std::fs::write(garbage.join("KQvK.rtbw"), vec![0x5au8; 4096]).unwrap();
    let pgn = dir.path().join("never.pgn");
    let tb = path_str(&tb);
    let m = format!(
        "match --engine name=a --engine name=b --each nodes=100 --games 2 --quiet --pgnout {}",
        path_str(&pgn)
    );
    let s = "sprt --engine name=a --engine name=b --each nodes=100 --quiet";
    let d = format!(
        "datagen --games 2 --nodes 100 --quiet --out {}",
        path_str(&dir.path().join("never.vf"))
    );
    let missing = format!("{}/none", path_str(dir.path()));
    let cases: Vec<(String, String)> = vec![
        (format!("{m} --tb {missing}"), "does not exist".into()),
        (
            format!("{m} --tb {}", path_str(&empty)),
            "no Syzygy tables".into(),
        ),
        (
            format!("{m} --tb {}", path_str(&truncated)),
            "KRvK.rtbw is not a valid Syzygy table".into(),
        ),
        (
            format!("{m} --tb {}", path_str(&garbage)),
            "KQvK.rtbw is not a valid Syzygy table".into(),
        ),
        (
            format!("{m} --tb {tb} pieces=8"),
            "pieces=8 is out of range".into(),
        ),
        (
            format!("{m} --tb {tb} pieces=2"),
            "pieces=2 is out of range".into(),
        ),
        (
            format!("{m} --tb {tb} adjudicate=sometimes"),
            "adjudicate=sometimes is unknown".into(),
        ),
        (format!("{m} --tb pieces=4"), "comes first".into()),
        (
            format!("{m} --tb {tb} colour=white"),
            "unknown key 'colour'".into(),
        ),
        (format!("{s} --tb {missing}"), "does not exist".into()),
        (
            format!("{s} --tb {}", path_str(&truncated)),
            "KRvK.rtbw".into(),
        ),
        (format!("{d} --tb {missing}"), "does not exist".into()),
        (
            format!("{d} --tb {}", path_str(&garbage)),
            "KQvK.rtbw".into(),
        ),
        (format!("{d} --tb {tb} pieces=9"), "out of range".into()),
        (
            format!("{d} --tb {tb} adjudicate=draw"),
            "adjudicate=".into(),
        ),
    ];
    for (line, needle) in &cases {
        let o = run(&argv(line));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{line}: one line: {err}");
        assert!(err.contains("--tb"), "{line}: names the option: {err}");
        assert!(err.contains(needle.as_str()), "{line}: {needle}: {err}");
        assert!(!pgn.exists(), "{line}: no game before the refusal");
    }
}

#[test]
fn a_cluster_run_pins_the_tables_by_name_and_size() {
    let Some(tb) = syzygy_tables("a_cluster_run_pins_the_tables_by_name_and_size") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("tables");
    std::fs::create_dir(&copy).unwrap();
    for e in std::fs::read_dir(&tb).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, copy.join(p.file_name().unwrap())).unwrap();
    }
    let o = run_in(
        dir.path(),
        &argv(
            "match --engine name=a --engine name=b --each nodes=100 --games 4 --seed 3 \
             --slurm --plan-only --run-dir run --shards 2 --results r.csv --tb tables",
        ),
    );
    ok(&o);
    let manifest = json(&dir.path().join("run/manifest.json"));
    let pinned = manifest["tablebases"].as_array().expect("tablebases");
    let on_disk = std::fs::read_dir(&copy).unwrap().count();
    assert_eq!(pinned.len(), on_disk);
    let krvk = pinned
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with("tables/KRvK.rtbw"))
        .expect("KRvK.rtbw pinned");
    let size = std::fs::metadata(copy.join("KRvK.rtbw")).unwrap().len();
    assert_eq!(krvk["size"], size);
    assert!(Path::new(krvk["path"].as_str().unwrap()).is_absolute());
    // A table of another size on a node: the shard refuses, naming the file.
    let bytes = std::fs::read(copy.join("KRvK.rtbw")).unwrap();
    std::fs::write(copy.join("KRvK.rtbw"), &bytes[..bytes.len() - 1]).unwrap();
    let o = run_in(dir.path(), &argv("shard run --index 0"));
    usage_error(&o, "KRvK.rtbw");
    assert!(stderr(&o).contains("in the manifest"), "{}", stderr(&o));
    // Without --tb the manifest has no table list.
    let o = run_in(
        dir.path(),
        &argv(
            "match --engine name=a --engine name=b --each nodes=100 --games 4 --seed 3 \
             --slurm --plan-only --run-dir run2 --shards 2 --results r2.csv",
        ),
    );
    ok(&o);
    assert!(json(&dir.path().join("run2/manifest.json"))
        .get("tablebases")
        .is_none());
    // An engine's own tables (option.SyzygyPath) are pinned the same way.
    std::fs::write(copy.join("KRvK.rtbw"), &bytes).unwrap();
    ok(&run_in(
        dir.path(),
        &argv(
            "match --engine name=a option.SyzygyPath=tables --engine name=b --each nodes=100 \
             --games 4 --slurm --plan-only --run-dir run3 --shards 2",
        ),
    ));
    let pinned = json(&dir.path().join("run3/manifest.json"))["tablebases"]
        .as_array()
        .expect("tablebases")
        .len();
    assert_eq!(pinned, on_disk);
    std::fs::write(copy.join("KRvK.rtbw"), &bytes[..bytes.len() - 1]).unwrap();
    usage_error(
        &run_in(dir.path(), &argv("shard run3 --index 1")),
        "KRvK.rtbw",
    );
}
