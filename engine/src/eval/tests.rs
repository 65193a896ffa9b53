//! Tests of the evaluation: colour symmetry, trace consistency, parameter directions, sanity.

use super::weights::{feature, BLOCKS};
use super::*;
use crate::params::Params;

const FENS: &[&str] = &[
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "8/8/4k3/8/8/2B5/4K3/8 w - - 0 1",
    "8/5b2/4k3/3p4/3P4/2B1K3/8/8 b - - 0 1",
    "6k1/5ppp/8/8/8/8/1R3PPP/6K1 b - - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
    "2kr3r/ppp2ppp/2n5/2b1p3/4P1q1/2NP1N2/PPP2PPP/R2QKB1R w KQ - 0 1",
    "8/3k4/8/1p1p1p2/1P1P1P2/8/3K4/8 w - - 0 1",
    "rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1",
];

/// The colour-flipped mirror of a FEN: ranks reversed, colours and side to move swapped
/// (the NNUE tests use it too).
pub(crate) fn mirror_fen(fen: &str) -> String {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    let swap = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_uppercase() {
                    c.to_ascii_lowercase()
                } else {
                    c.to_ascii_uppercase()
                }
            })
            .collect()
    };
    let board: Vec<String> = fields[0].split('/').rev().map(swap).collect();
    let stm = if fields[1] == "w" { "b" } else { "w" };
    let castling = if fields[2] == "-" {
        "-".to_string()
    } else {
        let s = swap(fields[2]);
        let (upper, lower): (String, String) = s.chars().partition(|c| c.is_ascii_uppercase());
        upper + &lower
    };
    let ep = if fields[3] == "-" {
        "-".to_string()
    } else {
        let b = fields[3].as_bytes();
        format!("{}{}", b[0] as char, (b'1' + b'8' - b[1]) as char)
    };
    let rest = fields[4..].join(" ");
    format!("{} {stm} {castling} {ep} {rest}", board.join("/"))
}

/// Positions from pseudo-random games out of the start position and the FENs above.
fn sample_positions() -> Vec<Position> {
    let mut out = Vec::new();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for fen in FENS {
        let root = Position::from_fen(fen).unwrap();
        out.push(root.clone());
        for _ in 0..12 {
            let mut pos = root.clone();
            for _ in 0..80 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                let mv = moves.as_slice()[(next() % moves.len() as u64) as usize];
                pos = pos.play(mv);
                out.push(pos.clone());
            }
        }
    }
    out
}

#[test]
fn mirror_fen_round_trips() {
    for fen in FENS {
        assert_eq!(mirror_fen(&mirror_fen(fen)), *fen);
    }
    assert_eq!(
        mirror_fen("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1"),
        "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1"
    );
}

#[test]
fn colour_symmetry() {
    let w = EvalWeights::default();
    let positions = sample_positions();
    assert!(positions.len() > 5000, "{}", positions.len());
    for pos in positions {
        let fen = pos.to_fen();
        let mirrored = Position::from_fen(&mirror_fen(&fen)).unwrap();
        assert_eq!(evaluate(&pos, &w), evaluate(&mirrored, &w), "{fen}");
        assert_eq!(
            evaluate_white(&pos, &w),
            -evaluate_white(&mirrored, &w),
            "{fen}"
        );
    }
}

#[test]
fn trace_reproduces_evaluate() {
    let params = Params::defaults();
    let w = EvalWeights::new(&params);
    for pos in sample_positions() {
        let t = trace(&pos);
        assert_eq!(
            t.white(params.values()),
            evaluate_white(&pos, &w),
            "{}",
            pos.to_fen()
        );
        assert_eq!(
            t.relative(params.values()),
            evaluate(&pos, &w),
            "{}",
            pos.to_fen()
        );
    }
}

#[test]
fn smooth_trace_model_is_close_to_evaluate() {
    let params = Params::defaults();
    let w = EvalWeights::new(&params);
    let values: Vec<f64> = params.values().iter().map(|&v| v as f64).collect();
    for pos in sample_positions().into_iter().step_by(5) {
        let t = trace(&pos);
        let smooth = t.white_f64(&values);
        let exact = evaluate_white(&pos, &w) as f64;
        assert!(
            (smooth - exact).abs() < 1.0,
            "{smooth} {exact} {}",
            pos.to_fen()
        );
    }
}

#[test]
fn trace_reproduces_evaluate_with_changed_weights() {
    // A parameter vector far from the defaults (every value changed) must still agree.
    let mut params = Params::defaults();
    let mut values = params.values().to_vec();
    let specs = crate::params::specs();
    for (i, v) in values.iter_mut().enumerate() {
        if specs[i].eval {
            *v += (i as i32 * 7919) % 23 - 11;
        }
    }
    params.set_values(&values);
    let w = EvalWeights::new(&params);
    for pos in sample_positions().into_iter().step_by(7) {
        let t = trace(&pos);
        assert_eq!(
            t.white(params.values()),
            evaluate_white(&pos, &w),
            "{}",
            pos.to_fen()
        );
    }
}

#[test]
fn trace_indices_name_the_right_parameters() {
    let pos = Position::from_fen("4k3/8/8/8/8/8/8/3NK3 w - - 0 1").unwrap();
    let t = trace(&pos);
    let specs = crate::params::specs();
    let names: Vec<(&str, i32)> =
        t.mg.iter()
            .map(|&(i, c)| (specs[i].name.as_str(), c))
            .collect();
    assert!(names.contains(&("material_mg_knight", 1)), "{names:?}");
    assert!(names.contains(&("pst_knight_mg_d1", 1)), "{names:?}");
    assert!(names.contains(&("tempo_mg", 1)), "{names:?}");
    let egs: Vec<&str> = t.eg.iter().map(|&(i, _)| specs[i].name.as_str()).collect();
    assert!(egs.contains(&"pst_knight_eg_d1"), "{egs:?}");
    assert!(egs.iter().all(|n| n.contains("_eg")), "{egs:?}");
    assert!(names.iter().all(|(n, _)| n.contains("_mg")), "{names:?}");
}

#[test]
fn blocks_cover_every_feature_once() {
    let mut next = 0;
    for block in &BLOCKS {
        assert_eq!(block.start, next, "{}", block.mg.name);
        assert_eq!(
            block.mg.defaults.len(),
            block.eg.defaults.len(),
            "{}",
            block.mg.name
        );
        assert!(block.mg.eval && block.eg.eval);
        assert!(block.mg.name.ends_with("_mg") && block.eg.name.ends_with("_eg"));
        assert_eq!(
            block.mg.name.trim_end_matches("_mg"),
            block.eg.name.trim_end_matches("_eg")
        );
        next += block.mg.defaults.len();
    }
    assert_eq!(next, feature::COUNT);
}

#[test]
fn sanity() {
    let w = EvalWeights::default();
    let start = evaluate(&Position::startpos(), &w);
    assert!(start.abs() < 40, "{start}");
    let queen_up =
        Position::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1").unwrap();
    assert!(evaluate(&queen_up, &w) > 700);
    let queen_down =
        Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNB1KBNR w KQkq - 0 1").unwrap();
    assert!(evaluate(&queen_down, &w) < -700);
    // A lone bishop cannot win.
    let kbk = Position::from_fen("8/8/4k3/8/8/2B5/4K3/8 w - - 0 1").unwrap();
    assert_eq!(evaluate(&kbk, &w), 0);
    // A rook against a bishop is scaled down, a rook against nothing is not.
    let krkb = Position::from_fen("8/8/4k3/8/8/2b5/4K3/R7 w - - 0 1").unwrap();
    let krk = Position::from_fen("8/8/4k3/8/8/8/4K3/R7 w - - 0 1").unwrap();
    assert!(evaluate(&krk, &w) > 400 && evaluate(&krkb, &w) < 100);
    // A far-advanced passed pawn is worth a lot in the endgame.
    let passer = Position::from_fen("4k3/P7/8/8/8/8/8/4K3 w - - 0 1").unwrap();
    let home = Position::from_fen("4k3/8/8/8/8/8/P7/4K3 w - - 0 1").unwrap();
    assert!(evaluate(&passer, &w) > evaluate(&home, &w) + 100);
}

#[test]
fn phase_counts_non_pawn_material() {
    assert_eq!(phase(&Position::startpos()), 24);
    assert_eq!(
        phase(&Position::from_fen("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap()),
        0
    );
    assert_eq!(
        phase(&Position::from_fen("3qk3/8/8/8/8/8/4P3/2R1K3 w - - 0 1").unwrap()),
        6
    );
    // Promotions do not push the phase past the maximum.
    let many = Position::from_fen("qqqqkqqq/8/8/8/8/8/8/QQQQKQQQ w - - 0 1").unwrap();
    assert_eq!(phase(&many), 24);
}

/// Evaluates `fen` with one parameter changed by `delta`, returning (before, after).
fn with_change(fen: &str, name: &str, delta: i64) -> (i32, i32) {
    let pos = Position::from_fen(fen).unwrap();
    let mut params = Params::defaults();
    let before = evaluate_white(&pos, &EvalWeights::new(&params));
    let v = params.get_by_name(name).unwrap() as i64;
    params.set(name, v + delta).unwrap();
    (before, evaluate_white(&pos, &EvalWeights::new(&params)))
}

#[test]
fn parameters_move_the_evaluation_the_expected_way() {
    let middlegame = "r1bqk2r/pppp1ppp/2n2n2/4p3/1bB1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 4 5";
    // White has the bishop pair (Black's b4 bishop is its only one): a bigger bonus helps White.
    let two_bishops = "r1bqk2r/pppp1ppp/2n2n2/4p3/2B1P3/2N2N2/PPPP1PPP/R1BQK2R w KQkq - 0 5";
    let (a, b) = with_change(two_bishops, "bishop_pair_mg", 40);
    assert!(b > a, "{a} {b}");
    // A more valuable knight changes nothing when both sides have the same knights...
    let (a, b) = with_change(middlegame, "material_mg_knight", 50);
    assert_eq!(a, b);
    // ...and helps the side with the extra knight.
    let (a, b) = with_change(
        "4k3/8/8/8/8/8/3PP3/3NK3 w - - 0 1",
        "material_eg_knight",
        50,
    );
    assert!(b > a, "{a} {b}");
    // Passed pawns: a bigger bonus for a 6th-rank passer helps White in a pawn ending.
    let (a, b) = with_change("4k3/8/1P6/8/8/8/8/4K3 w - - 0 1", "passed_eg_5", 30);
    assert_eq!(b - a, 30);
    // A heavier isolated-pawn penalty hurts the side with the isolani.
    let (a, b) = with_change("4k3/pp6/8/8/8/8/P1P5/4K3 w - - 0 1", "isolated_eg", -20);
    assert!(b < a, "{a} {b}");
    // Tempo helps the side to move.
    let (a, b) = with_change(middlegame, "tempo_mg", 20);
    assert!(b > a, "{a} {b}");
    let black_to_move = "r1bqk2r/pppp1ppp/2n2n2/4p3/1bB1P3/2N2N2/PPPP1PPP/R1BQK2R b KQkq - 4 5";
    let (a, b) = with_change(black_to_move, "tempo_mg", 20);
    assert!(b < a, "{a} {b}");
    // The rook on the open d-file.
    let (a, b) = with_change(
        "4k3/ppp5/8/8/8/8/PPP5/3R2K1 w - - 0 1",
        "rook_open_file_eg",
        30,
    );
    assert!(b > a, "{a} {b}");
    // The knight PST: a knight on e5.
    let (a, b) = with_change("4k3/p7/8/4N3/8/8/P7/4K3 w - - 0 1", "pst_knight_eg_e5", 40);
    assert!(b > a, "{a} {b}");
}
