//! The NNUE evaluation through the binary: builtin variants choose it with `option.Eval`
//! and `option.EvalFile`, bad values are refused before any game, and `spar bench --eval`
//! measures both evaluations.

mod common;

use common::*;

#[test]
fn an_nnue_variant_plays_an_hce_variant() {
    let dir = tempfile::tempdir().unwrap();
    let js = dir.path().join("s.json");
    let net = dir.path().join("small.nnue");
    std::fs::write(
        &net,
        engine::nnue::placeholder::material_network(32).to_bytes(),
    )
    .unwrap();
    let file_word = format!("option.EvalFile={}", path_str(&net));
    for (first, games) in [
        (vec!["option.Eval=nnue"], "4"),
        (vec!["option.Eval=nnue", file_word.as_str()], "2"),
    ] {
        let mut args = vec!["match", "--engine", "name=nnue"];
        args.extend(first);
        args.extend([
            "--engine",
            "name=hce",
            "--each",
            "nodes=500",
            "--games",
            games,
        ]);
        args.extend(["--json", path_str(&js), "--quiet"]);
        let out = ok(&run(&args));
        assert!(out.contains("nnue vs hce"), "{out}");
        assert_eq!(json(&js)["games"].to_string(), games);
    }
}

#[test]
fn bad_eval_options_are_one_line_usage_errors_before_any_game() {
    let dir = tempfile::tempdir().unwrap();
    let corrupt = dir.path().join("corrupt.nnue");
    let mut bytes = engine::nnue::placeholder::material_network(16).to_bytes();
    bytes[40] ^= 1;
    std::fs::write(&corrupt, bytes).unwrap();
    let short = dir.path().join("short.nnue");
    std::fs::write(&short, b"SPARNNUE\x01\x00\x00\x00\x10\x00\x00\x00").unwrap();
    let pgn = dir.path().join("games.pgn");
    let game = |word: &str| {
        format!(
            "match --engine name=a {word} --engine name=b --each nodes=100 --games 2 --pgnout {}",
            path_str(&pgn)
        )
    };
    let lines = [
        (
            game("option.Eval=neural"),
            "option.Eval=neural: expected hce or nnue".to_string(),
        ),
        (
            game(&format!("option.EvalFile={}", path_str(&corrupt))),
            "corrupt.nnue: checksum mismatch".to_string(),
        ),
        (
            game(&format!("option.EvalFile={}", path_str(&short))),
            "short.nnue: 16 bytes".to_string(),
        ),
        (
            game("option.EvalFile=/no/such/net.nnue"),
            "option.EvalFile: /no/such/net.nnue: No such file".to_string(),
        ),
    ];
    let bench_bad = format!(
        "bench --depth 2 --eval nnue --eval-file {}",
        path_str(&corrupt)
    );
    let lines = [
        lines.as_slice(),
        &[(
            bench_bad,
            "--eval-file ".to_string() + path_str(&corrupt) + ": checksum",
        )],
    ]
    .concat();
    let cases: Vec<(Vec<&str>, &str)> = lines.iter().map(|(l, n)| (argv(l), n.as_str())).collect();
    usage_errors(&cases);
    assert!(!pgn.exists(), "no game was played");
}

#[test]
fn bench_measures_either_evaluation_or_both() {
    let hce = ok(&run(&argv("bench --depth 3 --eval hce")));
    let nnue = ok(&run(&argv("bench --depth 3 --eval nnue")));
    let both = ok(&run(&argv("bench --depth 3 --eval both")));
    let nodes = |line: &str| -> String {
        let words: Vec<&str> = line.split_whitespace().collect();
        let at = words.iter().position(|w| *w == "nodes").unwrap();
        words[at - 1].to_string()
    };
    let lines: Vec<&str> = both.lines().collect();
    assert_eq!(lines.len(), 2, "{both}");
    assert!(
        lines[0].starts_with("hce ") && lines[1].starts_with("nnue "),
        "{both}"
    );
    assert_eq!(nodes(lines[0]), nodes(hce.trim()));
    assert_eq!(nodes(lines[1]), nodes(nnue.trim()));
    assert!(lines[1].contains("% of hce's nps"), "{both}");
    // The default is the network.
    let default = ok(&run(&argv("bench --depth 3")));
    assert_eq!(nodes(default.trim()), nodes(nnue.trim()));
    assert_ne!(nodes(nnue.trim()), nodes(hce.trim()));
}

/// The bench signature (`spar bench` at its default depth): the node count OpenBench and a
/// user's CI compare. A change to the search, the embedded net or the handcrafted weights
/// that alters it must state the new numbers here and in docs/strength.md.
#[test]
fn bench_signature_is_pinned() {
    let signature = |args: &str| -> String {
        let out = ok(&run(&argv(args)));
        let words: Vec<&str> = out.split_whitespace().collect();
        let at = words
            .iter()
            .position(|w| *w == "nodes")
            .expect("a node count");
        words[at - 1].to_string()
    };
    assert_eq!(
        signature("bench"),
        NNUE_SIGNATURE,
        "spar bench (the network)"
    );
    assert_eq!(
        signature("bench --eval hce"),
        HCE_SIGNATURE,
        "spar bench --eval hce"
    );
}

/// `spar bench` with the embedded network (issue 34: generation 2 on all 50 M positions, H = 256).
const NNUE_SIGNATURE: &str = "360239";
/// `spar bench --eval hce`.
const HCE_SIGNATURE: &str = "389221";

/// Issue 24, class 13: one Eval/EvalFile rule for engine words, `spar bench` and datagen
/// (and UCI: engine/src/uci.rs), with one message: a network file with the handcrafted
/// evaluation is refused everywhere; an empty `option.EvalFile=` is the embedded net.
#[test]
fn one_eval_file_rule_for_every_command() {
    let dir = tempfile::tempdir().unwrap();
    let net = dir.path().join("n.nnue");
    std::fs::write(
        &net,
        engine::nnue::placeholder::material_network(16).to_bytes(),
    )
    .unwrap();
    let n = path_str(&net);
    let pgn = dir.path().join("g.pgn");
    let p = path_str(&pgn);
    let rule = "is a network, which only the NNUE evaluation uses, but the evaluation is hce";
    let cases = [
        format!("match --engine name=a option.Eval=hce option.EvalFile={n} --engine name=b --each nodes=100 --games 2 --pgnout {p}"),
        format!("sprt --engine name=a --engine name=b --each nodes=100 option.Eval=hce option.EvalFile={n} --pgnout {p}"),
        format!("bench --depth 1 --eval hce --eval-file {n}"),
        format!("datagen --out {}/d.vf --games 1 --eval hce --eval-file {n}", path_str(dir.path())),
    ];
    let cases: Vec<(Vec<&str>, &str)> = cases.iter().map(|l| (argv(l), rule)).collect();
    usage_errors(&cases);
    assert!(!pgn.exists(), "no game was played");
    // An empty EvalFile is the embedded net, as `setoption name EvalFile value` is in UCI.
    let js = dir.path().join("s.json");
    let out = ok(&run(&argv(&format!(
        "match --engine name=a option.EvalFile= --engine name=b option.Eval=hce option.EvalFile= \
         --each nodes=200 --games 2 --quiet --json {}",
        path_str(&js)
    ))));
    assert!(out.contains("a vs b"), "{out}");
    // The net file with the network, or with `--eval both`, is used.
    ok(&run(&argv(&format!(
        "bench --depth 1 --eval both --eval-file {n}"
    ))));
}
