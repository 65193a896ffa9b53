//! The float network the trainer optimises, its forward pass and its gradient.
//!
//! The parameters live in one flat vector, `[feature weights 768K·H | feature bias H | output
//! weights O·2H | output biases O]` (`K` king buckets, `O` output buckets: the [`Layout`]), so
//! the optimiser and the checkpoint treat them as one array. The network is the quantised one
//! of [`engine::nnue::network`] on real numbers, `b` the output bucket:
//!
//! ```text
//! acc_p = b + Σ_{active features f of perspective p} W[f]       (H values each)
//! u     = clamp(acc, 0, 1)
//! y     = Σ u_stm[i]²·w_b[i] + Σ u_other[i]²·w_b[H + i] + c_b
//! ```
//!
//! evaluation `400·y` centipawns, prediction `sigmoid(y)`, loss `(sigmoid(y) − target)²`.

use engine::nnue::network::{Layout, INPUTS};
use engine::rng::SplitMix64;

use super::data::{sigmoid, Packed, MAX_PIECES};

/// Every float weight is clipped to ±this after each step, so the quantised values fit.
pub const WEIGHT_CLIP: f32 = 1.98;

/// The float network.
#[derive(Clone, Debug, PartialEq)]
pub struct FloatNet {
    /// Hidden width `H`.
    pub hidden: usize,
    /// The bucket layout.
    pub layout: Layout,
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
    /// Zeroed buffers for a network of width `hidden` and `layout`.
    pub fn new(hidden: usize, layout: Layout) -> Grads {
        Grads {
            values: vec![0.0; FloatNet::param_count(hidden, layout)],
            touched: vec![false; layout.inputs()],
            loss: 0.0,
            acc_us: vec![0.0; hidden],
            acc_them: vec![0.0; hidden],
        }
    }

    /// Adds `other` into `self` and clears `other` (only touched rows are visited).
    pub fn absorb(&mut self, other: &mut Grads, hidden: usize) {
        let inputs = self.touched.len();
        for f in 0..inputs {
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
        let tail = inputs * hidden..;
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
        let inputs = self.touched.len();
        for f in 0..inputs {
            if self.touched[f] {
                self.values[f * hidden..(f + 1) * hidden].fill(0.0);
                self.touched[f] = false;
            }
        }
        self.values[inputs * hidden..].fill(0.0);
        self.loss = 0.0;
    }
}

impl FloatNet {
    /// Number of parameters of a network of width `hidden` and `layout`.
    pub fn param_count(hidden: usize, layout: Layout) -> usize {
        layout.inputs() * hidden + hidden + layout.output_buckets * (2 * hidden + 1)
    }

    /// A network initialised from `seed`: feature weights and biases uniform in ±1/√768,
    /// output weights uniform in ±1/√(2H), output biases 0 (the plain layout draws the same
    /// numbers as before buckets existed).
    pub fn new(hidden: usize, layout: Layout, seed: u64) -> FloatNet {
        let mut rng = SplitMix64::new(seed);
        let mut uniform = |bound: f32| {
            let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
            (2.0 * unit - 1.0) * bound
        };
        let mut params = Vec::with_capacity(Self::param_count(hidden, layout));
        let ft = 1.0 / (INPUTS as f32).sqrt();
        params.extend((0..layout.inputs() * hidden + hidden).map(|_| uniform(ft)));
        let out = 1.0 / ((2 * hidden) as f32).sqrt();
        params.extend((0..2 * hidden * layout.output_buckets).map(|_| uniform(out)));
        params.extend(std::iter::repeat_n(0.0, layout.output_buckets));
        FloatNet {
            hidden,
            layout,
            params,
        }
    }

    /// Start of the feature biases in [`FloatNet::params`].
    fn bias_start(&self) -> usize {
        self.layout.inputs() * self.hidden
    }

    /// Feature weights, `[bucket][feature][H]`.
    pub fn feature_weights(&self) -> &[f32] {
        &self.params[..self.bias_start()]
    }

    /// Feature biases.
    pub fn feature_bias(&self) -> &[f32] {
        &self.params[self.bias_start()..self.bias_start() + self.hidden]
    }

    /// Output weights of every bucket, `[bucket][2H]`, side to move first.
    pub fn output_weights(&self) -> &[f32] {
        let start = self.bias_start() + self.hidden;
        &self.params[start..start + 2 * self.hidden * self.layout.output_buckets]
    }

    /// Output biases, one per bucket.
    pub fn output_biases(&self) -> &[f32] {
        &self.params[self.params.len() - self.layout.output_buckets..]
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
        let n = p.features(self.layout, fu, ft);
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

    /// The output `y` for accumulators `us`, `them` in output bucket `bucket`.
    #[inline(always)]
    fn output(&self, us: &[f32], them: &[f32], bucket: usize) -> f32 {
        let h = self.hidden;
        let ow = &self.output_weights()[bucket * 2 * h..(bucket + 1) * 2 * h];
        screlu_dot(us, &ow[..h]) + screlu_dot(them, &ow[h..]) + self.output_biases()[bucket]
    }

    /// The raw output `y` of a position (its evaluation is `400·y` centipawns).
    pub fn forward(&self, p: &Packed) -> f32 {
        let mut us = vec![0.0; self.hidden];
        let mut them = vec![0.0; self.hidden];
        let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
        self.accumulate(p, &mut fu, &mut ft, &mut us, &mut them);
        self.output(&us, &them, p.output_bucket(self.layout))
    }

    /// The loss `(sigmoid(y) − target)²` of each position of `batch`, summed.
    pub fn loss(&self, batch: &[Packed], wdl_weight: f32, g: &mut Grads) -> f64 {
        let mut sum = 0.0;
        let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
        for p in batch {
            self.accumulate(p, &mut fu, &mut ft, &mut g.acc_us, &mut g.acc_them);
            let y = self.output(&g.acc_us, &g.acc_them, p.output_bucket(self.layout));
            let d = sigmoid(y) - p.target(wdl_weight);
            sum += f64::from(d * d);
        }
        sum
    }

    /// Adds to `g` the gradient of `scale · Σ loss` over `batch` and to `g.loss` the summed
    /// loss.
    pub fn backward(&self, batch: &[Packed], wdl_weight: f32, scale: f32, g: &mut Grads) {
        let h = self.hidden;
        let ft_len = self.bias_start();
        let buckets = self.layout.output_buckets;
        let all_ow = self.output_weights();
        let (mut fu, mut ft) = ([0u16; MAX_PIECES], [0u16; MAX_PIECES]);
        for p in batch {
            let n = self.accumulate(p, &mut fu, &mut ft, &mut g.acc_us, &mut g.acc_them);
            let (us, them) = (&mut g.acc_us, &mut g.acc_them);
            let bucket = p.output_bucket(self.layout);
            let y = self.output(us, them, bucket);
            let ow = &all_ow[bucket * 2 * h..(bucket + 1) * 2 * h];
            let s = sigmoid(y);
            let d = s - p.target(wdl_weight);
            g.loss += f64::from(d * d);
            // dL/dy for L = scale · (s − t)².
            let gy = 2.0 * d * s * (1.0 - s) * scale;
            let (values, tail) = g.values.split_at_mut(ft_len);
            let (bias_g, rest) = tail.split_at_mut(h);
            let (all_ow_g, ob_g) = rest.split_at_mut(2 * h * buckets);
            ob_g[bucket] += gy;
            let ow_g = &mut all_ow_g[bucket * 2 * h..(bucket + 1) * 2 * h];
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
        gradient_check(Layout::PLAIN);
        gradient_check(Layout::new(4, 8).unwrap());
    }

    fn gradient_check(layout: Layout) {
        let mut net = FloatNet::new(16, layout, 3);
        // Larger output weights and a spread of accumulators inside (0, 1).
        let h = net.hidden;
        let inputs = layout.inputs();
        let start = inputs * h + h;
        for i in 0..2 * h * layout.output_buckets {
            net.params[start + i] *= 8.0;
        }
        for i in 0..h {
            net.params[inputs * h + i] = 0.3 + 0.02 * i as f32;
        }
        let batch = sample();
        let mut g = Grads::new(h, layout);
        net.backward(&batch, 0.4, 1.0, &mut g);
        let loss = |n: &FloatNet| {
            let mut scratch = Grads::new(h, layout);
            n.loss(&batch, 0.4, &mut scratch)
        };
        let (us, _) = {
            let (mut a, mut b) = ([0; 32], [0; 32]);
            batch[0].features(layout, &mut a, &mut b);
            (a, b)
        };
        let f = usize::from(us[0]);
        // The output layer of the first position's bucket.
        let b = batch[0].output_bucket(layout);
        let out = start + b * 2 * h;
        for idx in [
            f * h + 3,
            f * h + 7,
            inputs * h + 5,
            out + 2,
            out + h + 9,
            net.params.len() - layout.output_buckets + b,
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
