//! [`Net`]: a [`Network`] made ready for inference: weight rows in 32-byte aligned
//! [`Lanes`], the SIMD [`Kernel`] chosen, and the forward pass.

use std::path::Path;

use std::sync::atomic::{AtomicU64, Ordering};

use super::network::{Layout, Network, View, QA, QB, SCALE};
use super::simd::{flat, flat_mut, Kernel, Lanes};
use crate::position::Position;
use crate::types::{Color, Piece, Square};

/// A network ready to evaluate positions. Shared read-only by every search thread.
pub struct Net {
    hidden: usize,
    layout: Layout,
    /// `768·K` rows of `hidden` values.
    feature_weights: Vec<Lanes>,
    feature_bias: Vec<Lanes>,
    /// `2·hidden` values per output bucket: side to move, then the other side.
    output_weights: Vec<Lanes>,
    output_bias: Vec<i32>,
    /// The output bucket of each piece count 0 to 32.
    output_bucket: [u8; 33],
    kernel: Kernel,
    /// Unique per [`Net::new`]: an accumulator stack's refresh table knows whose rows it holds.
    id: u64,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.layout.is_plain() {
            write!(f, "Net(768→{}×2→1, {})", self.hidden, self.kernel.name())
        } else {
            write!(
                f,
                "Net(768→{}×2→1, {}, {})",
                self.hidden,
                self.layout,
                self.kernel.name()
            )
        }
    }
}

fn to_lanes(values: &[i16]) -> Vec<Lanes> {
    values
        .chunks_exact(16)
        .map(|c| Lanes(c.try_into().expect("16 values")))
        .collect()
}

impl Net {
    /// Prepares `network` with the fastest kernel this CPU has.
    pub fn new(network: &Network) -> Net {
        static NEXT_ID: AtomicU64 = AtomicU64::new(1);
        let layout = network.layout;
        Net {
            hidden: network.hidden,
            layout,
            feature_weights: to_lanes(&network.feature_weights),
            feature_bias: to_lanes(&network.feature_bias),
            output_weights: to_lanes(&network.output_weights),
            output_bias: network.output_bias.clone(),
            output_bucket: std::array::from_fn(|n| layout.output_bucket(n as u32) as u8),
            kernel: Kernel::detect(),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Reads a network file's bytes (see [`Network::from_bytes`] for what is checked).
    pub fn from_bytes(bytes: &[u8]) -> Result<Net, String> {
        Network::from_bytes(bytes).map(|n| Net::new(&n))
    }

    /// Loads a network file (a regular file of a network's size only: see
    /// [`Network::read_file`]); the error is one line naming the file and what is wrong.
    pub fn load(path: &Path) -> Result<Net, String> {
        Network::read_file(path).map(|n| Net::new(&n))
    }

    /// The same network with another kernel (tests compare them; see [`Kernel::available`]).
    pub fn with_kernel(mut self, kernel: Kernel) -> Net {
        self.kernel = kernel;
        self
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Hidden width `H` of each perspective.
    pub fn hidden(&self) -> usize {
        self.hidden
    }

    /// The bucket layout.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// This net's identity (distinct for every [`Net::new`]; kept by [`Net::with_kernel`],
    /// which changes no weight).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// The feature biases (what a refresh starts from).
    pub(crate) fn bias(&self) -> &[Lanes] {
        &self.feature_bias
    }

    /// How `perspective` sees `pos` (its king bucket and mirror).
    #[inline(always)]
    pub fn view(&self, pos: &Position, perspective: Color) -> View {
        self.layout.view(perspective, pos.king(perspective))
    }

    /// The output bucket of a position with `pieces` pieces.
    #[inline(always)]
    pub fn output_bucket(&self, pieces: u32) -> usize {
        usize::from(self.output_bucket[(pieces as usize).min(32)])
    }

    /// The weight row of feature `index`.
    #[inline(always)]
    pub(crate) fn row(&self, index: usize) -> &[i16] {
        let n = self.hidden / 16;
        flat(&self.feature_weights[index * n..(index + 1) * n])
    }

    /// The weight row of `piece` on `sq` seen by `perspective` through `view`.
    #[inline(always)]
    pub(crate) fn piece_row(
        &self,
        perspective: Color,
        view: View,
        piece: Piece,
        sq: Square,
    ) -> &[i16] {
        self.row(view.index(piece.color() == perspective, piece.kind(), sq))
    }

    /// Computes the accumulator of `perspective` from scratch: bias plus every piece's row.
    pub fn refresh(&self, pos: &Position, perspective: Color, out: &mut [Lanes]) {
        let out = flat_mut(out);
        out.copy_from_slice(flat(&self.feature_bias));
        let view = self.view(pos, perspective);
        for sq in pos.occupied() {
            let piece = pos.piece_on(sq).expect("occupied");
            let row = self.piece_row(perspective, view, piece, sq);
            for (o, &w) in out.iter_mut().zip(row) {
                *o = o.wrapping_add(w);
            }
        }
    }

    /// The evaluation in centipawns for the side whose accumulator is `us`, by output bucket
    /// `bucket`: `(Σ u_us²·w_us + Σ u_them²·w_them) / QA + bias) · SCALE / (QA·QB)`.
    #[inline]
    pub fn output(&self, us: &[Lanes], them: &[Lanes], bucket: usize) -> i32 {
        let n = self.hidden / 8;
        let w = flat(&self.output_weights[bucket * n..(bucket + 1) * n]);
        let (w_us, w_them) = w.split_at(self.hidden);
        let sum = self
            .kernel
            .screlu_dot(flat(us), w_us)
            .wrapping_add(self.kernel.screlu_dot(flat(them), w_them));
        let out = i64::from(sum / QA) + i64::from(self.output_bias[bucket]);
        (out * i64::from(SCALE) / i64::from(QA * QB)) as i32
    }

    /// Evaluates `pos` from scratch for the side to move (no accumulator stack; allocates,
    /// so not for the search).
    pub fn evaluate(&self, pos: &Position) -> i32 {
        let n = self.hidden / 16;
        let mut white = vec![Lanes::default(); n];
        let mut black = vec![Lanes::default(); n];
        self.refresh(pos, Color::White, &mut white);
        self.refresh(pos, Color::Black, &mut black);
        let bucket = self.output_bucket(pos.occupied().count());
        match pos.side_to_move() {
            Color::White => self.output(&white, &black, bucket),
            Color::Black => self.output(&black, &white, bucket),
        }
    }
}
