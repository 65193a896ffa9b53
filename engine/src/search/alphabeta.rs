//! The per-thread search: iterative deepening, principal-variation negamax, quiescence.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

use crate::eval::{evaluate, EvalWeights};
use crate::nnue::{AccumulatorStack, Net};
use crate::position::Position;
use crate::tablebase::Tablebases;
use crate::track;
use crate::types::Move;

use super::history::{piece_to, History, Killers, PieceTo, CORR_GRAIN};
use super::legality::gives_check;
use super::params::SearchParams;
use super::picker::{MovePicker, OrderingContext, Stage};
use super::see::{move_gain, see_ge};
use super::syzygy::wdl_score;
use super::tt::{Bound, TranspositionTable};
use super::{Score, SearchInfo, INFINITY, MATE, MATE_IN_MAX, MAX_DEPTH, MAX_PLY, TB_WIN_IN_MAX};

/// Marks "no static evaluation" (in check).
const EVAL_NONE: i32 = -31_999;
/// Frames before ply 0, so that `ply - 2` is always a valid index.
const OFF: usize = 2;

/// What every thread of one search shares.
pub(crate) struct Shared<'a> {
    pub tt: &'a TranspositionTable,
    pub params: &'a SearchParams,
    pub weights: &'a EvalWeights,
    /// The network when the NNUE evaluation is selected (`None`: the handcrafted one).
    pub nnue: Option<&'a Net>,
    /// The user's stop flag.
    pub stop: &'a AtomicBool,
    /// Set by the main thread when it is done, to stop the helpers.
    pub abort: &'a AtomicBool,
    /// Node counts published by each thread.
    pub nodes: &'a [AtomicU64],
    pub start: Instant,
    pub hard: Option<Duration>,
    pub soft: Option<Duration>,
    pub node_limit: Option<u64>,
    pub depth_limit: i32,
    pub infinite: bool,
    /// `go mate N`: stop at a mate in at most N moves.
    pub mate: Option<u32>,
    /// Set while pondering (`go ponder` until `ponderhit`): no time limit applies, and the
    /// clock starts when it is cleared.
    pub ponder: &'a AtomicBool,
    /// The root moves to search (`go searchmoves`, or those the tablebases keep); empty
    /// means all.
    pub root_moves: &'a [Move],
    /// Syzygy tables probed inside the search (`None`: no probes).
    pub tb: Option<&'a Tablebases>,
    /// Positions with at most this many pieces are probed (0: none).
    pub tb_cardinality: u32,
    /// Positions with exactly `tb_cardinality` pieces are probed from this depth on.
    pub tb_probe_depth: i32,
    /// Cursed wins and blessed losses are draws.
    pub tb_rule50: bool,
    /// Tablebase hits published by each thread.
    pub tbhits: &'a [AtomicU64],
    /// The root's tablebase score when the root is in the tables (reported instead of a
    /// search score that is not a mate).
    pub root_tb_score: Option<i32>,
    /// The probes made to rank the root moves (counted as hits).
    pub root_tb_probes: u64,
}

/// The score to report for the root: the search's, or the tables' when the root is in them
/// and the search found no mate.
pub(crate) fn root_score(sh: &Shared, score: i32) -> i32 {
    match sh.root_tb_score {
        Some(tb) if score.abs() < MATE_IN_MAX => tb,
        _ => score,
    }
}

/// One ply of the search stack.
#[derive(Clone, Copy)]
struct Frame {
    /// Static evaluation (EVAL_NONE in check).
    eval: i32,
    /// Piece-to of the move played from this ply (`None` for a null move).
    piece_to: Option<PieceTo>,
    killers: Killers,
}

impl Default for Frame {
    fn default() -> Self {
        Frame {
            eval: EVAL_NONE,
            piece_to: None,
            killers: Killers::default(),
        }
    }
}

/// A thread's long-lived state: histories and preallocated stacks.
pub(crate) struct ThreadData {
    history: History,
    stack: [Frame; MAX_PLY + OFF + 4],
    pv: [[Option<Move>; MAX_PLY + 1]; MAX_PLY + 1],
    pv_len: [usize; MAX_PLY + 1],
    keys: Vec<u64>,
    /// NNUE accumulators by ply (sized for the net before each search).
    pub nnue: AccumulatorStack,
}

impl ThreadData {
    pub fn new() -> Box<ThreadData> {
        Box::new(ThreadData {
            history: History::new(),
            stack: [Frame::default(); MAX_PLY + OFF + 4],
            pv: [[None; MAX_PLY + 1]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
            keys: Vec::with_capacity(1024),
            nnue: AccumulatorStack::new(MAX_PLY + 2),
        })
    }

    pub fn clear(&mut self) {
        self.history.clear();
        self.stack = [Frame::default(); MAX_PLY + OFF + 4];
    }
}

/// The result of one thread's iterative deepening.
pub(crate) struct Outcome {
    pub score: i32,
    pub depth: i32,
    pub seldepth: i32,
    pub pv: Vec<Move>,
}

/// One thread searching one position.
pub(crate) struct Worker<'a> {
    td: &'a mut ThreadData,
    sh: &'a Shared<'a>,
    sp: &'a SearchParams,
    root: &'a Position,
    id: usize,
    nodes: u64,
    tbhits: u64,
    seldepth: usize,
    stopped: bool,
    root_depth: i32,
    nmp_min_ply: usize,
    /// Index in `keys` below which repetitions are not looked for (after a null move).
    rep_floor: usize,
    /// When this search's clock started: at the start, or at `ponderhit` when pondering
    /// (`None` until then).
    clock_start: Option<Instant>,
}

impl<'a> Worker<'a> {
    pub fn new(
        td: &'a mut ThreadData,
        sh: &'a Shared<'a>,
        id: usize,
        root: &'a Position,
        history: &[u64],
    ) -> Worker<'a> {
        td.keys.clear();
        td.keys.reserve(history.len() + MAX_PLY + 8);
        td.keys.extend_from_slice(history);
        td.keys.push(root.key());
        for f in td.stack.iter_mut() {
            f.eval = EVAL_NONE;
            f.piece_to = None;
        }
        if let Some(net) = sh.nnue {
            td.nnue.set_width(net.hidden());
            td.nnue.refresh(net, 0, root);
        }
        Worker {
            td,
            sh,
            sp: sh.params,
            root,
            id,
            nodes: 0,
            tbhits: 0,
            seldepth: 0,
            stopped: false,
            root_depth: 0,
            nmp_min_ply: 0,
            rep_floor: 0,
            clock_start: (!sh.ponder.load(Relaxed)).then_some(sh.start),
        }
    }

    /// Time on this search's clock: `None` while pondering (no time limit applies).
    fn clock(&mut self) -> Option<Duration> {
        if self.clock_start.is_none() && !self.sh.ponder.load(Relaxed) {
            // `ponderhit`: the clock runs from now (seen within 1024 nodes of it).
            self.clock_start = Some(Instant::now());
        }
        self.clock_start.map(|t| t.elapsed())
    }

    #[inline(always)]
    fn is_main(&self) -> bool {
        self.id == 0
    }

    /// Total nodes of all threads (approximate for the helpers).
    fn total_nodes(&self) -> u64 {
        self.sh
            .nodes
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if i == self.id {
                    self.nodes
                } else {
                    c.load(Relaxed)
                }
            })
            .sum()
    }

    /// Whether to abandon the search; checked at every node.
    #[inline(always)]
    fn should_stop(&mut self) -> bool {
        if self.stopped {
            return true;
        }
        if self.is_main() && self.sh.nodes.len() == 1 {
            if let Some(limit) = self.sh.node_limit {
                if self.nodes >= limit {
                    self.stopped = true;
                    return true;
                }
            }
        }
        if self.nodes & 1023 == 0 {
            self.sh.nodes[self.id].store(self.nodes, Relaxed);
            self.sh.tbhits[self.id].store(self.tbhits, Relaxed);
            self.stopped = self.poll();
        }
        self.stopped
    }

    #[cold]
    fn poll(&mut self) -> bool {
        if self.sh.abort.load(Relaxed) {
            return true;
        }
        if !self.is_main() {
            return self.sh.stop.load(Relaxed);
        }
        if let Some(limit) = self.sh.node_limit {
            if self.total_nodes() >= limit {
                return true;
            }
        }
        // The first iteration always completes (it takes microseconds), so that a move
        // is known even after an immediate stop.
        if self.root_depth <= 1 {
            return false;
        }
        if self.sh.stop.load(Relaxed) {
            return true;
        }
        match self.sh.hard {
            Some(h) => self.clock().is_some_and(|t| t >= h),
            None => false,
        }
    }

    /// The static evaluation of `pos`, the position at `ply` of the current path.
    #[inline(always)]
    fn evaluate(&mut self, pos: &Position, ply: usize) -> i32 {
        let eval = match self.sh.nnue {
            None => evaluate(pos, self.sh.weights),
            Some(net) => {
                let eval = self.td.nnue.evaluate(net, ply, pos.side_to_move());
                // Unit tests check every incremental evaluation against a refresh.
                #[cfg(test)]
                assert_eq!(eval, net.evaluate(pos), "{}", pos.to_fen());
                eval
            }
        };
        eval.clamp(-TB_WIN_IN_MAX + 1, TB_WIN_IN_MAX - 1)
    }

    /// `raw` (the static evaluation of `pos`) corrected by the correction history.
    #[inline(always)]
    fn corrected(&self, pos: &Position, raw: i32) -> i32 {
        if self.sp.corr_weight == 0 {
            return raw;
        }
        let c = self.td.history.correction(pos) * self.sp.corr_weight / (256 * CORR_GRAIN);
        (raw + c).clamp(-TB_WIN_IN_MAX + 1, TB_WIN_IN_MAX - 1)
    }

    /// Records that the position at `ply + 1` is `pos` (at `ply`) after `mv`.
    #[inline(always)]
    fn push_move(&mut self, pos: &Position, mv: Move, ply: usize) {
        if self.sh.nnue.is_some() {
            self.td.nnue.push_move(ply + 1, pos, mv);
        }
    }

    /// Iterative deepening; the main thread reports each completed iteration.
    pub fn iterate(mut self, mut report: Option<&mut dyn FnMut(&SearchInfo)>) -> Outcome {
        let root = self.root;
        let mut out = Outcome {
            score: 0,
            depth: 0,
            seldepth: 0,
            pv: Vec::new(),
        };
        let mut prev: i32 = 0;
        let mut stable = 0usize;
        let mut prev_best: Option<Move> = None;
        for iteration in 1..=self.sh.depth_limit {
            // Helpers search alternate depths, so that threads disagree usefully.
            let depth = if self.is_main() {
                iteration
            } else {
                (iteration + (self.id & 1) as i32).min(self.sh.depth_limit)
            };
            self.root_depth = depth;
            self.seldepth = 0;
            let mut delta = self.sp.asp_window;
            let (mut alpha, mut beta) = if depth >= 4 && prev.abs() < TB_WIN_IN_MAX {
                ((prev - delta).max(-INFINITY), (prev + delta).min(INFINITY))
            } else {
                (-INFINITY, INFINITY)
            };
            let score = loop {
                let score = self.negamax::<true>(root, alpha, beta, depth, 0, false);
                if self.stopped {
                    break score;
                }
                if track!("aspiration/fail_low"; score <= alpha) {
                    beta = (alpha + beta) / 2;
                    alpha = (score - delta).max(-INFINITY);
                } else if track!("aspiration/fail_high"; score >= beta) {
                    beta = (score + delta).min(INFINITY);
                } else {
                    break score;
                }
                delta += delta / 2;
                if delta > 1000 {
                    alpha = -INFINITY;
                    beta = INFINITY;
                }
            };
            if self.stopped {
                // A root move that beat alpha in the unfinished iteration is still better
                // than the last iteration's choice.
                if self.td.pv_len[0] > 0 {
                    let pv = self.pv_slice();
                    if out.pv.first() != pv.first() {
                        out.pv = pv;
                    }
                }
                break;
            }
            prev = score;
            out = Outcome {
                score,
                depth,
                seldepth: self.seldepth.max(depth as usize) as i32,
                pv: self.pv_slice(),
            };
            if self.is_main() {
                self.sh.nodes[self.id].store(self.nodes, Relaxed);
                self.sh.tbhits[self.id].store(self.tbhits, Relaxed);
                if let Some(report) = report.as_mut() {
                    let time = self.sh.start.elapsed();
                    let nodes = self.total_nodes();
                    let tbhits = self.sh.root_tb_probes
                        + self.sh.tbhits.iter().map(|c| c.load(Relaxed)).sum::<u64>();
                    report(&SearchInfo {
                        depth,
                        seldepth: out.seldepth,
                        score: Score::from_internal(root_score(self.sh, score)),
                        tbhits,
                        nodes,
                        nps: (nodes as u128 * 1_000_000 / time.as_micros().max(1)) as u64,
                        time,
                        hashfull: self.sh.tt.hashfull(),
                        pv: out.pv.clone(),
                    });
                }
                // Soft bound, stretched while the best move keeps changing and shrunk
                // when it is stable.
                stable = if prev_best == out.pv.first().copied() {
                    stable + 1
                } else {
                    0
                };
                prev_best = out.pv.first().copied();
                if let (Some(n), Score::Mate(m)) = (self.sh.mate, Score::from_internal(score)) {
                    if (1..=n as i32).contains(&m) {
                        break;
                    }
                }
                const SCALE: [u32; 5] = [200, 140, 110, 90, 75];
                if let Some(soft) = self.sh.soft {
                    if self
                        .clock()
                        .is_some_and(|t| t >= soft * SCALE[stable.min(4)] / 100)
                    {
                        break;
                    }
                }
            }
        }
        self.sh.nodes[self.id].store(self.nodes, Relaxed);
        self.sh.tbhits[self.id].store(self.tbhits, Relaxed);
        track!("search/depth"; out.depth);
        if self.is_main() {
            super::hold(self.sh.stop, self.sh.ponder, self.sh.infinite);
        }
        out
    }

    fn pv_slice(&self) -> Vec<Move> {
        self.td.pv[0][..self.td.pv_len[0]]
            .iter()
            .flatten()
            .copied()
            .collect()
    }

    #[inline(always)]
    fn update_pv(&mut self, ply: usize, mv: Move) {
        let child_len = if ply < MAX_PLY {
            self.td.pv_len[ply + 1]
        } else {
            0
        };
        let (head, tail) = self.td.pv.split_at_mut(ply + 1);
        let row = &mut head[ply];
        row[0] = Some(mv);
        if child_len > 0 {
            row[1..=child_len].copy_from_slice(&tail[0][..child_len]);
        }
        self.td.pv_len[ply] = child_len + 1;
    }

    /// Draw by the fifty-move rule, insufficient material or repetition (any earlier
    /// occurrence since the last irreversible move, in the game or the search).
    #[inline]
    fn is_draw(&self, pos: &Position) -> bool {
        let hm = pos.halfmove_clock() as usize;
        if hm >= 100 && (!pos.in_check() || pos.has_legal_move()) {
            return true;
        }
        if pos.is_insufficient_material() {
            return true;
        }
        let keys = &self.td.keys;
        let n = keys.len() - 1;
        let key = keys[n];
        let limit = n.saturating_sub(hm).max(self.rep_floor);
        let mut j = n;
        while j >= limit + 4 {
            j -= 2;
            if keys[j - 2] == key {
                return true;
            }
        }
        false
    }

    fn negamax<const PV: bool>(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        if PV {
            self.td.pv_len[ply] = 0;
        }
        if depth <= 0 {
            return self.qsearch::<PV>(pos, alpha, beta, ply);
        }
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        let root = ply == 0;
        let in_check = pos.in_check();
        let ss = ply + OFF;
        if PV && ply > self.seldepth {
            self.seldepth = ply;
        }

        if !root {
            if self.is_draw(pos) {
                return 0;
            }
            if ply >= MAX_PLY {
                return if in_check { 0 } else { self.evaluate(pos, ply) };
            }
            // Mate-distance pruning.
            alpha = alpha.max(-MATE + ply as i32);
            beta = beta.min(MATE - ply as i32 - 1);
            if alpha >= beta {
                return alpha;
            }
        }

        let key = pos.key();
        let tte = self.sh.tt.probe(key, ply);
        track!("tt/hit"; tte.is_some());
        let tt_move = tte.and_then(|e| e.mv);
        if let Some(e) = tte {
            let cutoff = !PV
                && e.depth >= depth
                && pos.halfmove_clock() < 90
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.score >= beta,
                    Bound::Upper => e.score <= alpha,
                    Bound::None => false,
                };
            if track!("tt/cutoff"; cutoff) {
                return e.score;
            }
        }

        // Tablebase probe (Stockfish's rules): after a zeroing move, without castling rights,
        // with few enough pieces, deep enough.
        let mut best_score = -INFINITY;
        let mut max_score = INFINITY;
        if !root && self.sh.tb_cardinality > 0 {
            let pieces = pos.occupied().count();
            if pieces <= self.sh.tb_cardinality
                && (pieces < self.sh.tb_cardinality || depth >= self.sh.tb_probe_depth)
                && pos.halfmove_clock() == 0
                && pos.castling().is_empty()
            {
                if let Some(Ok(Some(wdl))) = self.sh.tb.map(|tb| tb.probe_wdl(pos)) {
                    self.tbhits += 1;
                    let (score, bound) = wdl_score(wdl, ply, self.sh.tb_rule50);
                    if bound == Bound::Exact
                        || (bound == Bound::Lower && score >= beta)
                        || (bound == Bound::Upper && score <= alpha)
                    {
                        let depth = (depth + 6).min(MAX_DEPTH);
                        self.sh
                            .tt
                            .store(key, ply, None, score, EVAL_NONE, depth, bound, PV);
                        return score;
                    }
                    if PV {
                        if bound == Bound::Lower {
                            best_score = score;
                            alpha = alpha.max(score);
                        } else {
                            max_score = score;
                        }
                    }
                }
            }
        }

        // Static evaluation (the TT keeps it raw; the search uses it corrected by the
        // correction history), sharpened by the TT score when its bound allows.
        let (raw_eval, static_eval, eval) = if in_check {
            (EVAL_NONE, EVAL_NONE, EVAL_NONE)
        } else {
            let raw = match tte {
                Some(e) if e.eval != EVAL_NONE => e.eval,
                _ => self.evaluate(pos, ply),
            };
            let corrected = self.corrected(pos, raw);
            let mut eval = corrected;
            if let Some(e) = tte {
                if e.score.abs() < TB_WIN_IN_MAX
                    && match e.bound {
                        Bound::Exact => true,
                        Bound::Lower => e.score > corrected,
                        Bound::Upper => e.score < corrected,
                        Bound::None => false,
                    }
                {
                    eval = e.score;
                }
            }
            (raw, corrected, eval)
        };
        self.td.stack[ss].eval = static_eval;
        let improving = !in_check && {
            let before = self.td.stack[ss - 2].eval;
            before != EVAL_NONE && static_eval > before
        };
        self.td.stack[ss + 2].killers = Killers::default();

        // Internal iterative reduction: without a TT move this node is likely poorly ordered.
        if depth >= self.sp.iir_depth && tt_move.is_none() && (PV || cut_node) {
            depth -= 1;
        }

        let us = pos.side_to_move();
        if !PV && !in_check {
            // Reverse futility pruning (static null move), on the static evaluation itself: a
            // transposition-table bound from a shallower search (a hanging piece it saw) does not
            // prune here, or a quiet sacrifice such as Morphy's Ra6 is refuted unsearched.
            if track!("rfp"; depth <= self.sp.rfp_depth
                && static_eval < MATE_IN_MAX
                && static_eval - self.sp.rfp_margin * (depth - improving as i32) >= beta)
            {
                track!("rfp/eval_minus_beta"; static_eval - beta);
                track!("rfp/depth"; depth);
                return static_eval;
            }

            // Null-move pruning, verified at high depth.
            if depth >= 3
                && eval >= beta
                && beta > -MATE_IN_MAX
                && ply >= self.nmp_min_ply
                && self.td.stack[ss - 1].piece_to.is_some()
                && pos.has_non_pawn_material(us)
            {
                let r = track!("nmp/reduction"; self.sp.nmp_base
                    + depth / self.sp.nmp_divisor
                    + ((eval - beta) / self.sp.nmp_eval_divisor).min(3));
                let mut child = pos.clone();
                child.play_null_mut();
                if self.sh.nnue.is_some() {
                    self.td.nnue.push_null(ply + 1);
                }
                self.td.stack[ss].piece_to = None;
                self.td.keys.push(child.key());
                let floor = self.rep_floor;
                self.rep_floor = self.td.keys.len() - 1;
                let score =
                    -self.negamax::<false>(&child, -beta, -beta + 1, depth - r, ply + 1, !cut_node);
                self.rep_floor = floor;
                self.td.keys.pop();
                if self.stopped {
                    return 0;
                }
                if track!("nmp/fail_high"; score >= beta) {
                    let score = if score >= TB_WIN_IN_MAX { beta } else { score };
                    if self.nmp_min_ply > 0 || depth < self.sp.nmp_verify_depth {
                        return score;
                    }
                    self.nmp_min_ply = ply + (3 * (depth - r) / 4) as usize;
                    let v = self.negamax::<false>(pos, beta - 1, beta, depth - r, ply, false);
                    self.nmp_min_ply = 0;
                    if self.stopped {
                        return 0;
                    }
                    if v >= beta {
                        return score;
                    }
                }
            }
        }

        // ProbCut: a good capture that beats beta by a margin in quiescence and then in a
        // search 4 plies shallower makes a cutoff here likely enough to take.
        let pc_beta = beta + self.sp.probcut_margin;
        if !PV
            && !in_check
            && depth >= self.sp.probcut_depth
            && beta.abs() < TB_WIN_IN_MAX
            && !tte.is_some_and(|e| e.depth >= depth - 3 && e.score < pc_beta)
        {
            let mut picker = MovePicker::new_qsearch(pos, tt_move);
            loop {
                let mv = {
                    let ctx = OrderingContext {
                        history: &self.td.history,
                        conts: [None, None],
                    };
                    picker.next(pos, &ctx)
                };
                let Some(mv) = mv else { break };
                if !see_ge(pos, mv, pc_beta - static_eval) {
                    continue;
                }
                let mut child = pos.clone();
                child.play_mut(mv);
                self.push_move(pos, mv, ply);
                self.td.stack[ss].piece_to = Some(piece_to(pos, mv));
                self.td.keys.push(child.key());
                let mut score = -self.qsearch::<false>(&child, -pc_beta, -pc_beta + 1, ply + 1);
                if score >= pc_beta && !self.stopped {
                    score = -self.negamax::<false>(
                        &child,
                        -pc_beta,
                        -pc_beta + 1,
                        depth - 4,
                        ply + 1,
                        !cut_node,
                    );
                }
                self.td.keys.pop();
                if self.stopped {
                    return 0;
                }
                if track!("probcut/cutoff"; score >= pc_beta) {
                    self.sh.tt.store(
                        key,
                        ply,
                        Some(mv),
                        score,
                        raw_eval,
                        depth - 3,
                        Bound::Lower,
                        PV,
                    );
                    return score;
                }
            }
        }

        let conts = [
            self.td.stack[ss - 1].piece_to,
            self.td.stack[ss - 2].piece_to,
        ];
        let counter = self.td.history.counter(conts[0]);
        let mut picker = MovePicker::new(pos, tt_move, self.td.stack[ss].killers.0, counter);
        let tt_noisy = tt_move.is_some_and(|m| m.is_noisy());

        let mut best_move = None;
        let mut moves = 0usize;
        let mut quiets = [None::<Move>; 64];
        let mut n_quiets = 0;
        let mut noisies = [None::<Move>; 32];
        let mut n_noisies = 0;

        loop {
            let mv = {
                let ctx = OrderingContext {
                    history: &self.td.history,
                    conts,
                };
                picker.next(pos, &ctx)
            };
            let Some(mv) = mv else { break };
            if root && !self.sh.root_moves.is_empty() && !self.sh.root_moves.contains(&mv) {
                continue;
            }
            let quiet = !mv.is_noisy();
            let pt = piece_to(pos, mv);
            let hist = if quiet {
                self.td.history.quiet_score(us, mv, pt, &conts)
            } else {
                0
            };

            // Pruning of late or losing moves, once a line that avoids being mated is known.
            if !root && best_score > -MATE_IN_MAX && pos.has_non_pawn_material(us) {
                let lmr_depth = (depth - 1 - self.sp.lmr(depth, moves + 1)).max(0);
                if quiet {
                    let lmp = (self.sp.lmp_base + depth * depth) / (2 - improving as i32);
                    if track!("lmp"; moves as i32 >= lmp) {
                        picker.skip_quiets();
                        continue;
                    }
                    if track!("history_prune"; depth <= self.sp.hist_prune_depth
                        && hist < -self.sp.hist_prune_margin * depth)
                    {
                        continue;
                    }
                    let checks = gives_check(pos, mv);
                    if track!("futility"; !in_check
                        && !checks
                        && lmr_depth <= self.sp.futility_depth
                        && eval + self.sp.futility_base + self.sp.futility_margin * lmr_depth
                            <= alpha)
                    {
                        picker.skip_quiets();
                        continue;
                    }
                    if track!("see/quiet_prune"; !checks
                        && !see_ge(pos, mv, -self.sp.see_quiet_margin * lmr_depth * lmr_depth))
                    {
                        continue;
                    }
                } else if track!("see/noisy_prune";
                    !see_ge(pos, mv, -self.sp.see_noisy_margin * depth))
                {
                    continue;
                }
            }

            let mut child = pos.clone();
            child.play_mut(mv);
            self.push_move(pos, mv, ply);
            self.td.stack[ss].piece_to = Some(pt);
            self.td.keys.push(child.key());
            moves += 1;
            if PV {
                self.td.pv_len[ply + 1] = 0;
            }
            let gives_check = child.in_check();
            let extension = (gives_check && ply < 2 * self.root_depth as usize) as i32;
            let new_depth = depth - 1 + extension;

            let mut score;
            if moves == 1 {
                score = if PV {
                    -self.negamax::<true>(&child, -beta, -alpha, new_depth, ply + 1, false)
                } else {
                    -self.negamax::<false>(&child, -beta, -alpha, new_depth, ply + 1, !cut_node)
                };
            } else {
                let mut full = true;
                score = -INFINITY;
                if depth >= 2
                    && moves > 1 + PV as usize
                    && (quiet || picker.yielded_stage() == Stage::BadNoisy)
                {
                    let mut r = self.sp.lmr(depth, moves);
                    r += !PV as i32;
                    r += !improving as i32;
                    r += cut_node as i32;
                    r += tt_noisy as i32;
                    r -= gives_check as i32;
                    if quiet {
                        r -= hist / self.sp.lmr_history_divisor;
                    }
                    let reduced = (new_depth - r).clamp(1, new_depth.max(1));
                    track!("lmr/reduction"; new_depth - reduced);
                    score =
                        -self.negamax::<false>(&child, -alpha - 1, -alpha, reduced, ply + 1, true);
                    full = track!("lmr/re_search"; score > alpha && reduced < new_depth);
                }
                if full {
                    score = -self.negamax::<false>(
                        &child,
                        -alpha - 1,
                        -alpha,
                        new_depth,
                        ply + 1,
                        !cut_node,
                    );
                }
                if PV && score > alpha && (root || score < beta) {
                    score = -self.negamax::<true>(&child, -beta, -alpha, new_depth, ply + 1, false);
                }
            }
            self.td.keys.pop();
            if self.stopped {
                return 0;
            }

            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(mv);
                    if PV {
                        self.update_pv(ply, mv);
                    }
                    if score >= beta {
                        track!("search/cutoff_move_number"; moves);
                        break;
                    }
                    alpha = score;
                }
            }
            if quiet {
                if n_quiets < quiets.len() {
                    quiets[n_quiets] = Some(mv);
                    n_quiets += 1;
                }
            } else if n_noisies < noisies.len() {
                noisies[n_noisies] = Some(mv);
                n_noisies += 1;
            }
        }

        if moves == 0 {
            return if in_check { -MATE + ply as i32 } else { 0 };
        }

        if best_score >= beta {
            let best = best_move.expect("a cutoff has a move");
            let bonus = self.sp.history_bonus(depth);
            let h = &mut self.td.history;
            if !best.is_noisy() {
                self.td.stack[ss].killers.push(best);
                h.set_counter(conts[0], best);
                h.update_quiet(us, best, piece_to(pos, best), &conts, bonus);
                for &q in quiets[..n_quiets].iter().flatten() {
                    h.update_quiet(us, q, piece_to(pos, q), &conts, -bonus);
                }
            } else {
                h.update_capture(pos, best, bonus);
            }
            for &c in noisies[..n_noisies].iter().flatten() {
                h.update_capture(pos, c, -bonus);
            }
        }

        if PV {
            best_score = best_score.min(max_score);
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if PV && best_move.is_some() {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // The static evaluation's error here teaches the correction history, when the score
        // is exact enough to say which way it erred.
        if !in_check
            && self.sp.corr_weight != 0
            && !best_move.is_some_and(|m| m.is_noisy())
            && best_score.abs() < TB_WIN_IN_MAX
            && !(bound == Bound::Lower && best_score <= static_eval)
            && !(bound == Bound::Upper && best_score >= static_eval)
        {
            self.td
                .history
                .update_correction(pos, best_score - raw_eval, depth);
        }
        // With `searchmoves` the root's best is only the best of some moves: not worth storing.
        if !root || self.sh.root_moves.is_empty() {
            self.sh
                .tt
                .store(key, ply, best_move, best_score, raw_eval, depth, bound, PV);
        }
        best_score
    }

    fn qsearch<const PV: bool>(
        &mut self,
        pos: &Position,
        mut alpha: i32,
        beta: i32,
        ply: usize,
    ) -> i32 {
        if PV {
            self.td.pv_len[ply] = 0;
        }
        if self.should_stop() {
            return 0;
        }
        self.nodes += 1;
        if PV && ply > self.seldepth {
            self.seldepth = ply;
        }
        let in_check = pos.in_check();
        if ply >= MAX_PLY {
            return if in_check { 0 } else { self.evaluate(pos, ply) };
        }

        let key = pos.key();
        let tte = self.sh.tt.probe(key, ply);
        if let Some(e) = tte {
            if !PV
                && match e.bound {
                    Bound::Exact => true,
                    Bound::Lower => e.score >= beta,
                    Bound::Upper => e.score <= alpha,
                    Bound::None => false,
                }
            {
                return e.score;
            }
        }

        let raw_eval;
        let mut best_score;
        if in_check {
            raw_eval = EVAL_NONE;
            best_score = -MATE + ply as i32;
        } else {
            raw_eval = match tte {
                Some(e) if e.eval != EVAL_NONE => e.eval,
                _ => self.evaluate(pos, ply),
            };
            let static_eval = self.corrected(pos, raw_eval);
            best_score = static_eval;
            if let Some(e) = tte {
                if e.score.abs() < TB_WIN_IN_MAX
                    && match e.bound {
                        Bound::Exact => true,
                        Bound::Lower => e.score > static_eval,
                        Bound::Upper => e.score < static_eval,
                        Bound::None => false,
                    }
                {
                    best_score = e.score;
                }
            }
            if track!("qs/stand_pat_cutoff"; best_score >= beta) {
                return best_score;
            }
            alpha = alpha.max(best_score);
        }
        let stand_pat = best_score;

        let ss = ply + OFF;
        let conts = [
            self.td.stack[ss - 1].piece_to,
            self.td.stack[ss - 2].piece_to,
        ];
        let mut picker = MovePicker::new_qsearch(pos, tte.and_then(|e| e.mv));
        let mut best_move = None;
        loop {
            let mv = {
                let ctx = OrderingContext {
                    history: &self.td.history,
                    conts,
                };
                picker.next(pos, &ctx)
            };
            let Some(mv) = mv else { break };
            if !in_check {
                // Delta pruning: even winning the target cannot lift the score to alpha.
                if mv.promotion().is_none() {
                    let futility = stand_pat + self.sp.qs_futility_margin + move_gain(pos, mv);
                    if track!("qs/delta_prune"; futility <= alpha) {
                        best_score = best_score.max(futility);
                        continue;
                    }
                }
                if !track!("see/qsearch_ge_0"; see_ge(pos, mv, 0)) {
                    continue;
                }
            }
            let mut child = pos.clone();
            child.play_mut(mv);
            self.push_move(pos, mv, ply);
            self.td.stack[ss].piece_to = Some(piece_to(pos, mv));
            let score = -self.qsearch::<PV>(&child, -beta, -alpha, ply + 1);
            if self.stopped {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = Some(mv);
                    if PV {
                        self.update_pv(ply, mv);
                    }
                    if score >= beta {
                        break;
                    }
                    alpha = score;
                }
            }
        }

        let bound = if best_score >= beta {
            Bound::Lower
        } else if PV && best_move.is_some() {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.sh
            .tt
            .store(key, ply, best_move, best_score, raw_eval, 0, bound, PV);
        best_score
    }
}
