//! viriformat: Viridithas's whole-game format, which bullet reads directly.
//!
//! Per game: a 32-byte marlinformat `PackedBoard` of the start position carrying the game's
//! result, then one `(u16 move, i16 score)` pair per move (the score is White-relative, of
//! the position the move was played in), then four zero bytes. Everything little-endian.
//!
//! `PackedBoard`: occupancy `u64` (bit 0 = a1); one 4-bit code per occupied square in
//! square order, low nibble first (bits 0–2 the piece type, pawn 0 … king 5, or 6 for a
//! rook that can still castle; bit 3 set for Black); a byte with the side to move in bit 7
//! and the en-passant square (64 = none) below; the halfmove clock `u8`; the fullmove
//! number `u16`; an eval `i16` (0 in game headers); the result `u8` (0 Black wins, 1 draw,
//! 2 White wins); one spare byte. Castling rights are the unmoved rooks, so Chess960 needs
//! no special case.
//!
//! A move: from in bits 0–5, to in 6–11, promotion piece (knight 0 … queen 3) in 12–13,
//! flags in 14–15 (1 en passant, 2 castling as king-takes-rook, 3 promotion).
//!
//! ```
//! use data::training::viriformat::{decode_game, encode_game};
//! use data::training::{ScoredMove, TrainingGame};
//! use engine::types::GameResult;
//! use engine::position::Position;
//! let start = Position::startpos();
//! let mv = start.parse_uci_move("e2e4").unwrap();
//! let game = TrainingGame { start, moves: vec![ScoredMove { mv, score: 25 }], result: GameResult::Draw };
//! let mut bytes = Vec::new();
//! encode_game(&game, &mut bytes);
//! assert_eq!(bytes.len(), 32 + 4 + 4);
//! assert_eq!(decode_game(&bytes).unwrap(), game);
//! ```

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

use engine::position::Position;
use engine::types::{CastleSide, GameResult, Move, MoveKind, PieceType, Square};

use super::{FormatError, ScoredMove, TrainingGame, TrainingPosition};

/// Size of a `PackedBoard`.
pub const BOARD_BYTES: usize = 32;
/// Size of one `(move, score)` entry and of the terminator.
pub const ENTRY_BYTES: usize = 4;

const UNMOVED_ROOK: u8 = 6;
const FLAG_EN_PASSANT: u16 = 1 << 14;
const FLAG_CASTLE: u16 = 2 << 14;
const FLAG_PROMOTION: u16 = 3 << 14;

/// A result as viriformat's (marlinformat's) `wdl` byte: 0 Black wins, 1 draw, 2 White wins.
///
/// ```
/// use data::training::viriformat::{result_from_wdl_byte, wdl_byte};
/// use engine::types::GameResult;
/// assert_eq!(wdl_byte(GameResult::WhiteWins), 2);
/// assert_eq!(result_from_wdl_byte(0), Some(GameResult::BlackWins));
/// assert_eq!(result_from_wdl_byte(3), None);
/// ```
pub const fn wdl_byte(result: GameResult) -> u8 {
    match result {
        GameResult::BlackWins => 0,
        GameResult::Draw => 1,
        GameResult::WhiteWins => 2,
    }
}

/// The result a `wdl` byte (0, 1 or 2) stands for; see [`wdl_byte`].
pub const fn result_from_wdl_byte(byte: u8) -> Option<GameResult> {
    match byte {
        0 => Some(GameResult::BlackWins),
        1 => Some(GameResult::Draw),
        2 => Some(GameResult::WhiteWins),
        _ => None,
    }
}

/// Packs a position into marlinformat's 32 bytes with an eval and a result.
pub fn pack_board(pos: &Position, eval: i16, result: GameResult) -> [u8; BOARD_BYTES] {
    let mut out = [0u8; BOARD_BYTES];
    let occupied = pos.occupied();
    out[0..8].copy_from_slice(&occupied.0.to_le_bytes());
    for (i, sq) in occupied.iter().enumerate() {
        let piece = pos.piece_on(sq).expect("an occupied square");
        let color = piece.color();
        let mut code = piece.kind() as u8;
        if piece.kind() == PieceType::Rook
            && CastleSide::ALL
                .iter()
                .any(|&side| pos.castling_rook(color, side) == Some(sq))
        {
            code = UNMOVED_ROOK;
        }
        code |= (color as u8) << 3;
        out[8 + i / 2] |= code << (4 * (i % 2));
    }
    let stm = (pos.side_to_move() as u8) << 7;
    out[24] = stm | pos.en_passant().map_or(64, |sq| sq as u8);
    out[25] = pos.halfmove_clock().min(255) as u8;
    out[26..28].copy_from_slice(&pos.fullmove_number().to_le_bytes());
    out[28..30].copy_from_slice(&eval.to_le_bytes());
    out[30] = wdl_byte(result);
    out
}

/// A decoded `PackedBoard`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PackedBoard {
    /// The position (castling rights from the unmoved rooks).
    pub position: Position,
    /// The eval field (0 in game headers).
    pub eval: i16,
    /// The result field.
    pub result: GameResult,
    /// The spare byte.
    pub extra: u8,
}

/// Unpacks marlinformat's 32 bytes; an error says what is wrong.
pub fn unpack_board(bytes: &[u8; BOARD_BYTES]) -> Result<PackedBoard, String> {
    let occupancy = u64::from_le_bytes(bytes[0..8].try_into().expect("8 bytes"));
    if occupancy.count_ones() > 32 {
        return Err(format!(
            "{} occupied squares (at most 32 fit)",
            occupancy.count_ones()
        ));
    }
    let mut squares = [None::<char>; 64];
    let mut castling = String::new();
    let mut bits = occupancy;
    let mut i = 0;
    while bits != 0 {
        let sq = bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let code = (bytes[8 + i / 2] >> (4 * (i % 2))) & 0xF;
        i += 1;
        let black = code & 8 != 0;
        let letter = match code & 7 {
            0 => 'p',
            1 => 'n',
            2 => 'b',
            3 => 'r',
            4 => 'q',
            5 => 'k',
            UNMOVED_ROOK => {
                let file = (b'a' + (sq % 8) as u8) as char;
                castling.push(if black {
                    file
                } else {
                    file.to_ascii_uppercase()
                });
                'r'
            }
            _ => {
                return Err(format!(
                    "piece code {code} on {} is not a piece",
                    Square::from_index(sq)
                ))
            }
        };
        squares[sq] = Some(if black {
            letter
        } else {
            letter.to_ascii_uppercase()
        });
    }
    let mut fen = String::with_capacity(90);
    for rank in (0..8).rev() {
        let mut empty = 0;
        for file in 0..8 {
            match squares[rank * 8 + file] {
                Some(c) => {
                    if empty > 0 {
                        fen.push(char::from(b'0' + empty));
                        empty = 0;
                    }
                    fen.push(c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            fen.push(char::from(b'0' + empty));
        }
        if rank > 0 {
            fen.push('/');
        }
    }
    fen.push_str(if bytes[24] & 0x80 != 0 { " b " } else { " w " });
    fen.push_str(if castling.is_empty() { "-" } else { &castling });
    match bytes[24] & 0x7F {
        64 => fen.push_str(" -"),
        ep if ep < 64 => {
            fen.push(' ');
            fen.push_str(&Square::from_index(ep as usize).to_string());
        }
        other => return Err(format!("en-passant square {other} is not a square")),
    }
    let fullmove = u16::from_le_bytes([bytes[26], bytes[27]]);
    fen.push_str(&format!(" {} {}", bytes[25], fullmove));
    let position = Position::from_fen(&fen).map_err(|e| format!("{e} ({fen})"))?;
    let result = result_from_wdl_byte(bytes[30])
        .ok_or_else(|| format!("result byte {} is not 0, 1 or 2", bytes[30]))?;
    Ok(PackedBoard {
        position,
        eval: i16::from_le_bytes([bytes[28], bytes[29]]),
        result,
        extra: bytes[31],
    })
}

/// A move in viriformat's 16 bits.
///
/// ```
/// use data::training::viriformat::encode_move;
/// use engine::position::Position;
/// let pos = Position::startpos();
/// // e2 = 12, e4 = 28: 12 | 28 << 6.
/// assert_eq!(encode_move(pos.parse_uci_move("e2e4").unwrap()), 0x070c);
/// ```
pub fn encode_move(mv: Move) -> u16 {
    let base = mv.from() as u16 | (mv.to() as u16) << 6;
    match mv.kind() {
        MoveKind::EnPassant => base | FLAG_EN_PASSANT,
        MoveKind::Castle => base | FLAG_CASTLE,
        _ => match mv.promotion() {
            Some(p) => base | (p as u16 - 1) << 12 | FLAG_PROMOTION,
            None => base,
        },
    }
}

/// The legal move of `pos` that viriformat's 16 bits describe, if there is one.
pub fn decode_move(pos: &Position, raw: u16) -> Option<Move> {
    let from = Square::from_index((raw & 63) as usize);
    let to = Square::from_index((raw >> 6 & 63) as usize);
    let flags = raw & FLAG_PROMOTION;
    let promotion = if flags == FLAG_PROMOTION {
        Some(PieceType::from_index((raw >> 12 & 3) as usize + 1))
    } else if raw >> 12 & 3 != 0 {
        return None;
    } else {
        None
    };
    pos.legal_moves().as_slice().iter().copied().find(|m| {
        m.from() == from
            && m.to() == to
            && m.promotion() == promotion
            && m.is_en_passant() == (flags == FLAG_EN_PASSANT)
            && m.is_castle() == (flags == FLAG_CASTLE)
    })
}

/// Appends the bytes of a game to `out`.
pub fn encode_game(game: &TrainingGame, out: &mut Vec<u8>) {
    out.reserve(BOARD_BYTES + ENTRY_BYTES * (game.moves.len() + 1));
    out.extend_from_slice(&pack_board(&game.start, 0, game.result));
    for m in &game.moves {
        out.extend_from_slice(&encode_move(m.mv).to_le_bytes());
        out.extend_from_slice(&m.score.to_le_bytes());
    }
    out.extend_from_slice(&[0; ENTRY_BYTES]);
}

/// Decodes exactly one game from `bytes` (a whole record, terminator included).
pub fn decode_game(bytes: &[u8]) -> Result<TrainingGame, FormatError> {
    let mut reader = GameReader::new(bytes);
    let game = reader.next().unwrap_or_else(|| {
        Err(FormatError {
            offset: 0,
            line: None,
            message: "empty record".to_string(),
        })
    })?;
    if reader.offset() != bytes.len() as u64 {
        return Err(FormatError {
            offset: reader.offset(),
            line: None,
            message: "bytes after the game's terminator".to_string(),
        });
    }
    Ok(game)
}

/// Reads games one by one from a viriformat stream, checking every record: the start
/// position must be valid, every move legal, the result 0–2. After the first error (with its
/// byte offset) the iterator ends. A game cut off by the end of the stream is an error whose
/// message starts with `truncated`.
pub struct GameReader<R> {
    reader: R,
    offset: u64,
    failed: bool,
}

impl<R: Read> GameReader<R> {
    /// A reader over a stream (wrap files in a `BufReader`).
    pub fn new(reader: R) -> GameReader<R> {
        GameReader {
            reader,
            offset: 0,
            failed: false,
        }
    }

    /// Byte offset of the next record (after the last game returned).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn fill(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match self.reader.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }

    fn read_game(&mut self) -> Result<Option<TrainingGame>, FormatError> {
        let start = self.offset;
        let err = |message: String| FormatError {
            offset: start,
            line: None,
            message,
        };
        let io_err = |e: io::Error| FormatError {
            offset: start,
            line: None,
            message: format!("read error: {e}"),
        };
        let mut header = [0u8; BOARD_BYTES];
        match self.fill(&mut header).map_err(io_err)? {
            0 => return Ok(None),
            BOARD_BYTES => {}
            n => {
                return Err(err(format!(
                    "truncated game record: the file ends {n} bytes into a 32-byte start position"
                )))
            }
        }
        let board = unpack_board(&header).map_err(|e| err(format!("bad start position: {e}")))?;
        let mut position = board.position.clone();
        let mut moves = Vec::with_capacity(128);
        let mut entry_offset = start + BOARD_BYTES as u64;
        loop {
            let mut entry = [0u8; ENTRY_BYTES];
            let n = self.fill(&mut entry).map_err(io_err)?;
            if n < ENTRY_BYTES {
                return Err(err(format!(
                    "truncated game record: the file ends after {} moves without the 4 zero bytes that end a game",
                    moves.len()
                )));
            }
            if entry == [0; ENTRY_BYTES] {
                entry_offset += ENTRY_BYTES as u64;
                break;
            }
            let raw = u16::from_le_bytes([entry[0], entry[1]]);
            let score = i16::from_le_bytes([entry[2], entry[3]]);
            let mv = decode_move(&position, raw).ok_or_else(|| {
                err(format!(
                    "move {} (byte {entry_offset}): {raw:#06x} is not a legal move in {}",
                    moves.len() + 1,
                    position.to_fen()
                ))
            })?;
            position.play_mut(mv);
            moves.push(ScoredMove { mv, score });
            entry_offset += ENTRY_BYTES as u64;
        }
        self.offset = entry_offset;
        Ok(Some(TrainingGame {
            start: board.position,
            moves,
            result: board.result,
        }))
    }
}

impl<R: Read> Iterator for GameReader<R> {
    type Item = Result<TrainingGame, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        match self.read_game() {
            Ok(game) => game.map(Ok),
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// Opens a viriformat file for reading game by game (a regular file only: see
/// [`crate::text::open_regular`]).
pub fn read_games(path: impl AsRef<Path>) -> io::Result<GameReader<BufReader<File>>> {
    let file = crate::text::open_regular(path.as_ref())?;
    Ok(GameReader::new(BufReader::with_capacity(1 << 20, file)))
}

/// Every position of every game of a viriformat stream, in order.
pub struct PositionReader<R> {
    games: GameReader<R>,
    game: Option<TrainingGame>,
    position: Option<Position>,
    next: usize,
}

impl<R: Read> PositionReader<R> {
    /// Positions of the games of `games`.
    pub fn new(games: GameReader<R>) -> PositionReader<R> {
        PositionReader {
            games,
            game: None,
            position: None,
            next: 0,
        }
    }
}

impl<R: Read> Iterator for PositionReader<R> {
    type Item = Result<TrainingPosition, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let (Some(game), Some(position)) = (&self.game, &mut self.position) {
                if let Some(scored) = game.moves.get(self.next) {
                    self.next += 1;
                    let after = position.play(scored.mv);
                    return Some(Ok(TrainingPosition {
                        position: std::mem::replace(position, after),
                        score: scored.score,
                        result: game.result,
                    }));
                }
            }
            match self.games.next()? {
                Ok(game) => {
                    self.position = Some(game.start.clone());
                    self.game = Some(game);
                    self.next = 0;
                }
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

/// Opens a viriformat file for reading position by position (a game's positions in order,
/// each labelled with its score and the game's result).
pub fn read_positions(path: impl AsRef<Path>) -> io::Result<PositionReader<BufReader<File>>> {
    Ok(PositionReader::new(read_games(path)?))
}
