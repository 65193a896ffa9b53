//! AdamW over every parameter (a dense update, parallel over blocks of parameters) and the
//! cosine learning-rate schedule.

use rayon::prelude::*;

use super::network::WEIGHT_CLIP;

/// Adam's first-moment decay.
pub const BETA1: f32 = 0.9;
/// Adam's second-moment decay.
pub const BETA2: f32 = 0.999;
/// Adam's ε.
pub const EPSILON: f32 = 1e-8;
/// The learning rate at the end of the run, as a fraction of the start.
pub const FINAL_LR_FRACTION: f64 = 0.01;

/// AdamW's state: both moments of every parameter and the step count.
#[derive(Clone, Debug, PartialEq)]
pub struct AdamW {
    /// First moments.
    pub m: Vec<f32>,
    /// Second moments.
    pub v: Vec<f32>,
    /// Steps taken.
    pub steps: u64,
    /// Decoupled weight decay (per unit of learning rate).
    pub weight_decay: f32,
}

/// Parameters per parallel block of the update.
const BLOCK: usize = 8192;

impl AdamW {
    /// Zeroed state for `n` parameters.
    pub fn new(n: usize, weight_decay: f32) -> AdamW {
        AdamW {
            m: vec![0.0; n],
            v: vec![0.0; n],
            steps: 0,
            weight_decay,
        }
    }

    /// One step with learning rate `lr` along `grad`; every weight is then clipped to
    /// ±[`WEIGHT_CLIP`]. Element-wise, so the result does not depend on the thread count.
    pub fn step(&mut self, params: &mut [f32], grad: &[f32], lr: f64) {
        self.steps += 1;
        let t = self.steps as f64;
        let step = (lr * (1.0 - f64::from(BETA2).powf(t)).sqrt() / (1.0 - f64::from(BETA1).powf(t)))
            as f32;
        let decay = 1.0 - (lr as f32) * self.weight_decay;
        params
            .par_chunks_mut(BLOCK)
            .zip(self.m.par_chunks_mut(BLOCK))
            .zip(self.v.par_chunks_mut(BLOCK))
            .zip(grad.par_chunks(BLOCK))
            .for_each(|(((p, m), v), g)| {
                for (((p, m), v), &g) in p.iter_mut().zip(m).zip(v).zip(g) {
                    *m = BETA1 * *m + (1.0 - BETA1) * g;
                    *v = BETA2 * *v + (1.0 - BETA2) * g * g;
                    let w = *p * decay - step * *m / (v.sqrt() + EPSILON);
                    *p = w.clamp(-WEIGHT_CLIP, WEIGHT_CLIP);
                }
            });
    }
}

/// The learning rate of step `step` of `total`: cosine decay from `lr` to
/// `lr · FINAL_LR_FRACTION`.
pub fn cosine_lr(lr: f64, step: u64, total: u64) -> f64 {
    let progress = step as f64 / total.max(1) as f64;
    let low = lr * FINAL_LR_FRACTION;
    low + (lr - low) * 0.5 * (1.0 + (std::f64::consts::PI * progress.min(1.0)).cos())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adam_minimises_a_quadratic_and_clips() {
        let mut p = vec![1.5f32, -0.7, 0.0];
        let target = [0.25f32, -0.5, 3.0];
        let mut opt = AdamW::new(3, 0.0);
        for _ in 0..3000 {
            let g: Vec<f32> = p.iter().zip(&target).map(|(p, t)| 2.0 * (p - t)).collect();
            opt.step(&mut p, &g, 0.01);
        }
        assert!(
            (p[0] - 0.25).abs() < 1e-2 && (p[1] + 0.5).abs() < 1e-2,
            "{p:?}"
        );
        assert_eq!(p[2], WEIGHT_CLIP);
    }

    #[test]
    fn schedule_runs_from_lr_to_a_hundredth() {
        assert_eq!(cosine_lr(0.001, 0, 100), 0.001);
        assert!((cosine_lr(0.001, 100, 100) - 0.00001).abs() < 1e-12);
        assert!((cosine_lr(0.001, 50, 100) - 0.000505).abs() < 1e-9);
    }
}
