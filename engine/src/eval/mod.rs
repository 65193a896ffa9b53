//! Handcrafted tapered evaluation.
//!
//! # Terms
//!
//! Material and piece-square tables (defaults: PeSTO), mobility per piece type (a bonus
//! table indexed by the number of attacked squares not occupied by own pieces and not
//! attacked by enemy pawns), pawn structure (passed pawns by rank with king distances to
//! their stop square, isolated, doubled, backward, supported and phalanx pawns), king safety
//! (attacks on the enemy king zone per attacking piece type, a bonus table by the number of
//! attacking pieces, the pawn shield, open files around the king), bishop pair, rooks on
//! open and semi-open files, threats by pawns and minors, and a tempo bonus.
//!
//! # Formula
//!
//! The evaluation is **linear in its weights**. Every weight is a tunable parameter of kind
//! `eval` (see [`crate::params`]); each comes as a midgame / endgame pair (`passed_mg`,
//! `passed_eg`). A *feature* is an integer count `f` taken as White's count minus Black's
//! (the tempo feature is +1 with White to move, −1 with Black). With `w_mg`, `w_eg` the
//! weights of feature `f`:
//!
//! ```text
//! mg     = Σ_f w_mg(f) · f           eg = Σ_f w_eg(f) · f
//! phase  = min(24, knights + bishops + 2·rooks + 4·queens)        (both sides)
//! linear = (mg · phase + eg · (24 − phase)) / 24                   (i32, truncating)
//! white  = linear · scale / 64                                     (i32, truncating)
//! evaluate = white · (+1 if White is to move, −1 if Black is)
//! ```
//!
//! `scale` is a draw-ish scale factor chosen outside the linear part, from the material only:
//! 64 normally; 32 with only opposite-coloured bishops and pawns left; for the side ahead (by
//! the sign of `linear`) without pawns, 0 if it has at most a minor piece and 16 if it is at
//! most a minor piece's worth ahead. [`EvalTrace::scale`] holds it for either side ahead.
//!
//! [`trace()`] lists every non-zero feature as `(index into Params::values(), count)` pairs
//! so a Texel tuner can evaluate and differentiate the formula above for any parameter
//! vector; [`EvalTrace::white`] with the values of a [`Params`](crate::params::Params) table
//! equals [`evaluate_white`] with the [`EvalWeights`] of that table.
//!
//! The hot path reads only [`EvalWeights`] (plain arrays), does not allocate and does no
//! parameter lookups.

mod king;
mod pawns;
mod pesto;
mod pieces;
mod trace;
mod weights;

#[cfg(test)]
pub(crate) mod tests;

pub use trace::{trace, EvalTrace};
pub use weights::EvalWeights;

use crate::position::Position;
use crate::types::{Bitboard, Color, PieceType, Square};
use weights::{feature, S};

/// The game phase of a position with all pieces on the board (the midgame end of the taper).
pub const PHASE_MAX: i32 = 24;

/// The scale factor that leaves an evaluation unchanged (see [`EvalTrace::scale`]).
pub const SCALE_NORMAL: i32 = 64;

/// Receives the features of a position: the evaluation sums weights, the trace counts.
pub(crate) trait Sink {
    /// Adds `count` (White's minus Black's) of a feature.
    fn add(&mut self, feature: usize, count: i32);
    /// Adds a piece's material and piece-square features.
    fn piece(&mut self, color: Color, kind: PieceType, sq: Square);
}

/// Sums weights × counts.
struct Scorer<'a> {
    w: &'a EvalWeights,
    score: S,
}

impl Sink for Scorer<'_> {
    #[inline(always)]
    fn add(&mut self, feature: usize, count: i32) {
        self.score += self.w.s[feature] * count;
    }

    #[inline(always)]
    fn piece(&mut self, color: Color, kind: PieceType, sq: Square) {
        self.score += self.w.psqt[color as usize][kind as usize][sq as usize];
    }
}

/// Feeds every feature of `pos` into `t`.
#[inline(always)]
fn features<T: Sink>(pos: &Position, t: &mut T) {
    for color in Color::ALL {
        for kind in PieceType::ALL {
            for sq in pos.colored(color, kind) {
                t.piece(color, kind, sq);
            }
        }
    }
    let pawn_att = [
        pawns::pawn_attack_span(pos.colored(Color::White, PieceType::Pawn), Color::White),
        pawns::pawn_attack_span(pos.colored(Color::Black, PieceType::Pawn), Color::Black),
    ];
    pawns::evaluate_pawns(pos, &pawn_att, t);
    pieces::evaluate_pieces(pos, &pawn_att, t);
    king::evaluate_king_shelter(pos, t);
    let pair = |c| (pos.colored(c, PieceType::Bishop).count() >= 2) as i32;
    t.add(
        feature::BISHOP_PAIR,
        pair(Color::White) - pair(Color::Black),
    );
    t.add(feature::TEMPO, pos.side_to_move().sign());
}

/// The game phase: 0 (pawns and kings only) to [`PHASE_MAX`] (all pieces), from the
/// non-pawn material of both sides (knight and bishop 1, rook 2, queen 4).
///
/// ```
/// use engine::eval::{phase, PHASE_MAX};
/// use engine::position::Position;
/// assert_eq!(phase(&Position::startpos()), PHASE_MAX);
/// ```
#[inline]
pub fn phase(pos: &Position) -> i32 {
    let minors = (pos.pieces(PieceType::Knight) | pos.pieces(PieceType::Bishop)).count();
    let rooks = pos.pieces(PieceType::Rook).count();
    let queens = pos.pieces(PieceType::Queen).count();
    ((minors + 2 * rooks + 4 * queens) as i32).min(PHASE_MAX)
}

/// Non-pawn material in rough points (minor 3, rook 5, queen 9).
fn points(pos: &Position, c: Color) -> u32 {
    let n = |k| pos.colored(c, k).count();
    3 * (n(PieceType::Knight) + n(PieceType::Bishop))
        + 5 * n(PieceType::Rook)
        + 9 * n(PieceType::Queen)
}

/// The draw-ish scale factors (out of [`SCALE_NORMAL`]) for White being ahead (index 0) and
/// Black being ahead (index 1). Depends on the material only.
pub(crate) fn scale_factors(pos: &Position) -> [i32; 2] {
    let mut scale = [SCALE_NORMAL; 2];
    let bishops = pos.pieces(PieceType::Bishop);
    let others =
        pos.pieces(PieceType::Knight) | pos.pieces(PieceType::Rook) | pos.pieces(PieceType::Queen);
    if others.is_empty()
        && pos.colored(Color::White, PieceType::Bishop).count() == 1
        && pos.colored(Color::Black, PieceType::Bishop).count() == 1
        && (bishops & Bitboard::LIGHT).count() == 1
    {
        scale = [SCALE_NORMAL / 2; 2];
    }
    for strong in Color::ALL {
        if pos.colored(strong, PieceType::Pawn).any() {
            continue;
        }
        let (ours, theirs) = (points(pos, strong), points(pos, !strong));
        let s = &mut scale[strong as usize];
        if ours <= 3 {
            // A lone minor (or nothing) does not win.
            *s = 0;
        } else if ours <= theirs + 3 {
            // At most a minor piece ahead without pawns: KRKB, KRBKR, KQKRB, ...
            *s = (*s).min(SCALE_NORMAL / 4);
        }
    }
    scale
}

/// Applies the taper and the scale factor to a midgame / endgame score.
#[inline(always)]
fn finish(pos: &Position, score: S) -> i32 {
    let phase = phase(pos);
    let linear = (score.mg * phase + score.eg * (PHASE_MAX - phase)) / PHASE_MAX;
    if linear == 0 {
        return 0;
    }
    let scale = scale_factors(pos)[(linear < 0) as usize];
    if scale == SCALE_NORMAL {
        linear
    } else {
        linear * scale / SCALE_NORMAL
    }
}

/// The static evaluation in centipawns from White's point of view.
///
/// ```
/// use engine::eval::{evaluate_white, EvalWeights};
/// use engine::position::Position;
/// let w = EvalWeights::default();
/// // White is a queen up; Black to move.
/// let pos = Position::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1").unwrap();
/// assert!(evaluate_white(&pos, &w) > 700);
/// ```
#[inline]
pub fn evaluate_white(pos: &Position, w: &EvalWeights) -> i32 {
    let mut scorer = Scorer {
        w,
        score: S::default(),
    };
    features(pos, &mut scorer);
    finish(pos, scorer.score)
}

/// The static evaluation in centipawns from the side to move's point of view.
///
/// ```
/// use engine::eval::{evaluate, EvalWeights};
/// use engine::position::Position;
/// let w = EvalWeights::default();
/// let pos = Position::from_fen("rnb1kbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 1").unwrap();
/// assert!(evaluate(&pos, &w) < -700);
/// ```
#[inline]
pub fn evaluate(pos: &Position, w: &EvalWeights) -> i32 {
    crate::track!("eval/static"; evaluate_white(pos, w) * pos.side_to_move().sign())
}
