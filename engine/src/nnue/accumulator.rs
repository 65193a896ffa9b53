//! The accumulators along the search path: one frame per ply, each holding both
//! perspectives' `i16` accumulators and the change (a [`Delta`]) from the frame below.
//!
//! Updates are **lazy**: making a move only records its delta ([`AccumulatorStack::push_move`]);
//! [`AccumulatorStack::evaluate`] walks down to the nearest computed frame and applies the
//! deltas upwards, so nodes cut off before they evaluate cost nothing. Frame 0 is refreshed
//! from scratch at the root. All memory is allocated up front ([`AccumulatorStack::set_width`]
//! and the root's [`AccumulatorStack::refresh`] run outside the search), so the search never
//! allocates here.
//!
//! With king buckets, a king move that changes its side's bucket or mirror cannot be a delta
//! for that side: its accumulator is rebuilt from the **refresh table** ("finny table"), one
//! entry per (perspective, king bucket, mirror) holding an accumulator and the piece
//! bitboards it was built from; the entry is brought to the new position by applying only
//! the pieces that differ, then copied into the frame. The frame of such a move keeps the
//! position's piece bitboards (the only time a frame stores them). A plain net never needs a
//! refresh and has no table.
use super::net::Net;
use super::network::{Layout, View};
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

/// The pieces of a position by colour and type (`[colour][piece type]`, a1 = bit 0).
type Boards = [[u64; 6]; 2];

/// The piece bitboards of `pos`.
fn boards_of(pos: &Position) -> Boards {
    let mut b = [[0u64; 6]; 2];
    for c in Color::ALL {
        for k in PieceType::ALL {
            b[c as usize][k as usize] = pos.colored(c, k).0;
        }
    }
    b
}

#[derive(Clone, Copy, Debug)]
struct Frame {
    delta: Delta,
    computed: bool,
    /// Each perspective's view (king bucket and mirror), White's first.
    views: [View; 2],
    /// Whether a perspective's accumulator is rebuilt from the refresh table (its king
    /// changed bucket or mirror) rather than updated by the delta.
    refresh: [bool; 2],
    /// Pieces on the board (for the output bucket; not kept for a plain net).
    pieces: u8,
}

const EMPTY_FRAME: Frame = Frame {
    delta: Delta::NONE,
    computed: false,
    views: [View::plain(Color::White), View::plain(Color::Black)],
    refresh: [false; 2],
    pieces: 0,
};

/// Accumulators for every ply of a search path, both perspectives each.
pub struct AccumulatorStack {
    hidden: usize,
    /// `frames × 2 perspectives (White, Black) × hidden/16` lanes.
    lanes: Vec<Lanes>,
    frames: Vec<Frame>,
    /// The piece bitboards of each frame that refreshes a perspective (only those are set).
    boards: Vec<Boards>,
    /// The layout and identity of the net the refresh table belongs to (set at the root).
    layout: Layout,
    net_id: u64,
    /// The refresh table: `2 perspectives × K buckets × 2 mirrors` accumulators of
    /// `hidden/16` lanes, and the bitboards each was built from (empty for a plain net).
    table: Vec<Lanes>,
    table_boards: Vec<Boards>,
}

impl AccumulatorStack {
    /// A stack for `plies` frames (ply 0 to `plies − 1`); no accumulator memory until
    /// [`set_width`](Self::set_width).
    pub fn new(plies: usize) -> AccumulatorStack {
        AccumulatorStack {
            hidden: 0,
            lanes: Vec::new(),
            frames: vec![EMPTY_FRAME; plies],
            boards: vec![[[0; 6]; 2]; plies],
            layout: Layout::PLAIN,
            net_id: 0,
            table: Vec::new(),
            table_boards: Vec::new(),
        }
    }

    /// Sizes the accumulators for a network of width `hidden` (allocates only when the width
    /// changes).
    pub fn set_width(&mut self, hidden: usize) {
        if self.hidden != hidden {
            self.hidden = hidden;
            self.lanes = vec![Lanes::default(); self.frames.len() * 2 * hidden / 16];
            self.net_id = 0;
        }
    }

    /// Empties the refresh table for `net` when it belongs to another net (allocates then,
    /// at the root only).
    fn adopt(&mut self, net: &Net) {
        if self.net_id == net.id() {
            return;
        }
        self.net_id = net.id();
        self.layout = net.layout();
        // A plain net's moves leave the views and piece counts alone (they never change):
        // start every frame from the plain ones.
        self.frames.fill(EMPTY_FRAME);
        let entries = if self.layout.king_buckets > 1 {
            2 * self.layout.king_buckets * 2
        } else {
            0
        };
        let n = self.hidden / 16;
        self.table = Vec::with_capacity(entries * n);
        for _ in 0..entries {
            self.table.extend_from_slice(net.bias());
        }
        self.table_boards = vec![[[0; 6]; 2]; entries];
    }

    #[inline(always)]
    fn span(&self, ply: usize, perspective: Color) -> std::ops::Range<usize> {
        let n = self.hidden / 16;
        let start = (2 * ply + perspective as usize) * n;
        start..start + n
    }

    /// Computes ply `ply`'s accumulators from scratch for `pos` (at ply 0, also takes `net`'s
    /// refresh table).
    pub fn refresh(&mut self, net: &Net, ply: usize, pos: &Position) {
        debug_assert_eq!(net.hidden(), self.hidden);
        self.adopt(net);
        for c in Color::ALL {
            let span = self.span(ply, c);
            net.refresh(pos, c, &mut self.lanes[span]);
        }
        self.frames[ply] = Frame {
            delta: Delta::NONE,
            computed: true,
            views: [net.view(pos, Color::White), net.view(pos, Color::Black)],
            refresh: [false; 2],
            pieces: pos.occupied().count() as u8,
        };
    }

    /// Records that ply `ply` is ply `ply − 1` (position `parent`) after `mv`.
    #[inline(always)]
    pub fn push_move(&mut self, ply: usize, parent: &Position, mv: Move) {
        let delta = Delta::of_move(parent, mv);
        if self.layout.is_plain() {
            // The plain net's path, as before buckets: every frame keeps the plain views, and
            // the piece count is not needed (one output bucket).
            let frame = &mut self.frames[ply];
            frame.delta = delta;
            frame.computed = false;
            return;
        }
        let below = &self.frames[ply - 1];
        let mut frame = Frame {
            delta,
            computed: false,
            views: below.views,
            refresh: [false; 2],
            pieces: (i32::from(below.pieces) + i32::from(delta.n_add) - i32::from(delta.n_sub))
                as u8,
        };
        if self.layout.king_buckets > 1 && delta.subs[0].0.kind() == PieceType::King {
            let us = parent.side_to_move();
            let king_to = delta.adds[..delta.n_add as usize]
                .iter()
                .find(|(p, _)| p.kind() == PieceType::King)
                .expect("a king move puts the king down")
                .1;
            let view = self.layout.view(us, king_to);
            if view != frame.views[us as usize] {
                frame.views[us as usize] = view;
                frame.refresh[us as usize] = true;
                let mut b = boards_of(parent);
                for &(p, sq) in &delta.subs[..delta.n_sub as usize] {
                    b[p.color() as usize][p.kind() as usize] &= !(1u64 << sq.index());
                }
                for &(p, sq) in &delta.adds[..delta.n_add as usize] {
                    b[p.color() as usize][p.kind() as usize] |= 1u64 << sq.index();
                }
                self.boards[ply] = b;
            }
        }
        self.frames[ply] = frame;
    }

    /// Records that ply `ply` is ply `ply − 1` with the turn passed.
    #[inline(always)]
    pub fn push_null(&mut self, ply: usize) {
        if self.layout.is_plain() {
            let frame = &mut self.frames[ply];
            frame.delta = Delta::NONE;
            frame.computed = false;
            return;
        }
        let below = &self.frames[ply - 1];
        self.frames[ply] = Frame {
            delta: Delta::NONE,
            computed: false,
            views: below.views,
            refresh: [false; 2],
            pieces: below.pieces,
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
        let frame = self.frames[ply];
        let delta = frame.delta;
        for c in Color::ALL {
            if frame.refresh[c as usize] {
                self.refresh_from_table(net, ply, c);
                continue;
            }
            let (below, above) = self.lanes.split_at_mut(2 * ply * n);
            let start = c as usize * n;
            let input = flat(&below[2 * (ply - 1) * n + start..][..n]);
            let out = flat_mut(&mut above[start..start + n]);
            let view = frame.views[c as usize];
            let row = |&(piece, sq): &(Piece, Square)| net.piece_row(c, view, piece, sq);
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

    /// Rebuilds `perspective`'s accumulator of ply `ply` from its refresh-table entry: the
    /// entry gets the rows of the pieces added and removed since it was last used, then is
    /// copied into the frame.
    #[cold]
    fn refresh_from_table(&mut self, net: &Net, ply: usize, perspective: Color) {
        const BATCH: usize = 4;
        let n = self.hidden / 16;
        let view = self.frames[ply].views[perspective as usize];
        let slot = (perspective as usize * self.layout.king_buckets + view.bucket()) * 2
            + usize::from(view.mirrored());
        let target = self.boards[ply];
        let span = self.span(ply, perspective);
        let old = std::mem::replace(&mut self.table_boards[slot], target);
        let entry = flat_mut(&mut self.table[slot * n..(slot + 1) * n]);
        let mut adds: [&[i16]; BATCH] = [&[]; BATCH];
        let mut subs: [&[i16]; BATCH] = [&[]; BATCH];
        let (mut n_add, mut n_sub) = (0, 0);
        for color in Color::ALL {
            for kind in PieceType::ALL {
                let (was, now) = (
                    old[color as usize][kind as usize],
                    target[color as usize][kind as usize],
                );
                let own = color == perspective;
                for (bits, added) in [(was & !now, false), (now & !was, true)] {
                    let mut bits = bits;
                    while bits != 0 {
                        let sq = Square::from_index(bits.trailing_zeros() as usize);
                        bits &= bits - 1;
                        let row = net.row(view.index(own, kind, sq));
                        if added {
                            adds[n_add] = row;
                            n_add += 1;
                        } else {
                            subs[n_sub] = row;
                            n_sub += 1;
                        }
                        if n_add == BATCH || n_sub == BATCH {
                            net.kernel()
                                .update_in_place(entry, &adds[..n_add], &subs[..n_sub]);
                            (n_add, n_sub) = (0, 0);
                        }
                    }
                }
            }
        }
        net.kernel()
            .update_in_place(entry, &adds[..n_add], &subs[..n_sub]);
        flat_mut(&mut self.lanes[span]).copy_from_slice(entry);
    }

    /// The evaluation of ply `ply` (side to move `side`), updating the accumulators first.
    #[inline]
    pub fn evaluate(&mut self, net: &Net, ply: usize, side: Color) -> i32 {
        self.update(net, ply);
        let us = &self.lanes[self.span(ply, side)];
        let them = &self.lanes[self.span(ply, !side)];
        let bucket = if self.layout.output_buckets == 1 {
            0
        } else {
            net.output_bucket(u32::from(self.frames[ply].pieces))
        };
        net.output(us, them, bucket)
    }

    /// Ply `ply`'s accumulator of `perspective`, updated first (tests compare it with a
    /// refresh).
    pub fn accumulator(&mut self, net: &Net, ply: usize, perspective: Color) -> &[i16] {
        self.update(net, ply);
        flat(&self.lanes[self.span(ply, perspective)])
    }
}
