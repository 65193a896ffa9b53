//! Standard Algebraic Notation (SAN): writing moves as `Nbd7`, `exd6`, `e8=Q+`, `O-O#`,
//! and reading them back, leniently.
//!
//! Castling is written `O-O` / `O-O-O` in standard chess and in Chess960 alike (the king
//! side is the side of the castling rook). Reading accepts what people and programs write:
//! `0-0`, trailing `+`/`#`/`!`/`?` annotations, promotions with or without `=`
//! (`e8=Q`, `e8Q`, `e8q`), long algebraic (`Ng1f3`, `e2-e4`) and plain UCI (`e2e4`,
//! `e1g1`, king-takes-rook `e1h1`).

use std::fmt;

use crate::quote::Quoted;
use engine::position::Position;
use engine::types::{File, Move, PieceType, Rank, Square};

/// Why a SAN move could not be read in a position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SanError {
    /// The text is not a move at all (`Xz9`, empty, …).
    Syntax {
        /// The text as given.
        text: String,
    },
    /// The text is well formed but no legal move matches it.
    Illegal {
        /// The text as given.
        text: String,
        /// The position's FEN.
        fen: String,
    },
    /// Several legal moves match (`Nd2` when both knights can go there).
    Ambiguous {
        /// The text as given.
        text: String,
        /// The matching moves in UCI notation.
        candidates: Vec<String>,
    },
}

impl fmt::Display for SanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SanError::Syntax { text } => write!(
                f,
                "'{}' is not a move (expected SAN like Nf3, exd5, e8=Q, O-O or UCI like e2e4)",
                Quoted(text)
            ),
            SanError::Illegal { text, fen } => {
                write!(
                    f,
                    "'{}' is not a legal move in {}",
                    Quoted(text),
                    Quoted(fen)
                )
            }
            SanError::Ambiguous { text, candidates } => write!(
                f,
                "'{}' is ambiguous: it matches {} (add the origin file or rank)",
                Quoted(text),
                candidates.join(", ")
            ),
        }
    }
}

impl std::error::Error for SanError {}

/// Upper-case SAN letter of a piece (`N B R Q K`; pawns have none).
fn piece_letter(kind: PieceType) -> char {
    kind.char().to_ascii_uppercase()
}

/// Writes `mv` (which must be legal in `pos`) in SAN, with `+` or `#` when it checks or mates.
///
/// ```
/// use engine::position::Position;
/// use data::san::to_san;
/// let pos = Position::startpos();
/// let mv = pos.parse_uci_move("g1f3").unwrap();
/// assert_eq!(to_san(&pos, mv), "Nf3");
/// ```
pub fn to_san(pos: &Position, mv: Move) -> String {
    let mut san = to_san_without_suffix(pos, mv);
    let after = pos.play(mv);
    if after.in_check() {
        san.push(if after.has_legal_move() { '+' } else { '#' });
    }
    san
}

/// SAN without the check or mate suffix.
fn to_san_without_suffix(pos: &Position, mv: Move) -> String {
    if mv.is_castle() {
        return if mv.to().file() > mv.from().file() {
            "O-O".to_string()
        } else {
            "O-O-O".to_string()
        };
    }
    let kind = pos.moved(mv);
    let mut san = String::with_capacity(8);
    if kind == PieceType::Pawn {
        if mv.is_capture() {
            san.push(mv.from().file().char());
        }
    } else {
        san.push(piece_letter(kind));
        let rivals: Vec<Square> = pos
            .legal_moves()
            .iter()
            .filter(|m| {
                !m.is_castle()
                    && m.to() == mv.to()
                    && m.from() != mv.from()
                    && pos.moved(**m) == kind
            })
            .map(|m| m.from())
            .collect();
        if !rivals.is_empty() {
            let file_unique = rivals.iter().all(|s| s.file() != mv.from().file());
            let rank_unique = rivals.iter().all(|s| s.rank() != mv.from().rank());
            if file_unique {
                san.push(mv.from().file().char());
            } else if rank_unique {
                san.push(mv.from().rank().char());
            } else {
                san.push_str(&mv.from().to_string());
            }
        }
    }
    if mv.is_capture() {
        san.push('x');
    }
    san.push_str(&mv.to().to_string());
    if let Some(p) = mv.promotion() {
        san.push('=');
        san.push(piece_letter(p));
    }
    san
}

/// What a SAN token asks for.
#[derive(Debug, Default)]
struct Pattern {
    kind: Option<PieceType>,
    from_file: Option<File>,
    from_rank: Option<Rank>,
    to: Option<Square>,
    promotion: Option<PieceType>,
}

/// Removes annotation suffixes (`+ # ! ?`) and surrounding whitespace.
fn strip_annotations(text: &str) -> &str {
    text.trim()
        .trim_end_matches(['+', '#', '!', '?'])
        .trim_end_matches("e.p.")
        .trim_end()
}

/// Parses the body of a non-castling SAN move into a [`Pattern`].
fn parse_pattern(body: &str) -> Option<Pattern> {
    let chars: Vec<char> = body.chars().filter(|c| *c != 'x' && *c != '-').collect();
    let mut pat = Pattern::default();
    let mut rest: &[char] = &chars;
    if let Some(&c) = rest.first() {
        if "NBRQK".contains(c) {
            pat.kind = PieceType::from_char(c);
            rest = &rest[1..];
        } else if c == 'P' {
            pat.kind = Some(PieceType::Pawn);
            rest = &rest[1..];
        }
    }
    // Promotion suffix: `=Q`, `Q`, `q` after the destination.
    if let Some(&last) = rest.last() {
        if "NBRQnbrq".contains(last) {
            pat.promotion = PieceType::from_char(last);
            rest = &rest[..rest.len() - 1];
            if rest.last() == Some(&'=') {
                rest = &rest[..rest.len() - 1];
            }
        }
    }
    if rest.len() < 2 {
        return None;
    }
    let (origin, dest) = rest.split_at(rest.len() - 2);
    let file = File::from_char(dest[0])?;
    let rank = Rank::from_char(dest[1])?;
    pat.to = Some(Square::new(file, rank));
    match origin {
        [] => {}
        [c] => {
            if let Some(f) = File::from_char(*c) {
                pat.from_file = Some(f);
            } else {
                pat.from_rank = Some(Rank::from_char(*c)?);
            }
        }
        [f, r] => {
            pat.from_file = Some(File::from_char(*f)?);
            pat.from_rank = Some(Rank::from_char(*r)?);
        }
        _ => return None,
    }
    Some(pat)
}

/// Reads a move in SAN (or UCI) and returns the legal move it names.
///
/// ```
/// use engine::position::Position;
/// use data::san::parse_san;
/// let pos = Position::startpos();
/// assert_eq!(parse_san(&pos, "Nf3!?").unwrap().to_uci(false), "g1f3");
/// assert_eq!(parse_san(&pos, "e2e4").unwrap().to_uci(false), "e2e4");
/// assert!(parse_san(&pos, "Ke2").is_err());
/// ```
pub fn parse_san(pos: &Position, text: &str) -> Result<Move, SanError> {
    let body = strip_annotations(text);
    let legal = pos.legal_moves();
    let illegal = || SanError::Illegal {
        text: text.to_string(),
        fen: pos.to_fen(),
    };
    let castle = match body {
        "O-O" | "0-0" | "o-o" => Some(true),
        "O-O-O" | "0-0-0" | "o-o-o" => Some(false),
        _ => None,
    };
    if let Some(king_side) = castle {
        return legal
            .iter()
            .copied()
            .find(|m| m.is_castle() && (m.to().file() > m.from().file()) == king_side)
            .ok_or_else(illegal);
    }
    if body.is_empty() || !body.is_ascii() {
        return Err(SanError::Syntax {
            text: text.to_string(),
        });
    }
    let Some(pat) = parse_pattern(body) else {
        return match pos.parse_uci_move(&body.to_ascii_lowercase()) {
            Some(m) => Ok(m),
            None => Err(SanError::Syntax {
                text: text.to_string(),
            }),
        };
    };
    let kind = pat.kind.unwrap_or(PieceType::Pawn);
    let matches: Vec<Move> = legal
        .iter()
        .copied()
        .filter(|m| {
            !m.is_castle()
                && Some(m.to()) == pat.to
                && pos.moved(*m) == kind
                && m.promotion() == pat.promotion
                && !matches!(pat.from_file, Some(f) if f != m.from().file())
                && !matches!(pat.from_rank, Some(r) if r != m.from().rank())
        })
        .collect();
    match matches.as_slice() {
        [m] => Ok(*m),
        [] => pos
            .parse_uci_move(&body.to_ascii_lowercase())
            .ok_or_else(illegal),
        many => Err(SanError::Ambiguous {
            text: text.to_string(),
            candidates: many.iter().map(|m| m.to_uci(pos.is_chess960())).collect(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn san_of(fen: &str, uci: &str) -> String {
        let pos = Position::from_fen(fen).unwrap();
        let mv = pos.parse_uci_move(uci).unwrap();
        let san = to_san(&pos, mv);
        assert_eq!(parse_san(&pos, &san), Ok(mv), "{san} reads back");
        san
    }

    #[test]
    fn writes_common_moves() {
        let start = engine::position::STARTPOS_FEN;
        assert_eq!(san_of(start, "e2e4"), "e4");
        assert_eq!(san_of(start, "b1c3"), "Nc3");
        let fen = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        assert_eq!(san_of(fen, "e1g1"), "O-O");
        assert_eq!(san_of(fen, "e1c1"), "O-O-O");
        assert_eq!(san_of(fen, "d5e6"), "dxe6");
        assert_eq!(san_of(fen, "e5f7"), "Nxf7");
    }

    #[test]
    fn disambiguates() {
        // Two rooks on the first rank, two knights on the same file, three queens.
        let fen = "6k1/8/8/1N6/8/1N6/4K3/R6R w - - 0 1";
        assert_eq!(san_of(fen, "a1d1"), "Rad1");
        assert_eq!(san_of(fen, "b3d4"), "N3d4");
        let fen = "8/7k/8/8/8/Q1Q5/8/Q3K3 w - - 0 1";
        assert_eq!(san_of(fen, "a3b2"), "Qa3b2");
        assert_eq!(san_of(fen, "c3b2"), "Qcb2");
    }

    #[test]
    fn promotions_checks_and_mates() {
        let fen = "7k/4P3/8/8/8/8/8/K7 w - - 0 1";
        assert_eq!(san_of(fen, "e7e8q"), "e8=Q+");
        assert_eq!(san_of(fen, "e7e8n"), "e8=N");
        let mate = "6k1/5ppp/8/8/8/8/8/K3R3 w - - 0 1";
        assert_eq!(san_of(mate, "e1e8"), "Re8#");
        let ep = "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1";
        assert_eq!(san_of(ep, "e5d6"), "exd6");
    }

    #[test]
    fn chess960_castling() {
        let fen = "1k6/8/8/8/8/8/8/RK2R3 w KQ - 0 1";
        let pos = Position::from_fen(fen).unwrap();
        assert!(pos.is_chess960());
        assert_eq!(san_of(fen, "b1e1"), "O-O");
        assert_eq!(san_of(fen, "b1a1"), "O-O-O");
    }

    #[test]
    fn reads_leniently() {
        let pos = Position::from_fen("7k/4P3/8/8/8/8/8/K7 w - - 0 1").unwrap();
        let q = pos.parse_uci_move("e7e8q").unwrap();
        for text in ["e8=Q", "e8Q", "e8q", "e8=Q+", "e7e8q", "e7-e8=Q", " e8=Q! "] {
            assert_eq!(parse_san(&pos, text), Ok(q), "{text}");
        }
        assert!(matches!(
            parse_san(&pos, "e8"),
            Err(SanError::Illegal { .. })
        ));
        let start = Position::startpos();
        assert!(matches!(
            parse_san(&start, ""),
            Err(SanError::Syntax { .. })
        ));
        assert!(matches!(
            parse_san(&start, "Zz9"),
            Err(SanError::Syntax { .. })
        ));
        assert!(matches!(
            parse_san(&start, "é"),
            Err(SanError::Syntax { .. })
        ));
        assert!(matches!(
            parse_san(&start, "O-O"),
            Err(SanError::Illegal { .. })
        ));
        let nf3 = start.parse_uci_move("g1f3").unwrap();
        assert_eq!(parse_san(&start, "Ng1f3"), Ok(nf3));
        let castle = Position::from_fen("4k3/8/8/8/8/8/8/4K2R w K - 0 1").unwrap();
        let oo = parse_san(&castle, "0-0").unwrap();
        assert!(oo.is_castle());
        assert_eq!(parse_san(&castle, "e1g1"), Ok(oo));
        assert_eq!(parse_san(&castle, "e1h1"), Ok(oo));
        let two = Position::from_fen("k7/8/8/1N6/8/1N6/8/4K3 w - - 0 1").unwrap();
        assert!(matches!(
            parse_san(&two, "Nd4"),
            Err(SanError::Ambiguous { .. })
        ));
    }
}
