//! The accumulators along the search path: one frame per ply, each holding both
//! perspectives' `i16` accumulators and the change (a [`Delta`]) from the frame below.
//!
//! Updates are **lazy**: making a move only records its delta ([`AccumulatorStack::push_move`]);
//! [`AccumulatorStack::evaluate`] walks down to the nearest computed frame and applies the
//! deltas upwards, so nodes cut off before they evaluate cost nothing. Frame 0 is refreshed
//! from scratch at the root. All memory is allocated up front ([`AccumulatorStack::set_width`]
//! runs outside the search), so the search never allocates here.

use super::net::Net;
use super::simd::{flat, flat_mut, Lanes};
use crate::position::Position;
use crate::types::{CastleSide, Color, Move, MoveKind, Piece, PieceType, Square};

/// The pieces a move takes away from and puts on squares (at most two of each: castling
/// moves king and rook, en passant and captures remove two pieces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Delta {
    adds: [(Piece, Square); 2],
    subs: [(Piece, Square); 2],
    n_add: u8,
    n_sub: u8,
}

const FILLER: (Piece, Square) = (
    Piece::new(Color::White, PieceType::Pawn),
    Square::from_index(0),
);

impl Delta {
    /// No change (a null move).
    pub const NONE: Delta = Delta {
        adds: [FILLER; 2],
        subs: [FILLER; 2],
        n_add: 0,
        n_sub: 0,
    };

    #[inline(always)]
    fn add(&mut self, piece: Piece, sq: Square) {
        self.adds[self.n_add as usize] = (piece, sq);
        self.n_add += 1;
    }

    #[inline(always)]
    fn sub(&mut self, piece: Piece, sq: Square) {
        self.subs[self.n_sub as usize] = (piece, sq);
        self.n_sub += 1;
    }

    /// The change `mv` (legal in `pos`) makes to the board. Castling is encoded king takes
    /// rook; in Chess960 the king or rook may land where the other stood, which is harmless
    /// because both are removed and both placed in one pass.
    #[inline]
    pub fn of_move(pos: &Position, mv: Move) -> Delta {
        let us = pos.side_to_move();
        let (from, to) = (mv.from(), mv.to());
        let piece = pos.piece_on(from).expect("a move from an empty square");
        let mut d = Delta::NONE;
        d.sub(piece, from);
        match mv.kind() {
            MoveKind::Castle => {
                let rook = Piece::new(us, PieceType::Rook);
                let (king_to, rook_to) = CastleSide::targets(us, from, to);
                d.sub(rook, to);
                d.add(piece, king_to);
                d.add(rook, rook_to);
            }
            MoveKind::EnPassant => {
                d.sub(
                    Piece::new(!us, PieceType::Pawn),
                    Square::new(to.file(), from.rank()),
                );
                d.add(piece, to);
            }
            _ => {
                if let Some(captured) = pos.piece_on(to) {
                    d.sub(captured, to);
                }
                let placed = mv.promotion().map_or(piece, |p| Piece::new(us, p));
                d.add(placed, to);
            }
        }
        d
    }
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    delta: Delta,
    computed: bool,
}

/// Accumulators for every ply of a search path, both perspectives each.
pub struct AccumulatorStack {
    hidden: usize,
    /// `frames × 2 perspectives (White, Black) × hidden/16` lanes.
    lanes: Vec<Lanes>,
    frames: Vec<Frame>,
}

impl AccumulatorStack {
    /// A stack for `plies` frames (ply 0 to `plies − 1`); no accumulator memory until
    /// [`set_width`](Self::set_width).
    pub fn new(plies: usize) -> AccumulatorStack {
        AccumulatorStack {
            hidden: 0,
            lanes: Vec::new(),
            frames: vec![
                Frame {
                    delta: Delta::NONE,
                    computed: false,
                };
                plies
            ],
        }
    }

    /// Sizes the accumulators for a network of width `hidden` (allocates only when the width
    /// changes).
    pub fn set_width(&mut self, hidden: usize) {
        if self.hidden != hidden {
            self.hidden = hidden;
            self.lanes = vec![Lanes::default(); self.frames.len() * 2 * hidden / 16];
        }
    }

    #[inline(always)]
    fn span(&self, ply: usize, perspective: Color) -> std::ops::Range<usize> {
        let n = self.hidden / 16;
        let start = (2 * ply + perspective as usize) * n;
        start..start + n
    }

    /// Computes ply `ply`'s accumulators from scratch for `pos`.
    pub fn refresh(&mut self, net: &Net, ply: usize, pos: &Position) {
        debug_assert_eq!(net.hidden(), self.hidden);
        for c in Color::ALL {
            let span = self.span(ply, c);
            net.refresh(pos, c, &mut self.lanes[span]);
        }
        self.frames[ply].computed = true;
    }

    /// Records that ply `ply` is ply `ply − 1` (position `parent`) after `mv`.
    #[inline(always)]
    pub fn push_move(&mut self, ply: usize, parent: &Position, mv: Move) {
        self.frames[ply] = Frame {
            delta: Delta::of_move(parent, mv),
            computed: false,
        };
    }

    /// Records that ply `ply` is ply `ply − 1` with the turn passed.
    #[inline(always)]
    pub fn push_null(&mut self, ply: usize) {
        self.frames[ply] = Frame {
            delta: Delta::NONE,
            computed: false,
        };
    }

    /// Brings ply `ply`'s accumulators up to date from the nearest computed frame below.
    #[inline]
    fn update(&mut self, net: &Net, ply: usize) {
        let mut base = ply;
        while !self.frames[base].computed {
            base -= 1;
        }
        for p in base + 1..=ply {
            self.apply(net, p);
        }
    }

    fn apply(&mut self, net: &Net, ply: usize) {
        let n = self.hidden / 16;
        let delta = self.frames[ply].delta;
        let (below, above) = self.lanes.split_at_mut(2 * ply * n);
        for c in Color::ALL {
            let start = c as usize * n;
            let input = flat(&below[2 * (ply - 1) * n + start..][..n]);
            let out = flat_mut(&mut above[start..start + n]);
            let row = |&(piece, sq): &(Piece, Square)| net.piece_row(c, piece, sq);
            let mut adds: [&[i16]; 2] = [&[]; 2];
            let mut subs: [&[i16]; 2] = [&[]; 2];
            for (slot, f) in adds.iter_mut().zip(&delta.adds[..delta.n_add as usize]) {
                *slot = row(f);
            }
            for (slot, f) in subs.iter_mut().zip(&delta.subs[..delta.n_sub as usize]) {
                *slot = row(f);
            }
            net.kernel().update(
                out,
                input,
                &adds[..delta.n_add as usize],
                &subs[..delta.n_sub as usize],
            );
        }
        self.frames[ply].computed = true;
    }

    /// The evaluation of ply `ply` (side to move `side`), updating the accumulators first.
    #[inline]
    pub fn evaluate(&mut self, net: &Net, ply: usize, side: Color) -> i32 {
        self.update(net, ply);
        let us = &self.lanes[self.span(ply, side)];
        let them = &self.lanes[self.span(ply, !side)];
        net.output(us, them)
    }

    /// Ply `ply`'s accumulator of `perspective`, updated first (tests compare it with a
    /// refresh).
    pub fn accumulator(&mut self, net: &Net, ply: usize, perspective: Color) -> &[i16] {
        self.update(net, ply);
        flat(&self.lanes[self.span(ply, perspective)])
    }
}
