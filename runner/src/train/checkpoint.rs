//! The checkpoint written after every epoch: the options that define the run, the epochs
//! done, the float weights and AdamW's state, bit for bit.
//!
//! The shuffle of epoch `e` is seeded by `(seed, e)`, so the seed and the epoch count are
//! the whole random state. Layout (little-endian): magic `SPARTRCK`, `u32` version, `u32`
//! length and the options as JSON, `u32` epochs done, `u64` Adam steps, `u64` parameter count
//! `n`, then `n` `f32` each of weights, first moments, second moments, and an FNV-1a 64 of
//! every byte before it.

use engine::nnue::network::Layout;
use serde::{Deserialize, Serialize};

use super::network::FloatNet;
use super::optim::AdamW;

/// The checkpoint magic.
pub const MAGIC: &[u8; 8] = b"SPARTRCK";
/// The checkpoint format version.
pub const VERSION: u32 = 1;

/// The options that define a run: a checkpoint continues only a run with the same ones.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunOptions {
    /// Hidden width.
    pub hidden: usize,
    /// Epochs of the whole run (the learning-rate schedule spans them).
    pub epochs: u32,
    /// Positions per step.
    pub batch: usize,
    /// Start learning rate.
    pub lr: f64,
    /// Weight λ of the game result in the target.
    pub wdl: f64,
    /// AdamW's weight decay.
    pub weight_decay: f64,
    /// Seed of the initial weights and the shuffles.
    pub seed: u64,
    /// Positions with |score| at least this are dropped.
    pub max_score: i16,
    /// Positions kept from the training files.
    pub positions: u64,
    /// King buckets (1 in a checkpoint of before buckets).
    #[serde(default = "one")]
    pub king_buckets: usize,
    /// Output buckets (1 in a checkpoint of before buckets).
    #[serde(default = "one")]
    pub output_buckets: usize,
}

fn one() -> usize {
    1
}

impl RunOptions {
    /// The bucket layout, or why this spar cannot train it.
    pub fn layout(&self) -> Result<Layout, String> {
        Layout::new(self.king_buckets, self.output_buckets)
    }

    /// The first option that differs from `other`, as `(flag, this value, other value)`.
    pub fn difference(&self, other: &RunOptions) -> Option<(&'static str, String, String)> {
        let pairs: [(&str, String, String); 11] = [
            (
                "--hidden",
                self.hidden.to_string(),
                other.hidden.to_string(),
            ),
            (
                "--epochs",
                self.epochs.to_string(),
                other.epochs.to_string(),
            ),
            ("--batch", self.batch.to_string(), other.batch.to_string()),
            ("--lr", self.lr.to_string(), other.lr.to_string()),
            ("--wdl", self.wdl.to_string(), other.wdl.to_string()),
            (
                "--weight-decay",
                self.weight_decay.to_string(),
                other.weight_decay.to_string(),
            ),
            ("--seed", self.seed.to_string(), other.seed.to_string()),
            (
                "--max-score",
                self.max_score.to_string(),
                other.max_score.to_string(),
            ),
            (
                "--king-buckets",
                self.king_buckets.to_string(),
                other.king_buckets.to_string(),
            ),
            (
                "--output-buckets",
                self.output_buckets.to_string(),
                other.output_buckets.to_string(),
            ),
            (
                "--data (positions kept)",
                self.positions.to_string(),
                other.positions.to_string(),
            ),
        ];
        pairs.into_iter().find(|(_, a, b)| a != b)
    }
}

/// Everything a resumed run needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    /// The options of the run.
    pub options: RunOptions,
    /// Epochs completed.
    pub epoch: u32,
    /// The float network.
    pub net: FloatNet,
    /// The optimiser's state.
    pub adam: AdamW,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Checkpoint {
    /// The file bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(&self.options).expect("options serialise");
        let n = self.net.params.len();
        let mut out = Vec::with_capacity(40 + json.len() + 12 * n);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out.extend_from_slice(&self.epoch.to_le_bytes());
        out.extend_from_slice(&self.adam.steps.to_le_bytes());
        out.extend_from_slice(&(n as u64).to_le_bytes());
        for v in [&self.net.params, &self.adam.m, &self.adam.v] {
            for x in v.iter() {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Reads [`Checkpoint::to_bytes`]; the error says what is wrong in one line.
    pub fn from_bytes(bytes: &[u8]) -> Result<Checkpoint, String> {
        if bytes.len() < 8 + 8 || &bytes[..8] != MAGIC {
            return Err("not a spar train checkpoint (no SPARTRCK magic)".into());
        }
        let body = bytes.len() - 8;
        let stored = u64::from_le_bytes(bytes[body..].try_into().expect("8 bytes"));
        if fnv1a(&bytes[..body]) != stored {
            return Err("checksum mismatch (the file is damaged)".into());
        }
        let mut pos = 8;
        let mut take = |n: usize| -> Result<&[u8], String> {
            let s = bytes
                .get(pos..pos + n)
                .filter(|_| pos + n <= body)
                .ok_or("truncated")?;
            pos += n;
            Ok(s)
        };
        let u32_of = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        let u64_of = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
        let version = u32_of(take(4)?);
        if version != VERSION {
            return Err(format!(
                "checkpoint version {version}, this spar reads {VERSION}"
            ));
        }
        let json_len = u32_of(take(4)?) as usize;
        let options: RunOptions = serde_json::from_slice(take(json_len)?)
            .map_err(|e| format!("bad options record: {e}"))?;
        let epoch = u32_of(take(4)?);
        let steps = u64_of(take(8)?);
        let n = u64_of(take(8)?) as usize;
        let layout = options.layout()?;
        if n != FloatNet::param_count(options.hidden, layout) {
            return Err(format!(
                "{n} parameters, a network of width {} and {layout} has {}",
                options.hidden,
                FloatNet::param_count(options.hidden, layout)
            ));
        }
        let mut floats = || -> Result<Vec<f32>, String> {
            Ok(take(4 * n)?
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect())
        };
        let params = floats()?;
        let m = floats()?;
        let v = floats()?;
        if pos != body {
            return Err("bytes after the last record".into());
        }
        Ok(Checkpoint {
            net: FloatNet {
                hidden: options.hidden,
                layout,
                params,
            },
            adam: AdamW {
                m,
                v,
                steps,
                weight_decay: options.weight_decay as f32,
            },
            epoch,
            options,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) fn options() -> RunOptions {
        RunOptions {
            hidden: 16,
            epochs: 3,
            batch: 64,
            lr: 0.001,
            wdl: 0.3,
            weight_decay: 0.01,
            seed: 7,
            max_score: 3000,
            positions: 1234,
            king_buckets: 1,
            output_buckets: 1,
        }
    }

    #[test]
    fn round_trip_is_exact_and_damage_is_refused() {
        let options = options();
        let net = FloatNet::new(16, Layout::PLAIN, 5);
        let mut adam = AdamW::new(net.params.len(), 0.01);
        adam.m
            .iter_mut()
            .enumerate()
            .for_each(|(i, m)| *m = i as f32 * 1e-7);
        adam.v
            .iter_mut()
            .enumerate()
            .for_each(|(i, v)| *v = (i as f32).sqrt());
        adam.steps = 99;
        let c = Checkpoint {
            options,
            epoch: 2,
            net,
            adam,
        };
        let bytes = c.to_bytes();
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), c);
        let mut bad = bytes.clone();
        bad[200] ^= 4;
        assert!(Checkpoint::from_bytes(&bad)
            .unwrap_err()
            .contains("checksum"));
        assert!(Checkpoint::from_bytes(&bytes[..100])
            .unwrap_err()
            .contains("checksum"));
        assert!(Checkpoint::from_bytes(b"nothing")
            .unwrap_err()
            .contains("magic"));
        let mut other = c.options.clone();
        other.hidden = 32;
        assert_eq!(
            c.options.difference(&other),
            Some(("--hidden", "16".into(), "32".into()))
        );
        assert_eq!(c.options.difference(&c.options), None);
        // A bucketed run round-trips too, and names its layout.
        let mut bucketed = c.clone();
        bucketed.options.king_buckets = 4;
        bucketed.options.output_buckets = 8;
        let layout = bucketed.options.layout().unwrap();
        bucketed.net = FloatNet::new(16, layout, 5);
        bucketed.adam = AdamW::new(bucketed.net.params.len(), 0.01);
        let bytes = bucketed.to_bytes();
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), bucketed);
        assert_eq!(
            c.options.difference(&bucketed.options),
            Some(("--king-buckets", "1".into(), "4".into()))
        );
        // A checkpoint of before buckets (no layout in its options) is a plain run.
        let old_json = r#"{"hidden":16,"epochs":3,"batch":64,"lr":0.001,"wdl":0.3,"weight_decay":0.01,"seed":7,"max_score":3000,"positions":1234}"#;
        let old: RunOptions = serde_json::from_str(old_json).unwrap();
        assert_eq!(old, c.options);
    }
}
