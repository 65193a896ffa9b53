//! The evaluation as a list of feature counts, for Texel tuning.

use std::sync::OnceLock;

use super::weights::{feature, BLOCKS};
use super::{features, scale_factors, Sink, PHASE_MAX, SCALE_NORMAL};
use crate::params::{Params, Tunable};
use crate::position::Position;
use crate::types::{Color, PieceType, Square};

/// The features of one position, ready for a linear model over `Params::values()`.
///
/// With `v = params.values()`:
///
/// ```text
/// mg     = Σ_{(i, c) ∈ self.mg} v[i] · c
/// eg     = Σ_{(i, c) ∈ self.eg} v[i] · c
/// linear = (mg · phase + eg · (24 − phase)) / 24        (truncating)
/// white  = linear · scale[(linear < 0) as usize] / 64    (truncating)
/// ```
///
/// `white` equals [`evaluate_white`](super::evaluate_white) with `EvalWeights::new(params)`;
/// the side-to-move score multiplies it by `side_to_move.sign()`. A tuner that wants a
/// smooth model uses `(mg · phase + eg · (24 − phase)) / 24 · scale / 64` in floating point,
/// with `scale` taken for the sign of the current evaluation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EvalTrace {
    /// The game phase, 0 (endgame) to 24 (midgame).
    pub phase: i32,
    /// The draw-ish scale factor out of 64, for White ahead (index 0) and Black ahead (1).
    pub scale: [i32; 2],
    /// Whether White (+1) or Black (−1) is to move.
    pub side_to_move_sign: i32,
    /// `(index into Params::values(), White-minus-Black count)` of every midgame weight whose
    /// feature is non-zero.
    pub mg: Vec<(usize, i32)>,
    /// The same for the endgame weights.
    pub eg: Vec<(usize, i32)>,
}

impl EvalTrace {
    /// The midgame and endgame sums for a parameter vector in `Params::values()` order.
    pub fn sums(&self, values: &[i32]) -> (i64, i64) {
        let sum = |terms: &[(usize, i32)]| {
            terms
                .iter()
                .map(|&(i, c)| values[i] as i64 * c as i64)
                .sum()
        };
        (sum(&self.mg), sum(&self.eg))
    }

    /// The tapered linear part (before scaling), White-relative.
    pub fn linear(&self, values: &[i32]) -> i32 {
        let (mg, eg) = self.sums(values);
        let phase = self.phase as i64;
        ((mg * phase + eg * (PHASE_MAX as i64 - phase)) / PHASE_MAX as i64) as i32
    }

    /// The smooth model a tuner differentiates: the tapered sum in floating point (no
    /// truncation) times the scale factor for its sign, White-relative. Its gradient with
    /// respect to `values[i]` is `(c_mg(i) · phase + c_eg(i) · (24 − phase)) / 24 · scale / 64`
    /// where `c_mg(i)`, `c_eg(i)` are the counts of parameter `i` in [`mg`](Self::mg) and
    /// [`eg`](Self::eg).
    pub fn white_f64(&self, values: &[f64]) -> f64 {
        let sum = |terms: &[(usize, i32)]| {
            terms
                .iter()
                .map(|&(i, c)| values[i] * c as f64)
                .sum::<f64>()
        };
        let phase = self.phase as f64;
        let max = PHASE_MAX as f64;
        let linear = (sum(&self.mg) * phase + sum(&self.eg) * (max - phase)) / max;
        linear * self.scale[(linear < 0.0) as usize] as f64 / SCALE_NORMAL as f64
    }

    /// The evaluation from White's point of view, as [`evaluate_white`](super::evaluate_white).
    pub fn white(&self, values: &[i32]) -> i32 {
        let linear = self.linear(values);
        linear * self.scale[(linear < 0) as usize] / SCALE_NORMAL
    }

    /// The evaluation from the side to move's point of view, as [`evaluate`](super::evaluate).
    pub fn relative(&self, values: &[i32]) -> i32 {
        self.white(values) * self.side_to_move_sign
    }
}

/// Counts features.
struct Counter {
    counts: [i32; feature::COUNT],
}

impl Sink for Counter {
    fn add(&mut self, feature: usize, count: i32) {
        self.counts[feature] += count;
    }

    fn piece(&mut self, color: Color, kind: PieceType, sq: Square) {
        let sign = color.sign();
        self.counts[feature::MATERIAL + kind as usize] += sign;
        self.counts[feature::PST + kind as usize * 64 + sq.relative_to(color) as usize] += sign;
    }
}

/// For each feature, the indices of its midgame and endgame weights in `Params::values()`.
fn param_indices() -> &'static [(usize, usize)] {
    static INDICES: OnceLock<Vec<(usize, usize)>> = OnceLock::new();
    INDICES.get_or_init(|| {
        let params = Params::defaults();
        let base = params.values().as_ptr() as usize;
        let offset = |t: &'static Tunable| {
            (params.array(t).as_ptr() as usize - base) / core::mem::size_of::<i32>()
        };
        let mut indices = vec![(usize::MAX, usize::MAX); feature::COUNT];
        for block in &BLOCKS {
            let (mg, eg) = (offset(block.mg), offset(block.eg));
            for i in 0..block.mg.defaults.len() {
                indices[block.start + i] = (mg + i, eg + i);
            }
        }
        indices
    })
}

/// The features of `pos` as a linear model over the parameter vector (see [`EvalTrace`]).
///
/// ```
/// use engine::eval::{evaluate_white, trace, EvalWeights};
/// use engine::params::Params;
/// use engine::position::Position;
/// let params = Params::defaults();
/// let pos = Position::from_fen("r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4").unwrap();
/// let t = trace(&pos);
/// assert_eq!(t.white(params.values()), evaluate_white(&pos, &EvalWeights::new(&params)));
/// ```
pub fn trace(pos: &Position) -> EvalTrace {
    let mut counter = Counter {
        counts: [0; feature::COUNT],
    };
    features(pos, &mut counter);
    let indices = param_indices();
    let mut t = EvalTrace {
        phase: super::phase(pos),
        scale: scale_factors(pos),
        side_to_move_sign: pos.side_to_move().sign(),
        mg: Vec::new(),
        eg: Vec::new(),
    };
    for (f, &count) in counter.counts.iter().enumerate() {
        if count != 0 {
            let (mg, eg) = indices[f];
            t.mg.push((mg, count));
            t.eg.push((eg, count));
        }
    }
    t
}
