//! `bench`: a fixed-depth search over 50 built-in positions. The node count is the engine's
//! signature: identical on every run and every machine for a given build of the search, so
//! a changed count means a changed search (OpenBench and CI check it).

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::nnue::Net;
use crate::params::Params;
use crate::position::Position;
use crate::search::{Evaluation, Limits, Searcher};
use crate::tablebase::Tablebases;

/// Default bench depth.
pub const DEFAULT_DEPTH: i32 = 10;

/// The bench positions: middlegames from the 8moves book, tactical and endgame positions
/// from the perft suite.
pub const POSITIONS: [&str; 50] = [
    "rn1qkb1r/p4ppp/1pp1pn2/8/Q2PP3/5N2/PP1N1PPP/R1B1Kb1R w KQkq - 0 9",
    "r1bqk2r/p3npbp/1pnpp1p1/2p3B1/4P3/2NP2P1/PPP1NPBP/R2Q1RK1 w kq - 0 9",
    "r1b1kb1r/p1qn1ppp/1p2pn2/2p5/8/1Q3NP1/PP1PPPBP/RNB2RK1 w kq - 0 9",
    "r2qk2r/ppp1bppp/1nn1b3/4p3/1P6/P1N2NP1/3PPPBP/R1BQK2R w KQkq - 1 9",
    "1r1qk1nr/pp1bppbp/3p2p1/2p5/3nP3/2NPB1PP/PPP1NPB1/R2QK2R w KQk - 1 9",
    "r1bq1rk1/p2pppbp/1pn2np1/8/2P5/2N1P3/PPN1BPPP/R1BQK2R w KQ - 0 9",
    "r1bqk1nr/pp3pbp/2n1p3/2pp1P2/2B5/2N2N2/PPPP2PP/R1BQ1RK1 w kq - 0 9",
    "r1bqkb1r/pp1n1pp1/4pn1p/4P1B1/Q1Bp4/5N2/PP3PPP/RN2K2R w KQkq - 0 9",
    "r1bq1rk1/pp1nbppp/4pn2/3p4/2Pp1B2/2N1PN2/PPQ2PPP/3RKB1R w K - 0 9",
    "r1bqk2r/pp1p1ppp/2n2n2/2p5/2PPp3/P1PBP3/4NPPP/R1BQK2R w KQkq - 0 9",
    "rnbqk2r/1p2bpp1/p2ppn1p/6B1/3NPP2/2N5/PPP1Q1PP/R3KB1R w KQkq - 0 9",
    "r1bqk2r/p2nbppp/1pp1p3/3n4/3P1B2/1QN2NP1/PP2PP1P/R3KB1R w KQkq - 0 9",
    "r1b1k1nr/pppp1ppp/1b3q2/n3p3/2BPP3/1QP2N2/P4PPP/RNB2RK1 w kq - 1 9",
    "r2qk2r/pppnbppp/3p1n2/8/2PpP3/2N5/PP2NPPP/R1BQK2R w KQkq - 0 9",
    "r1bqk2r/pp3ppp/2n1pn2/4P1B1/Qbpp4/2N2N2/PP3PPP/R3KB1R w KQkq - 2 9",
    "r2qk1nr/p1pb1pbp/2pp2p1/8/2P5/2N3P1/PP2PPBP/R1BQK2R w KQkq - 2 9",
    "r1bq1rk1/ppp2pbp/2np1np1/8/2P1P3/2N1BN2/PP3PPP/R2QKB1R w KQ - 5 9",
    "r2qk2r/pp1n1ppp/2p1pn2/3p3b/1bP5/1P1PPN1P/PB2BPP1/RN1QK2R w KQkq - 1 9",
    "r1bqk2r/pp2npbp/2n1p1p1/2pp4/2B1PP2/2NP1N2/PPP3PP/R1BQ1R1K w kq - 0 9",
    "r1b1kb1r/pp1n1pp1/2p2q1p/3p4/3P4/2N2N2/PP2PPPP/2RQKB1R w Kkq - 2 9",
    "r1bqk2r/ppp1bppp/8/3pP3/8/2PB4/P1P2PPP/R1BQK2R w KQkq - 1 9",
    "r1bqk2r/p3ppbp/2p2np1/1p6/2pPP3/2N2N1P/PPP2PP1/R1BQK2R w KQkq - 0 9",
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
    "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "r3k2r/8/8/8/8/8/8/4K3 w kq - 0 1",
    "4k2r/6K1/8/8/8/8/8/8 w k - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "r3k2r/8/8/8/8/8/8/2R1K2R w Kkq - 0 1",
    "4k3/8/8/8/8/8/8/R3K3 b Q - 0 1",
    "r3k2r/8/8/8/8/8/8/4K3 b kq - 0 1",
    "4k2r/6K1/8/8/8/8/8/8 b k - 0 1",
    "r3k2r/8/8/8/8/8/8/1R2K2R b Kkq - 0 1",
    "1r2k2r/8/8/8/8/8/8/R3K2R b KQk - 0 1",
    "k7/8/2N5/1N6/8/8/8/K6n w - - 0 1",
    "k7/8/2N5/1N6/8/8/8/K6n b - - 0 1",
    "K7/8/8/3Q4/4q3/8/8/7k w - - 0 1",
    "8/8/8/8/8/7K/7P/7k b - - 0 1",
    "8/8/3k4/3p4/8/3P4/3K4/8 w - - 0 1",
    "k7/8/8/7p/6P1/8/8/K7 w - - 0 1",
    "k7/8/8/6p1/7P/8/8/K7 b - - 0 1",
    "3k4/3pp3/8/8/8/8/3PP3/3K4 w - - 0 1",
    "8/PPPk4/8/8/8/8/4Kppp/8 w - - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "rnbqkb1r/ppppp1pp/7n/4Pp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "r1bq1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R1BQ1RK1 w - - 0 9",
    "8/8/4k3/3p4/3P4/4K3/8/8 w - - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
];

/// What a bench run measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchResult {
    /// Nodes searched in all positions.
    pub nodes: u64,
    /// Wall time.
    pub time: Duration,
    /// Tablebase hits (0 without tables).
    pub tbhits: u64,
    /// Nodes in the positions with at least [`FAR_PIECES`] pieces, which no search of
    /// bench depth takes into 3-7-piece tables: what probing costs where it never hits.
    pub far_nodes: u64,
    /// Search time of those positions.
    pub far_time: Duration,
}

/// Positions with at least this many pieces count as far from the tables.
pub const FAR_PIECES: u32 = 16;

impl BenchResult {
    /// Nodes per second.
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.time.as_secs_f64().max(1e-9)) as u64
    }

    /// Nodes per second in the positions far from the tables.
    pub fn far_nps(&self) -> u64 {
        (self.far_nodes as f64 / self.far_time.as_secs_f64().max(1e-9)) as u64
    }

    /// The OpenBench line: `N nodes M nps`.
    pub fn line(&self) -> String {
        format!("{} nodes {} nps", self.nodes, self.nps())
    }
}

/// Searches every bench position to `depth` with one thread, a 16 MiB table cleared before
/// each position, the given parameters and the default evaluation.
pub fn run(depth: i32, params: &Params) -> BenchResult {
    run_with(depth, params, Evaluation::DEFAULT, None)
}

/// [`run`] with the given evaluation and network (`None`: the embedded net).
pub fn run_with(
    depth: i32,
    params: &Params,
    evaluation: Evaluation,
    net: Option<Arc<Net>>,
) -> BenchResult {
    run_tb(depth, params, evaluation, net, None)
}

/// [`run_with`] with Syzygy tables (`None`: none, the bench signature's setting).
pub fn run_tb(
    depth: i32,
    params: &Params,
    evaluation: Evaluation,
    net: Option<Arc<Net>>,
    tb: Option<Arc<Tablebases>>,
) -> BenchResult {
    let mut searcher = Searcher::new(params.clone());
    searcher.set_tablebases(tb);
    searcher.set_hash_mb(16);
    searcher.set_evaluation(evaluation);
    if let Some(net) = net {
        searcher.set_net(net);
    }
    let limits = Limits {
        depth: Some(depth),
        ..Limits::default()
    };
    let mut r = BenchResult {
        nodes: 0,
        time: Duration::ZERO,
        tbhits: 0,
        far_nodes: 0,
        far_time: Duration::ZERO,
    };
    for fen in POSITIONS {
        let pos = Position::from_fen(fen).expect("bench positions are valid");
        searcher.clear();
        // Only the searches are timed, not the table clears between them (as Stockfish does).
        let start = Instant::now();
        let result = searcher.search(&pos, &[], &limits, &mut |_| {});
        let time = start.elapsed();
        r.nodes += result.nodes;
        r.time += time;
        r.tbhits += result.tbhits;
        if pos.occupied().count() >= FAR_PIECES {
            r.far_nodes += result.nodes;
            r.far_time += time;
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_valid_and_distinct() {
        let mut keys = std::collections::HashSet::new();
        for fen in POSITIONS {
            let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert!(pos.has_legal_move(), "{fen}");
            assert!(keys.insert(pos.key()), "duplicate {fen}");
        }
    }

    #[test]
    fn bench_is_deterministic() {
        let params = Params::defaults();
        let a = run(5, &params);
        let b = run(5, &params);
        assert_eq!(a.nodes, b.nodes);
        assert!(a.nodes > 10_000);
        let n = run_with(5, &params, Evaluation::Nnue, None);
        assert_eq!(n.nodes, run_with(5, &params, Evaluation::Nnue, None).nodes);
        assert_eq!(n.tbhits, 0);
    }

    /// With tables, the positions far from them search exactly as without: the probes
    /// change nothing there.
    #[test]
    fn tables_change_only_the_positions_near_them() {
        let Some(tb) =
            crate::search::syzygy::test_tables("tables_change_only_the_positions_near_them")
        else {
            return;
        };
        let params = Params::defaults();
        let plain = run_with(6, &params, Evaluation::Hce, None);
        let with = run_tb(6, &params, Evaluation::Hce, None, Some(tb));
        assert_eq!(plain.far_nodes, with.far_nodes);
        assert!(with.tbhits > 0);
        assert_ne!(plain.nodes, with.nodes);
    }
}
