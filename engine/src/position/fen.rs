//! FEN reading and writing, with X-FEN (`KQkq` meaning the outermost rooks) and
//! Shredder-FEN (`HFhf`, rook files) castling fields for Chess960.

use std::fmt;

use super::{outermost_rook, zobrist, Position};
use crate::attacks::pawn_attacks;
use crate::types::{Bitboard, CastleSide, Color, File, Piece, PieceType, Rank, Square};

/// Why a FEN was refused: the field (1-based, as in the FEN standard) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenError {
    /// Which field: `placement`, `side to move`, `castling`, `en passant`, `halfmove clock`,
    /// `fullmove number`, or `position` for whole-board problems.
    pub field: &'static str,
    /// What is wrong and what is expected.
    pub reason: String,
}

impl FenError {
    fn new(field: &'static str, reason: impl Into<String>) -> FenError {
        FenError {
            field,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for FenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad FEN {}: {}", self.field, self.reason)
    }
}

impl std::error::Error for FenError {}

impl Position {
    /// Parses a FEN (4 to 6 fields; missing move counters default to `0 1`).
    ///
    /// Accepts positions that are legal to set up for move generation, even if unreachable
    /// in a game; rejects what would break it: a missing or extra king, pawns on the first or
    /// last rank, the side not to move in check, castling rights without their rook, and an
    /// en-passant square with no pawn that could just have moved there. Also rejects
    /// material no game can have: more than 16 pieces or 8 pawns of one colour, or more
    /// promoted pieces (queens beyond 1, rooks, bishops and knights beyond 2) than missing
    /// pawns.
    ///
    /// ```
    /// use engine::position::Position;
    /// let pos = Position::from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").unwrap();
    /// assert_eq!(pos.to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
    /// assert!(Position::from_fen("4k3/8/8/8/8/8/8/4K2R x K - 0 1").is_err());
    /// ```
    pub fn from_fen(fen: &str) -> Result<Position, FenError> {
        let fields: Vec<&str> = fen.split_whitespace().collect();
        if fields.len() < 4 || fields.len() > 6 {
            return Err(FenError::new(
                "position",
                format!(
                    "expected 4 to 6 space-separated fields, found {}",
                    fields.len()
                ),
            ));
        }
        let mut pos = Position::empty();
        parse_placement(&mut pos, fields[0])?;

        pos.side = match fields[1] {
            "w" => Color::White,
            "b" => Color::Black,
            other => {
                return Err(FenError::new(
                    "side to move",
                    format!("expected 'w' or 'b', found '{other}'"),
                ))
            }
        };
        if pos.side == Color::Black {
            pos.key ^= zobrist::KEYS.side;
        }

        for color in Color::ALL {
            let kings = pos.colored(color, PieceType::King).count();
            if kings != 1 {
                let name = if color == Color::White {
                    "White"
                } else {
                    "Black"
                };
                return Err(FenError::new(
                    "placement",
                    format!("{name} has {kings} kings, expected exactly 1"),
                ));
            }
        }
        check_material(&pos)?;
        if (pos.pieces(PieceType::Pawn) & (Bitboard::RANK_1 | Bitboard::RANK_8)).any() {
            return Err(FenError::new(
                "placement",
                "pawns on the first or eighth rank",
            ));
        }
        let them = !pos.side;
        if pos.is_attacked(pos.king(them), pos.side, pos.occupied()) {
            return Err(FenError::new(
                "position",
                "the side not to move is in check",
            ));
        }

        parse_castling(&mut pos, fields[2])?;
        parse_en_passant(&mut pos, fields[3])?;

        if let Some(h) = fields.get(4) {
            pos.halfmove = h.parse().map_err(|_| {
                FenError::new("halfmove clock", format!("expected a number, found '{h}'"))
            })?;
        }
        if let Some(f) = fields.get(5) {
            pos.fullmove = f
                .parse::<u16>()
                .map_err(|_| {
                    FenError::new("fullmove number", format!("expected a number, found '{f}'"))
                })?
                .max(1);
        }
        pos.key ^= zobrist::castling(&pos.castling);
        pos.update_check_info();
        Ok(pos)
    }

    /// The FEN. Castling is written `KQkq` where the rook is the outermost one on its side
    /// (X-FEN), otherwise as the rook's file (`HFhf` style).
    pub fn to_fen(&self) -> String {
        let mut s = String::with_capacity(90);
        for rank in Rank::ALL.iter().rev() {
            let mut empty = 0;
            for file in File::ALL {
                match self.board[Square::new(file, *rank)] {
                    Some(p) => {
                        if empty > 0 {
                            s.push(char::from(b'0' + empty));
                            empty = 0;
                        }
                        s.push(p.char());
                    }
                    None => empty += 1,
                }
            }
            if empty > 0 {
                s.push(char::from(b'0' + empty));
            }
            if *rank != Rank::First {
                s.push('/');
            }
        }
        s.push(' ');
        s.push(self.side.fen_char());
        s.push(' ');
        let before = s.len();
        for color in Color::ALL {
            for side in CastleSide::ALL {
                if let Some(file) = self.castling.rook(color, side) {
                    let c = if outermost_rook(self, color, side) == Some(file) {
                        if side == CastleSide::King {
                            'k'
                        } else {
                            'q'
                        }
                    } else {
                        file.char()
                    };
                    s.push(if color == Color::White {
                        c.to_ascii_uppercase()
                    } else {
                        c
                    });
                }
            }
        }
        if s.len() == before {
            s.push('-');
        }
        s.push(' ');
        match self.en_passant {
            Some(sq) => s.push_str(&sq.to_string()),
            None => s.push('-'),
        }
        s.push_str(&format!(" {} {}", self.halfmove, self.fullmove));
        s
    }
}

/// Refuses material that no sequence of moves can produce: per colour at most 16 pieces, at
/// most 8 pawns, and no more pieces beyond the starting set (which need a promotion each)
/// than pawns missing.
fn check_material(pos: &Position) -> Result<(), FenError> {
    for color in Color::ALL {
        let name = if color == Color::White {
            "White"
        } else {
            "Black"
        };
        let count = |pt| pos.colored(color, pt).count();
        let total = pos.color(color).count();
        if total > 16 {
            return Err(FenError::new(
                "placement",
                format!("{name} has {total} pieces, at most 16 are possible"),
            ));
        }
        let pawns = count(PieceType::Pawn);
        if pawns > 8 {
            return Err(FenError::new(
                "placement",
                format!("{name} has {pawns} pawns, at most 8 are possible"),
            ));
        }
        let promoted = count(PieceType::Queen).saturating_sub(1)
            + count(PieceType::Rook).saturating_sub(2)
            + count(PieceType::Bishop).saturating_sub(2)
            + count(PieceType::Knight).saturating_sub(2);
        if pawns + promoted > 8 {
            return Err(FenError::new(
                "placement",
                format!(
                    "{name} has {pawns} pawns and {promoted} promoted pieces, but each promotion \
                     uses up a pawn (at most 8 together)"
                ),
            ));
        }
    }
    Ok(())
}

fn parse_placement(pos: &mut Position, field: &str) -> Result<(), FenError> {
    let ranks: Vec<&str> = field.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::new(
            "placement",
            format!("expected 8 ranks separated by '/', found {}", ranks.len()),
        ));
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = Rank::from_index(7 - i);
        let mut file = 0usize;
        for c in text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return Err(FenError::new(
                        "placement",
                        format!("bad empty-square count '{c}' on rank {}", rank.char()),
                    ));
                }
                file += d as usize;
            } else if let Some(piece) = Piece::from_char(c) {
                if file >= 8 {
                    return Err(FenError::new(
                        "placement",
                        format!("rank {} has more than 8 squares", rank.char()),
                    ));
                }
                pos.put(piece, Square::new(File::from_index(file), rank));
                file += 1;
            } else {
                return Err(FenError::new(
                    "placement",
                    format!("unknown piece letter '{c}'"),
                ));
            }
        }
        if file != 8 {
            return Err(FenError::new(
                "placement",
                format!("rank {} has {file} squares, expected 8", rank.char()),
            ));
        }
    }
    Ok(())
}

fn parse_castling(pos: &mut Position, field: &str) -> Result<(), FenError> {
    if field == "-" {
        return Ok(());
    }
    for c in field.chars() {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let back = Rank::First.relative_to(color);
        let king = pos.king(color);
        if king.rank() != back {
            return Err(FenError::new(
                "castling",
                format!("'{c}' given but the king is not on its first rank"),
            ));
        }
        let (side, file) = match c.to_ascii_lowercase() {
            'k' => (
                CastleSide::King,
                outermost_rook(pos, color, CastleSide::King),
            ),
            'q' => (
                CastleSide::Queen,
                outermost_rook(pos, color, CastleSide::Queen),
            ),
            l @ 'a'..='h' => {
                let file = File::from_char(l).expect("a to h");
                let side = if file > king.file() {
                    CastleSide::King
                } else {
                    CastleSide::Queen
                };
                (side, Some(file))
            }
            _ => {
                return Err(FenError::new(
                    "castling",
                    format!("unknown letter '{c}' (use KQkq, Shredder files like HFhf, or '-')"),
                ))
            }
        };
        let file = file
            .filter(|f| {
                pos.board[Square::new(*f, back)] == Some(Piece::new(color, PieceType::Rook))
            })
            .ok_or_else(|| {
                FenError::new(
                    "castling",
                    format!("'{c}' given but there is no rook to castle with"),
                )
            })?;
        if pos.castling.rook(color, side).is_some() {
            return Err(FenError::new(
                "castling",
                format!("'{c}' repeats a right already given"),
            ));
        }
        pos.castling.set(color, side, Some(file));
        if king.file() != File::E || (file != File::A && file != File::H) {
            pos.chess960 = true;
        }
    }
    Ok(())
}

fn parse_en_passant(pos: &mut Position, field: &str) -> Result<(), FenError> {
    if field == "-" {
        return Ok(());
    }
    let sq: Square = field.parse().map_err(|_| {
        FenError::new(
            "en passant",
            format!("expected a square like e3 or '-', found '{field}'"),
        )
    })?;
    let us = pos.side;
    if sq.rank() != Rank::Sixth.relative_to(us) {
        return Err(FenError::new(
            "en passant",
            format!("{sq} is not on the rank a pawn skips with the side to move"),
        ));
    }
    let pushed = Square::new(sq.file(), Rank::Fifth.relative_to(us));
    let origin = Square::new(sq.file(), Rank::Seventh.relative_to(us));
    if pos.board[pushed] != Some(Piece::new(!us, PieceType::Pawn))
        || pos.board[sq].is_some()
        || pos.board[origin].is_some()
    {
        return Err(FenError::new(
            "en passant",
            format!("{sq} given but no pawn can just have moved past it"),
        ));
    }
    // Keep it only when a capture is possible, so equal positions have equal keys.
    if (pawn_attacks(!us, sq) & pos.colored(us, PieceType::Pawn)).any() {
        pos.set_en_passant(Some(sq));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        for fen in [
            super::super::STARTPOS_FEN,
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "8/8/8/8/8/8/6k1/4K2R b K - 12 40",
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9",
            "2nnrbkr/p1qppppp/8/1ppb4/6PP/3PP3/PPP2P2/BQNNRBKR w KQkq - 1 9",
            "rr2k2r/8/8/8/8/8/8/RR2K2R w KBkb - 0 1",
        ] {
            let pos = Position::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
            assert_eq!(pos.to_fen(), fen);
            assert_eq!(pos.key(), pos.compute_key());
        }
    }

    #[test]
    fn shredder_and_xfen_agree() {
        let shredder =
            Position::from_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9")
                .unwrap();
        let xfen =
            Position::from_fen("bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9")
                .unwrap();
        assert_eq!(shredder, xfen);
        assert!(shredder.is_chess960());
        assert!(!Position::startpos().is_chess960());
    }

    #[test]
    fn useless_en_passant_square_is_dropped() {
        let pos = Position::from_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1")
            .unwrap();
        assert_eq!(pos.en_passant(), None);
        assert_eq!(
            pos.to_fen(),
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
        );
    }

    #[test]
    fn missing_counters_default() {
        let pos = Position::from_fen("4k3/8/8/8/8/8/8/4K3 w - -").unwrap();
        assert_eq!(pos.to_fen(), "4k3/8/8/8/8/8/8/4K3 w - - 0 1");
    }

    #[test]
    fn material_limits_name_the_colour_and_count() {
        let e = Position::from_fen("rnbqkbnr/pppppppp/8/8/8/7N/PPPPPPPP/RNBQKBNR w KQkq - 0 1")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad FEN placement: White has 17 pieces, at most 16 are possible"
        );
        // Promotions that match the missing pawns are fine: 7 queens and no pawns, and
        // 7 pawns with a second queen.
        assert!(Position::from_fen("4k3/8/8/8/8/8/8/QQQQKQQQ w - - 0 1").is_ok());
        assert!(Position::from_fen("4k3/8/8/8/8/8/PPPPPPP1/3QK2Q w - - 0 1").is_ok());
    }

    #[test]
    fn unreachable_but_settable_positions_are_accepted() {
        // standard.epd line 51: two bishops check along one diagonal.
        assert!(Position::from_fen("B6b/8/8/8/2K5/5k2/8/b6B b - - 0 1").is_ok());
    }

    #[test]
    fn bad_fens_name_the_field() {
        let cases = [
            ("", "position"),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1",
                "placement",
            ),
            (
                "rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "placement",
            ),
            (
                "rnbqkbnr/ppppxppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "placement",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNRR w KQkq - 0 1",
                "placement",
            ),
            (
                "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1",
                "placement",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w KQkq - 0 1",
                "placement",
            ),
            (
                "rnbqkbnP/pppppppp/8/8/8/8/PPPPPPP1/RNBQKBNR w KQkq - 0 1",
                "placement",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
                "side to move",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1",
                "castling",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkx - 0 1",
                "castling",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKkq - 0 1",
                "castling",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e4 0 1",
                "en passant",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1",
                "en passant",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq zz 0 1",
                "en passant",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1",
                "halfmove clock",
            ),
            (
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 y",
                "fullmove number",
            ),
            ("4k2R/8/8/8/8/8/8/4K3 w - - 0 1", "position"),
            // 17 white pieces.
            (
                "rnbqkbnr/pppppppp/8/8/8/7N/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                "placement",
            ),
            // 9 white pawns.
            ("4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", "placement"),
            // 8 pawns and a second queen (15 pieces, but the queen needs a promotion).
            ("4k3/8/8/8/8/8/PPPPPPPP/3QK2Q w - - 0 1", "placement"),
            // 7 pawns and three knights and two extra queens: two promotions too many.
            ("4k3/8/8/8/8/8/PPPPPPP1/NNNQKQQ1 w - - 0 1", "placement"),
            // The same for Black.
            ("rnbqkbnr/pppppppp/n7/8/8/8/8/4K3 b kq - 0 1", "placement"),
        ];
        for (fen, field) in cases {
            match Position::from_fen(fen) {
                Ok(_) => panic!("accepted bad FEN {fen:?}"),
                Err(e) => assert_eq!(e.field, field, "{fen}: {e}"),
            }
        }
    }
}
