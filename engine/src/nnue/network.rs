//! The quantised network: its layout, its file format, and its feature indices.
//!
//! # Architecture
//!
//! `768 → H` (one feature transformer shared by both perspectives) `→ SCReLU → 2H → 1`.
//! A feature is (colour relative to the perspective, piece type, square seen from the
//! perspective): the board is mirrored vertically for Black, so
//! `index = (0 if own piece else 384) + 64·piece + (square, rank-flipped for Black)`.
//!
//! # Quantisation
//!
//! Feature weights and biases are `i16` scaled by [`QA`]; output weights are `i16` scaled by
//! [`QB`]; the output bias is scaled by `QA·QB`. With `u = clamp(acc, 0, QA)`:
//!
//! ```text
//! sum  = Σ_i u_us[i]² · w[i] + Σ_i u_them[i]² · w[H + i]      (i32)
//! eval = (sum / QA + bias) · SCALE / (QA · QB)                 (centipawns, side to move)
//! ```
//!
//! Output weights must lie within ±[`MAX_OUTPUT_WEIGHT`] (the trainer clips every float
//! weight to ±1.98), so `u · w` fits an `i16` and the SIMD path may multiply in 16 bits
//! before widening; [`Network::from_bytes`] refuses a file that breaks this.
//!
//! The float network the trainer optimises computes `y` with the same formula on real
//! numbers (weights unscaled, `u = clamp(acc, 0, 1)`); its evaluation is `SCALE · y`
//! centipawns and its predicted score is `sigmoid(y)`.
//!
//! # File format (all little-endian)
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SPARNNUE` |
//! | 4 | `u32` format version, [`FORMAT_VERSION`] |
//! | 4 | `u32` hidden width `H` |
//! | 2·768·H | feature weights `i16`, feature-major: `[feature][H]` |
//! | 2·H | feature biases `i16` |
//! | 2·2H | output weights `i16`: `H` for the side to move, then `H` for the other side |
//! | 4 | output bias `i32` |
//! | 8 | FNV-1a 64 of every byte before it |

use crate::types::{Color, PieceType, Square};

/// Number of input features per perspective: 2 colours × 6 piece types × 64 squares.
pub const INPUTS: usize = 768;
/// Quantisation of the feature transformer (and the SCReLU clamp).
pub const QA: i32 = 255;
/// Quantisation of the output weights.
pub const QB: i32 = 64;
/// Centipawns per unit of the network's output.
pub const SCALE: i32 = 400;
/// The file format version written and read.
pub const FORMAT_VERSION: u32 = 1;
/// The file magic.
pub const MAGIC: &[u8; 8] = b"SPARNNUE";
/// The largest magnitude of a quantised output weight.
pub const MAX_OUTPUT_WEIGHT: i16 = 127;
/// The widths a network may have (the SIMD path needs a multiple of 16).
pub const MAX_HIDDEN: usize = 2048;

/// Feature index of `kind` of colour `color` on `sq`, seen from `perspective`.
#[inline(always)]
pub fn feature_index(perspective: Color, color: Color, kind: PieceType, sq: Square) -> usize {
    let (side, square) = if perspective == Color::White {
        (color != Color::White, sq.index())
    } else {
        (color != Color::Black, sq.flip_rank().index())
    };
    usize::from(side) * 384 + kind as usize * 64 + square
}

/// A quantised network, as loaded from or written to a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    /// Hidden width `H` of each perspective.
    pub hidden: usize,
    /// Feature weights, `[feature][H]`, `INPUTS · H` values.
    pub feature_weights: Vec<i16>,
    /// Feature biases, `H` values.
    pub feature_bias: Vec<i16>,
    /// Output weights, `2H` values (side to move first).
    pub output_weights: Vec<i16>,
    /// Output bias, scaled by `QA · QB`.
    pub output_bias: i32,
}

/// FNV-1a 64 of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Network {
    /// The size in bytes of a file holding a network of width `hidden`.
    pub fn file_size(hidden: usize) -> usize {
        8 + 4 + 4 + 2 * INPUTS * hidden + 2 * hidden + 2 * 2 * hidden + 4 + 8
    }

    /// A network of width `hidden` with every weight zero.
    pub fn zeroed(hidden: usize) -> Network {
        Network {
            hidden,
            feature_weights: vec![0; INPUTS * hidden],
            feature_bias: vec![0; hidden],
            output_weights: vec![0; 2 * hidden],
            output_bias: 0,
        }
    }

    /// The file bytes of this network.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Network::file_size(self.hidden));
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        for v in self
            .feature_weights
            .iter()
            .chain(&self.feature_bias)
            .chain(&self.output_weights)
        {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.output_bias.to_le_bytes());
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// The largest network file (hidden width [`MAX_HIDDEN`]): nothing larger is read.
    pub fn max_file_size() -> usize {
        Network::file_size(MAX_HIDDEN)
    }

    /// Reads a network file. Only a regular file is opened (a FIFO with no writer would block
    /// the open, a device like `/dev/zero` never ends), and at most
    /// [`Network::max_file_size`] bytes are read. The error is one line naming the file.
    pub fn read_file(path: &std::path::Path) -> Result<Network, String> {
        use std::io::Read;
        let shown = path.display();
        let meta = std::fs::metadata(path).map_err(|e| format!("{shown}: {e}"))?;
        if meta.is_dir() {
            return Err(format!("{shown} is a directory: give a network file"));
        }
        if !meta.is_file() {
            return Err(format!(
                "{shown} is not a regular file (a device, pipe or socket): give a network file"
            ));
        }
        let max = Network::max_file_size() as u64;
        let too_big = |len: u64| {
            format!(
                "{shown}: {len} bytes, more than the largest spar network ({max} bytes, hidden \
                 width {MAX_HIDDEN}): not a network file"
            )
        };
        if meta.len() > max {
            return Err(too_big(meta.len()));
        }
        let file = std::fs::File::open(path).map_err(|e| format!("{shown}: {e}"))?;
        let mut bytes = Vec::with_capacity(meta.len() as usize);
        file.take(max + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| format!("{shown}: {e}"))?;
        if bytes.len() as u64 > max {
            return Err(too_big(bytes.len() as u64));
        }
        Network::from_bytes(&bytes).map_err(|e| format!("{shown}: {e}"))
    }

    /// Reads a network from file bytes, checking the magic, version, width, size and checksum.
    /// The error is one line saying what is wrong (the caller adds the file name).
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, String> {
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err("not a spar NNUE file (no SPARNNUE magic)".into());
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(format!(
                "format version {version}, this spar reads version {FORMAT_VERSION}"
            ));
        }
        let hidden = u32_at(12) as usize;
        if hidden == 0 || hidden > MAX_HIDDEN || !hidden.is_multiple_of(16) {
            return Err(format!(
                "hidden width {hidden}; it must be a multiple of 16 from 16 to {MAX_HIDDEN}"
            ));
        }
        let expected = Network::file_size(hidden);
        if bytes.len() != expected {
            return Err(format!(
                "{} bytes, a network of hidden width {hidden} has {expected} (truncated or padded file)",
                bytes.len()
            ));
        }
        let body = expected - 8;
        let stored = u64::from_le_bytes(bytes[body..].try_into().unwrap());
        if fnv1a(&bytes[..body]) != stored {
            return Err("checksum mismatch (the file is corrupt)".into());
        }
        let mut pos = 16;
        let mut take = |n: usize| -> Vec<i16> {
            let v = bytes[pos..pos + 2 * n]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            pos += 2 * n;
            v
        };
        let feature_weights = take(INPUTS * hidden);
        let feature_bias = take(hidden);
        let output_weights = take(2 * hidden);
        let output_bias = i32::from_le_bytes(bytes[pos..pos + 4].try_into().unwrap());
        if let Some(i) = output_weights
            .iter()
            .position(|w| w.unsigned_abs() > MAX_OUTPUT_WEIGHT as u16)
        {
            return Err(format!(
                "output weight {i} is {}, beyond ±{MAX_OUTPUT_WEIGHT}",
                output_weights[i]
            ));
        }
        Ok(Network {
            hidden,
            feature_weights,
            feature_bias,
            output_weights,
            output_bias,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(hidden: usize) -> Network {
        let mut net = Network::zeroed(hidden);
        for (i, w) in net.feature_weights.iter_mut().enumerate() {
            *w = (i as i32 * 7919 % 511 - 255) as i16;
        }
        net.feature_bias
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = i as i16 - 3);
        net.output_weights
            .iter_mut()
            .enumerate()
            .for_each(|(i, w)| *w = 64 - i as i16);
        net.output_bias = -12345;
        net
    }

    #[test]
    fn bytes_round_trip_exactly() {
        let net = sample(32);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), Network::file_size(32));
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
    }

    #[test]
    fn damaged_files_are_refused_with_the_reason() {
        let bytes = sample(16).to_bytes();
        let err = |b: &[u8]| Network::from_bytes(b).unwrap_err();
        assert!(err(&bytes[..bytes.len() - 1]).contains("truncated"));
        assert!(err(b"hello world, not a net").contains("magic"));
        let mut flipped = bytes.clone();
        flipped[100] ^= 1;
        assert!(err(&flipped).contains("checksum"));
        let mut version = bytes.clone();
        version[8] = 9;
        assert!(err(&version).contains("version 9"));
        let mut big = sample(16);
        big.output_weights[3] = 128;
        assert!(err(&big.to_bytes()).contains("output weight 3 is 128"));
        let mut width = bytes;
        width[12] = 17;
        assert!(err(&width).contains("hidden width 17"));
    }

    #[test]
    fn only_regular_files_of_a_network_size_are_read() {
        let dir = std::env::temp_dir().join(format!("spar-net-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.nnue");
        std::fs::write(&good, sample(16).to_bytes()).unwrap();
        assert_eq!(Network::read_file(&good).unwrap(), sample(16));
        let err = Network::read_file(std::path::Path::new("/dev/zero")).unwrap_err();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(Network::read_file(&dir)
            .unwrap_err()
            .contains("is a directory"));
        let big = dir.join("big.nnue");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(Network::max_file_size() as u64 + 1).unwrap();
        assert!(Network::read_file(&big)
            .unwrap_err()
            .contains("more than the largest"));
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .is_ok_and(|s| s.success());
            if made {
                // Opening it would block forever: refused from its metadata.
                let err = Network::read_file(&fifo).unwrap_err();
                assert!(err.contains("not a regular file"), "{err}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn features_mirror_between_perspectives() {
        let e4: Square = "e4".parse().unwrap();
        let e5: Square = "e5".parse().unwrap();
        let w = feature_index(Color::White, Color::White, PieceType::Knight, e4);
        let b = feature_index(Color::Black, Color::Black, PieceType::Knight, e5);
        assert_eq!(w, b);
        assert_eq!(w, 64 + e4.index());
        let them = feature_index(Color::White, Color::Black, PieceType::King, e5);
        assert_eq!(them, 384 + 5 * 64 + e5.index());
    }
}
