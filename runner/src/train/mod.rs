//! `spar train`: a CPU trainer of the engine's NNUE (`768·K → H → SCReLU → O`, perspective
//! network with `K` king buckets and `O` output buckets; the layout of
//! [`engine::nnue::network`]).
//!
//! | module | concern |
//! |---|---|
//! | [`data`] | packed positions, filters, the temporary packed file, shuffled batches |
//! | [`network`] | the float network, its forward pass and gradient |
//! | [`optim`] | AdamW and the cosine learning-rate schedule |
//! | [`checkpoint`] | the per-epoch checkpoint and the options that define a run |
//! | [`quantise`] | rounding into the engine's layout, and a scalar quantised evaluator |
//!
//! A step splits the batch into one contiguous slice per thread; each thread adds its
//! gradient into its own buffers (no locks), marking the feature rows it touched; the
//! buffers are then added up in thread order (touched rows only) and AdamW updates every
//! parameter. With a fixed thread count, the result is the same on every run.

pub mod checkpoint;
pub mod data;
pub mod network;
pub mod optim;
pub mod quantise;

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};

use rayon::prelude::*;

use checkpoint::{Checkpoint, RunOptions};
use data::{Packed, PackedFile};
use network::{FloatNet, Grads};
use optim::{cosine_lr, AdamW};

/// A run in progress: its options, the network, the optimiser, the epochs done.
pub struct Trainer {
    /// What defines the run.
    pub options: RunOptions,
    /// The state a checkpoint holds.
    pub state: Checkpoint,
    grads: Vec<Grads>,
}

/// Seed salt of the initial weights (the shuffles use the epoch number).
const INIT_SALT: u64 = 0x6e6e_7565_5f69_6e69;

impl Trainer {
    /// A fresh run, or the run of `resume` (whose options must equal `options`; the
    /// caller checks). The options' layout must be one [`RunOptions::layout`] accepts (the
    /// caller checks).
    pub fn new(options: RunOptions, resume: Option<Checkpoint>, threads: usize) -> Trainer {
        let layout = options
            .layout()
            .expect("the layout was checked with the options");
        let state = resume.unwrap_or_else(|| {
            let net = FloatNet::new(
                options.hidden,
                layout,
                engine::rng::mix_seed(options.seed, INIT_SALT),
            );
            let adam = AdamW::new(net.params.len(), options.weight_decay as f32);
            Checkpoint {
                options: options.clone(),
                epoch: 0,
                net,
                adam,
            }
        });
        let grads = (0..threads.max(1))
            .map(|_| Grads::new(options.hidden, layout))
            .collect();
        Trainer {
            options,
            state,
            grads,
        }
    }

    /// Optimiser steps in the whole run.
    pub fn total_steps(&self) -> u64 {
        u64::from(self.options.epochs) * self.options.positions.div_ceil(self.options.batch as u64)
    }

    /// One optimiser step on `batch`; returns the batch's mean loss before the step.
    pub fn step(&mut self, batch: &[Packed]) -> f64 {
        let net = &self.state.net;
        let wdl = self.options.wdl as f32;
        let scale = 1.0 / batch.len() as f32;
        let per = batch.len().div_ceil(self.grads.len()).max(1);
        self.grads
            .par_iter_mut()
            .zip(batch.par_chunks(per))
            .for_each(|(g, part)| net.backward(part, wdl, scale, g));
        let hidden = self.options.hidden;
        let lr = cosine_lr(self.options.lr, self.state.adam.steps, self.total_steps());
        let (first, rest) = self.grads.split_first_mut().expect("one buffer at least");
        for g in rest {
            first.absorb(g, hidden);
        }
        let loss = first.loss / batch.len() as f64;
        self.state
            .adam
            .step(&mut self.state.net.params, &first.values, lr);
        first.clear(hidden);
        loss
    }

    /// Trains one epoch (the next one); `progress` gets the positions done in this epoch
    /// and the running mean loss after each step. Returns the epoch's mean training loss,
    /// or `None` when `stop` was raised (the state is then mid-epoch: do not save it).
    pub fn epoch(
        &mut self,
        data: &PackedFile,
        stop: &AtomicBool,
        mut progress: impl FnMut(u64, f64),
    ) -> io::Result<Option<f64>> {
        let (mut done, mut sum) = (0u64, 0.0);
        let seed = (self.options.seed, u64::from(self.state.epoch));
        let batch = self.options.batch;
        let finished = data.for_each_batch(batch, Some(seed), |b| {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            sum += self.step(b) * b.len() as f64;
            done += b.len() as u64;
            progress(done, sum / done as f64);
            true
        })?;
        if !finished {
            return Ok(None);
        }
        self.state.epoch += 1;
        Ok(Some(sum / done.max(1) as f64))
    }

    /// Mean loss of the current network over `data` (in parallel, file order).
    pub fn loss(&mut self, data: &PackedFile) -> io::Result<f64> {
        self.loss_against(data, self.options.wdl as f32)
    }

    /// Mean loss over `data` against the target with result weight `wdl` (1: the game result
    /// alone, a yardstick that does not depend on `--wdl`).
    pub fn loss_against(&mut self, data: &PackedFile, wdl: f32) -> io::Result<f64> {
        let net = &self.state.net;
        let grads = &mut self.grads;
        let mut sum = 0.0;
        data.for_each_batch(1 << 16, None, |b| {
            let per = b.len().div_ceil(grads.len()).max(1);
            sum += grads
                .par_iter_mut()
                .zip(b.par_chunks(per))
                .map(|(g, part)| net.loss(part, wdl, g))
                .collect::<Vec<f64>>()
                .iter()
                .sum::<f64>();
            true
        })?;
        Ok(sum / data.len().max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use engine::position::Position;
    use engine::rng::SplitMix64;
    use engine::types::{Color, GameResult, PieceType};

    /// Positions from random games, labelled by a material count (White's view).
    fn synthetic(n: usize, seed: u64) -> Vec<Packed> {
        let mut rng = SplitMix64::new(seed);
        let values = [100, 300, 320, 500, 900, 0];
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            let mut pos = Position::startpos();
            for _ in 0..120 {
                let moves = pos.legal_moves();
                if moves.as_slice().is_empty() {
                    break;
                }
                let mv = moves.as_slice()[rng.below(moves.as_slice().len())];
                pos.play_mut(mv);
                let material: i32 = PieceType::ALL
                    .iter()
                    .zip(values)
                    .map(|(&k, v)| {
                        v * (pos.colored(Color::White, k).count() as i32
                            - pos.colored(Color::Black, k).count() as i32)
                    })
                    .sum();
                let score = material.clamp(-2000, 2000) as i16;
                let result = match material {
                    m if m > 150 => GameResult::WhiteWins,
                    m if m < -150 => GameResult::BlackWins,
                    _ => GameResult::Draw,
                };
                out.push(Packed::new(&pos, score, result));
            }
        }
        out.truncate(n);
        out
    }

    fn options(positions: usize, epochs: u32) -> RunOptions {
        RunOptions {
            hidden: 16,
            epochs,
            batch: 256,
            lr: 0.01,
            wdl: 0.0,
            weight_decay: 0.01,
            seed: 3,
            max_score: 3000,
            positions: positions as u64,
            king_buckets: 1,
            output_buckets: 1,
        }
    }

    #[test]
    fn learns_a_material_formula() {
        let dir = tempfile::tempdir().unwrap();
        let train = synthetic(8000, 1);
        let held = synthetic(1000, 2);
        let train_file = PackedFile::from_positions(&train, dir.path()).unwrap();
        let held_file = PackedFile::from_positions(&held, dir.path()).unwrap();
        let mut t = Trainer::new(options(train.len(), 12), None, 2);
        let start = t.loss(&held_file).unwrap();
        let stop = AtomicBool::new(false);
        for _ in 0..12 {
            t.epoch(&train_file, &stop, |_, _| {}).unwrap().unwrap();
        }
        let end = t.loss(&held_file).unwrap();
        assert!(end < start * 0.25, "loss {start} -> {end}");
        // Predictions correlate with the labels.
        let (xs, ys): (Vec<f64>, Vec<f64>) = held
            .iter()
            .map(|p| {
                (
                    f64::from(t.state.net.forward(p)) * 400.0,
                    f64::from(p.score),
                )
            })
            .unzip();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        let (mx, my) = (mean(&xs), mean(&ys));
        let cov: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
        let sx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum::<f64>().sqrt();
        let sy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum::<f64>().sqrt();
        let r = cov / (sx * sy);
        assert!(r > 0.9, "correlation {r}");
        // And the quantised network agrees with the float one.
        let q = quantise::quantise(&t.state.net);
        let (mean_diff, _) = quantise::agreement(&t.state.net, &q, &held);
        assert!(mean_diff < quantise::MEAN_TOLERANCE_CP, "{mean_diff}");
    }

    #[test]
    fn a_bucketed_net_learns_and_its_quantised_form_agrees() {
        let dir = tempfile::tempdir().unwrap();
        let train = synthetic(6000, 5);
        let held = synthetic(800, 6);
        let train_file = PackedFile::from_positions(&train, dir.path()).unwrap();
        let mut o = options(train.len(), 8);
        o.king_buckets = 4;
        o.output_buckets = 8;
        let mut t = Trainer::new(o, None, 2);
        // 4·768·16 feature weights for 6000 positions: the training loss is what must fall
        // (generalising is a question of data, not of the bucket code).
        let start = t.loss(&train_file).unwrap();
        let stop = AtomicBool::new(false);
        for _ in 0..8 {
            t.epoch(&train_file, &stop, |_, _| {}).unwrap().unwrap();
        }
        let end = t.loss(&train_file).unwrap();
        assert!(end < start * 0.5, "loss {start} -> {end}");
        let q = quantise::quantise(&t.state.net);
        assert_eq!(q.layout.to_string(), "4 king buckets × 8 output buckets");
        let (mean_diff, _) = quantise::agreement(&t.state.net, &q, &held);
        assert!(mean_diff < quantise::MEAN_TOLERANCE_CP, "{mean_diff}");
        // The engine evaluates the written file as the trainer's quantised evaluator does.
        let net = engine::nnue::Net::from_bytes(&q.to_bytes()).unwrap();
        let mut rng = SplitMix64::new(9);
        let mut pos = Position::startpos();
        for _ in 0..200 {
            let moves = pos.legal_moves();
            if moves.as_slice().is_empty() {
                pos = Position::startpos();
                continue;
            }
            pos.play_mut(moves.as_slice()[rng.below(moves.as_slice().len())]);
            let p = Packed::new(&pos, 0, GameResult::Draw);
            assert_eq!(
                net.evaluate(&pos),
                quantise::evaluate(&q, &p),
                "{}",
                pos.to_fen()
            );
        }
    }

    #[test]
    fn a_resumed_run_ends_with_the_same_weights() {
        let dir = tempfile::tempdir().unwrap();
        let train = synthetic(1500, 4);
        let file = PackedFile::from_positions(&train, dir.path()).unwrap();
        let stop = AtomicBool::new(false);
        let mut whole = Trainer::new(options(train.len(), 3), None, 1);
        for _ in 0..3 {
            whole.epoch(&file, &stop, |_, _| {}).unwrap();
        }
        let mut first = Trainer::new(options(train.len(), 3), None, 1);
        first.epoch(&file, &stop, |_, _| {}).unwrap();
        let saved = Checkpoint::from_bytes(&first.state.to_bytes()).unwrap();
        // An interrupted second epoch is thrown away.
        let raised = AtomicBool::new(false);
        let mut n = 0;
        first
            .epoch(&file, &raised, |_, _| {
                n += 1;
                if n == 2 {
                    raised.store(true, Ordering::Relaxed);
                }
            })
            .unwrap();
        let mut resumed = Trainer::new(options(train.len(), 3), Some(saved), 1);
        while resumed.state.epoch < 3 {
            resumed.epoch(&file, &stop, |_, _| {}).unwrap();
        }
        assert_eq!(resumed.state.net, whole.state.net);
        assert_eq!(resumed.state.adam, whole.state.adam);
    }
}
