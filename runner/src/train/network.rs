//! The float network the trainer optimises, its forward pass and its gradient.
//!
//! The parameters live in one flat vector, `[feature weights 768·H | feature bias H | output
//! weights 2H | output bias 1]`, so the optimiser and the checkpoint treat them as one array.
//! The network is the quantised one of [`engine::nnue::network`] on real numbers:
//!
//! ```text
//! acc_p = b + Σ_{active features f of perspective p} W[f]       (H values each)
//! u     = clamp(acc, 0, 1)
//! y     = Σ u_stm[i]²·w[i] + Σ u_other[i]²·w[H + i] + c
//! ```
//!
//! evaluation `400·y` centipawns, prediction `sigmoid(y)`, loss `(sigmoid(y) − target)²`.

use engine::nnue::network::INPUTS;
use engine::rng::SplitMix64;

use super::data::{sigmoid, Packed, MAX_PIECES};

/// Every float weight is clipped to ±this after each step, so the quantised values fit.
pub const WEIGHT_CLIP: f32 = 1.98;

/// The float network.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    /// Hidden width `H`.
    pub hidden: usize,
    /// All parameters, laid out as the module documentation says.
    pub params: Vec<f32>,
}

/// Gradient buffers of one worker thread: the gradient of the summed loss, with the feature
/// rows it touched marked so that only they are added up and cleared.
pub struct Grads {
    /// Gradient, the same layout as [`FloatNet::params`].
    pub values: Vec<f32>,
    /// Whether feature row `f` holds a non-zero gradient.
    pub touched: Vec<bool>,
    /// Sum of the losses of the positions seen.
    pub loss: f64,
    acc_us: Vec<f32>,
    acc_them: Vec<f32>,
}

impl Grads {
    /// Zeroed buffers for a network of width `hidden`.
    pub fn new(hidden: usize) -> Grads {
        Grads {
            values: vec![0.0; FloatNet::param_count(hidden)],
            touched: vec![false; INPUTS],
            loss: 0.0,
            acc_us: vec![0.0; hidden],
            acc_them: vec![0.0; hidden],
        }
    }

    /// Adds `other` into `self` and clears `other` (only touched rows are visited).
    pub fn absorb(&mut self, other: &mut Grads, hidden: usize) {
        for f in 0..INPUTS {
            if other.touched[f] {
                let row = f * hidden..(f + 1) * hidden;
                for (a, b) in self.values[row.clone()]
                    .iter_mut()
                    .zip(&mut other.values[row])
                {
                    *a += *b;
                    *b = 0.0;
                }
                self.touched[f] = true;
                other.touched[f] = false;
            }
        }
        let tail = INPUTS * hidden..;
        for (a, b) in self.values[tail.clone()]
            .iter_mut()
            .zip(&mut other.values[tail])
        {
            *a += *b;
            *b = 0.0;
        }
        self.loss += other.loss;
        other.loss = 0.0;
    }

    /// Clears the gradient after an optimiser step.
    pub fn clear(&mut self, hidden: usize) {
        for f in 0..INPUTS {
            if self.touched[f] {
                self.values[f * hidden..(f + 1) * hidden].fill(0.0);
                self.touched[f] = false;
            }
        }
        self.values[INPUTS * hidden..].fill(0.0);
        self.loss = 0.0;
    }
}

impl FloatNet {
    /// Number of parameters of a network of width `hidden`.
    pub fn param_count(hidden: usize) -> usize {
        INPUTS * hidden + hidden + 2 * hidden + 1
    }

    /// A network initialised from `seed`: feature weights and biases uniform in ±1/√768,
    /// output weights uniform in ±1/√(2H), output bias 0.
    pub fn new(hidden: usize, seed: u64) -> FloatNet {
        let mut rng = SplitMix64::new(seed);
        let mut uniform = |bound: f32| {
            let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * unit - 1.0) * bound
        };
        let mut params = Vec::with_capacity(Self::param_count(hidden));
        let ft = 1.0 / (INPUTS as f32).sqrt();
        params.extend((0..INPUTS * hidden + hidden).map(|_| uniform(ft)));
        let out = 1.0 / ((2 * hidden) as f32).sqrt();
        params.extend((0..2 * hidden).map(|_| uniform(out)));
        params.push(0.0);
        FloatNet { hidden, params }
    }

    /// Feature weights, `[feature][H]`.
    pub fn feature_weights(&self) -> &[f32] {
        &self.params[..INPUTS * self.hidden]
    }

    /// Feature biases.
    pub fn feature_bias(&self) -> &[f32] {
        &self.params[INPUTS * self.hidden..INPUTS * self.hidden + self.hidden]
    }

    /// Output weights, side to move first.
    pub fn output_weights(&self) -> &[f32] {
        let start = INPUTS * self.hidden + self.hidden;
        &self.params[start..start + 2 * self.hidden]
    }

    /// Output bias.
    pub fn output_bias(&self) -> f32 {
        self.params[self.params.len() - 1]
    }

    /// Fills both accumulators of `p` (`us`, `them`) and its active features (`fu`, `ft`, from
    /// each side's view); returns how many features there are.
    #[inline(always)]
    fn accumulate(
        &self,
        p: &Packed,
        fu: &mut [u16; MAX_PIECES],
        ft: &mut [u16; MAX_PIECES],
        us: &mut [f32],
        them: &mut [f32],
    ) -> usize {
        let h = self.hidden;
        let n = p.features(fu, ft);
        let w = self.feature_weights();
        us.copy_from_slice(self.feature_bias());
        them.copy_from_slice(self.feature_bias());
        for (&a, &b) in fu[..n].iter().zip(&ft[..n]) {
            let (a, b) = (usize::from(a) * h, usize::from(b) * h);
            add(us, &w[a..a + h]);
            add(them, &w[b..b + h]);
        }
        n
    }

    /// The output `y` for accumulators `us`, `them`.
    #[inline(always)]
    fn output(&self, us: &[f32], them: &[f32]) -> f32 {
        let h = self.hidden;
        let ow = self.output_weights();
        screlu_dot(us, &ow[..h]) + screlu_dot(them, &ow[h..]) + self.output_bias()
    }

    /// The raw output `y` of a position (its evaluation is `400·y` centipawns).
    pub fn forward(&self, p: &Packed) -> f32 {
        let mut us = vec![0.0; self.hidden];
        let mut them = vec![0.0; self.hidden];
        let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
        self.accumulate(p, &mut fu, &mut ft, &mut us, &mut them);
        self.output(&us, &them)
    }

    /// The loss `(sigmoid(y) − target)²` of each position of `batch`, summed.
    pub fn loss(&self, batch: &[Packed], wdl_weight: f32, g: &mut Grads) -> f64 {
        let mut sum = 0.0;
        let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
        for p in batch {
            self.accumulate(p, &mut fu, &mut ft, &mut g.acc_us, &mut g.acc_them);
            let y = self.output(&g.acc_us, &g.acc_them);
            let d = sigmoid(y) - p.target(wdl_weight);
            sum += f64::from(d * d);
        }
        sum
    }

    /// Adds to `g` the gradient of `scale · Σ loss` over `batch` and to `g.loss` the summed
    /// loss.
    pub fn backward(&self, batch: &[Packed], wdl_weight: f32, scale: f32, g: &mut Grads) {
        let h = self.hidden;
        let ft_len = INPUTS * h;
        let ow = self.output_weights();
        let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
        for p in batch {
            let n = self.accumulate(p, &mut fu, &mut ft, &mut g.acc_us, &mut g.acc_them);
            let (us, them) = (&mut g.acc_us, &mut g.acc_them);
            let y = self.output(us, them);
            let s = sigmoid(y);
            let d = s - p.target(wdl_weight);
            g.loss += f64::from(d * d);
            // dL/dy for L = scale · (s − t)².
            let gy = 2.0 * d * s * (1.0 - s) * scale;
            let (values, tail) = g.values.split_at_mut(ft_len);
            let (bias_g, rest) = tail.split_at_mut(h);
            let (ow_g, ob_g) = rest.split_at_mut(2 * h);
            ob_g[0] += gy;
            // Output weights, then turn the accumulators into their gradients in place.
            output_grad(us, &ow[..h], &mut ow_g[..h], gy);
            output_grad(them, &ow[h..], &mut ow_g[h..], gy);
            add(bias_g, us);
            add(bias_g, them);
            for (&a, &b) in fu[..n].iter().zip(&ft[..n]) {
                let (a, b) = (usize::from(a), usize::from(b));
                add(&mut values[a * h..(a + 1) * h], us);
                add(&mut values[b * h..(b + 1) * h], them);
                g.touched[a] = true;
                g.touched[b] = true;
            }
        }
    }
}

/// `dst += src`.
#[inline(always)]
fn add(dst: &mut [f32], src: &[f32]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += *s;
    }
}

/// `Σ clamp(acc, 0, 1)² · w`.
#[inline(always)]
fn screlu_dot(acc: &[f32], w: &[f32]) -> f32 {
    // Eight partial sums: the compiler keeps them in vector registers.
    let mut sums = [0.0f32; 8];
    for (a, w) in acc.chunks_exact(8).zip(w.chunks_exact(8)) {
        for k in 0..8 {
            let u = a[k].clamp(0.0, 1.0);
            sums[k] += u * u * w[k];
        }
    }
    sums.iter().sum()
}

/// Adds `gy·u²` to the output-weight gradient and replaces each accumulator value by the
/// gradient of the loss with respect to it, `gy·2u·w` inside (0, 1) and 0 outside.
#[inline(always)]
fn output_grad(acc: &mut [f32], w: &[f32], ow_g: &mut [f32], gy: f32) {
    for ((a, &w), og) in acc.iter_mut().zip(w).zip(ow_g) {
        let u = a.clamp(0.0, 1.0);
        *og += gy * u * u;
        *a = if *a > 0.0 && *a < 1.0 {
            2.0 * gy * u * w
        } else {
            0.0
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::position::Position;
    use engine::types::GameResult;

    fn sample() -> Vec<Packed> {
        [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/8/4k3/8/1Q6/8/4K3/8 w - - 0 1",
        ]
        .iter()
        .zip([
            (30, GameResult::Draw),
            (-120, GameResult::BlackWins),
            (900, GameResult::WhiteWins),
        ])
        .map(|(fen, (s, r))| Packed::new(&Position::from_fen(fen).unwrap(), s, r))
        .collect()
    }

    #[test]
    fn gradient_matches_finite_differences() {
        let mut net = FloatNet::new(16, 3);
        // Larger output weights and a spread of accumulators inside (0, 1).
        let h = net.hidden;
        let start = INPUTS * h + h;
        for i in 0..2 * h {
            net.params[start + i] *= 8.0;
        }
        for i in 0..h {
            net.params[INPUTS * h + i] = 0.3 + 0.02 * i as f32;
        }
        let batch = sample();
        let mut g = Grads::new(h);
        net.backward(&batch, 0.4, 1.0, &mut g);
        let loss = |n: &FloatNet| {
            let mut scratch = Grads::new(h);
            n.loss(&batch, 0.4, &mut scratch)
        };
        let (us, _) = {
            let (mut a, mut b) = ([0; 32], [0; 32]);
            batch[0].features(&mut a, &mut b);
            (a, b)
        };
        let f = usize::from(us[0]);
        for idx in [
            f * h + 3,
            f * h + 7,
            INPUTS * h + 5,
            start + 2,
            start + h + 9,
            net.params.len() - 1,
        ] {
            let eps = 1e-3;
            let mut plus = net.clone();
            plus.params[idx] += eps;
            let mut minus = net.clone();
            minus.params[idx] -= eps;
            let numeric = (loss(&plus) - loss(&minus)) / (2.0 * f64::from(eps));
            let analytic = f64::from(g.values[idx]);
            assert!(
                (numeric - analytic).abs() < 1e-3 * (1.0 + numeric.abs()),
                "param {idx}: numeric {numeric} analytic {analytic}"
            );
        }
        assert!(g.touched[f]);
    }
}
