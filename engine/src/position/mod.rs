//! The board: piece placement, side to move, castling rights, en passant, move counters,
//! Zobrist key, and the check and pin masks the move generator needs.
//!
//! Moves are applied by copy-make: clone the position (168 bytes on x86-64: bitboards plus a
//! mailbox) and call [`Position::play_mut`] on the clone; [`Position::play`] does both but
//! returns by value, which costs an extra copy on hot paths. Callers keep their own history of
//! keys for repetition detection.

mod fen;
mod zobrist;

pub use fen::FenError;

use crate::attacks::{
    between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
    rook_rays,
};
use crate::types::{
    Bitboard, BySquare, CastleSide, CastlingRights, Color, File, Move, MoveKind, Piece, PieceType,
    Rank, Square,
};

/// The FEN of the standard starting position.
pub const STARTPOS_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// A legal chess position (standard or Chess960).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Position {
    by_type: [Bitboard; 6],
    by_color: [Bitboard; 2],
    board: BySquare<Option<Piece>>,
    side: Color,
    castling: CastlingRights,
    en_passant: Option<Square>,
    halfmove: u16,
    fullmove: u16,
    key: u64,
    checkers: Bitboard,
    pinned: Bitboard,
    chess960: bool,
}

impl Default for Position {
    fn default() -> Self {
        Position::startpos()
    }
}

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        Position::from_fen(STARTPOS_FEN).expect("the start position is valid")
    }

    fn empty() -> Position {
        Position {
            by_type: [Bitboard::EMPTY; 6],
            by_color: [Bitboard::EMPTY; 2],
            board: BySquare::splat(None),
            side: Color::White,
            castling: CastlingRights::NONE,
            en_passant: None,
            halfmove: 0,
            fullmove: 1,
            key: 0,
            checkers: Bitboard::EMPTY,
            pinned: Bitboard::EMPTY,
            chess960: false,
        }
    }

    // ----- accessors -------------------------------------------------------------------

    /// The side to move.
    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.side
    }

    /// The piece on a square.
    #[inline(always)]
    pub fn piece_on(&self, sq: Square) -> Option<Piece> {
        self.board[sq]
    }

    /// All pieces of a type, both colours.
    #[inline(always)]
    pub fn pieces(&self, kind: PieceType) -> Bitboard {
        self.by_type[kind as usize]
    }

    /// All pieces of a colour.
    #[inline(always)]
    pub fn color(&self, color: Color) -> Bitboard {
        self.by_color[color as usize]
    }

    /// The pieces of one colour and type.
    #[inline(always)]
    pub fn colored(&self, color: Color, kind: PieceType) -> Bitboard {
        self.by_type[kind as usize] & self.by_color[color as usize]
    }

    /// Every occupied square.
    #[inline(always)]
    pub fn occupied(&self) -> Bitboard {
        self.by_color[0] | self.by_color[1]
    }

    /// Bishops and queens.
    #[inline(always)]
    pub fn diagonal_sliders(&self) -> Bitboard {
        self.by_type[PieceType::Bishop as usize] | self.by_type[PieceType::Queen as usize]
    }

    /// Rooks and queens.
    #[inline(always)]
    pub fn orthogonal_sliders(&self) -> Bitboard {
        self.by_type[PieceType::Rook as usize] | self.by_type[PieceType::Queen as usize]
    }

    /// The king square of a colour.
    #[inline(always)]
    pub fn king(&self, color: Color) -> Square {
        self.colored(color, PieceType::King).lsb()
    }

    /// Castling rights still held.
    #[inline(always)]
    pub fn castling(&self) -> &CastlingRights {
        &self.castling
    }

    /// The en-passant target square, kept only when a pawn of the side to move attacks it.
    #[inline(always)]
    pub fn en_passant(&self) -> Option<Square> {
        self.en_passant
    }

    /// Plies since the last capture or pawn move.
    #[inline(always)]
    pub fn halfmove_clock(&self) -> u16 {
        self.halfmove
    }

    /// The move number, starting at 1 and incremented after Black moves.
    #[inline(always)]
    pub fn fullmove_number(&self) -> u16 {
        self.fullmove
    }

    /// The Zobrist key of the position (placement, side, castling rights, en passant).
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// Pieces giving check to the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }

    /// Whether the side to move is in check.
    #[inline(always)]
    pub fn in_check(&self) -> bool {
        self.checkers.any()
    }

    /// Pieces of the side to move pinned to their king.
    #[inline(always)]
    pub fn pinned(&self) -> Bitboard {
        self.pinned
    }

    /// Whether the position came from a Chess960 setup (FEN output and UCI castling follow it).
    #[inline(always)]
    pub fn is_chess960(&self) -> bool {
        self.chess960
    }

    /// Marks the position as Chess960 (or not), which changes how castling is written.
    pub fn set_chess960(&mut self, chess960: bool) {
        self.chess960 = chess960;
    }

    /// The square a castling rook stands on, if the right is held.
    #[inline(always)]
    pub fn castling_rook(&self, color: Color, side: CastleSide) -> Option<Square> {
        self.castling
            .rook(color, side)
            .map(|f| Square::new(f, Rank::First.relative_to(color)))
    }

    /// Non-pawn, non-king material of a colour is present (null-move pruning guard).
    #[inline(always)]
    pub fn has_non_pawn_material(&self, color: Color) -> bool {
        (self.color(color) - self.pieces(PieceType::Pawn) - self.pieces(PieceType::King)).any()
    }

    // ----- attacks ---------------------------------------------------------------------

    /// Every piece (either colour) attacking `sq` with the given occupancy.
    #[inline]
    pub fn attackers_to(&self, sq: Square, occ: Bitboard) -> Bitboard {
        (pawn_attacks(Color::White, sq) & self.colored(Color::Black, PieceType::Pawn))
            | (pawn_attacks(Color::Black, sq) & self.colored(Color::White, PieceType::Pawn))
            | (knight_attacks(sq) & self.pieces(PieceType::Knight))
            | (king_attacks(sq) & self.pieces(PieceType::King))
            | (bishop_attacks(sq, occ) & self.diagonal_sliders())
            | (rook_attacks(sq, occ) & self.orthogonal_sliders())
    }

    /// Whether `by` attacks `sq` with the given occupancy.
    #[inline]
    pub fn is_attacked(&self, sq: Square, by: Color, occ: Bitboard) -> bool {
        let them = self.color(by);
        (pawn_attacks(!by, sq) & self.pieces(PieceType::Pawn) & them).any()
            || (knight_attacks(sq) & self.pieces(PieceType::Knight) & them).any()
            || (king_attacks(sq) & self.pieces(PieceType::King) & them).any()
            || (bishop_attacks(sq, occ) & self.diagonal_sliders() & them).any()
            || (rook_attacks(sq, occ) & self.orthogonal_sliders() & them).any()
    }

    /// Recomputes checkers and pins for the side to move.
    fn update_check_info(&mut self) {
        let us = self.side;
        let ksq = self.king(us);
        let them = self.color(!us);
        let occ = self.occupied();
        // Leapers check directly; sliders are found on empty-board rays from the king
        // (no magic lookups): none between means check, exactly one of ours means a pin.
        let mut checkers = (pawn_attacks(us, ksq) & self.pieces(PieceType::Pawn)
            | knight_attacks(ksq) & self.pieces(PieceType::Knight))
            & them;
        let snipers = ((rook_rays(ksq) & self.orthogonal_sliders())
            | (bishop_rays(ksq) & self.diagonal_sliders()))
            & them;
        let mut pinned = Bitboard::EMPTY;
        for sniper in snipers {
            let blockers = between(ksq, sniper).without(sniper) & occ;
            if blockers.is_empty() {
                checkers |= sniper;
            } else if !blockers.more_than_one() {
                pinned |= blockers & self.color(us);
            }
        }
        self.checkers = checkers;
        self.pinned = pinned;
    }

    // ----- editing ---------------------------------------------------------------------

    #[inline(always)]
    fn put(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_type[piece.kind() as usize] |= bb;
        self.by_color[piece.color() as usize] |= bb;
        self.board[sq] = Some(piece);
        self.key ^= zobrist::piece(piece, sq);
    }

    #[inline(always)]
    fn remove(&mut self, piece: Piece, sq: Square) {
        let bb = Bitboard::from_square(sq);
        self.by_type[piece.kind() as usize] ^= bb;
        self.by_color[piece.color() as usize] ^= bb;
        self.board[sq] = None;
        self.key ^= zobrist::piece(piece, sq);
    }

    fn set_en_passant(&mut self, sq: Option<Square>) {
        if let Some(old) = self.en_passant {
            self.key ^= zobrist::en_passant(old.file());
        }
        self.en_passant = sq;
        if let Some(new) = sq {
            self.key ^= zobrist::en_passant(new.file());
        }
    }

    /// The position after a legal move.
    ///
    /// Hot loops should prefer `let mut child = pos.clone(); child.play_mut(mv);`: returning
    /// the new position by value costs two out-of-line copies of the whole struct instead of
    /// one inlined copy (measured: bulk-counting perft took about a third longer).
    #[inline]
    pub fn play(&self, mv: Move) -> Position {
        let mut next = self.clone();
        next.play_mut(mv);
        next
    }

    /// Applies a legal move in place. The move must be legal in this position.
    pub fn play_mut(&mut self, mv: Move) {
        let us = self.side;
        let from = mv.from();
        let to = mv.to();
        let piece = self.board[from].expect("a move from an empty square");
        let old_castling = self.castling;

        self.halfmove += 1;
        self.set_en_passant(None);

        match mv.kind() {
            MoveKind::Castle => {
                let rook = Piece::new(us, PieceType::Rook);
                let (king_to, rook_to) = CastleSide::targets(us, from, to);
                self.remove(piece, from);
                self.remove(rook, to);
                self.put(piece, king_to);
                self.put(rook, rook_to);
                self.castling.clear(us);
            }
            MoveKind::EnPassant => {
                let captured_sq = Square::new(to.file(), from.rank());
                self.remove(Piece::new(!us, PieceType::Pawn), captured_sq);
                self.remove(piece, from);
                self.put(piece, to);
                self.halfmove = 0;
            }
            kind => {
                if let Some(captured) = self.board[to] {
                    self.remove(captured, to);
                    self.halfmove = 0;
                }
                self.remove(piece, from);
                let placed = match mv.promotion() {
                    Some(p) => Piece::new(us, p),
                    None => piece,
                };
                self.put(placed, to);
                if piece.kind() == PieceType::Pawn {
                    self.halfmove = 0;
                    if kind == MoveKind::DoublePush {
                        let ep = Square::from_index((from as usize + to as usize) / 2);
                        if (pawn_attacks(us, ep) & self.colored(!us, PieceType::Pawn)).any() {
                            self.set_en_passant(Some(ep));
                        }
                    }
                }
                if piece.kind() == PieceType::King {
                    self.castling.clear(us);
                }
                self.update_castling_for(from);
                self.update_castling_for(to);
            }
        }
        if self.castling != old_castling {
            self.key ^= zobrist::castling(&old_castling) ^ zobrist::castling(&self.castling);
        }
        if us == Color::Black {
            self.fullmove += 1;
        }
        self.side = !us;
        self.key ^= zobrist::KEYS.side;
        self.update_check_info();
    }

    /// Drops a right whose rook square is `sq` (the rook moved or was captured).
    #[inline(always)]
    fn update_castling_for(&mut self, sq: Square) {
        let color = match sq.rank() {
            Rank::First => Color::White,
            Rank::Eighth => Color::Black,
            _ => return,
        };
        for side in CastleSide::ALL {
            if self.castling.rook(color, side) == Some(sq.file()) {
                self.castling.set(color, side, None);
            }
        }
    }

    /// The position with the turn passed (a null move). Not legal when in check.
    pub fn play_null(&self) -> Position {
        let mut next = self.clone();
        next.play_null_mut();
        next
    }

    /// Passes the turn in place (a null move). Not legal when in check.
    pub fn play_null_mut(&mut self) {
        self.set_en_passant(None);
        self.halfmove += 1;
        self.side = !self.side;
        self.key ^= zobrist::KEYS.side;
        self.update_check_info();
    }

    /// The key the position will have after `mv`, computed cheaply for TT prefetching;
    /// ignores castling-right and en-passant changes.
    pub fn key_after(&self, mv: Move) -> u64 {
        let mut key = self.key ^ zobrist::KEYS.side;
        if let Some(piece) = self.board[mv.from()] {
            key ^= zobrist::piece(piece, mv.from()) ^ zobrist::piece(piece, mv.to());
        }
        if let Some(captured) = self.board[mv.to()] {
            key ^= zobrist::piece(captured, mv.to());
        }
        key
    }

    /// The key computed from scratch (tests compare it with the incremental one).
    pub fn compute_key(&self) -> u64 {
        let mut key = 0;
        for sq in self.occupied() {
            key ^= zobrist::piece(self.board[sq].expect("occupied"), sq);
        }
        if self.side == Color::Black {
            key ^= zobrist::KEYS.side;
        }
        key ^= zobrist::castling(&self.castling);
        if let Some(ep) = self.en_passant {
            key ^= zobrist::en_passant(ep.file());
        }
        key
    }

    // ----- draws -----------------------------------------------------------------------

    /// Neither side can possibly mate: K v K, K+minor v K, or bishops all on one colour.
    pub fn is_insufficient_material(&self) -> bool {
        let occ = self.occupied();
        if (self.pieces(PieceType::Pawn)
            | self.orthogonal_sliders()
            | self.pieces(PieceType::Queen))
        .any()
        {
            return false;
        }
        let minors = self.pieces(PieceType::Knight) | self.pieces(PieceType::Bishop);
        if minors.count() <= 1 {
            return true;
        }
        // Only bishops, all on squares of one colour.
        let bishops = self.pieces(PieceType::Bishop);
        (occ - self.pieces(PieceType::King)) == bishops
            && ((bishops & Bitboard::LIGHT).is_empty() || (bishops & Bitboard::DARK).is_empty())
    }

    /// The piece type that a move captures (pawn for en passant).
    #[inline(always)]
    pub fn captured(&self, mv: Move) -> Option<PieceType> {
        if mv.is_en_passant() {
            Some(PieceType::Pawn)
        } else if mv.is_capture() {
            self.board[mv.to()].map(Piece::kind)
        } else {
            None
        }
    }

    /// The piece type that moves.
    #[inline(always)]
    pub fn moved(&self, mv: Move) -> PieceType {
        self.board[mv.from()].map_or(PieceType::Pawn, Piece::kind)
    }

    /// Whether `mv` (which must be legal) checks the opponent's king.
    pub fn gives_check(&self, mv: Move) -> bool {
        let mut next = self.clone();
        next.play_mut(mv);
        next.in_check()
    }
}

/// Files from the position's kings' point of view, used when reading X-FEN castling.
pub(crate) fn outermost_rook(pos: &Position, color: Color, side: CastleSide) -> Option<File> {
    let back = Rank::First.relative_to(color);
    let king = pos.king(color);
    let rooks = pos.colored(color, PieceType::Rook) & Bitboard::rank(back);
    let candidates = rooks.filter(|r| match side {
        CastleSide::King => r.file() > king.file(),
        CastleSide::Queen => r.file() < king.file(),
    });
    match side {
        CastleSide::King => candidates.max(),
        CastleSide::Queen => candidates.min(),
    }
    .map(Square::file)
}

impl std::fmt::Display for Position {
    /// A diagram followed by the FEN.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for rank in Rank::ALL.iter().rev() {
            for file in File::ALL {
                let c = self.board[Square::new(file, *rank)].map_or('.', Piece::char);
                write!(f, "{c} ")?;
            }
            writeln!(f)?;
        }
        write!(f, "{}", self.to_fen())
    }
}
