//! The search: iterative deepening with aspiration windows over a principal-variation
//! alpha-beta search with quiescence, a shared transposition table and Lazy SMP.
//!
//! | file | concern |
//! |---|---|
//! | [`mod.rs`](self) | the public API: [`Searcher`], [`Limits`], [`Score`], results |
//! | `alphabeta.rs` | the per-thread search: negamax, quiescence, iterative deepening |
//! | [`tt`] | the shared transposition table |
//! | [`picker`] | the staged move selector |
//! | [`history`] | move-ordering statistics |
//! | [`see`] | static exchange evaluation |
//! | [`legality`] | the fast legality test for TT, killer and counter moves |
//! | [`timeman`] | time bounds from the clock |
//! | [`params`] | the tunable search parameters |
//! | [`syzygy`] | tablebase settings, scores and the root-move ranking |
//!
//! ```
//! use engine::params::Params;
//! use engine::position::Position;
//! use engine::search::{Limits, Searcher};
//! let mut searcher = Searcher::new(Params::defaults());
//! let limits = Limits { depth: Some(4), ..Limits::default() };
//! let result = searcher.search(&Position::startpos(), &[], &limits, &mut |_| {});
//! assert!(result.best_move.is_some());
//! ```

mod alphabeta;
pub mod history;
pub mod legality;
pub mod params;
pub mod picker;
pub mod see;
pub mod syzygy;
pub mod timeman;
pub mod tt;

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::eval::EvalWeights;
use crate::nnue::{default_net, Net};
use crate::params::Params;
use crate::position::Position;
use crate::tablebase::Tablebases;
use crate::types::Move;

use alphabeta::{Shared, ThreadData, Worker};
use params::SearchParams;
pub use syzygy::SyzygyConfig;
use tt::TranspositionTable;

/// Deepest ply the search reaches (the stacks are this long).
pub const MAX_PLY: usize = 128;
/// Largest iteration depth.
pub const MAX_DEPTH: i32 = 100;
/// The score of being mated now (negated: of mating now).
pub const MATE: i32 = 30000;
/// Scores at least this large are mates found within [`MAX_PLY`].
pub const MATE_IN_MAX: i32 = MATE - MAX_PLY as i32;
/// A tablebase win found at ply `p` scores `TB_WIN - p`: just inside the mate range, below
/// every real mate.
pub const TB_WIN: i32 = MATE_IN_MAX - 1;
/// Scores at least this large are tablebase wins (or mates).
pub const TB_WIN_IN_MAX: i32 = TB_WIN - MAX_PLY as i32;
/// Larger than any score.
pub const INFINITY: i32 = MATE + 1;

/// What bounds a search. Every field is optional; with none set, the search runs until
/// [`MAX_DEPTH`] or until stopped.
#[derive(Default, Clone, Debug)]
pub struct Limits {
    /// Largest iteration depth.
    pub depth: Option<i32>,
    /// Stop as soon as this many nodes have been searched (exact with one thread).
    pub nodes: Option<u64>,
    /// Search exactly this long.
    pub movetime: Option<Duration>,
    /// White's remaining clock time.
    pub wtime: Option<Duration>,
    /// Black's remaining clock time.
    pub btime: Option<Duration>,
    /// White's increment per move.
    pub winc: Option<Duration>,
    /// Black's increment per move.
    pub binc: Option<Duration>,
    /// Moves to the next time control.
    pub movestogo: Option<u32>,
    /// Search until stopped (`go infinite`): the search does not return before the stop
    /// flag is set, even if it has run out of depth.
    pub infinite: bool,
    /// Stop as soon as a mate in at most this many moves is found (`go mate N`); other limits
    /// still apply.
    pub mate: Option<u32>,
    /// Search only these root moves (`go searchmoves`); empty means all. Moves that are not
    /// legal in the position are ignored, and if none is legal, every move is searched.
    pub searchmoves: Vec<Move>,
}

/// A search score in UCI terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Score {
    /// Centipawns from the side to move's point of view.
    Cp(i32),
    /// Mate in this many moves (negative: the side to move gets mated; `Mate(0)`: the side
    /// to move is checkmated now).
    Mate(i32),
}

impl Score {
    /// Converts an internal score (mate = ±([`MATE`] − plies)) to a UCI score. A
    /// tablebase win at ply `p` ([`TB_WIN`] − `p`) is reported as Stockfish does, `cp
    /// 20000 − p` (a loss negated).
    pub fn from_internal(score: i32) -> Score {
        if (TB_WIN_IN_MAX..MATE_IN_MAX).contains(&score.abs()) {
            let cp = 20_000 - (TB_WIN - score.abs());
            Score::Cp(if score > 0 { cp } else { -cp })
        } else if score >= MATE_IN_MAX {
            Score::Mate((MATE - score + 1) / 2)
        } else if score <= -MATE_IN_MAX {
            Score::Mate(-(MATE + score) / 2)
        } else {
            Score::Cp(score)
        }
    }

    /// The score as centipawns for adjudication and statistics: a mate in `n` moves maps
    /// to `±(30000 − plies)` (mate in 1 = 29999, mated in 1 = −29998, mated now = −30000).
    ///
    /// ```
    /// use engine::search::Score;
    /// assert_eq!(Score::Cp(35).as_cp(), 35);
    /// assert_eq!(Score::Mate(1).as_cp(), 29999);
    /// assert_eq!(Score::Mate(-2).as_cp(), -29996);
    /// assert!(Score::Mate(3).as_cp() > Score::Mate(4).as_cp());
    /// ```
    pub fn as_cp(self) -> i32 {
        match self {
            Score::Cp(cp) => cp,
            Score::Mate(n) if n > 0 => MATE - (2 * n - 1),
            Score::Mate(n) => -(MATE + 2 * n),
        }
    }

    /// Whether this is a mate score.
    pub fn is_mate(self) -> bool {
        matches!(self, Score::Mate(_))
    }
}

impl fmt::Display for Score {
    /// UCI form: `cp 25` or `mate -3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Score::Cp(cp) => write!(f, "cp {cp}"),
            Score::Mate(n) => write!(f, "mate {n}"),
        }
    }
}

/// Progress after each completed iteration of the main thread.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchInfo {
    /// Iteration depth.
    pub depth: i32,
    /// Deepest ply reached.
    pub seldepth: i32,
    /// Score of the best move.
    pub score: Score,
    /// Nodes searched by all threads so far.
    pub nodes: u64,
    /// Nodes per second.
    pub nps: u64,
    /// Time since the search started.
    pub time: Duration,
    /// Transposition-table fill, per mille.
    pub hashfull: u32,
    /// Principal variation.
    pub pv: Vec<Move>,
    /// Tablebase probes that found a value, by all threads so far.
    pub tbhits: u64,
}

/// The outcome of a search.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchResult {
    /// The move to play; `None` only when there is no legal move.
    pub best_move: Option<Move>,
    /// The expected reply, if known.
    pub ponder: Option<Move>,
    /// Score of the last completed iteration.
    pub score: Score,
    /// Depth of the last completed iteration.
    pub depth: i32,
    /// Deepest ply reached.
    pub seldepth: i32,
    /// Nodes searched by all threads.
    pub nodes: u64,
    /// Principal variation (starts with `best_move` when one exists).
    pub pv: Vec<Move>,
    /// Time used.
    pub time: Duration,
    /// Tablebase probes that found a value.
    pub tbhits: u64,
}

/// Which static evaluation the search calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Evaluation {
    /// The handcrafted evaluation ([`crate::eval`]).
    Hce,
    /// The neural network ([`crate::nnue`]).
    Nnue,
}

impl Evaluation {
    /// The evaluation a new searcher uses (the UCI `Eval` option's default, and `spar
    /// datagen --eval`'s): the network.
    pub const DEFAULT: Evaluation = Evaluation::Nnue;

    /// Every evaluation, in the order the UCI combo lists them.
    pub const ALL: [Evaluation; 2] = [Evaluation::Hce, Evaluation::Nnue];

    /// The option value naming it: `hce` or `nnue`.
    pub const fn name(self) -> &'static str {
        match self {
            Evaluation::Hce => "hce",
            Evaluation::Nnue => "nnue",
        }
    }

    /// Reads `hce` or `nnue` (any case); the error is one line.
    ///
    /// ```
    /// use engine::search::Evaluation;
    /// assert_eq!(Evaluation::parse("NNUE"), Ok(Evaluation::Nnue));
    /// assert!(Evaluation::parse("nn").unwrap_err().contains("hce or nnue"));
    /// ```
    pub fn parse(text: &str) -> Result<Evaluation, String> {
        Evaluation::ALL
            .into_iter()
            .find(|e| e.name().eq_ignore_ascii_case(text.trim()))
            .ok_or_else(|| format!("Eval '{text}': expected hce or nnue"))
    }
}

/// The engine's searcher: parameters, transposition table, per-thread histories.
pub struct Searcher {
    params: Params,
    search_params: SearchParams,
    weights: EvalWeights,
    evaluation: Evaluation,
    /// The network for [`Evaluation::Nnue`]; `None` means the embedded one (parsed only when
    /// first used).
    net: Option<Arc<Net>>,
    tt: TranspositionTable,
    threads: Vec<Box<ThreadData>>,
    stop: Arc<AtomicBool>,
    ponder: Arc<AtomicBool>,
    /// Syzygy tables probed by the search (`None`: none).
    tb: Option<Arc<Tablebases>>,
    syzygy: SyzygyConfig,
}

impl Searcher {
    /// A searcher with one thread and a 16 MiB hash table.
    pub fn new(params: Params) -> Searcher {
        Searcher {
            search_params: SearchParams::new(&params),
            weights: EvalWeights::new(&params),
            params,
            evaluation: Evaluation::DEFAULT,
            net: None,
            tt: TranspositionTable::new(16),
            threads: vec![ThreadData::new()],
            stop: Arc::new(AtomicBool::new(false)),
            ponder: Arc::new(AtomicBool::new(false)),
            tb: None,
            syzygy: SyzygyConfig::default(),
        }
    }

    /// Sets the Syzygy tables the search probes (`None`: no tables, the default). A change
    /// empties the hash table (its scores may hold tablebase results).
    pub fn set_tablebases(&mut self, tb: Option<Arc<Tablebases>>) {
        let same = match (&self.tb, &tb) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if !same {
            self.tb = tb;
            self.tt.clear(self.threads.len());
        }
    }

    /// The Syzygy tables in use.
    pub fn tablebases(&self) -> Option<&Arc<Tablebases>> {
        self.tb.as_ref()
    }

    /// Sets how the search probes the tables (probe depth and limit, the 50-move rule).
    pub fn set_syzygy(&mut self, config: SyzygyConfig) {
        if config != self.syzygy {
            self.syzygy = config;
            self.tt.clear(self.threads.len());
        }
    }

    /// How the search probes the tables.
    pub fn syzygy(&self) -> SyzygyConfig {
        self.syzygy
    }

    /// Replaces the parameter table (search margins and evaluation weights).
    pub fn set_params(&mut self, params: Params) {
        self.search_params = SearchParams::new(&params);
        self.weights = EvalWeights::new(&params);
        self.params = params;
    }

    /// Selects the static evaluation. A change empties the hash table (its entries hold
    /// static evaluations of the other kind).
    pub fn set_evaluation(&mut self, evaluation: Evaluation) {
        if evaluation != self.evaluation {
            self.evaluation = evaluation;
            self.tt.clear(self.threads.len());
        }
    }

    /// The static evaluation in use.
    pub fn evaluation(&self) -> Evaluation {
        self.evaluation
    }

    /// Replaces the network used by [`Evaluation::Nnue`] (and empties the hash table).
    pub fn set_net(&mut self, net: Arc<Net>) {
        self.net = Some(net);
        self.tt.clear(self.threads.len());
    }

    /// The network used by [`Evaluation::Nnue`].
    pub fn net(&mut self) -> Arc<Net> {
        Arc::clone(self.net.get_or_insert_with(default_net))
    }

    /// The parameter table in use.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// Resizes the transposition table to `mb` MiB (any value ≥ 1) and empties it. If that
    /// much memory cannot be had, the largest smaller power-of-two size that can is used; call
    /// [`Searcher::try_set_hash_mb`] to be told instead.
    pub fn set_hash_mb(&mut self, mb: usize) {
        self.tt.resize(mb);
    }

    /// Resizes the transposition table to `mb` MiB and empties it, or, if the memory cannot
    /// be had, keeps the old size (emptied) and says so.
    pub fn try_set_hash_mb(&mut self, mb: usize) -> Result<(), tt::TtAllocError> {
        self.tt.try_resize(mb)
    }

    /// Sets the number of search threads (at least one).
    pub fn set_threads(&mut self, n: usize) {
        self.threads.resize_with(n.max(1), ThreadData::new);
    }

    /// Forgets everything learnt (`ucinewgame`): empties the hash table and the histories.
    pub fn clear(&mut self) {
        self.tt.clear(self.threads.len());
        for t in &mut self.threads {
            t.clear();
        }
    }

    /// The flag that stops a running search when set (UCI `stop`). It stays set until the
    /// caller clears it: a search started while it is set returns at once (with a legal
    /// move), so a `stop` that arrives before the search thread gets going is never lost.
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.stop)
    }

    /// The pondering flag (UCI `go ponder` … `ponderhit`). Set it before starting a search to
    /// ponder: while it is set no time limit applies and the search does not return (it waits
    /// for `stop` even when it has run out of depth). Clearing it is `ponderhit`: the clock
    /// starts then, with the search's own time limits. Like the stop flag, only the caller
    /// changes it.
    pub fn ponder_flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.ponder)
    }

    /// Searches `pos` within `limits`, calling `on_iteration` after each completed iteration.
    ///
    /// `history`: Zobrist keys of the game's earlier positions (oldest first, NOT including
    /// `pos`), for repetition detection. Always returns a legal best move when one exists.
    pub fn search(
        &mut self,
        pos: &Position,
        history: &[u64],
        limits: &Limits,
        on_iteration: &mut dyn FnMut(&SearchInfo),
    ) -> SearchResult {
        let start = Instant::now();
        self.tt.new_search();

        let mut legal = pos.legal_moves();
        if legal.is_empty() {
            // Mate or stalemate: nothing to search, but `go infinite` and pondering still
            // answer only when told to.
            hold(&self.stop, &self.ponder, limits.infinite);
            let score = if pos.in_check() {
                Score::Mate(0)
            } else {
                Score::Cp(0)
            };
            return SearchResult {
                best_move: None,
                ponder: None,
                score,
                depth: 0,
                seldepth: 0,
                nodes: 0,
                pv: Vec::new(),
                time: start.elapsed(),
                tbhits: 0,
            };
        }

        let mut root_moves: Vec<Move> = legal
            .iter()
            .copied()
            .filter(|m| limits.searchmoves.contains(m))
            .collect();
        // Syzygy: in-search probes up to `cardinality` pieces; at a root in the tables, only
        // the moves that keep the best result (and make progress) are searched.
        let mut cardinality = 0;
        let mut probe_depth = self.syzygy.probe_depth;
        let mut root_tb = None;
        if let Some(tb) = &self.tb {
            cardinality = self.syzygy.probe_limit.min(tb.max_pieces());
            if self.syzygy.probe_limit > tb.max_pieces() {
                probe_depth = 0;
            }
            if cardinality > 0 && pos.occupied().count() <= cardinality {
                let candidates = if root_moves.is_empty() {
                    legal.as_slice()
                } else {
                    root_moves.as_slice()
                };
                if let Some(ranking) =
                    syzygy::rank_root_moves(tb, pos, history, candidates, self.syzygy.rule50)
                {
                    // With DTZ the ranking decides; with WDL only, probes in the search
                    // help a winning side find its way.
                    if ranking.by_dtz || ranking.score <= 0 {
                        cardinality = 0;
                    }
                    root_moves = ranking.best.clone();
                    root_tb = Some(ranking);
                }
            }
        }
        if !root_moves.is_empty() {
            legal
                .as_mut_slice()
                .sort_by_key(|m| !root_moves.contains(m));
        }
        let bounds = timeman::bounds(limits, pos.side_to_move(), self.search_params.time);
        let counters: Vec<AtomicU64> = (0..self.threads.len()).map(|_| AtomicU64::new(0)).collect();
        let tbhits: Vec<AtomicU64> = (0..self.threads.len()).map(|_| AtomicU64::new(0)).collect();
        let abort = AtomicBool::new(false);
        let net = match self.evaluation {
            Evaluation::Hce => None,
            Evaluation::Nnue => Some(self.net()),
        };
        let shared = Shared {
            tt: &self.tt,
            params: &self.search_params,
            weights: &self.weights,
            nnue: net.as_deref(),
            stop: &self.stop,
            abort: &abort,
            nodes: &counters,
            start,
            hard: bounds.hard,
            soft: bounds.soft,
            node_limit: limits.nodes,
            depth_limit: limits.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH),
            infinite: limits.infinite,
            mate: limits.mate,
            ponder: &self.ponder,
            root_moves: &root_moves,
            tb: self.tb.as_deref().filter(|_| cardinality > 0),
            tb_cardinality: cardinality,
            tb_probe_depth: probe_depth,
            tb_rule50: self.syzygy.rule50,
            tbhits: &tbhits,
            root_tb_score: root_tb.as_ref().map(|r| r.score),
            root_tb_probes: root_tb.as_ref().map_or(0, |r| r.probes),
        };

        let (main, helpers) = self.threads.split_first_mut().expect("at least one thread");
        let mut outcome = std::thread::scope(|s| {
            for (i, td) in helpers.iter_mut().enumerate() {
                let shared = &shared;
                std::thread::Builder::new()
                    .stack_size(64 << 20)
                    .spawn_scoped(s, move || {
                        Worker::new(td, shared, i + 1, pos, history).iterate(None);
                    })
                    .expect("spawn a search thread");
            }
            let outcome = Worker::new(main, &shared, 0, pos, history).iterate(Some(on_iteration));
            abort.store(true, Ordering::Relaxed);
            outcome
        });

        // Every thread has joined: the counters are final.
        let nodes = counters.iter().map(|c| c.load(Ordering::Relaxed)).sum();
        let tbhits = tbhits
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum::<u64>()
            + root_tb.as_ref().map_or(0, |r| r.probes);
        let best_move = outcome.pv.first().copied().or_else(|| {
            // Not even one root move finished: the TT move or the first legal move.
            self.tt
                .probe(pos.key(), 0)
                .and_then(|e| e.mv)
                .filter(|&m| legality::is_legal(pos, m))
                .filter(|m| root_moves.is_empty() || root_moves.contains(m))
                .or(Some(legal.as_slice()[0]))
        });
        if outcome.pv.is_empty() {
            outcome.pv.extend(best_move);
        }
        SearchResult {
            best_move,
            ponder: outcome.pv.get(1).copied(),
            score: Score::from_internal(alphabeta::root_score(&shared, outcome.score)),
            depth: outcome.depth,
            seldepth: outcome.seldepth,
            nodes,
            pv: outcome.pv,
            time: start.elapsed(),
            tbhits,
        }
    }
}

/// Waits while the search must not return yet: until `stop` is set, for `go infinite` and
/// while pondering.
fn hold(stop: &AtomicBool, ponder: &AtomicBool, infinite: bool) {
    while !stop.load(Ordering::Relaxed) && (infinite || ponder.load(Ordering::Relaxed)) {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// With the unit-test build, every NNUE evaluation in the search is checked against a
    /// refresh (see `Worker::evaluate`): searches over the bench positions, with null moves,
    /// verification searches and quiescence, and with helper threads.
    #[test]
    fn nnue_searches_evaluate_like_a_refresh_at_every_node() {
        for threads in [1, 3] {
            let mut searcher = Searcher::new(Params::defaults());
            searcher.set_evaluation(Evaluation::Nnue);
            searcher.set_threads(threads);
            let limits = Limits {
                depth: Some(5),
                ..Limits::default()
            };
            for fen in crate::bench::POSITIONS.iter().step_by(3) {
                let pos = Position::from_fen(fen).unwrap();
                let result = searcher.search(&pos, &[], &limits, &mut |_| {});
                assert!(result
                    .best_move
                    .is_some_and(|m| pos.legal_moves().contains(m)));
            }
        }
    }

    /// ProbCut and history pruning (off by default) search legal moves, with every NNUE
    /// evaluation of their extra searches checked against a refresh, and change the search.
    #[test]
    fn probcut_and_history_pruning_search_soundly() {
        let limits = Limits {
            depth: Some(7),
            ..Limits::default()
        };
        let mut on = Params::defaults();
        on.set("probcut_depth", 4).unwrap();
        on.set("hist_prune_depth", 3).unwrap();
        let mut nodes = [0u64; 2];
        for (i, params) in [Params::defaults(), on].into_iter().enumerate() {
            let mut searcher = Searcher::new(params);
            searcher.set_evaluation(Evaluation::Nnue);
            for fen in crate::bench::POSITIONS.iter().step_by(4) {
                let pos = Position::from_fen(fen).unwrap();
                searcher.clear();
                let result = searcher.search(&pos, &[], &limits, &mut |_| {});
                assert!(result
                    .best_move
                    .is_some_and(|m| pos.legal_moves().contains(m)));
                nodes[i] += result.nodes;
            }
        }
        assert_ne!(nodes[0], nodes[1], "the two techniques change no node");
    }

    #[test]
    fn the_evaluation_switch_changes_the_search_and_back() {
        let pos = Position::from_fen(crate::bench::POSITIONS[0]).unwrap();
        let limits = Limits {
            depth: Some(6),
            ..Limits::default()
        };
        let mut searcher = Searcher::new(Params::defaults());
        assert_eq!(searcher.evaluation(), Evaluation::DEFAULT);
        let nodes = |s: &mut Searcher, e| {
            s.set_evaluation(e);
            s.clear();
            s.search(&pos, &[], &limits, &mut |_| {}).nodes
        };
        let hce = nodes(&mut searcher, Evaluation::Hce);
        let nnue = nodes(&mut searcher, Evaluation::Nnue);
        assert_ne!(hce, nnue);
        assert_eq!(nodes(&mut searcher, Evaluation::Hce), hce);
        assert_eq!(nodes(&mut searcher, Evaluation::Nnue), nnue);
    }
}
