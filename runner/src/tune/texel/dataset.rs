//! Positions as the tuner needs them: the evaluation's feature counts ([`EvalTrace`]) packed
//! into one flat array, with the phase, the scale factors and the game result.
//!
//! A position costs 16 bytes plus 4 per non-zero feature weight (midgame and endgame
//! listed separately), about 600 bytes for a middlegame position, so a million positions
//! fit in well under a gigabyte.

use engine::eval::{EvalTrace, PHASE_MAX, SCALE_NORMAL};

/// One non-zero weight of a position: index into the parameter vector and its count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Term {
    index: u16,
    count: i16,
}

/// Where a position's terms are and what else the model needs about it.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Record {
    start: u32,
    mg_len: u16,
    eg_len: u16,
    phase: u8,
    scale: [u8; 2],
    score: i16,
    result: f32,
}

/// A set of positions for Texel tuning.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dataset {
    terms: Vec<Term>,
    records: Vec<Record>,
}

/// The model's evaluation of one position and its derivative pieces.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Eval {
    /// White-relative evaluation in centipawns.
    pub white: f64,
    /// `scale / 64` for the sign of the evaluation (the factor the gradient carries).
    pub scale: f64,
}

impl Dataset {
    /// An empty set.
    pub fn new() -> Dataset {
        Dataset::default()
    }

    /// Number of positions.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether there are no positions.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Adds a position with its trace, White's result (1, ½ or 0; any value in [0, 1]) and
    /// the search score the data file gives for it (White-relative centipawns; 0 if none),
    /// used by [`blend_scores`](Self::blend_scores). Fails if a parameter index or count
    /// does not fit the packed form.
    pub fn push(&mut self, trace: &EvalTrace, result: f32, score: i16) -> Result<(), String> {
        let start = u32::try_from(self.terms.len())
            .map_err(|_| "too many positions for one data set (4 G terms)".to_string())?;
        let pack = |terms: &[(usize, i32)]| -> Result<Vec<Term>, String> {
            terms
                .iter()
                .map(|&(i, c)| {
                    Ok(Term {
                        index: u16::try_from(i)
                            .map_err(|_| format!("parameter index {i} beyond 65535"))?,
                        count: i16::try_from(c)
                            .map_err(|_| format!("feature count {c} beyond ±32767"))?,
                    })
                })
                .collect()
        };
        let mg = pack(&trace.mg)?;
        let eg = pack(&trace.eg)?;
        let len16 = |n: usize| u16::try_from(n).map_err(|_| "too many features".to_string());
        let record = Record {
            start,
            mg_len: len16(mg.len())?,
            eg_len: len16(eg.len())?,
            phase: trace.phase.clamp(0, PHASE_MAX) as u8,
            scale: trace.scale.map(|s| s.clamp(0, 255) as u8),
            score,
            result,
        };
        self.terms.extend(mg);
        self.terms.extend(eg);
        self.records.push(record);
        Ok(())
    }

    /// Appends another set.
    pub fn append(&mut self, other: Dataset) {
        let offset = self.terms.len() as u32;
        self.terms.extend(other.terms);
        self.records.extend(other.records.into_iter().map(|mut r| {
            r.start += offset;
            r
        }));
    }

    /// Splits off the last `n` positions (all of them if there are fewer) into a new set.
    pub fn split_tail(&mut self, n: usize) -> Dataset {
        let at = self.records.len().saturating_sub(n);
        let records = self.records.split_off(at);
        let base = records
            .first()
            .map_or(self.terms.len(), |r| r.start as usize);
        let terms = self.terms.split_off(base);
        Dataset {
            terms,
            records: records
                .into_iter()
                .map(|mut r| {
                    r.start -= base as u32;
                    r
                })
                .collect(),
        }
    }

    /// Replaces every target by `(1 − weight) · result + weight · σ(K · score)`: part game
    /// result, part the search score turned into an expected result with the same K.
    pub fn blend_scores(&mut self, k: f64, weight: f64) {
        for r in &mut self.records {
            let expected = sigmoid(k, r.score as f64);
            r.result = ((1.0 - weight) * r.result as f64 + weight * expected) as f32;
        }
    }

    /// White's result of position `i` (the training target).
    pub fn result(&self, i: usize) -> f64 {
        self.records[i].result as f64
    }

    fn split(&self, i: usize) -> (&Record, &[Term], &[Term]) {
        let r = &self.records[i];
        let s = r.start as usize;
        let m = s + r.mg_len as usize;
        (r, &self.terms[s..m], &self.terms[m..m + r.eg_len as usize])
    }

    /// The smooth model (no truncation) for weights `w`, as
    /// [`EvalTrace::white_f64`] computes it.
    pub fn eval(&self, i: usize, w: &[f64]) -> Eval {
        let (r, mg, eg) = self.split(i);
        let sum = |t: &[Term]| {
            t.iter()
                .map(|t| w[t.index as usize] * t.count as f64)
                .sum::<f64>()
        };
        let phase = r.phase as f64;
        let max = PHASE_MAX as f64;
        let linear = (sum(mg) * phase + sum(eg) * (max - phase)) / max;
        let scale = r.scale[(linear < 0.0) as usize] as f64 / SCALE_NORMAL as f64;
        Eval {
            white: linear * scale,
            scale,
        }
    }

    /// The engine's exact evaluation (integer arithmetic with truncation) for integer
    /// weights, as [`EvalTrace::white`] computes it.
    pub fn eval_exact(&self, i: usize, w: &[i32]) -> i32 {
        let (r, mg, eg) = self.split(i);
        let sum = |t: &[Term]| {
            t.iter()
                .map(|t| w[t.index as usize] as i64 * t.count as i64)
                .sum::<i64>()
        };
        let phase = r.phase as i64;
        let max = PHASE_MAX as i64;
        let linear = ((sum(mg) * phase + sum(eg) * (max - phase)) / max) as i32;
        linear * r.scale[(linear < 0) as usize] as i32 / SCALE_NORMAL
    }

    /// Adds `factor · ∂eval/∂w` of position `i` into `grad`, where `scale` is the
    /// [`Eval::scale`] of the position.
    pub fn add_gradient(&self, i: usize, factor: f64, scale: f64, grad: &mut [f64]) {
        let (r, mg, eg) = self.split(i);
        let phase = r.phase as f64;
        let max = PHASE_MAX as f64;
        let f_mg = factor * scale * phase / max;
        let f_eg = factor * scale * (max - phase) / max;
        for t in mg {
            grad[t.index as usize] += f_mg * t.count as f64;
        }
        for t in eg {
            grad[t.index as usize] += f_eg * t.count as f64;
        }
    }
}

/// `ln 10 / 400`: σ(K·q) is the logistic function of `K·q·LN10_400`.
pub const LN10_400: f64 = std::f64::consts::LN_10 / 400.0;

/// The predicted score of White for evaluation `q` (centipawns) with scale `k`.
pub fn sigmoid(k: f64, q: f64) -> f64 {
    1.0 / (1.0 + (-k * q * LN10_400).exp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::eval::trace;
    use engine::params::Params;
    use engine::position::Position;

    #[test]
    fn packed_model_matches_the_trace() {
        let params = Params::defaults();
        let ints = params.values();
        let floats: Vec<f64> = ints.iter().map(|&v| v as f64).collect();
        let mut d = Dataset::new();
        let fens = [
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
            "8/5k2/8/3B4/8/8/2K5/8 b - - 0 60",
            "4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 20",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        ];
        let traces: Vec<EvalTrace> = fens
            .iter()
            .map(|f| trace(&Position::from_fen(f).unwrap()))
            .collect();
        for t in &traces {
            d.push(t, 0.5, 0).unwrap();
        }
        let mut both = Dataset::new();
        both.append(d.clone());
        both.append(d.clone());
        assert_eq!(both.len(), 2 * fens.len());
        let mut blended = d.clone();
        blended.blend_scores(1.0, 0.5);
        assert!((blended.result(0) - 0.5).abs() < 1e-6, "score 0 predicts ½");
        let mut scored = Dataset::new();
        scored.push(&traces[0], 1.0, 400).unwrap();
        scored.blend_scores(1.0, 0.25);
        let expected = 0.75 + 0.25 / (1.0 + 10f64.powf(-1.0));
        assert!((scored.result(0) - expected).abs() < 1e-6);
        let mut head = both.clone();
        let tail = head.split_tail(fens.len() + 1);
        assert_eq!((head.len(), tail.len()), (fens.len() - 1, fens.len() + 1));
        assert_eq!(tail.eval_exact(1, ints), traces[0].white(ints));
        assert_eq!(head.eval_exact(0, ints), traces[0].white(ints));
        for (i, t) in traces.iter().enumerate() {
            for set in [&d, &both] {
                let j = if std::ptr::eq(set, &both) {
                    i + fens.len()
                } else {
                    i
                };
                assert_eq!(set.eval_exact(j, ints), t.white(ints));
                assert!((set.eval(j, &floats).white - t.white_f64(&floats)).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let pos = Position::from_fen(
            "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
        )
        .unwrap();
        let t = trace(&pos);
        let mut d = Dataset::new();
        d.push(&t, 1.0, 0).unwrap();
        let mut w: Vec<f64> = Params::defaults()
            .values()
            .iter()
            .map(|&v| v as f64)
            .collect();
        let mut grad = vec![0.0; w.len()];
        let e = d.eval(0, &w);
        d.add_gradient(0, 1.0, e.scale, &mut grad);
        for &(i, _) in t.mg.iter().chain(&t.eg).take(20) {
            let old = w[i];
            w[i] = old + 0.5;
            let up = d.eval(0, &w).white;
            w[i] = old - 0.5;
            let down = d.eval(0, &w).white;
            w[i] = old;
            assert!((grad[i] - (up - down)).abs() < 1e-9, "index {i}");
        }
    }
}
