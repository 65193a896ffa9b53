//! Move-ordering statistics learnt during the search: butterfly history (by colour, from,
//! to), capture history, continuation history (by the piece-to of the moves one and two
//! plies back), killer moves and counter-moves.
//!
//! Every table uses the "gravity" update `h += bonus − h·|bonus| / MAX`, which keeps values in
//! `−MAX..=MAX` and lets recent results outweigh old ones.

use crate::position::Position;
use crate::types::{Color, Move, PieceType};

/// Largest magnitude of any history value.
pub const HISTORY_MAX: i32 = 16384;

/// A piece-to index: `piece * 64 + to` (piece 0..12).
pub type PieceTo = usize;

/// Number of piece-to indices.
pub const PIECE_TO: usize = 12 * 64;

/// Entries per side of the correction history (indexed by a hash of the pawns).
const CORR_SIZE: usize = 16384;
/// Correction-history values are centipawns times this.
pub const CORR_GRAIN: i32 = 256;
/// Largest magnitude of a correction-history value (64 cp).
const CORR_MAX: i32 = 64 * CORR_GRAIN;

/// The correction-history slot of a position's pawn structure (both colours' pawns).
#[inline(always)]
fn pawn_slot(pos: &Position) -> usize {
    let white = pos.colored(Color::White, PieceType::Pawn).0;
    let black = pos.colored(Color::Black, PieceType::Pawn).0;
    let h = white.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ black.wrapping_mul(0xC2B2_AE3D_27D4_EB4F).rotate_left(29);
    (h >> (64 - CORR_SIZE.trailing_zeros())) as usize
}

#[inline(always)]
fn gravity(entry: &mut i16, bonus: i32) {
    let bonus = bonus.clamp(-HISTORY_MAX, HISTORY_MAX);
    let v = *entry as i32;
    *entry = (v + bonus - v * bonus.abs() / HISTORY_MAX) as i16;
}

/// The piece-to index of a move about to be played in `pos`.
#[inline(always)]
pub fn piece_to(pos: &Position, mv: Move) -> PieceTo {
    let piece = pos.piece_on(mv.from()).map_or(0, |p| p as usize);
    piece * 64 + mv.king_destination() as usize
}

/// All move-ordering statistics of one search thread.
pub struct History {
    butterfly: [[[i16; 64]; 64]; 2],
    capture: [[[i16; 6]; 64]; 12],
    continuation: Box<[[i16; PIECE_TO]; PIECE_TO]>,
    counters: [Option<Move>; PIECE_TO],
    /// `correction[side to move][pawn slot]`: the running average of (search score −
    /// static evaluation), in centipawns × [`CORR_GRAIN`].
    correction: Box<[[i16; CORR_SIZE]; 2]>,
}

impl Default for History {
    fn default() -> Self {
        History::new()
    }
}

impl History {
    /// Empty tables.
    pub fn new() -> History {
        History {
            butterfly: [[[0; 64]; 64]; 2],
            capture: [[[0; 6]; 64]; 12],
            continuation: vec![[0i16; PIECE_TO]; PIECE_TO]
                .into_boxed_slice()
                .try_into()
                .expect("size"),
            counters: [None; PIECE_TO],
            correction: Box::new([[0; CORR_SIZE]; 2]),
        }
    }

    /// Resets every table.
    pub fn clear(&mut self) {
        self.butterfly = [[[0; 64]; 64]; 2];
        self.capture = [[[0; 6]; 64]; 12];
        for row in self.continuation.iter_mut() {
            row.fill(0);
        }
        self.counters = [None; PIECE_TO];
        for side in self.correction.iter_mut() {
            side.fill(0);
        }
    }

    /// The learnt correction of `pos`'s static evaluation, in centipawns × [`CORR_GRAIN`].
    #[inline(always)]
    pub fn correction(&self, pos: &Position) -> i32 {
        self.correction[pos.side_to_move() as usize][pawn_slot(pos)] as i32
    }

    /// Moves `pos`'s correction toward `diff` (search score − static evaluation, in
    /// centipawns), the more the deeper the search that found it.
    #[inline]
    pub fn update_correction(&mut self, pos: &Position, diff: i32, depth: i32) {
        let entry = &mut self.correction[pos.side_to_move() as usize][pawn_slot(pos)];
        let weight = (depth + 1).clamp(1, 16);
        let target = (diff * CORR_GRAIN).clamp(-CORR_MAX, CORR_MAX);
        let v = *entry as i32;
        *entry = ((v * (256 - weight) + target * weight) / 256).clamp(-CORR_MAX, CORR_MAX) as i16;
    }

    /// Butterfly history of a quiet move.
    #[inline(always)]
    pub fn butterfly(&self, side: Color, mv: Move) -> i32 {
        self.butterfly[side as usize][mv.from() as usize][mv.to() as usize] as i32
    }

    /// Continuation history of a move (piece-to `cur`) after a move with piece-to `prev`.
    #[inline(always)]
    pub fn continuation(&self, prev: PieceTo, cur: PieceTo) -> i32 {
        self.continuation[prev][cur] as i32
    }

    /// The combined quiet-move ordering score: butterfly plus continuation histories.
    #[inline(always)]
    pub fn quiet_score(
        &self,
        side: Color,
        mv: Move,
        cur: PieceTo,
        conts: &[Option<PieceTo>; 2],
    ) -> i32 {
        let mut s = self.butterfly(side, mv);
        for prev in conts.iter().flatten() {
            s += self.continuation(*prev, cur);
        }
        s
    }

    /// Capture history of a noisy move.
    #[inline(always)]
    pub fn capture(&self, pos: &Position, mv: Move) -> i32 {
        let piece = pos.piece_on(mv.from()).map_or(0, |p| p as usize);
        let victim = pos.captured(mv).unwrap_or(PieceType::Pawn) as usize;
        self.capture[piece][mv.to() as usize][victim] as i32
    }

    /// Updates the statistics of a quiet move by `bonus` (negative for a malus).
    #[inline]
    pub fn update_quiet(
        &mut self,
        side: Color,
        mv: Move,
        cur: PieceTo,
        conts: &[Option<PieceTo>; 2],
        bonus: i32,
    ) {
        gravity(
            &mut self.butterfly[side as usize][mv.from() as usize][mv.to() as usize],
            bonus,
        );
        for prev in conts.iter().flatten() {
            gravity(&mut self.continuation[*prev][cur], bonus);
        }
    }

    /// Updates the capture history of a noisy move.
    #[inline]
    pub fn update_capture(&mut self, pos: &Position, mv: Move, bonus: i32) {
        let piece = pos.piece_on(mv.from()).map_or(0, |p| p as usize);
        let victim = pos.captured(mv).unwrap_or(PieceType::Pawn) as usize;
        gravity(&mut self.capture[piece][mv.to() as usize][victim], bonus);
    }

    /// The counter-move recorded as the reply to the move with piece-to `prev`.
    #[inline(always)]
    pub fn counter(&self, prev: Option<PieceTo>) -> Option<Move> {
        prev.and_then(|p| self.counters[p])
    }

    /// Records `mv` as the reply to the move with piece-to `prev`.
    #[inline(always)]
    pub fn set_counter(&mut self, prev: Option<PieceTo>, mv: Move) {
        if let Some(p) = prev {
            self.counters[p] = Some(mv);
        }
    }
}

/// Two killer moves per ply: quiet moves that caused a beta cutoff at the same depth.
#[derive(Clone, Copy, Default, Debug)]
pub struct Killers(pub [Option<Move>; 2]);

impl Killers {
    /// Records a cutoff move, most recent first, without duplicates.
    #[inline(always)]
    pub fn push(&mut self, mv: Move) {
        if self.0[0] != Some(mv) {
            self.0[1] = self.0[0];
            self.0[0] = Some(mv);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{MoveKind, Square};

    #[test]
    fn gravity_is_bounded() {
        let mut h = History::new();
        let mv = Move::new(Square::G1, Square::F3, MoveKind::Quiet);
        let pos = Position::startpos();
        let pt = piece_to(&pos, mv);
        for _ in 0..1000 {
            h.update_quiet(Color::White, mv, pt, &[Some(3), None], 2000);
        }
        let b = h.butterfly(Color::White, mv);
        assert!(b > HISTORY_MAX - 200 && b <= HISTORY_MAX, "{b}");
        assert_eq!(h.continuation(3, pt), b);
        for _ in 0..1000 {
            h.update_quiet(Color::White, mv, pt, &[Some(3), None], -2000);
        }
        assert!(h.butterfly(Color::White, mv) >= -HISTORY_MAX);
        h.clear();
        assert_eq!(h.butterfly(Color::White, mv), 0);
    }

    #[test]
    fn correction_follows_the_score_and_stays_bounded() {
        let mut h = History::new();
        let pos = Position::startpos();
        assert_eq!(h.correction(&pos), 0);
        for _ in 0..200 {
            h.update_correction(&pos, 40, 15);
        }
        let c = h.correction(&pos);
        assert!((38 * CORR_GRAIN..=40 * CORR_GRAIN).contains(&c), "{c}");
        for _ in 0..200 {
            h.update_correction(&pos, -10_000, 15);
        }
        let c = h.correction(&pos);
        assert!((-CORR_MAX..=-63 * CORR_GRAIN).contains(&c), "{c}");
        // The other side to move, and another pawn structure, are other entries.
        let black =
            Position::from_fen("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1").unwrap();
        assert_eq!(h.correction(&black), 0);
        let e4 = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1")
            .unwrap();
        assert_eq!(h.correction(&e4), 0);
        h.clear();
        assert_eq!(h.correction(&pos), 0);
    }

    #[test]
    fn killers_keep_two_distinct() {
        let a = Move::new(Square::G1, Square::F3, MoveKind::Quiet);
        let b = Move::new(Square::B1, Square::C3, MoveKind::Quiet);
        let mut k = Killers::default();
        k.push(a);
        k.push(a);
        assert_eq!(k.0, [Some(a), None]);
        k.push(b);
        assert_eq!(k.0, [Some(b), Some(a)]);
    }
}
