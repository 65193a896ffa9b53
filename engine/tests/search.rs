//! Search tests: mates, determinism, draws, threads, stopping. Kept cheap with depth and
//! node limits.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use engine::params::Params;
use engine::position::Position;
use engine::search::{Evaluation, Limits, Score, SearchInfo, SearchResult, Searcher};

fn search(fen: &str, limits: Limits) -> SearchResult {
    search_with(Evaluation::DEFAULT, fen, limits)
}

fn search_with(eval: Evaluation, fen: &str, limits: Limits) -> SearchResult {
    let pos = Position::from_fen(fen).unwrap();
    let mut searcher = Searcher::new(Params::defaults());
    searcher.set_evaluation(eval);
    searcher.search(&pos, &[], &limits, &mut |_| {})
}

fn depth(d: i32) -> Limits {
    Limits {
        depth: Some(d),
        ..Limits::default()
    }
}

fn nodes(n: u64) -> Limits {
    Limits {
        nodes: Some(n),
        ..Limits::default()
    }
}

fn uci(r: &SearchResult) -> String {
    r.best_move.map(|m| m.to_string()).unwrap_or_default()
}

/// Mate problems verified with an independent python-chess solver (exact length, unique
/// first move).
#[test]
fn solves_mates() {
    let cases = [
        // Nf6+ gxf6 Bxf7#.
        (
            "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1",
            2,
            "d5f6",
        ),
        // Morphy: the quiet Ra6!
        ("kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1", 2, "a1a6"),
        (
            "6k1/pp4p1/2p5/2bp4/8/P5Pb/1P3rrP/2BRRN1K b - - 0 1",
            2,
            "g2g1",
        ),
        (
            "3r1r1k/1p3p1p/p2p4/4n1NN/6bQ/1BPq4/P3p1PP/1R5K w - - 0 1",
            3,
            "g5f7",
        ),
        (
            "r1b1kb1r/pppp1ppp/5q2/4n3/3KP3/2N3PN/PPP4P/R1BQ1B1R b kq - 0 1",
            3,
            "f8c5",
        ),
    ];
    // Depth 24: the pruning margins were tuned with the handcrafted evaluation, and with the
    // network one of the mates in 3 first shows late: at depth 17 with generation 1
    // (docs/nnue.md), at depth 21 with generation 2 (docs/strength.md).
    for (fen, n, first) in cases {
        for eval in Evaluation::ALL {
            let r = search_with(eval, fen, depth(24));
            assert_eq!(r.score, Score::Mate(n), "{fen} ({eval:?}): {r:?}");
            assert_eq!(uci(&r), first, "{fen} ({eval:?})");
            assert_eq!(
                r.pv.len() as i32,
                2 * n - 1,
                "{fen} ({eval:?}): pv {:?}",
                r.pv
            );
        }
    }
}

#[test]
fn mated_side_sees_negative_mate() {
    // Whatever Black plays (a6 or a5), Qg7# follows.
    for eval in Evaluation::ALL {
        let r = search_with(eval, "7k/p7/5KQ1/8/8/8/8/8 b - - 0 1", depth(10));
        assert_eq!(r.score, Score::Mate(-1), "{eval:?}: {r:?}");
        assert_eq!(r.score.as_cp(), -29998);
    }
}

#[test]
fn checkmate_and_stalemate_at_the_root() {
    let mated = search("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", depth(5));
    assert_eq!((mated.best_move, mated.score), (None, Score::Mate(0)));
    let stalemate = search("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", depth(5));
    assert_eq!((stalemate.best_move, stalemate.score), (None, Score::Cp(0)));
    // A move into stalemate is seen as a draw: with K+Q v K, White must not play Qf7 here.
    let r = search("7k/8/6K1/8/8/8/8/5Q2 w - - 0 1", depth(6));
    assert!(matches!(r.score, Score::Mate(n) if n > 0), "{r:?}");
}

#[test]
fn draws_are_scored_zero() {
    // Insufficient material.
    let r = search("8/8/4k3/8/8/3NK3/8/8 w - - 0 1", depth(8));
    assert_eq!(r.score, Score::Cp(0));
    // Fifty-move rule: White is a rook up but the clock runs out on any non-capture,
    // non-pawn move. The only reset is impossible, so every line is a draw.
    let r = search("8/8/4k3/8/8/8/1R6/4K3 w - - 99 150", depth(6));
    assert_eq!(r.score, Score::Cp(0), "{r:?}");
}

#[test]
fn repetition_against_game_history() {
    // White is a queen down. Both kings shuffled (Kh1 Kh8 Kg1 Kg8), so Kh1 now repeats a
    // position of the game: a draw, which is White's best.
    let start = Position::from_fen("6k1/5ppp/8/q7/8/8/5PPP/6K1 w - - 0 1").unwrap();
    let mut history = Vec::new();
    let mut pos = start.clone();
    for mv in ["g1h1", "g8h8", "h1g1", "h8g8"] {
        history.push(pos.key());
        pos = pos.play(pos.parse_uci_move(mv).unwrap());
    }
    assert_eq!(pos.key(), start.key());
    let mut s = Searcher::new(Params::defaults());
    let r = s.search(&pos, &history, &depth(8), &mut |_| {});
    assert_eq!(r.score, Score::Cp(0), "{r:?}");
    assert_eq!(uci(&r), "g1h1");
    // Without the history, White is simply lost.
    s.clear();
    let r = s.search(&pos, &[], &depth(8), &mut |_| {});
    assert!(r.score.as_cp() < -300, "{r:?}");
}

fn same(a: &SearchResult, b: &SearchResult) {
    assert_eq!(
        (a.best_move, a.score, a.depth, a.nodes, &a.pv),
        (b.best_move, b.score, b.depth, b.nodes, &b.pv)
    );
}

#[test]
fn deterministic_with_a_node_limit() {
    let fens = [
        engine::position::STARTPOS_FEN,
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    ];
    for fen in fens {
        let pos = Position::from_fen(fen).unwrap();
        let mut infos_a: Vec<SearchInfo> = Vec::new();
        let mut a = Searcher::new(Params::defaults());
        let ra = a.search(&pos, &[], &nodes(30_000), &mut |i| infos_a.push(i.clone()));
        assert_eq!(ra.nodes, 30_000, "the node limit is exact");
        let mut b = Searcher::new(Params::defaults());
        let rb = b.search(&pos, &[], &nodes(30_000), &mut |_| {});
        same(&ra, &rb);
        // A second search depends on what the first left behind; clear() forgets it.
        a.search(&pos, &[], &nodes(5_000), &mut |_| {});
        a.clear();
        let mut infos_c: Vec<SearchInfo> = Vec::new();
        let rc = a.search(&pos, &[], &nodes(30_000), &mut |i| infos_c.push(i.clone()));
        same(&ra, &rc);
        let strip = |v: &[SearchInfo]| {
            v.iter()
                .map(|i| (i.depth, i.score, i.nodes, i.pv.clone()))
                .collect::<Vec<_>>()
        };
        assert_eq!(strip(&infos_a), strip(&infos_c));
        assert!(!infos_a.is_empty());
    }
}

#[test]
fn tiny_limits_still_give_a_legal_move() {
    let pos = Position::startpos();
    for n in [1, 2, 10, 100] {
        let r = Searcher::new(Params::defaults()).search(&pos, &[], &nodes(n), &mut |_| {});
        let mv = r.best_move.expect("a move");
        assert!(pos.legal_moves().contains(mv), "nodes {n}");
        assert!(r.nodes <= n.max(1), "nodes {n}: {}", r.nodes);
    }
    let r = search(
        engine::position::STARTPOS_FEN,
        Limits {
            movetime: Some(Duration::from_millis(1)),
            ..Limits::default()
        },
    );
    assert!(r.best_move.is_some());
}

#[test]
fn iterations_are_reported() {
    let pos = Position::startpos();
    let mut depths = Vec::new();
    let r = Searcher::new(Params::defaults()).search(&pos, &[], &depth(6), &mut |i| {
        assert!(!i.pv.is_empty());
        assert!(i.nodes > 0 && i.seldepth >= i.depth);
        depths.push(i.depth);
    });
    assert_eq!(depths, (1..=6).collect::<Vec<_>>());
    assert_eq!(r.depth, 6);
    assert_eq!(r.pv.first().copied(), r.best_move);
    let mut p = pos.clone();
    for &m in &r.pv {
        assert!(p.legal_moves().contains(m), "pv {:?}", r.pv);
        p = p.play(m);
    }
}

#[test]
fn two_threads_search() {
    let pos = Position::from_fen(
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    )
    .unwrap();
    let mut s = Searcher::new(Params::defaults());
    s.set_threads(2);
    s.set_hash_mb(3);
    let r = s.search(&pos, &[], &depth(7), &mut |_| {});
    assert!(pos.legal_moves().contains(r.best_move.unwrap()));
    assert_eq!(r.depth, 7);
    let r = s.search(&pos, &[], &nodes(50_000), &mut |_| {});
    assert!(pos.legal_moves().contains(r.best_move.unwrap()));
    assert!(r.nodes >= 50_000 && r.nodes < 200_000, "{}", r.nodes);
    // Two threads also find mates.
    let mate =
        Position::from_fen("r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1")
            .unwrap();
    let r = s.search(&mate, &[], &depth(6), &mut |_| {});
    assert_eq!(r.score, Score::Mate(2));
}

#[test]
fn stop_flag_stops_an_infinite_search() {
    let pos = Position::startpos();
    let mut s = Searcher::new(Params::defaults());
    let flag = s.stop_flag();
    let stopper = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        let t = Instant::now();
        flag.store(true, Ordering::Relaxed);
        t
    });
    let r = s.search(
        &pos,
        &[],
        &Limits {
            infinite: true,
            ..Limits::default()
        },
        &mut |_| {},
    );
    let done = Instant::now();
    let stopped_at = stopper.join().unwrap();
    assert!(
        done.duration_since(stopped_at) < Duration::from_millis(1000),
        "{:?}",
        done.duration_since(stopped_at)
    );
    assert!(pos.legal_moves().contains(r.best_move.unwrap()));
    // The flag is cleared by the next search.
    let r = s.search(&pos, &[], &depth(3), &mut |_| {});
    assert_eq!(r.depth, 3);
}

#[test]
fn movetime_is_respected() {
    let pos = Position::startpos();
    let t = Instant::now();
    let r = Searcher::new(Params::defaults()).search(
        &pos,
        &[],
        &Limits {
            movetime: Some(Duration::from_millis(100)),
            ..Limits::default()
        },
        &mut |_| {},
    );
    let e = t.elapsed();
    assert!(
        e >= Duration::from_millis(90) && e < Duration::from_millis(2000),
        "{e:?}"
    );
    assert!(r.best_move.is_some());
}

#[test]
fn clock_time_management() {
    let pos = Position::startpos();
    let limits = Limits {
        wtime: Some(Duration::from_millis(2000)),
        btime: Some(Duration::from_millis(2000)),
        ..Limits::default()
    };
    let t = Instant::now();
    let r = Searcher::new(Params::defaults()).search(&pos, &[], &limits, &mut |_| {});
    assert!(
        t.elapsed() < Duration::from_millis(3000),
        "{:?}",
        t.elapsed()
    );
    assert!(r.depth >= 3);
}

#[test]
fn params_change_the_search() {
    let pos = Position::startpos();
    let mut p = Params::defaults();
    p.set("lmr_base", 150).unwrap();
    let mut s = Searcher::new(p.clone());
    assert_eq!(s.params().get_by_name("lmr_base"), Some(150));
    let a = s.search(&pos, &[], &depth(7), &mut |_| {});
    let mut d = Searcher::new(Params::defaults());
    let b = d.search(&pos, &[], &depth(7), &mut |_| {});
    assert_ne!(a.nodes, b.nodes);
    s.set_params(Params::defaults());
    s.clear();
    let c = s.search(&pos, &[], &depth(7), &mut |_| {});
    assert_eq!(c.nodes, b.nodes);
}

#[test]
fn searchmoves_restrict_the_root() {
    let pos = Position::startpos();
    let allowed: Vec<_> = ["a2a3", "h2h4"]
        .iter()
        .map(|m| pos.parse_uci_move(m).unwrap())
        .collect();
    let mut s = Searcher::new(Params::defaults());
    let mut pv_starts = Vec::new();
    let r = s.search(
        &pos,
        &[],
        &Limits {
            depth: Some(7),
            searchmoves: allowed.clone(),
            ..Limits::default()
        },
        &mut |info| pv_starts.push(info.pv[0]),
    );
    assert!(allowed.contains(&r.best_move.unwrap()), "{:?}", r.best_move);
    assert!(
        pv_starts.iter().all(|m| allowed.contains(m)),
        "{pv_starts:?}"
    );
    // A stop before the first iteration completes still answers with an allowed move.
    s.stop_flag().store(true, Ordering::Relaxed);
    let r = s.search(
        &pos,
        &[],
        &Limits {
            searchmoves: vec![allowed[1]],
            ..Limits::default()
        },
        &mut |_| {},
    );
    assert_eq!(r.best_move, Some(allowed[1]));
    s.stop_flag().store(false, Ordering::Relaxed);
    // Moves that are not legal here are ignored; none legal means all moves.
    let black = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1")
        .unwrap()
        .parse_uci_move("e7e5")
        .unwrap();
    let r = s.search(
        &pos,
        &[],
        &Limits {
            depth: Some(4),
            searchmoves: vec![black],
            ..Limits::default()
        },
        &mut |_| {},
    );
    assert!(pos.legal_moves().contains(r.best_move.unwrap()));
}

#[test]
fn pondering_ignores_the_clock_until_ponderhit() {
    let pos = Position::startpos();
    let mut s = Searcher::new(Params::defaults());
    let ponder = s.ponder_flag();
    ponder.store(true, Ordering::Relaxed);
    let (tx, rx) = std::sync::mpsc::channel();
    let worker = std::thread::spawn(move || {
        let limits = Limits {
            movetime: Some(Duration::from_millis(20)),
            ..Limits::default()
        };
        let r = s.search(&pos, &[], &limits, &mut |_| {});
        tx.send(Instant::now()).unwrap();
        r
    });
    // Far beyond the 20 ms movetime, the search is still going.
    assert!(rx.recv_timeout(Duration::from_millis(500)).is_err());
    let hit = Instant::now();
    ponder.store(false, Ordering::Relaxed);
    let done = rx
        .recv_timeout(Duration::from_secs(10))
        .expect("ends after ponderhit");
    let r = worker.join().unwrap();
    // The clock started at ponderhit: the 20 ms movetime then applies (loose bound for a
    // busy machine).
    assert!(done.duration_since(hit) < Duration::from_millis(1500));
    assert!(
        r.depth >= 5,
        "pondering searched deeper than 20 ms would: {}",
        r.depth
    );
}

#[test]
fn go_mate_stops_at_a_short_enough_mate() {
    let fen = "3r1r1k/1p3p1p/p2p4/4n1NN/6bQ/1BPq4/P3p1PP/1R5K w - - 0 1";
    let mate = |n| Limits {
        mate: Some(n),
        ..Limits::default()
    };
    // Without another limit the search would go on to the maximum depth.
    let r3 = search(fen, mate(3));
    assert_eq!((uci(&r3), r3.score), ("g5f7".to_string(), Score::Mate(3)));
    assert!(r3.depth < 30, "went on to depth {}", r3.depth);
    // A mate shorter than asked for also ends it.
    let r = search(fen, mate(5));
    assert_eq!((r.score, r.depth), (Score::Mate(3), r3.depth));
    // A longer one does not: the search goes on until another limit ends it.
    let r = search(
        fen,
        Limits {
            nodes: Some(200_000),
            ..mate(2)
        },
    );
    assert!(
        r.depth > r3.depth || r.nodes >= 200_000,
        "stopped at depth {} with {:?}",
        r.depth,
        r.score
    );
}
