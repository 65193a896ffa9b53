//! A tolerant PGN reader: tag pairs, movetext with move numbers, comments (`{}` and `;`),
//! variations `( )` (skipped), NAGs `$1`, annotation glyphs and results.
//!
//! Reading happens in two steps: [`read_games`] splits the text into [`PgnGame`]s of SAN
//! tokens (syntax only), and [`PgnGame::replay`] plays the tokens on a board, which is
//! where illegal or ambiguous moves are found. Both name the line of the problem.

use std::fmt;

use engine::position::Position;
use engine::types::Move;

use crate::san::parse_san;

/// A move as written in a PGN file, before it is checked on a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnMove {
    /// The SAN token with move number removed (`Nf3`, `exd5+`).
    pub san: String,
    /// The 1-based line it is on.
    pub line: usize,
    /// The comment right after the move, braces removed (several are joined by a space).
    pub comment: Option<String>,
}

/// One game as read from PGN text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PgnGame {
    /// The 1-based line where the game starts.
    pub line: usize,
    /// Tag pairs in file order, values unescaped.
    pub tags: Vec<(String, String)>,
    /// The main line (variations are skipped).
    pub moves: Vec<PgnMove>,
    /// The game termination marker (`1-0`, `0-1`, `1/2-1/2`, `*`), if present.
    pub result: Option<String>,
}

/// A problem in a PGN file: the 1-based line, the offending token and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnError {
    /// 1-based line number.
    pub line: usize,
    /// The token (or the start of it) where reading stopped.
    pub token: String,
    /// What is wrong.
    pub reason: String,
}

impl fmt::Display for PgnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}: {} (at '{}')",
            self.line,
            self.reason,
            crate::quote::Quoted(&self.token)
        )
    }
}

impl std::error::Error for PgnError {}

impl PgnGame {
    /// The value of a tag, if present (first one wins).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Whether the `Variant` tag names Chess960 (`Chess960`, `fischerandom`, `960`, …).
    pub fn is_chess960(&self) -> bool {
        self.tag("Variant").is_some_and(is_chess960_variant)
    }

    /// The start position: `[FEN]` if present, else the standard start; Chess960 if the
    /// `Variant` tag says so or the FEN's castling rights need it.
    pub fn start_position(&self) -> Result<Position, PgnError> {
        if let Some(variant) = self.tag("Variant") {
            let v = variant.trim().to_ascii_lowercase();
            if !(v.is_empty() || v == "standard" || is_chess960_variant(&v)) {
                return Err(PgnError {
                    line: self.line,
                    token: format!("[Variant \"{variant}\"]"),
                    reason: "unsupported variant (only standard chess and Chess960)".into(),
                });
            }
        }
        let mut pos = match self.tag("FEN") {
            Some(fen) => Position::from_fen(fen).map_err(|e| PgnError {
                line: self.line,
                token: format!("[FEN \"{fen}\"]"),
                reason: crate::quote::fen_error(&e),
            })?,
            None => Position::startpos(),
        };
        if self.is_chess960() {
            pos.set_chess960(true);
        }
        Ok(pos)
    }

    /// Plays the first `max_plies` moves (all if `None`) from the start position and
    /// returns the start position with the moves.
    pub fn replay(&self, max_plies: Option<usize>) -> Result<(Position, Vec<Move>), PgnError> {
        let start = self.start_position()?;
        let mut pos = start.clone();
        let take = max_plies.unwrap_or(usize::MAX);
        let mut moves = Vec::with_capacity(self.moves.len().min(take));
        for m in self.moves.iter().take(take) {
            let mv = parse_san(&pos, &m.san).map_err(|e| PgnError {
                line: m.line,
                token: m.san.clone(),
                reason: e.to_string(),
            })?;
            pos.play_mut(mv);
            moves.push(mv);
        }
        Ok((start, moves))
    }
}

fn is_chess960_variant(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "chess960" | "chess 960" | "960" | "fischerandom" | "fischer random" | "frc"
    )
}

/// The characters that end a movetext symbol.
fn ends_symbol(c: char) -> bool {
    c.is_whitespace() || "{}()[];$\"".contains(c)
}

/// A cursor over the text that counts lines.
struct Cursor<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    line: usize,
    at_line_start: bool,
}

impl Cursor<'_> {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        self.at_line_start = c == '\n';
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn peek(&mut self) -> Option<char> {
        self.chars.peek().copied()
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == '\n' {
                break;
            }
        }
    }
}

/// Splits PGN text into games. Never panics; a syntax error names its line.
///
/// ```
/// let games = data::pgn::read_games("[Event \"x\"]\n\n1. e4 {best} e5 (1... c5) 2. Nf3 $1 1-0\n").unwrap();
/// assert_eq!(games.len(), 1);
/// assert_eq!(games[0].moves.len(), 3);
/// assert_eq!(games[0].moves[0].comment.as_deref(), Some("best"));
/// assert_eq!(games[0].result.as_deref(), Some("1-0"));
/// ```
pub fn read_games(text: &str) -> Result<Vec<PgnGame>, PgnError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut cur = Cursor {
        chars: text.chars().peekable(),
        line: 1,
        at_line_start: true,
    };
    let mut games = Vec::new();
    let mut game = PgnGame::default();
    let mut started = false;
    let mut depth = 0usize;
    let finish = |game: &mut PgnGame, started: &mut bool, games: &mut Vec<PgnGame>| {
        if *started && (!game.tags.is_empty() || !game.moves.is_empty() || game.result.is_some()) {
            games.push(std::mem::take(game));
        }
        *game = PgnGame::default();
        *started = false;
    };
    loop {
        let line_start = cur.at_line_start;
        let Some(c) = cur.peek() else { break };
        if c.is_whitespace() {
            cur.next();
            continue;
        }
        if c == '%' && line_start {
            cur.skip_line();
            continue;
        }
        if !started {
            game.line = cur.line;
            started = true;
        }
        match c {
            ';' => cur.skip_line(),
            '{' => {
                let line = cur.line;
                cur.next();
                let mut comment = String::new();
                loop {
                    match cur.next() {
                        Some('}') => break,
                        Some(ch) => comment.push(ch),
                        None => {
                            return Err(PgnError {
                                line,
                                token: "{".into(),
                                reason: "comment is never closed with '}'".into(),
                            })
                        }
                    }
                }
                if depth == 0 {
                    if let Some(last) = game.moves.last_mut() {
                        let comment = comment.split_whitespace().collect::<Vec<_>>().join(" ");
                        match &mut last.comment {
                            Some(c) => {
                                c.push(' ');
                                c.push_str(&comment);
                            }
                            None => last.comment = Some(comment),
                        }
                    }
                }
            }
            '(' => {
                cur.next();
                depth += 1;
            }
            ')' => {
                if depth == 0 {
                    return Err(PgnError {
                        line: cur.line,
                        token: ")".into(),
                        reason: "')' closes a variation that was never opened".into(),
                    });
                }
                cur.next();
                depth -= 1;
            }
            '[' => {
                if depth > 0 {
                    return Err(PgnError {
                        line: cur.line,
                        token: "[".into(),
                        reason: "tag pair inside a variation (a ')' is missing)".into(),
                    });
                }
                if !game.moves.is_empty() || game.result.is_some() {
                    finish(&mut game, &mut started, &mut games);
                    game.line = cur.line;
                    started = true;
                }
                let tag = read_tag(&mut cur)?;
                game.tags.push(tag);
            }
            '$' => {
                cur.next();
                while cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                    cur.next();
                }
            }
            '}' | ']' | '"' => {
                return Err(PgnError {
                    line: cur.line,
                    token: c.to_string(),
                    reason: format!("unexpected '{}'", crate::quote::Quoted(&c.to_string())),
                });
            }
            _ => {
                let line = cur.line;
                let mut sym = String::new();
                while let Some(ch) = cur.peek() {
                    if ends_symbol(ch) {
                        break;
                    }
                    sym.push(ch);
                    cur.next();
                }
                if depth > 0 {
                    continue;
                }
                match sym.as_str() {
                    "1-0" | "0-1" | "1/2-1/2" | "*" => {
                        game.result = Some(sym);
                        finish(&mut game, &mut started, &mut games);
                        continue;
                    }
                    _ => {}
                }
                let san = strip_move_number(&sym);
                if san.is_empty() || san.chars().all(|c| "!?".contains(c)) {
                    continue;
                }
                if san == "--" || san == "Z0" || san == "0000" {
                    return Err(PgnError {
                        line,
                        token: sym.clone(),
                        reason: "null moves are not supported".into(),
                    });
                }
                game.moves.push(PgnMove {
                    san: san.to_string(),
                    line,
                    comment: None,
                });
            }
        }
    }
    if depth > 0 {
        return Err(PgnError {
            line: cur.line,
            token: "(".into(),
            reason: "a variation is never closed with ')'".into(),
        });
    }
    finish(&mut game, &mut started, &mut games);
    Ok(games)
}

/// `12.e4` → `e4`, `12...` → ``, `e4` → `e4`.
fn strip_move_number(sym: &str) -> &str {
    let digits = sym.len() - sym.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &sym[digits..];
    if digits > 0 && rest.starts_with('.') {
        rest.trim_start_matches('.')
    } else if digits > 0 && rest.is_empty() {
        ""
    } else {
        sym.trim_start_matches('.')
    }
}

/// Reads `[Name "value"]` with `\"` and `\\` escapes.
fn read_tag(cur: &mut Cursor<'_>) -> Result<(String, String), PgnError> {
    let line = cur.line;
    let err = |token: &str, reason: &str| PgnError {
        line,
        token: token.to_string(),
        reason: reason.to_string(),
    };
    cur.next(); // '['
    while cur.peek().is_some_and(|c| c == ' ' || c == '\t') {
        cur.next();
    }
    let mut name = String::new();
    while let Some(c) = cur.peek() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
            cur.next();
        } else {
            break;
        }
    }
    if name.is_empty() {
        return Err(err(
            "[",
            "tag pair without a name (expected [Name \"value\"])",
        ));
    }
    while cur.peek().is_some_and(|c| c == ' ' || c == '\t') {
        cur.next();
    }
    if cur.next() != Some('"') {
        return Err(err(
            &format!("[{name}"),
            "tag value must be in double quotes (expected [Name \"value\"])",
        ));
    }
    let mut value = String::new();
    loop {
        match cur.next() {
            Some('\\') => match cur.next() {
                Some(c) => value.push(c),
                None => break,
            },
            Some('"') => {
                while cur.peek().is_some_and(|c| c == ' ' || c == '\t') {
                    cur.next();
                }
                if cur.next() == Some(']') {
                    return Ok((name, value));
                }
                return Err(err(
                    &format!("[{name} \"{value}\""),
                    "tag pair is not closed by ']'",
                ));
            }
            Some('\n') | None => break,
            Some(c) => value.push(c),
        }
    }
    Err(err(
        &format!("[{name} \"{value}"),
        "tag value has no closing quote on its line",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_tags_comments_variations_and_results() {
        let text = "\u{feff}[Event \"a \\\"quoted\\\" name\"]\n[FEN \"4k3/8/8/8/8/8/8/4K2R w K - 0 1\"]\n\
                    [SetUp \"1\"]\n\n1. O-O! {castles\n  early} Kd7 (1... Ke7 2. Rf1 (2. Kh1)) $14\n\
                    2.Rf2 ; rest of line\n% escaped line\nKe6 *\n\n[Event \"b\"]\n1. e4 e5\n[Event \"c\"]\n1. d4 1/2-1/2";
        let games = read_games(text).unwrap();
        assert_eq!(games.len(), 3);
        let g = &games[0];
        assert_eq!(g.line, 1);
        assert_eq!(g.tag("Event"), Some("a \"quoted\" name"));
        let sans: Vec<&str> = g.moves.iter().map(|m| m.san.as_str()).collect();
        assert_eq!(sans, ["O-O!", "Kd7", "Rf2", "Ke6"]);
        assert_eq!(g.moves[0].comment.as_deref(), Some("castles early"));
        assert_eq!(g.moves[2].line, 7);
        assert_eq!(g.result.as_deref(), Some("*"));
        let (start, moves) = g.replay(None).unwrap();
        assert_eq!(start.to_fen(), "4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert_eq!(moves.len(), 4);
        assert_eq!(g.replay(Some(1)).unwrap().1.len(), 1);
        assert_eq!(games[1].moves.len(), 2);
        assert_eq!(games[1].result, None);
        assert_eq!(games[2].line, 13);
        assert_eq!(games[2].result.as_deref(), Some("1/2-1/2"));
    }

    #[test]
    fn errors_name_the_line_and_token() {
        let e = read_games("1. e4 {never closed\n\n").unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (1, "{"));
        let e = read_games("1. e4 e5\n2. Nf3 )").unwrap_err();
        assert_eq!(e.line, 2);
        let e = read_games("[Event x]\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = read_games("1. e4 (e5").unwrap_err();
        assert!(e.reason.contains("never closed"));
        let games = read_games("1. e4 e5\n2. Ke3 Nc6 *").unwrap();
        let e = games[0].replay(None).unwrap_err();
        assert_eq!((e.line, e.token.as_str()), (2, "Ke3"));
        let games = read_games("[Variant \"Crazyhouse\"]\n1. e4 *").unwrap();
        assert!(games[0].replay(None).is_err());
    }

    #[test]
    fn move_numbers() {
        assert_eq!(strip_move_number("12.e4"), "e4");
        assert_eq!(strip_move_number("12..."), "");
        assert_eq!(strip_move_number("3"), "");
        assert_eq!(strip_move_number("e4"), "e4");
        assert_eq!(strip_move_number("0-0"), "0-0");
        assert_eq!(strip_move_number("..."), "");
    }
}
