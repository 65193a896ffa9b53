//! The staged move selector: yields the moves of a node best-first, generating lazily so
//! that a cutoff by the TT move or a good capture costs no quiet-move generation.
//!
//! Order: TT move, good captures (MVV + capture history, SEE ≥ 0), killers, counter-move,
//! quiets by butterfly + continuation history, bad captures. Moves that come from outside
//! the position (TT move, killers, counter) are checked for legality, and none is yielded
//! twice.

use crate::movegen::{MoveList, MAX_MOVES};
use crate::position::Position;
use crate::types::{Move, PieceType};

use super::history::{piece_to, History, PieceTo};
use super::legality::is_legal;
use super::see::{see_ge, see_value};

/// Where the selector is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Stage {
    /// The transposition-table move.
    TtMove,
    /// Generate and score captures and promotions.
    GenNoisy,
    /// Captures that do not lose material (and queen promotions).
    GoodNoisy,
    /// First killer move.
    Killer1,
    /// Second killer move.
    Killer2,
    /// The counter-move to the previous move.
    Counter,
    /// Generate and score quiet moves.
    GenQuiets,
    /// Quiet moves by history.
    Quiets,
    /// Captures that lose material and under-promotions.
    BadNoisy,
    /// Nothing left.
    Done,
}

/// Ordering context the search passes in on every call (kept out of the selector so that
/// the search can update its tables while a selector is alive).
pub struct OrderingContext<'a> {
    /// The thread's history tables.
    pub history: &'a History,
    /// Piece-to indices of the moves one and two plies back.
    pub conts: [Option<PieceTo>; 2],
}

/// A staged move selector for one node.
pub struct MovePicker {
    stage: Stage,
    yielded: Stage,
    list: MoveList,
    scores: [i32; MAX_MOVES],
    cur: usize,
    end: usize,
    bad_end: usize,
    tt_move: Option<Move>,
    killers: [Option<Move>; 2],
    counter: Option<Move>,
    skip_quiets: bool,
    /// Quiescence mode: noisy moves only, no SEE split.
    noisy_only: bool,
}

impl MovePicker {
    /// A selector for a main-search node.
    #[inline]
    pub fn new(
        pos: &Position,
        tt_move: Option<Move>,
        killers: [Option<Move>; 2],
        counter: Option<Move>,
    ) -> MovePicker {
        let tt_move = tt_move.filter(|&m| is_legal(pos, m));
        MovePicker {
            stage: Stage::TtMove,
            yielded: Stage::TtMove,
            list: MoveList::new(),
            scores: [0; MAX_MOVES],
            cur: 0,
            end: 0,
            bad_end: 0,
            tt_move,
            killers,
            counter,
            skip_quiets: false,
            noisy_only: false,
        }
    }

    /// A selector for quiescence search: captures and promotions only, unless in check,
    /// where every evasion is searched.
    #[inline]
    pub fn new_qsearch(pos: &Position, tt_move: Option<Move>) -> MovePicker {
        if pos.in_check() {
            return MovePicker::new(pos, tt_move, [None; 2], None);
        }
        let mut p = MovePicker::new(pos, tt_move.filter(|m| m.is_noisy()), [None; 2], None);
        p.noisy_only = true;
        p.skip_quiets = true;
        p
    }

    /// The stage of the last move yielded.
    #[inline(always)]
    pub fn yielded_stage(&self) -> Stage {
        self.yielded
    }

    /// Stops yielding quiet moves (killers, counter-move and history quiets); bad captures
    /// still come.
    #[inline(always)]
    pub fn skip_quiets(&mut self) {
        self.skip_quiets = true;
    }

    /// Whether quiet moves are being skipped.
    #[inline(always)]
    pub fn skipping_quiets(&self) -> bool {
        self.skip_quiets
    }

    #[inline(always)]
    fn is_special(&self, mv: Move) -> bool {
        Some(mv) == self.tt_move
    }

    #[inline(always)]
    fn is_special_quiet(&self, mv: Move) -> bool {
        Some(mv) == self.tt_move
            || Some(mv) == self.killers[0]
            || Some(mv) == self.killers[1]
            || Some(mv) == self.counter
    }

    /// Index of the best-scored move in `cur..end`, swapped to `cur`.
    #[inline(always)]
    fn select_best(&mut self) -> Move {
        let (mut best, mut best_score) = (self.cur, self.scores[self.cur]);
        for i in self.cur + 1..self.end {
            if self.scores[i] > best_score {
                best = i;
                best_score = self.scores[i];
            }
        }
        let moves = self.list.as_mut_slice();
        moves.swap(self.cur, best);
        self.scores.swap(self.cur, best);
        let mv = moves[self.cur];
        self.cur += 1;
        mv
    }

    /// The next move, or `None` when every (wanted) move has been yielded.
    #[inline]
    pub fn next(&mut self, pos: &Position, ctx: &OrderingContext) -> Option<Move> {
        loop {
            match self.stage {
                Stage::TtMove => {
                    self.stage = Stage::GenNoisy;
                    if let Some(mv) = self.tt_move {
                        self.yielded = Stage::TtMove;
                        return Some(mv);
                    }
                }
                Stage::GenNoisy => {
                    pos.generate_noisy(&mut self.list);
                    self.end = self.list.len();
                    for i in 0..self.end {
                        let mv = self.list.as_slice()[i];
                        self.scores[i] = noisy_score(pos, mv, ctx.history);
                    }
                    self.cur = 0;
                    self.stage = Stage::GoodNoisy;
                }
                Stage::GoodNoisy => {
                    if self.cur < self.end {
                        let mv = self.select_best();
                        if self.is_special(mv) {
                            continue;
                        }
                        if !self.noisy_only && !is_good_noisy(pos, mv) {
                            // Keep it for the bad-noisy stage at the front of the list.
                            self.list.as_mut_slice()[self.bad_end] = mv;
                            self.bad_end += 1;
                            continue;
                        }
                        self.yielded = Stage::GoodNoisy;
                        return Some(mv);
                    }
                    self.stage = if self.noisy_only {
                        Stage::Done
                    } else {
                        Stage::Killer1
                    };
                }
                Stage::Killer1 | Stage::Killer2 => {
                    let here = self.stage;
                    let i = (here == Stage::Killer2) as usize;
                    self.stage = if i == 0 {
                        Stage::Killer2
                    } else {
                        Stage::Counter
                    };
                    if let Some(k) = self.killers[i] {
                        if !self.skip_quiets
                            && Some(k) != self.tt_move
                            && (i == 0 || Some(k) != self.killers[0])
                            && !k.is_noisy()
                            && is_legal(pos, k)
                        {
                            self.yielded = here;
                            return Some(k);
                        }
                    }
                    self.killers[i] = None;
                }
                Stage::Counter => {
                    self.stage = Stage::GenQuiets;
                    if let Some(c) = self.counter {
                        if !self.skip_quiets
                            && Some(c) != self.tt_move
                            && Some(c) != self.killers[0]
                            && Some(c) != self.killers[1]
                            && !c.is_noisy()
                            && is_legal(pos, c)
                        {
                            self.yielded = Stage::Counter;
                            return Some(c);
                        }
                    }
                    self.counter = None;
                }
                Stage::GenQuiets => {
                    if self.skip_quiets {
                        self.begin_bad();
                        continue;
                    }
                    let start = self.list.len();
                    pos.generate_quiets(&mut self.list);
                    self.end = self.list.len();
                    let us = pos.side_to_move();
                    for i in start..self.end {
                        let mv = self.list.as_slice()[i];
                        let pt = piece_to(pos, mv);
                        self.scores[i] = ctx.history.quiet_score(us, mv, pt, &ctx.conts);
                    }
                    self.cur = start;
                    self.stage = Stage::Quiets;
                }
                Stage::Quiets => {
                    if !self.skip_quiets && self.cur < self.end {
                        let mv = self.select_best();
                        if self.is_special_quiet(mv) {
                            continue;
                        }
                        self.yielded = Stage::Quiets;
                        return Some(mv);
                    }
                    self.begin_bad();
                }
                Stage::BadNoisy => {
                    if self.cur < self.end {
                        // Already in the order of their noisy scores.
                        let mv = self.list.as_slice()[self.cur];
                        self.cur += 1;
                        self.yielded = Stage::BadNoisy;
                        return Some(mv);
                    }
                    self.stage = Stage::Done;
                }
                Stage::Done => return None,
            }
        }
    }

    #[inline(always)]
    fn begin_bad(&mut self) {
        self.cur = 0;
        self.end = self.bad_end;
        self.stage = Stage::BadNoisy;
    }
}

/// Ordering score of a capture or promotion: most valuable victim first, refined by
/// capture history; queen promotions rank with queen captures.
#[inline(always)]
fn noisy_score(pos: &Position, mv: Move, history: &History) -> i32 {
    let victim = pos.captured(mv).map_or(0, see_value);
    let promo = match mv.promotion() {
        Some(PieceType::Queen) => see_value(PieceType::Queen),
        Some(_) => -2000,
        None => 0,
    };
    16 * (victim + promo) + history.capture(pos, mv) / 4
}

/// Whether a noisy move belongs among the good ones: no under-promotion, SEE ≥ 0.
#[inline(always)]
fn is_good_noisy(pos: &Position, mv: Move) -> bool {
    match mv.promotion() {
        Some(PieceType::Queen) | None => see_ge(pos, mv, 0),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::perft::perft;

    const FENS: &[&str] = &[
        crate::position::STARTPOS_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        "8/8/8/2k5/3Pp3/8/8/4K2Q b - d3 0 1",
        "3k4/8/8/8/8/8/2q5/K7 w - - 0 1",
    ];

    /// Cheap deterministic "hints" for a position: moves that may or may not be legal here.
    fn hints(
        pos: &Position,
        salt: usize,
        foreign: &[Move],
    ) -> (Option<Move>, [Option<Move>; 2], Option<Move>) {
        let legal = pos.legal_moves();
        let pick = |k: usize| -> Option<Move> {
            let all: Vec<Move> = legal
                .iter()
                .copied()
                .chain(foreign.iter().copied())
                .collect();
            if all.is_empty() {
                None
            } else {
                Some(all[(salt * 7 + k * 13) % all.len()])
            }
        };
        (pick(0), [pick(1), pick(2)], pick(3))
    }

    fn picked(
        pos: &Position,
        hints: (Option<Move>, [Option<Move>; 2], Option<Move>),
        history: &History,
        skip_at: Option<usize>,
    ) -> Vec<Move> {
        let mut p = MovePicker::new(pos, hints.0, hints.1, hints.2);
        let ctx = OrderingContext {
            history,
            conts: [None, Some(5)],
        };
        let mut out = Vec::new();
        while let Some(mv) = p.next(pos, &ctx) {
            out.push(mv);
            if Some(out.len()) == skip_at {
                p.skip_quiets();
            }
        }
        out
    }

    fn picker_perft(
        pos: &Position,
        depth: u32,
        history: &History,
        foreign: &mut Vec<Move>,
        salt: &mut usize,
    ) -> u64 {
        if depth == 0 {
            return 1;
        }
        *salt += 1;
        let moves = picked(pos, hints(pos, *salt, foreign), history, None);
        let mut sorted: Vec<u16> = moves.iter().map(|m| m.bits()).collect();
        sorted.sort();
        let mut legal: Vec<u16> = pos.legal_moves().iter().map(|m| m.bits()).collect();
        legal.sort();
        assert_eq!(
            sorted,
            legal,
            "{} hints {:?}",
            pos.to_fen(),
            hints(pos, *salt, foreign)
        );
        foreign.clear();
        foreign.extend(moves.iter().take(3).copied());
        let mut nodes = 0;
        for mv in moves {
            nodes += picker_perft(&pos.play(mv), depth - 1, history, foreign, salt);
        }
        nodes
    }

    #[test]
    fn picker_yields_each_legal_move_once() {
        let mut history = History::new();
        // Some history so that quiet ordering is not the generation order.
        let start = Position::startpos();
        for (i, mv) in start.legal_moves().iter().enumerate() {
            history.update_quiet(
                start.side_to_move(),
                *mv,
                piece_to(&start, *mv),
                &[None, Some(5)],
                (i as i32 - 10) * 300,
            );
        }
        let mut foreign = Vec::new();
        for fen in FENS {
            let pos = Position::from_fen(fen).unwrap();
            for salt in 0..20 {
                let legal = pos.legal_moves();
                let mut got = picked(&pos, hints(&pos, salt, &foreign), &history, None);
                assert_eq!(got.len(), legal.len(), "{fen}: {got:?}");
                got.sort_by_key(|m| m.bits());
                got.dedup();
                assert_eq!(got.len(), legal.len(), "{fen}: duplicates");
                assert!(got.iter().all(|m| legal.contains(*m)), "{fen}");
                // With quiets skipped after the first move, every noisy move still comes.
                let some = picked(&pos, hints(&pos, salt, &foreign), &history, Some(1));
                for m in legal.iter().filter(|m| m.is_noisy()) {
                    assert!(
                        some.contains(m),
                        "{fen}: noisy {m:?} lost after skip_quiets"
                    );
                }
            }
            foreign = pos.legal_moves().iter().copied().collect();
        }
    }

    #[test]
    fn qsearch_picker_yields_noisy_moves_or_evasions() {
        let history = History::new();
        let ctx = OrderingContext {
            history: &history,
            conts: [None, None],
        };
        for fen in FENS {
            let pos = Position::from_fen(fen).unwrap();
            let legal = pos.legal_moves();
            let tt = legal.iter().copied().find(|m| !m.is_noisy());
            let mut p = MovePicker::new_qsearch(&pos, tt);
            let mut got = Vec::new();
            while let Some(mv) = p.next(&pos, &ctx) {
                got.push(mv);
            }
            let want = if pos.in_check() {
                legal.len()
            } else {
                legal.iter().filter(|m| m.is_noisy()).count()
            };
            got.sort_by_key(|m| m.bits());
            got.dedup();
            assert_eq!(got.len(), want, "{fen}");
        }
    }

    #[test]
    fn perft_through_the_picker() {
        let history = History::new();
        for (fen, depth) in FENS.iter().zip([4, 3, 4, 3, 3, 3, 4, 4]) {
            let pos = Position::from_fen(fen).unwrap();
            let mut foreign = Vec::new();
            let mut salt = 0;
            assert_eq!(
                picker_perft(&pos, depth, &history, &mut foreign, &mut salt),
                perft(&pos, depth),
                "{fen}"
            );
        }
    }
}
