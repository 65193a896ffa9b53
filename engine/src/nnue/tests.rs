//! Tests of the NNUE inference: incremental accumulators against full refreshes along random
//! games, scalar against SIMD kernels, and colour symmetry.

use std::collections::BTreeSet;

use super::network::{View, INPUTS};
use super::simd::Kernel;
use super::{AccumulatorStack, Layout, Net, Network};
use crate::position::Position;
use crate::rng::SplitMix64;
use crate::types::{Color, Move, MoveKind, PieceType};

/// Starts that force every kind of move early: castling both ways (standard and Chess960,
/// king and rook landing on each other's squares), en passant, promotions with and without
/// capture, and full armies to capture.
const STARTS: [&str; 10] = [
    crate::position::STARTPOS_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
    // Chess960: king b1 between rooks a1 and h1 (queenside: king c1, rook d1).
    "rk5r/p6p/8/8/8/8/P6P/RK5R w HAha - 0 1",
    // Chess960: king e1, rook f1 (kingside: rook stays), rook c1 (queenside: king onto c1).
    "2r1kr2/pp4pp/8/8/8/8/PP4PP/2R1KR2 b FCfc - 0 1",
    // Chess960: king f1, rook g1 (kingside: king onto g1, rook onto f1, a swap).
    "1r3kr1/1p4p1/8/8/8/8/1P4P1/1R3KR1 w GBgb - 0 1",
    "rnbqkb1r/ppppp1pp/7n/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "r1n1n2k/1P1P1P2/8/8/8/8/1p1p1p2/R1N1N2K w - - 0 1",
    "4k3/pppppppp/8/8/8/8/PPPPPPPP/4K3 w - - 0 1",
];

/// A random network whose accumulators stay within `i16` (|feature weight| ≤ 400, at most 32
/// pieces) and whose output weights are within ±127.
fn random_network(hidden: usize, seed: u64) -> Network {
    random_network_of(Layout::PLAIN, hidden, seed)
}

/// [`random_network`] of any layout.
fn random_network_of(layout: Layout, hidden: usize, seed: u64) -> Network {
    let mut rng = SplitMix64::new(seed);
    let mut uniform = |range: i32| (rng.below(2 * range as usize + 1) as i32 - range) as i16;
    let mut net = Network::zeroed(hidden, layout);
    net.feature_weights
        .iter_mut()
        .for_each(|w| *w = uniform(400));
    net.feature_bias.iter_mut().for_each(|b| *b = uniform(300));
    net.output_weights
        .iter_mut()
        .for_each(|w| *w = uniform(127));
    net.output_bias
        .iter_mut()
        .for_each(|b| *b = i32::from(uniform(30_000)) * 4);
    assert_eq!(
        net.feature_weights.len(),
        INPUTS * layout.king_buckets * hidden
    );
    net
}

/// What the random walks did, to check that every case was exercised.
#[derive(Default)]
struct Coverage {
    seen: BTreeSet<String>,
}

impl Coverage {
    fn note(&mut self, pos: &Position, mv: Move) {
        let us = pos.side_to_move();
        self.seen.insert(format!("moved {:?}", pos.moved(mv)));
        if let Some(c) = pos.captured(mv) {
            self.seen.insert(format!("captured {c:?}"));
        }
        let what = match mv.kind() {
            MoveKind::Castle if mv.to() > mv.from() => format!("castle king {us:?}"),
            MoveKind::Castle => format!("castle queen {us:?}"),
            MoveKind::EnPassant => "en passant".to_string(),
            _ if mv.is_promotion() && mv.is_capture() => "promotion capture".to_string(),
            _ if mv.is_promotion() => "promotion".to_string(),
            _ => return,
        };
        if pos.is_chess960() && mv.is_castle() {
            self.seen.insert(format!("960 {what}"));
        }
        self.seen.insert(what);
    }
}

/// Random walks from every start (with backtracking, like a search), checking after one step
/// in three that the lazily updated accumulators equal a refresh. Calls `check` on every
/// position.
fn random_walks(net: &Net, walks: usize, seed: u64, check: impl FnMut(&Position)) -> Coverage {
    random_walks_checking(net, walks, seed, 3, check)
}

/// [`random_walks`], comparing with a refresh after one step in `every`.
fn random_walks_checking(
    net: &Net,
    walks: usize,
    seed: u64,
    every: usize,
    mut check: impl FnMut(&Position),
) -> Coverage {
    let mut rng = SplitMix64::new(seed);
    let mut stack = AccumulatorStack::new(64);
    stack.set_width(net.hidden());
    let mut fresh = vec![super::simd::Lanes::default(); net.hidden() / 16];
    let mut coverage = Coverage::default();
    for walk in 0..walks {
        let start = Position::from_fen(STARTS[walk % STARTS.len()]).unwrap();
        let mut path = vec![start.clone()];
        stack.refresh(net, 0, &start);
        for _ in 0..120 {
            let ply = path.len() - 1;
            let pos = &path[ply];
            let moves = pos.legal_moves();
            let back = rng.below(8) == 0 && ply > 0;
            if moves.is_empty() || back || ply + 1 >= 64 {
                let keep = rng.below(ply.max(1)) + 1;
                path.truncate(keep);
                continue;
            }
            let mut child = pos.clone();
            if !pos.in_check() && rng.below(16) == 0 {
                child.play_null_mut();
                stack.push_null(ply + 1);
            } else {
                let mv = moves.as_slice()[rng.below(moves.len())];
                coverage.note(pos, mv);
                if pos.moved(mv) == PieceType::King {
                    let us = pos.side_to_move();
                    let before = net.view(pos, us);
                    let after = net.view(&pos.play(mv), us);
                    if before.bucket() != after.bucket() {
                        coverage.seen.insert("king bucket change".into());
                    }
                    if before.mirrored() != after.mirrored() {
                        coverage.seen.insert("mirror change".into());
                    }
                }
                child.play_mut(mv);
                stack.push_move(ply + 1, pos, mv);
            }
            if rng.below(every) == 0 {
                for c in Color::ALL {
                    net.refresh(&child, c, &mut fresh);
                    assert_eq!(
                        stack.accumulator(net, ply + 1, c),
                        super::simd::flat(&fresh),
                        "{c:?} accumulator after {} (from {})",
                        child.to_fen(),
                        pos.to_fen()
                    );
                }
                assert_eq!(
                    stack.evaluate(net, ply + 1, child.side_to_move()),
                    net.evaluate(&child)
                );
            }
            check(&child);
            path.push(child);
        }
    }
    coverage
}

#[test]
fn incremental_accumulators_equal_a_refresh_after_every_kind_of_move() {
    for (hidden, seed) in [(16, 1), (128, 2)] {
        let net = Net::new(&random_network(hidden, seed));
        let coverage = random_walks(&net, 400, seed, |_| {});
        let mut expected: Vec<String> = Vec::new();
        for kind in PieceType::ALL {
            expected.push(format!("moved {kind:?}"));
            if kind != PieceType::King {
                expected.push(format!("captured {kind:?}"));
            }
        }
        for side in ["king", "queen"] {
            for color in ["White", "Black"] {
                expected.push(format!("castle {side} {color}"));
                expected.push(format!("960 castle {side} {color}"));
            }
        }
        expected.extend(["en passant", "promotion", "promotion capture"].map(String::from));
        let missing: Vec<_> = expected
            .iter()
            .filter(|e| !coverage.seen.contains(*e))
            .collect();
        assert!(missing.is_empty(), "never exercised: {missing:?}");
    }
}

#[test]
fn scalar_and_simd_evaluations_agree_exactly() {
    let kernels = Kernel::available();
    for (hidden, seed) in [(32, 11), (256, 12)] {
        let network = random_network(hidden, seed);
        let nets: Vec<Net> = kernels
            .iter()
            .map(|&k| Net::new(&network).with_kernel(k))
            .collect();
        let mut positions = 0;
        random_walks(&nets[0], 60, seed, |pos| {
            let evals: Vec<i32> = nets.iter().map(|n| n.evaluate(pos)).collect();
            assert!(
                evals.windows(2).all(|w| w[0] == w[1]),
                "{evals:?} {}",
                pos.to_fen()
            );
            positions += 1;
        });
        assert!(positions > 3000, "{positions}");
    }
}

/// The position with colours swapped and the board flipped top to bottom.
fn mirror(pos: &Position) -> Position {
    let text = crate::eval::tests::mirror_fen(&pos.to_fen());
    let mut m = Position::from_fen(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    m.set_chess960(pos.is_chess960());
    m
}

#[test]
fn a_position_and_its_colour_flipped_mirror_evaluate_equal() {
    let random = Net::new(&random_network(64, 21));
    let placeholder = super::default_net();
    let mut n = 0;
    random_walks(&random, 40, 21, |pos| {
        let m = mirror(pos);
        assert_eq!(mirror(&m).key(), pos.key());
        assert_eq!(
            random.evaluate(pos),
            random.evaluate(&m),
            "{}",
            pos.to_fen()
        );
        assert_eq!(placeholder.evaluate(pos), placeholder.evaluate(&m));
        n += 1;
    });
    assert!(n > 1000);
}

#[test]
fn loading_a_bad_file_names_it_in_one_line() {
    let dir = std::env::temp_dir().join(format!("spar-nnue-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let good = random_network(16, 5).to_bytes();
    let cases: [(&str, Vec<u8>, &str); 3] = [
        ("short.nnue", good[..good.len() - 10].to_vec(), "truncated"),
        ("junk.nnue", b"not a network".to_vec(), "magic"),
        (
            "flipped.nnue",
            {
                let mut b = good.clone();
                b[200] ^= 4;
                b
            },
            "checksum",
        ),
    ];
    for (name, bytes, why) in cases {
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        let err = Net::load(&path).unwrap_err();
        assert!(
            err.contains(name) && err.contains(why) && !err.contains('\n'),
            "{err}"
        );
    }
    let missing = dir.join("missing.nnue");
    let err = Net::load(&missing).unwrap_err();
    assert!(err.contains("missing.nnue") && !err.contains('\n'), "{err}");
    let path = dir.join("good.nnue");
    std::fs::write(&path, &good).unwrap();
    assert_eq!(Net::load(&path).unwrap().hidden(), 16);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Layouts the bucketed tests run: king buckets with and without output buckets.
fn bucketed_layouts() -> Vec<Layout> {
    [(4, 8), (8, 1), (2, 3)]
        .iter()
        .map(|&(k, o)| Layout::new(k, o).unwrap())
        .collect()
}

#[test]
fn bucketed_accumulators_equal_a_refresh_at_every_ply() {
    for (i, layout) in bucketed_layouts().into_iter().enumerate() {
        let seed = 30 + i as u64;
        let net = Net::new(&random_network_of(layout, 32, seed));
        let coverage = random_walks_checking(&net, 300, seed, 1, |_| {});
        for what in [
            "king bucket change",
            "mirror change",
            "castle king White",
            "castle queen Black",
            "960 castle king White",
            "en passant",
            "promotion",
            "promotion capture",
            "captured Queen",
        ] {
            assert!(coverage.seen.contains(what), "{layout}: never {what}");
        }
    }
}

#[test]
fn bucketed_scalar_and_simd_evaluations_agree_and_colours_mirror() {
    let layout = Layout::new(4, 8).unwrap();
    let network = random_network_of(layout, 64, 41);
    let nets: Vec<Net> = Kernel::available()
        .into_iter()
        .map(|k| Net::new(&network).with_kernel(k))
        .collect();
    let mut n = 0;
    random_walks(&nets[0], 40, 41, |pos| {
        let evals: Vec<i32> = nets.iter().map(|net| net.evaluate(pos)).collect();
        assert!(evals.windows(2).all(|w| w[0] == w[1]), "{evals:?}");
        assert_eq!(evals[0], nets[0].evaluate(&mirror(pos)), "{}", pos.to_fen());
        n += 1;
    });
    assert!(n > 1000);
}

/// The position with files a–h swapped (castling and en passant dropped: the features do
/// not see them).
fn mirror_files(pos: &Position) -> Position {
    let fen = pos.to_fen();
    let mut fields: Vec<&str> = fen.split(' ').collect();
    let board: Vec<String> = fields[0]
        .split('/')
        .map(|rank| {
            let mut squares = String::new();
            for ch in rank.chars() {
                match ch.to_digit(10) {
                    Some(d) => squares.extend(std::iter::repeat_n('1', d as usize)),
                    None => squares.push(ch),
                }
            }
            squares.chars().rev().collect()
        })
        .collect();
    let board = board.join("/");
    fields[0] = &board;
    fields[2] = "-";
    fields[3] = "-";
    Position::from_fen(&fields.join(" ")).unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// The sorted feature indices of `perspective` in `pos`.
fn features(net: &Net, pos: &Position, perspective: Color) -> Vec<usize> {
    let view: View = net.view(pos, perspective);
    let mut f: Vec<usize> = pos
        .occupied()
        .map(|sq| {
            let p = pos.piece_on(sq).unwrap();
            view.index(p.color() == perspective, p.kind(), sq)
        })
        .collect();
    f.sort_unstable();
    f
}

#[test]
fn a_file_mirrored_position_has_the_same_bucketed_features() {
    let layout = Layout::new(4, 8).unwrap();
    let net = Net::new(&random_network_of(layout, 16, 51));
    let plain = Net::new(&random_network(16, 51));
    let mut n = 0;
    random_walks(&net, 30, 51, |pos| {
        let m = mirror_files(pos);
        for c in Color::ALL {
            assert_eq!(
                features(&net, pos, c),
                features(&net, &m, c),
                "{}",
                pos.to_fen()
            );
            // Each feature of the mirror is the original's with the square's file flipped,
            // in the same (mirror-flipped) view.
            let v = net.view(pos, c);
            let vm = net.view(&m, c);
            assert_eq!((v.bucket(), v.mirrored()), (vm.bucket(), !vm.mirrored()));
            for sq in pos.occupied() {
                let p = pos.piece_on(sq).unwrap();
                let msq = crate::types::Square::from_index(sq.index() ^ 7);
                assert_eq!(
                    v.index(p.color() == c, p.kind(), sq),
                    vm.index(p.color() == c, p.kind(), msq)
                );
            }
        }
        assert_eq!(net.evaluate(pos), net.evaluate(&m));
        // Without buckets, no mirror: the features differ whenever a piece is off the
        // middle line (always, with both kings).
        assert_ne!(
            features(&plain, pos, Color::White),
            features(&plain, &m, Color::White)
        );
        n += 1;
    });
    assert!(n > 500);
}

/// Today's formula written out for the plain layout (the one before buckets): the embedded
/// net must evaluate with it exactly.
fn plain_reference_eval(net: &Network, pos: &Position) -> i32 {
    use super::network::{feature_index, QA, QB, SCALE};
    let h = net.hidden;
    let acc = |perspective: Color| {
        let mut a = net.feature_bias.clone();
        for sq in pos.occupied() {
            let p = pos.piece_on(sq).unwrap();
            let f = feature_index(perspective, p.color(), p.kind(), sq);
            for (x, w) in a.iter_mut().zip(&net.feature_weights[f * h..(f + 1) * h]) {
                *x = x.wrapping_add(*w);
            }
        }
        a
    };
    let stm = pos.side_to_move();
    let (us, them) = (acc(stm), acc(!stm));
    let mut sum = 0i32;
    for (a, w) in us.iter().chain(&them).zip(&net.output_weights) {
        let u = i32::from(*a).clamp(0, QA);
        sum = sum.wrapping_add(u * u * i32::from(*w));
    }
    (i64::from(sum / QA + net.output_bias[0]) * i64::from(SCALE) / i64::from(QA * QB)) as i32
}

#[test]
fn the_old_format_default_net_loads_byte_for_byte_and_evaluates_as_before() {
    let bytes = super::embedded::DEFAULT_NET_BYTES;
    assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
    let network = Network::from_bytes(bytes).unwrap();
    assert!(network.layout.is_plain());
    assert_eq!(
        network.to_bytes(),
        bytes,
        "a plain net is written as version 1"
    );
    let net = super::default_net();
    let mut n = 0;
    random_walks(&net, 20, 61, |pos| {
        assert_eq!(net.evaluate(pos), plain_reference_eval(&network, pos));
        n += 1;
    });
    assert!(n > 500);
}

#[test]
fn a_bucketed_file_loads_and_a_bad_one_is_refused_without_panic() {
    let dir = std::env::temp_dir().join(format!("spar-nnue-buckets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let layout = Layout::new(4, 8).unwrap();
    let network = random_network_of(layout, 16, 71);
    let good = network.to_bytes();
    let path = dir.join("bucketed.nnue");
    std::fs::write(&path, &good).unwrap();
    let net = Net::load(&path).unwrap();
    assert_eq!(net.layout(), layout);
    let pos = Position::from_fen(STARTS[1]).unwrap();
    assert_eq!(net.evaluate(&pos), Net::new(&network).evaluate(&pos));
    let short = dir.join("short.nnue");
    std::fs::write(&short, &good[..good.len() / 2]).unwrap();
    let err = Net::load(&short).unwrap_err();
    assert!(
        err.contains("short.nnue") && err.contains("4 king buckets × 8 output buckets"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_stack_serves_a_bucketed_net_then_a_plain_one_then_the_bucketed_again() {
    let bucketed = Net::new(&random_network_of(Layout::new(8, 4).unwrap(), 16, 81));
    let plain = Net::new(&random_network(16, 82));
    let mut stack = AccumulatorStack::new(64);
    stack.set_width(16);
    let mut rng = SplitMix64::new(83);
    for net in [&bucketed, &plain, &bucketed, &plain] {
        let mut pos = Position::from_fen(STARTS[2]).unwrap();
        stack.refresh(net, 0, &pos);
        for ply in 1..40 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            let mv = moves.as_slice()[rng.below(moves.len())];
            stack.push_move(ply, &pos, mv);
            pos.play_mut(mv);
            assert_eq!(
                stack.evaluate(net, ply, pos.side_to_move()),
                net.evaluate(&pos),
                "{}",
                pos.to_fen()
            );
        }
    }
}
