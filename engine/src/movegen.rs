//! Fully legal move generation for standard chess and Chess960.
//!
//! One generator, parameterised by which moves are wanted (all, noisy = captures and
//! promotions, quiet = the rest) and by a `Sink` that either collects moves into a
//! [`MoveList`] or only counts them (bulk counting for perft: a piece's moves are counted
//! with one popcount). Legality comes from check and pin masks computed when the position
//! was made, so no move is ever made and taken back to test it.

use crate::attacks::{
    between, bishop_attacks, king_attacks, knight_attacks, line, pawn_attacks, rook_attacks,
};
use crate::position::Position;
use crate::types::{Bitboard, CastleSide, Color, Move, MoveKind, PieceType, Rank, Square};

/// At most 218 legal moves exist in any position; 256 leaves room.
pub const MAX_MOVES: usize = 256;

/// A fixed-capacity list of moves on the stack (no allocation).
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

const FILLER: Move = Move::new(Square::A1, Square::B1, MoveKind::Quiet);

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl MoveList {
    /// An empty list.
    #[inline(always)]
    pub const fn new() -> MoveList {
        MoveList {
            moves: [FILLER; MAX_MOVES],
            len: 0,
        }
    }

    /// Appends a move.
    #[inline(always)]
    pub fn push(&mut self, mv: Move) {
        debug_assert!(self.len < MAX_MOVES);
        self.moves[self.len & (MAX_MOVES - 1)] = mv;
        self.len += 1;
    }

    /// Number of moves.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The moves as a slice.
    #[inline(always)]
    pub fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }

    /// The moves as a mutable slice.
    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }

    /// Removes every move.
    #[inline(always)]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Whether the list holds `mv`.
    pub fn contains(&self, mv: Move) -> bool {
        self.as_slice().contains(&mv)
    }
}

impl core::ops::Deref for MoveList {
    type Target = [Move];
    fn deref(&self) -> &[Move] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = core::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

/// Where generated moves go.
trait Sink {
    /// Moves of a non-pawn piece from `from` to each of `targets`; `enemies` tells captures.
    fn piece(&mut self, from: Square, targets: Bitboard, enemies: Bitboard);
    /// Pawn moves of one kind to each of `targets`, each from `to - delta`.
    fn pawns(&mut self, targets: Bitboard, delta: i32, kind: MoveKind);
    /// Promotions to each of `targets` from `to - delta`: all four pieces, or queens only.
    fn promotions(&mut self, targets: Bitboard, delta: i32, capture: bool, under: bool);
    /// One move.
    fn one(&mut self, mv: Move);

    /// All pawn moves of one batch of pawns (already restricted to legal destinations).
    #[inline(always)]
    fn pawn_batch<const WANT: u8>(&mut self, b: &PawnBatch) {
        if WANT & NOISY != 0 {
            self.pawns(b.west - b.last, b.up_west, MoveKind::Capture);
            self.pawns(b.east - b.last, b.up_east, MoveKind::Capture);
            self.promotions(b.west & b.last, b.up_west, true, true);
            self.promotions(b.east & b.last, b.up_east, true, true);
            self.promotions(b.push1 & b.last, b.up, false, true);
        }
        if WANT & QUIET != 0 {
            self.pawns(b.push1 - b.last, b.up, MoveKind::Quiet);
            self.pawns(b.push2, 2 * b.up, MoveKind::DoublePush);
        }
    }
}

/// Destinations of a batch of pawns, with the square offsets that lead there.
struct PawnBatch {
    push1: Bitboard,
    push2: Bitboard,
    west: Bitboard,
    east: Bitboard,
    last: Bitboard,
    up: i32,
    up_west: i32,
    up_east: i32,
}

/// Hands each move to a closure (no list).
struct Visit<F: FnMut(Move)>(F);

impl<F: FnMut(Move)> Sink for Visit<F> {
    #[inline(always)]
    fn piece(&mut self, from: Square, targets: Bitboard, enemies: Bitboard) {
        for to in targets {
            let kind = if enemies.has(to) {
                MoveKind::Capture
            } else {
                MoveKind::Quiet
            };
            (self.0)(Move::new(from, to, kind));
        }
    }

    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, delta: i32, kind: MoveKind) {
        for to in targets {
            (self.0)(Move::new(
                Square::from_index((to as i32 - delta) as usize),
                to,
                kind,
            ));
        }
    }

    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, delta: i32, capture: bool, under: bool) {
        for to in targets {
            let from = Square::from_index((to as i32 - delta) as usize);
            (self.0)(Move::new(
                from,
                to,
                MoveKind::promotion(PieceType::Queen, capture),
            ));
            if under {
                for p in [PieceType::Knight, PieceType::Rook, PieceType::Bishop] {
                    (self.0)(Move::new(from, to, MoveKind::promotion(p, capture)));
                }
            }
        }
    }

    #[inline(always)]
    fn one(&mut self, mv: Move) {
        (self.0)(mv);
    }
}

/// Counts moves without building them.
struct Counter(u64);

impl Sink for Counter {
    #[inline(always)]
    fn piece(&mut self, _: Square, targets: Bitboard, _: Bitboard) {
        self.0 += targets.count() as u64;
    }
    #[inline(always)]
    fn pawns(&mut self, targets: Bitboard, _: i32, _: MoveKind) {
        self.0 += targets.count() as u64;
    }
    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, _: i32, _: bool, under: bool) {
        self.0 += targets.count() as u64 * if under { 4 } else { 1 };
    }
    #[inline(always)]
    fn one(&mut self, _: Move) {
        self.0 += 1;
    }

    /// Fewer popcounts than one per move kind (software popcount is ~12 instructions on
    /// baseline x86-64): single and double pushes never share a square, and promotions are
    /// rare enough to test for first.
    #[inline(always)]
    fn pawn_batch<const WANT: u8>(&mut self, b: &PawnBatch) {
        debug_assert_eq!(WANT, ALL);
        let promos = (b.west | b.east | b.push1) & b.last;
        self.0 += (((b.push1 | b.push2) - b.last).count()
            + (b.west - b.last).count()
            + (b.east - b.last).count()) as u64;
        if promos.any() {
            self.0 += 4
                * ((b.west & b.last).count()
                    + (b.east & b.last).count()
                    + (b.push1 & b.last).count()) as u64;
        }
    }
}

const NOISY: u8 = 1;
const QUIET: u8 = 2;
const ALL: u8 = NOISY | QUIET;

impl Position {
    /// Every legal move.
    ///
    /// ```
    /// use engine::position::Position;
    /// assert_eq!(Position::startpos().legal_moves().len(), 20);
    /// ```
    pub fn legal_moves(&self) -> MoveList {
        let mut list = MoveList::new();
        self.generate_all(&mut list);
        list
    }

    /// Appends every legal move to `list`.
    #[inline]
    pub fn generate_all(&self, list: &mut MoveList) {
        generate::<ALL, _>(self, &mut Visit(|m| list.push(m)));
    }

    /// Appends the legal captures (en passant included) and promotions (all four pieces).
    #[inline]
    pub fn generate_noisy(&self, list: &mut MoveList) {
        generate::<NOISY, _>(self, &mut Visit(|m| list.push(m)));
    }

    /// Appends the legal moves that neither capture nor promote (castling included).
    #[inline]
    pub fn generate_quiets(&self, list: &mut MoveList) {
        generate::<QUIET, _>(self, &mut Visit(|m| list.push(m)));
    }

    /// The number of legal moves, counted without building them.
    #[inline]
    pub fn count_legal_moves(&self) -> u64 {
        let mut counter = Counter(0);
        generate::<ALL, _>(self, &mut counter);
        counter.0
    }

    /// Calls `f` with every legal move, straight from the generator (no list is built).
    #[inline]
    pub fn for_each_legal_move(&self, f: impl FnMut(Move)) {
        generate::<ALL, _>(self, &mut Visit(f));
    }

    /// Whether the side to move has any legal move.
    pub fn has_legal_move(&self) -> bool {
        self.count_legal_moves() > 0
    }

    /// Whether `mv` is legal here (used to check moves from the transposition table,
    /// killer slots and user input, which may come from another position).
    pub fn is_legal(&self, mv: Move) -> bool {
        let Some(piece) = self.piece_on(mv.from()) else {
            return false;
        };
        if piece.color() != self.side_to_move() {
            return false;
        }
        let mut list = MoveList::new();
        if mv.is_noisy() {
            self.generate_noisy(&mut list);
        } else {
            self.generate_quiets(&mut list);
        }
        list.contains(mv)
    }

    /// Parses a move in UCI notation (`e2e4`, `e7e8q`; castling as `e1g1` or king-takes-rook
    /// `e1h1`) and returns it if it is legal here.
    pub fn parse_uci_move(&self, text: &str) -> Option<Move> {
        self.legal_moves()
            .iter()
            .copied()
            .find(|m| m.to_uci(false) == text || m.to_uci(true) == text)
    }
}

fn generate<const WANT: u8, S: Sink>(pos: &Position, sink: &mut S) {
    let us = pos.side_to_move();
    let them = !us;
    let ours = pos.color(us);
    let enemies = pos.color(them);
    let occ = ours | enemies;
    let ksq = pos.king(us);
    let checkers = pos.checkers();

    // Which destination squares each kind of move may use.
    let dest = match WANT {
        NOISY => enemies,
        QUIET => !occ,
        _ => !ours,
    };

    // King moves: the king's own square is removed so sliders see through it.
    let king_occ = occ.without(ksq);
    let mut king_targets = king_attacks(ksq) & dest;
    for to in king_targets {
        if pos.is_attacked(to, them, king_occ) {
            king_targets = king_targets.without(to);
        }
    }
    sink.piece(ksq, king_targets, enemies);

    if checkers.more_than_one() {
        return;
    }
    // A single check must be captured or blocked.
    let target = if checkers.any() {
        between(ksq, checkers.lsb())
    } else {
        Bitboard::FULL
    };
    let pinned = pos.pinned();

    if WANT & QUIET != 0 && checkers.is_empty() {
        castling(pos, sink, us, ksq, occ);
    }

    let mask = dest & target;
    for from in pos.colored(us, PieceType::Knight) - pinned {
        sink.piece(from, knight_attacks(from) & mask, enemies);
    }
    for from in pos.colored(us, PieceType::Bishop) | pos.colored(us, PieceType::Queen) {
        let mut t = bishop_attacks(from, occ) & mask;
        if pinned.has(from) {
            t &= line(ksq, from);
        }
        sink.piece(from, t, enemies);
    }
    for from in pos.colored(us, PieceType::Rook) | pos.colored(us, PieceType::Queen) {
        let mut t = rook_attacks(from, occ) & mask;
        if pinned.has(from) {
            t &= line(ksq, from);
        }
        sink.piece(from, t, enemies);
    }

    pawn_moves::<WANT, S>(pos, sink, us, ksq, occ, enemies, target);
}

#[inline(always)]
fn castling<S: Sink>(pos: &Position, sink: &mut S, us: Color, ksq: Square, occ: Bitboard) {
    for side in CastleSide::ALL {
        let Some(rook) = pos.castling_rook(us, side) else {
            continue;
        };
        let back = Rank::First.relative_to(us);
        let king_to = Square::new(side.king_target(), back);
        let rook_to = Square::new(side.rook_target(), back);
        let others = occ.without(ksq).without(rook);
        let must_be_empty = between(ksq, king_to) | between(rook, rook_to);
        if (must_be_empty & others).any() {
            continue;
        }
        // The king may not pass through or land on an attacked square; the castling rook
        // is lifted, since in Chess960 it may have shielded the destination.
        let path = between(ksq, king_to).with(king_to);
        let lifted = occ.without(rook);
        if Iterator::any(&mut path.iter(), |sq| pos.is_attacked(sq, !us, lifted)) {
            continue;
        }
        sink.one(Move::new(ksq, rook, MoveKind::Castle));
    }
}

#[inline(always)]
fn pawn_moves<const WANT: u8, S: Sink>(
    pos: &Position,
    sink: &mut S,
    us: Color,
    ksq: Square,
    occ: Bitboard,
    enemies: Bitboard,
    target: Bitboard,
) {
    let pawns = pos.colored(us, PieceType::Pawn);
    let pinned = pos.pinned();
    let empty = !occ;
    let last = Bitboard::rank(Rank::Eighth.relative_to(us));
    let third = Bitboard::rank(Rank::Third.relative_to(us));
    let (up, up_left, up_right) = match us {
        Color::White => (8, 7, 9),
        Color::Black => (-8, -9, -7),
    };

    // Pinned pawns may only move along the pin line; a pawn pinned along a rank or a
    // diagonal it cannot use never moves, so filtering the destination by the line is enough.
    let free = pawns - pinned;
    let pinned_pawns = pawns & pinned;

    let emit = |sink: &mut S, movers: Bitboard, extra: Bitboard| {
        let ahead = movers.forward(us);
        let push1 = ahead & empty;
        let push2 = (push1 & third).forward(us) & empty;
        let allowed = target & extra;
        sink.pawn_batch::<WANT>(&PawnBatch {
            push1: push1 & allowed,
            push2: push2 & allowed,
            west: ahead.west() & enemies & allowed,
            east: ahead.east() & enemies & allowed,
            last,
            up,
            up_west: up_left,
            up_east: up_right,
        });
    };
    // The west/east shifts of `forward` match up_left/up_right for both colours.
    emit(sink, free, Bitboard::FULL);
    for from in pinned_pawns {
        emit(sink, Bitboard::from_square(from), line(ksq, from));
    }

    if WANT & NOISY != 0 {
        if let Some(ep) = pos.en_passant() {
            let captured = Square::from_index((ep as i32 - up) as usize);
            for from in pawn_attacks(!us, ep) & pawns {
                // Simulate the capture: both pawns leave, ours arrives. Covers discovered
                // checks along the rank and evasions of a pawn check alike.
                let after = occ.without(from).without(captured).with(ep);
                let attackers = pos.attackers_to(ksq, after)
                    & pos.color(!us)
                    & !Bitboard::from_square(captured);
                if attackers.is_empty() {
                    sink.one(Move::new(from, ep, MoveKind::EnPassant));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startpos_has_twenty_moves() {
        let pos = Position::startpos();
        assert_eq!(pos.legal_moves().len(), 20);
        assert_eq!(pos.count_legal_moves(), 20);
        let mut noisy = MoveList::new();
        pos.generate_noisy(&mut noisy);
        assert!(noisy.is_empty());
    }

    #[test]
    fn noisy_and_quiet_partition_all() {
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        ] {
            let pos = Position::from_fen(fen).unwrap();
            let all = pos.legal_moves();
            let mut noisy = MoveList::new();
            let mut quiet = MoveList::new();
            pos.generate_noisy(&mut noisy);
            pos.generate_quiets(&mut quiet);
            assert_eq!(noisy.len() + quiet.len(), all.len(), "{fen}");
            assert!(noisy.iter().all(|m| m.is_noisy() && all.contains(*m)));
            assert!(quiet.iter().all(|m| !m.is_noisy() && all.contains(*m)));
            assert_eq!(pos.count_legal_moves(), all.len() as u64);
            for m in all.iter() {
                assert!(pos.is_legal(*m));
            }
        }
    }

    #[test]
    fn parses_uci_moves_both_castling_styles() {
        let pos = Position::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1").unwrap();
        let short = pos.parse_uci_move("e1g1").unwrap();
        assert_eq!(pos.parse_uci_move("e1h1"), Some(short));
        assert!(short.is_castle());
        assert_eq!(pos.parse_uci_move("e1e3"), None);
        assert_eq!(pos.parse_uci_move("junk"), None);
    }

    #[test]
    fn foreign_moves_are_not_legal() {
        let pos = Position::startpos();
        assert!(!pos.is_legal(Move::new(Square::E7, Square::E5, MoveKind::DoublePush)));
        assert!(!pos.is_legal(Move::new(Square::E2, Square::E5, MoveKind::Quiet)));
        assert!(!pos.is_legal(Move::new(Square::D1, Square::D7, MoveKind::Capture)));
        assert!(pos.is_legal(Move::new(Square::G1, Square::F3, MoveKind::Quiet)));
    }
}
