//! The quantised network: its layout, its file format, and its feature indices.
//!
//! # Architecture
//!
//! `768·K → H` (one feature transformer shared by both perspectives) `→ SCReLU → 2H → O`,
//! where the [`Layout`] gives `K` king buckets and `O` output buckets (`1 × 1`: the plain net
//! of the first two generations).
//!
//! A feature is (colour relative to the perspective, piece type, square seen from the
//! perspective): the board is mirrored vertically for Black, so with one king bucket
//! `index = (0 if own piece else 384) + 64·piece + (square, rank-flipped for Black)`.
//! With `K > 1` king buckets the board is also mirrored **horizontally** when the
//! perspective's own king stands on files a–d (so that it stands on files e–h), and the
//! feature block is chosen by the king's square ([`Layout::view`], the maps in
//! [`KING_BUCKET_MAPS`]): `index = 768·bucket + (own ? 0 : 384) + 64·piece + square ^ flip`,
//! `flip` = 56 for Black, xor 7 when mirrored. The output bucket is chosen by the number of
//! pieces on the board, kings included ([`Layout::output_bucket`]).
//!
//! # Quantisation
//!
//! Feature weights and biases are `i16` scaled by [`QA`]; output weights are `i16` scaled by
//! [`QB`]; the output bias is scaled by `QA·QB`. With `u = clamp(acc, 0, QA)` and `b` the
//! output bucket:
//!
//! ```text
//! sum  = Σ_i u_us[i]² · w_b[i] + Σ_i u_them[i]² · w_b[H + i]      (i32)
//! eval = (sum / QA + bias_b) · SCALE / (QA · QB)                   (centipawns, side to move)
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
//! Version 1 (the plain `1 × 1` layout; a plain net is still written in it, byte for byte
//! as before buckets existed):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SPARNNUE` |
//! | 4 | `u32` format version 1 |
//! | 4 | `u32` hidden width `H` |
//! | 2·768·H | feature weights `i16`, feature-major: `[feature][H]` |
//! | 2·H | feature biases `i16` |
//! | 2·2H | output weights `i16`: `H` for the side to move, then `H` for the other side |
//! | 4 | output bias `i32` |
//! | 8 | FNV-1a 64 of every byte before it |
//!
//! Version 2 ([`FORMAT_VERSION`], any other layout) adds the layout after the width and
//! repeats the feature block per king bucket and the output layer per output bucket:
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `SPARNNUE` |
//! | 4 | `u32` format version 2 |
//! | 4 | `u32` hidden width `H` |
//! | 4 | `u32` king buckets `K` |
//! | 4 | `u32` output buckets `O` |
//! | 2·768K·H | feature weights `i16`, `[bucket][feature][H]` |
//! | 2·H | feature biases `i16` |
//! | 2·O·2H | output weights `i16`, `[bucket][2H]` |
//! | 4·O | output biases `i32` |
//! | 8 | FNV-1a 64 of every byte before it |

use crate::types::{Color, PieceType, Square};

/// Number of input features per perspective and king bucket: 2 colours × 6 piece types ×
/// 64 squares.
pub const INPUTS: usize = 768;
/// Quantisation of the feature transformer (and the SCReLU clamp).
pub const QA: i32 = 255;
/// Quantisation of the output weights.
pub const QB: i32 = 64;
/// Centipawns per unit of the network's output.
pub const SCALE: i32 = 400;
/// The newest file format version (written for a bucketed layout; a plain net is written as
/// version 1, [`PLAIN_FORMAT_VERSION`]).
pub const FORMAT_VERSION: u32 = 2;
/// The format version of a plain (`1 × 1`) net: the first format, still read and written.
pub const PLAIN_FORMAT_VERSION: u32 = 1;
/// The file magic.
pub const MAGIC: &[u8; 8] = b"SPARNNUE";
/// The largest magnitude of a quantised output weight.
pub const MAX_OUTPUT_WEIGHT: i16 = 127;
/// The widths a network may have (the SIMD path needs a multiple of 16).
pub const MAX_HIDDEN: usize = 2048;
/// The most output buckets a network may have.
pub const MAX_OUTPUT_BUCKETS: usize = 8;

/// The king-bucket maps spar runs, by bucket count: the bucket of the own king's square seen
/// from its side (rank 1 is its back rank) after the horizontal mirror, so only files e–h
/// (columns 4–7) are used; row `r` is rank `r + 1`. One bucket is the plain net (no mirror).
///
/// - 2: the back rank; the rest.
/// - 4 (the documented default of `spar train --king-buckets`): rank 1, rank 2, ranks 3–4,
///   ranks 5–8.
/// - 8: rank 1 on e–f and on g–h, rank 2 on e–f and on g–h, rank 3, rank 4, ranks 5–6,
///   ranks 7–8.
pub const KING_BUCKET_MAPS: [(usize, [[u8; 4]; 8]); 3] = [
    (
        2,
        [
            [0; 4], [1; 4], [1; 4], [1; 4], [1; 4], [1; 4], [1; 4], [1; 4],
        ],
    ),
    (
        4,
        [
            [0; 4], [1; 4], [2; 4], [2; 4], [3; 4], [3; 4], [3; 4], [3; 4],
        ],
    ),
    (
        8,
        [
            [0, 0, 1, 1],
            [2, 2, 3, 3],
            [4; 4],
            [5; 4],
            [6; 4],
            [6; 4],
            [7; 4],
            [7; 4],
        ],
    ),
];

/// The bucket layout of a network: king buckets (with the horizontal mirror when more than
/// one) and output buckets by piece count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// King buckets `K`: 1, or a count of [`KING_BUCKET_MAPS`].
    pub king_buckets: usize,
    /// Output buckets `O`: 1 to [`MAX_OUTPUT_BUCKETS`].
    pub output_buckets: usize,
}

impl std::fmt::Display for Layout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = |n: usize| if n == 1 { "" } else { "s" };
        write!(
            f,
            "{} king bucket{} × {} output bucket{}",
            self.king_buckets,
            s(self.king_buckets),
            self.output_buckets,
            s(self.output_buckets)
        )
    }
}

/// How one perspective sees the board: the feature block of its king's bucket and the square
/// flip (56 for Black, xor 7 when mirrored). The plain layout's views are `(0, 0)` for White
/// and `(0, 56)` for Black.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View {
    offset: u32,
    flip: u8,
}

impl View {
    /// The view of `perspective` in the plain layout (no buckets, no mirror).
    #[inline(always)]
    pub const fn plain(perspective: Color) -> View {
        View {
            offset: 0,
            flip: if matches!(perspective, Color::White) {
                0
            } else {
                56
            },
        }
    }

    /// The feature index of a piece of `kind` on `sq`, own (the perspective's colour) or not.
    #[inline(always)]
    pub fn index(self, own: bool, kind: PieceType, sq: Square) -> usize {
        self.offset as usize
            + usize::from(!own) * 384
            + kind as usize * 64
            + (sq.index() ^ usize::from(self.flip))
    }

    /// The king bucket.
    #[inline(always)]
    pub fn bucket(self) -> usize {
        self.offset as usize / INPUTS
    }

    /// Whether the board is mirrored horizontally.
    #[inline(always)]
    pub fn mirrored(self) -> bool {
        self.flip & 7 != 0
    }
}

impl Layout {
    /// One king bucket, one output bucket: the plain net.
    pub const PLAIN: Layout = Layout {
        king_buckets: 1,
        output_buckets: 1,
    };

    /// The layout of `king_buckets × output_buckets`, or why this spar cannot run it (the
    /// message names the layout).
    pub fn new(king_buckets: usize, output_buckets: usize) -> Result<Layout, String> {
        let layout = Layout {
            king_buckets,
            output_buckets,
        };
        let kings_ok =
            king_buckets == 1 || KING_BUCKET_MAPS.iter().any(|(n, _)| *n == king_buckets);
        if !kings_ok || !(1..=MAX_OUTPUT_BUCKETS).contains(&output_buckets) {
            return Err(format!(
                "layout {layout}, which this spar cannot run (king buckets 1, {}; output buckets 1 to {MAX_OUTPUT_BUCKETS})",
                KING_BUCKET_MAPS
                    .iter()
                    .map(|(n, _)| n.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        Ok(layout)
    }

    /// The largest layout (for the largest file read).
    pub const LARGEST: Layout = Layout {
        king_buckets: 8,
        output_buckets: MAX_OUTPUT_BUCKETS,
    };

    /// Whether this is the plain `1 × 1` layout.
    #[inline(always)]
    pub fn is_plain(self) -> bool {
        self == Layout::PLAIN
    }

    /// Input features per perspective: `768·K`.
    #[inline(always)]
    pub fn inputs(self) -> usize {
        INPUTS * self.king_buckets
    }

    /// The view of `perspective` whose own king stands on `king`.
    #[inline]
    pub fn view(self, perspective: Color, king: Square) -> View {
        let plain = View::plain(perspective);
        if self.king_buckets == 1 {
            return plain;
        }
        let rel = king.index() ^ usize::from(plain.flip);
        let mirror = rel % 8 < 4;
        let file = (rel % 8) ^ if mirror { 7 } else { 0 };
        let map = &KING_BUCKET_MAPS
            .iter()
            .find(|(n, _)| *n == self.king_buckets)
            .expect("a layout made by Layout::new")
            .1;
        let bucket = usize::from(map[rel / 8][file - 4]);
        View {
            offset: (bucket * INPUTS) as u32,
            flip: plain.flip ^ if mirror { 7 } else { 0 },
        }
    }

    /// The output bucket of a position with `pieces` pieces (kings included): `(pieces − 2) /
    /// ⌈32 / O⌉`, at most `O − 1`.
    #[inline(always)]
    pub fn output_bucket(self, pieces: u32) -> usize {
        let per = 32usize.div_ceil(self.output_buckets);
        ((pieces.saturating_sub(2) as usize) / per).min(self.output_buckets - 1)
    }
}

/// Feature index of `kind` of colour `color` on `sq`, seen from `perspective`, in the plain
/// layout (one king bucket).
#[inline(always)]
pub fn feature_index(perspective: Color, color: Color, kind: PieceType, sq: Square) -> usize {
    View::plain(perspective).index(color == perspective, kind, sq)
}

/// A quantised network, as loaded from or written to a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Network {
    /// Hidden width `H` of each perspective.
    pub hidden: usize,
    /// The bucket layout.
    pub layout: Layout,
    /// Feature weights, `[bucket][feature][H]`, `768·K · H` values.
    pub feature_weights: Vec<i16>,
    /// Feature biases, `H` values.
    pub feature_bias: Vec<i16>,
    /// Output weights, `[bucket][2H]` (side to move first in each).
    pub output_weights: Vec<i16>,
    /// Output biases, one per output bucket, scaled by `QA · QB`.
    pub output_bias: Vec<i32>,
}

/// FNV-1a 64 of `bytes`.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Network {
    /// The size in bytes of a file holding a network of width `hidden` and `layout`.
    pub fn file_size(hidden: usize, layout: Layout) -> usize {
        let header = if layout.is_plain() { 16 } else { 24 };
        header
            + 2 * layout.inputs() * hidden
            + 2 * hidden
            + 2 * 2 * hidden * layout.output_buckets
            + 4 * layout.output_buckets
            + 8
    }

    /// A network of width `hidden` with every weight zero.
    pub fn zeroed(hidden: usize, layout: Layout) -> Network {
        Network {
            hidden,
            layout,
            feature_weights: vec![0; layout.inputs() * hidden],
            feature_bias: vec![0; hidden],
            output_weights: vec![0; 2 * hidden * layout.output_buckets],
            output_bias: vec![0; layout.output_buckets],
        }
    }

    /// The file bytes of this network (version 1 for the plain layout, else version 2).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Network::file_size(self.hidden, self.layout));
        out.extend_from_slice(MAGIC);
        let plain = self.layout.is_plain();
        let version = if plain {
            PLAIN_FORMAT_VERSION
        } else {
            FORMAT_VERSION
        };
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&(self.hidden as u32).to_le_bytes());
        if !plain {
            out.extend_from_slice(&(self.layout.king_buckets as u32).to_le_bytes());
            out.extend_from_slice(&(self.layout.output_buckets as u32).to_le_bytes());
        }
        for v in self
            .feature_weights
            .iter()
            .chain(&self.feature_bias)
            .chain(&self.output_weights)
        {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for b in &self.output_bias {
            out.extend_from_slice(&b.to_le_bytes());
        }
        let sum = fnv1a(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// The largest network file (hidden width [`MAX_HIDDEN`], the largest layout): nothing
    /// larger is read.
    pub fn max_file_size() -> usize {
        Network::file_size(MAX_HIDDEN, Layout::LARGEST)
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
                 width {MAX_HIDDEN}, {}): not a network file",
                Layout::LARGEST
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

    /// Reads a network from file bytes, checking the magic, version, width, layout, size and
    /// checksum. The error is one line saying what is wrong (the caller adds the file name).
    pub fn from_bytes(bytes: &[u8]) -> Result<Network, String> {
        if bytes.len() < 16 || &bytes[..8] != MAGIC {
            return Err("not a spar NNUE file (no SPARNNUE magic)".into());
        }
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != PLAIN_FORMAT_VERSION && version != FORMAT_VERSION {
            return Err(format!(
                "format version {version}, this spar reads versions {PLAIN_FORMAT_VERSION} and {FORMAT_VERSION}"
            ));
        }
        let hidden = u32_at(12) as usize;
        if hidden == 0 || hidden > MAX_HIDDEN || !hidden.is_multiple_of(16) {
            return Err(format!(
                "hidden width {hidden}; it must be a multiple of 16 from 16 to {MAX_HIDDEN}"
            ));
        }
        let (layout, header) = if version == PLAIN_FORMAT_VERSION {
            (Layout::PLAIN, 16)
        } else {
            if bytes.len() < 24 {
                return Err(format!(
                    "{} bytes, too short for a version {version} header (truncated file)",
                    bytes.len()
                ));
            }
            let (k, o) = (u32_at(16) as usize, u32_at(20) as usize);
            let layout = Layout::new(k, o)?;
            if layout.is_plain() {
                return Err(format!(
                    "layout {layout} in a version {version} header (a plain net is version {PLAIN_FORMAT_VERSION})"
                ));
            }
            (layout, 24)
        };
        let expected = Network::file_size(hidden, layout);
        if bytes.len() != expected {
            return Err(format!(
                "{} bytes, a network of hidden width {hidden} and {layout} has {expected} (truncated or padded file)",
                bytes.len()
            ));
        }
        let body = expected - 8;
        let stored = u64::from_le_bytes(bytes[body..].try_into().unwrap());
        if fnv1a(&bytes[..body]) != stored {
            return Err("checksum mismatch (the file is corrupt)".into());
        }
        let mut pos = header;
        let mut take = |n: usize| -> Vec<i16> {
            let v = bytes[pos..pos + 2 * n]
                .chunks_exact(2)
                .map(|c| i16::from_le_bytes([c[0], c[1]]))
                .collect();
            pos += 2 * n;
            v
        };
        let feature_weights = take(layout.inputs() * hidden);
        let feature_bias = take(hidden);
        let output_weights = take(2 * hidden * layout.output_buckets);
        let output_bias = bytes[pos..body]
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
            .collect();
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
            layout,
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
        sample_of(hidden, Layout::PLAIN)
    }

    fn sample_of(hidden: usize, layout: Layout) -> Network {
        let mut net = Network::zeroed(hidden, layout);
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
            .for_each(|(i, w)| *w = 64 - (i % 128) as i16);
        net.output_bias
            .iter_mut()
            .enumerate()
            .for_each(|(i, b)| *b = -12345 + 1000 * i as i32);
        net
    }

    #[test]
    fn bytes_round_trip_exactly() {
        let net = sample(32);
        let bytes = net.to_bytes();
        assert_eq!(bytes.len(), Network::file_size(32, Layout::PLAIN));
        assert_eq!(Network::from_bytes(&bytes).unwrap(), net);
        assert_eq!(u32::from_le_bytes(bytes[8..12].try_into().unwrap()), 1);
    }

    #[test]
    fn every_layout_round_trips_and_names_itself() {
        for (k, o) in [(1, 1), (1, 8), (2, 1), (4, 8), (8, 4), (8, 8)] {
            let layout = Layout::new(k, o).unwrap();
            let net = sample_of(16, layout);
            let bytes = net.to_bytes();
            assert_eq!(bytes.len(), Network::file_size(16, layout), "{layout}");
            assert_eq!(Network::from_bytes(&bytes).unwrap(), net, "{layout}");
            let version = u32::from_le_bytes(bytes[8..12].try_into().unwrap());
            assert_eq!(version, if layout.is_plain() { 1 } else { 2 });
            // Truncated: refused, the layout named.
            let err = Network::from_bytes(&bytes[..bytes.len() - 3]).unwrap_err();
            assert!(
                err.contains("truncated") && err.contains(&layout.to_string()),
                "{err}"
            );
        }
        assert_eq!(
            Layout::new(4, 8).unwrap().to_string(),
            "4 king buckets × 8 output buckets"
        );
        assert!(Layout::new(1, 1).unwrap().is_plain());
    }

    #[test]
    fn a_layout_this_spar_cannot_run_is_refused_by_name() {
        let mut bytes = sample_of(16, Layout::new(4, 2).unwrap()).to_bytes();
        // Rewrite the header to 3 king buckets (no map) and fix the checksum: still refused.
        bytes[16..20].copy_from_slice(&3u32.to_le_bytes());
        let body = bytes.len() - 8;
        let sum = fnv1a(&bytes[..body]);
        bytes[body..].copy_from_slice(&sum.to_le_bytes());
        let err = Network::from_bytes(&bytes).unwrap_err();
        assert!(
            err.contains("layout 3 king buckets × 2 output buckets") && err.contains("cannot run"),
            "{err}"
        );
        bytes[16..20].copy_from_slice(&4u32.to_le_bytes());
        bytes[20..24].copy_from_slice(&9u32.to_le_bytes());
        let err = Network::from_bytes(&bytes).unwrap_err();
        assert!(err.contains("9 output buckets"), "{err}");
        assert!(Network::from_bytes(&bytes[..20])
            .unwrap_err()
            .contains("header"));
        assert!(Layout::new(16, 1).is_err() && Layout::new(4, 0).is_err());
    }

    #[test]
    fn king_buckets_mirror_the_king_onto_files_e_to_h() {
        let sq = |s: &str| s.parse::<Square>().unwrap();
        let four = Layout::new(4, 1).unwrap();
        // White king on g1: bucket 0, not mirrored; on b1: bucket 0, mirrored.
        let g1 = four.view(Color::White, sq("g1"));
        assert_eq!((g1.bucket(), g1.mirrored()), (0, false));
        let b1 = four.view(Color::White, sq("b1"));
        assert_eq!((b1.bucket(), b1.mirrored()), (0, true));
        // Black's king on g8 is on its own back rank.
        let g8 = four.view(Color::Black, sq("g8"));
        assert_eq!((g8.bucket(), g8.mirrored()), (0, false));
        assert_eq!(four.view(Color::White, sq("e5")).bucket(), 3);
        assert_eq!(four.view(Color::Black, sq("d4")).bucket(), 3);
        assert_eq!(four.view(Color::White, sq("d3")).bucket(), 2);
        // A knight on c3 seen with the king on b1 is the knight on f3 seen with it on g1.
        assert_eq!(
            b1.index(true, PieceType::Knight, sq("c3")),
            g1.index(true, PieceType::Knight, sq("f3"))
        );
        let eight = Layout::new(8, 1).unwrap();
        let buckets: Vec<usize> = ["e1", "h1", "a1", "e2", "g2", "c3", "d4", "b6", "h8"]
            .iter()
            .map(|s| eight.view(Color::White, sq(s)).bucket())
            .collect();
        assert_eq!(buckets, [0, 1, 1, 2, 3, 4, 5, 6, 7]);
        // Output buckets by piece count.
        let o8 = Layout::new(1, 8).unwrap();
        assert_eq!(o8.output_bucket(32), 7);
        assert_eq!(o8.output_bucket(2), 0);
        assert_eq!(o8.output_bucket(6), 1);
        assert_eq!(Layout::PLAIN.output_bucket(32), 0);
        assert_eq!(Layout::new(1, 3).unwrap().output_bucket(32), 2);
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
