//! Writing finished games as PGN, fastchess style, appended one whole game at a time.
//!
//! Tags: the seven-tag roster (`Event Site Date Round White Black Result`), then
//! `SetUp`/`FEN` when the game does not start from the standard position (always for
//! Chess960), `Variant "Chess960"`, `Opening`, `TimeControl`, `PlyCount`, `Termination`
//! and any extra tags. Movetext is SAN with move numbers, wrapped at 80 columns, and each
//! engine move carries a comment in the fastchess format:
//!
//! ```text
//! {+0.31/12 0.120s, n=15321}      score/depth time, nodes
//! {-M3/20 0.005s, n=801}          mate in 3 moves for the opponent of the mover
//! {book}                          a move from the opening book
//! ```
//!
//! Scores are from the point of view of the side that made the move, in pawns with two
//! decimals (`+0.31`) or as `+Mn`/`-Mn` for mates (n in moves, as UCI `score mate`). The
//! last move's comment ends with the reason the game ended (`, White mates`).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use engine::position::{Position, STARTPOS_FEN};
use engine::search::Score;
use engine::types::{Color, GameResult, Move};

use crate::san::to_san;

/// The longest line the movetext writer produces (unless one word is longer).
pub const LINE_LENGTH: usize = 80;

/// The PGN result text of a game, for the `Result` tag and the termination marker: the
/// result's [`GameResult::pgn`] text, or `*` for an unfinished or unknown game (`None`).
///
/// ```
/// use data::pgn::result_text;
/// use engine::types::GameResult;
/// assert_eq!(result_text(Some(GameResult::Draw)), "1/2-1/2");
/// assert_eq!(result_text(None), "*");
/// ```
pub const fn result_text(result: Option<GameResult>) -> &'static str {
    match result {
        Some(result) => result.pgn(),
        None => "*",
    }
}

/// A score as the move comments write it, from the mover's point of view: pawns with two
/// decimals or mate in moves (`+0.31`, `-1.05`, `+0.00`, `+M3`, `-M2`).
///
/// ```
/// use data::pgn::score_text;
/// use engine::search::Score;
/// assert_eq!(score_text(Score::Cp(-105)), "-1.05");
/// assert_eq!(score_text(Score::Mate(3)), "+M3");
/// ```
pub fn score_text(score: Score) -> String {
    match score {
        Score::Cp(cp) => {
            let sign = if cp < 0 { '-' } else { '+' };
            let abs = cp.unsigned_abs();
            format!("{sign}{}.{:02}", abs / 100, abs % 100)
        }
        Score::Mate(n) => {
            let sign = if n < 0 { '-' } else { '+' };
            format!("{sign}M{}", n.unsigned_abs())
        }
    }
}

/// What an engine reported about the move it played.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MoveInfo {
    /// The final score of the search, from the mover's point of view.
    pub score: Score,
    /// The depth reached.
    pub depth: u32,
    /// The nodes searched.
    pub nodes: u64,
    /// The time the move took, in milliseconds.
    pub time_ms: u64,
}

impl MoveInfo {
    /// The comment text: `+0.31/12 0.120s, n=15321`.
    pub fn comment(&self) -> String {
        format!(
            "{}/{} {}.{:03}s, n={}",
            score_text(self.score),
            self.depth,
            self.time_ms / 1000,
            self.time_ms % 1000,
            self.nodes
        )
    }
}

/// One move of a game with what is known about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MoveRecord {
    /// The move (legal in the position it was played in).
    pub mv: Move,
    /// Whether it came from the opening book (commented `{book}`).
    pub book: bool,
    /// The engine's report, if any.
    pub info: Option<MoveInfo>,
}

impl MoveRecord {
    /// A book move.
    pub const fn book(mv: Move) -> MoveRecord {
        MoveRecord {
            mv,
            book: true,
            info: None,
        }
    }

    /// An engine move with its report.
    pub const fn engine(mv: Move, info: Option<MoveInfo>) -> MoveRecord {
        MoveRecord {
            mv,
            book: false,
            info,
        }
    }
}

/// A finished game, everything the PGN writer needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// `Event` tag, e.g. `spar match`.
    pub event: String,
    /// `Site` tag (`?` if empty).
    pub site: String,
    /// `Date` tag, `YYYY.MM.DD` (see [`pgn_date`]); `????.??.??` if empty.
    pub date: String,
    /// `Round` tag, e.g. the game number.
    pub round: String,
    /// White's name (the variant).
    pub white: String,
    /// Black's name.
    pub black: String,
    /// The result; `None` for an unfinished game (`*`).
    pub result: Option<GameResult>,
    /// The FEN the game (including its book moves) starts from.
    pub start_fen: String,
    /// Whether the game is Chess960 (writes `Variant "Chess960"` and always `FEN`).
    pub chess960: bool,
    /// The `Opening` tag, e.g. `8moves_v3.epd #1234`; omitted if empty.
    pub opening: String,
    /// The `Termination` tag: `normal`, `adjudication`, `time forfeit`, `illegal move`,
    /// `abandoned`, `unterminated`; omitted if empty.
    pub termination: String,
    /// Why the game ended in words (`White mates`, `Draw by 3-fold repetition`), appended to
    /// the last move's comment; omitted if empty.
    pub reason: String,
    /// The `TimeControl` tag (`40/60+0.6`, `N=10000`, …); omitted if empty.
    pub time_control: String,
    /// The moves from `start_fen`.
    pub moves: Vec<MoveRecord>,
    /// More tags written after the standard ones (`GameDuration`, `WhiteElo`, …).
    pub extra_tags: Vec<(String, String)>,
}

impl Default for GameRecord {
    fn default() -> GameRecord {
        GameRecord {
            event: "spar".into(),
            site: "?".into(),
            date: String::new(),
            round: "?".into(),
            white: "?".into(),
            black: "?".into(),
            result: None,
            start_fen: STARTPOS_FEN.into(),
            chess960: false,
            opening: String::new(),
            termination: String::new(),
            reason: String::new(),
            time_control: String::new(),
            moves: Vec::new(),
            extra_tags: Vec::new(),
        }
    }
}

/// Why a game could not be written as PGN.
#[derive(Debug)]
pub enum PgnWriteError {
    /// The start FEN does not parse.
    Fen(engine::position::FenError),
    /// A move is not legal where it was played (0-based ply).
    IllegalMove {
        /// 0-based ply of the move.
        ply: usize,
        /// The move in UCI notation.
        uci: String,
        /// The FEN of the position it was played in.
        fen: String,
    },
    /// Writing the file failed.
    Io(io::Error),
}

impl std::fmt::Display for PgnWriteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PgnWriteError::Fen(e) => write!(f, "game record has a bad start position: {e}"),
            PgnWriteError::IllegalMove { ply, uci, fen } => write!(
                f,
                "game record move {} ({uci}) is illegal in {fen}",
                ply + 1
            ),
            PgnWriteError::Io(e) => write!(f, "writing the PGN file failed: {e}"),
        }
    }
}

impl std::error::Error for PgnWriteError {}

impl From<PgnWriteError> for io::Error {
    fn from(e: PgnWriteError) -> io::Error {
        match e {
            PgnWriteError::Io(e) => e,
            other => io::Error::new(io::ErrorKind::InvalidData, other.to_string()),
        }
    }
}

/// Escapes a tag value: backslash and quote are backslashed, line breaks become spaces.
fn escape_tag(value: &str) -> String {
    let mut s = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' | '\r' | '\t' => s.push(' '),
            c => s.push(c),
        }
    }
    s
}

/// Comment text may not contain `}`; it becomes `)`.
fn escape_comment(text: &str) -> String {
    text.replace('}', ")").replace('{', "(")
}

/// Fills lines of at most [`LINE_LENGTH`] columns with words.
struct LineFiller {
    out: String,
    column: usize,
}

impl LineFiller {
    fn word(&mut self, word: &str) {
        let len = word.chars().count();
        if self.column > 0 && self.column + 1 + len > LINE_LENGTH {
            self.out.push('\n');
            self.column = 0;
        }
        if self.column > 0 {
            self.out.push(' ');
            self.column += 1;
        }
        self.out.push_str(word);
        self.column += len;
    }
}

/// Formats a whole game as PGN text, ending with a blank line.
///
/// ```
/// use data::pgn::{format_game, GameRecord, MoveRecord};
/// use engine::types::GameResult;
/// use engine::position::Position;
/// let pos = Position::startpos();
/// let mv = pos.parse_uci_move("e2e4").unwrap();
/// let game = GameRecord { result: Some(GameResult::Draw), moves: vec![MoveRecord::book(mv)], ..Default::default() };
/// let pgn = format_game(&game).unwrap();
/// assert!(pgn.contains("[Result \"1/2-1/2\"]"));
/// assert!(pgn.contains("1. e4 {book} 1/2-1/2"));
/// ```
pub fn format_game(game: &GameRecord) -> Result<String, PgnWriteError> {
    let mut pos = Position::from_fen(&game.start_fen).map_err(PgnWriteError::Fen)?;
    if game.chess960 {
        pos.set_chess960(true);
    }
    let chess960 = game.chess960 || pos.is_chess960();
    let mut out = String::with_capacity(256 + game.moves.len() * 40);
    let mut tag = |name: &str, value: &str| {
        out.push_str(&format!("[{name} \"{}\"]\n", escape_tag(value)));
    };
    let or = |v: &str, default: &'static str| -> String {
        if v.trim().is_empty() {
            default.to_string()
        } else {
            v.to_string()
        }
    };
    tag("Event", &or(&game.event, "?"));
    tag("Site", &or(&game.site, "?"));
    tag("Date", &or(&game.date, "????.??.??"));
    tag("Round", &or(&game.round, "?"));
    tag("White", &or(&game.white, "?"));
    tag("Black", &or(&game.black, "?"));
    tag("Result", result_text(game.result));
    let start_fen = pos.to_fen();
    if start_fen != STARTPOS_FEN || chess960 {
        tag("SetUp", "1");
        tag("FEN", &start_fen);
    }
    if chess960 {
        tag("Variant", "Chess960");
    }
    if !game.opening.is_empty() {
        tag("Opening", &game.opening);
    }
    if !game.time_control.is_empty() {
        tag("TimeControl", &game.time_control);
    }
    tag("PlyCount", &game.moves.len().to_string());
    if !game.termination.is_empty() {
        tag("Termination", &game.termination);
    }
    for (name, value) in &game.extra_tags {
        let name: String = name
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !name.is_empty() {
            tag(&name, value);
        }
    }
    out.push('\n');

    let mut filler = LineFiller {
        out: String::with_capacity(game.moves.len() * 40),
        column: 0,
    };
    let mut need_number = true;
    for (ply, record) in game.moves.iter().enumerate() {
        let mv = record.mv;
        if !pos.is_legal(mv) {
            return Err(PgnWriteError::IllegalMove {
                ply,
                uci: mv.to_uci(pos.is_chess960()),
                fen: pos.to_fen(),
            });
        }
        let number = pos.fullmove_number();
        if pos.side_to_move() == Color::White {
            filler.word(&format!("{number}."));
        } else if need_number {
            filler.word(&format!("{number}..."));
        }
        filler.word(&to_san(&pos, mv));
        let mut comment = if record.book {
            "book".to_string()
        } else {
            record.info.map(|i| i.comment()).unwrap_or_default()
        };
        if ply + 1 == game.moves.len() && !game.reason.is_empty() {
            if !comment.is_empty() {
                comment.push_str(", ");
            }
            comment.push_str(&game.reason);
        }
        need_number = !comment.is_empty();
        if !comment.is_empty() {
            let comment = format!("{{{}}}", escape_comment(&comment));
            for word in comment.split_whitespace() {
                filler.word(word);
            }
        }
        pos.play_mut(mv);
    }
    if game.moves.is_empty() && !game.reason.is_empty() {
        filler.word(&format!("{{{}}}", escape_comment(&game.reason)));
    }
    filler.word(result_text(game.result));
    out.push_str(&filler.out);
    out.push_str("\n\n");
    Ok(out)
}

/// Appends games to a PGN file, one `write` and one flush per game, so a crash leaves
/// whole games only (at worst a torn last game with nothing after it).
#[derive(Debug)]
pub struct PgnWriter {
    file: File,
    path: PathBuf,
}

impl PgnWriter {
    /// Opens `path` for appending, creating it if needed.
    pub fn append(path: impl AsRef<Path>) -> io::Result<PgnWriter> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        Ok(PgnWriter { file, path })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Formats the game and appends it in one write, then flushes. A game that cannot be
    /// formatted (illegal move, bad FEN) writes nothing and returns `InvalidData`.
    pub fn append_game(&mut self, game: &GameRecord) -> io::Result<()> {
        let text = format_game(game)?;
        self.append_text(&text)
    }

    /// Appends one game already formatted (another tool's PGN layout) in one write, then
    /// flushes.
    pub fn append_text(&mut self, text: &str) -> io::Result<()> {
        self.file.write_all(text.as_bytes())?;
        self.file.flush()
    }
}

/// The PGN date (`YYYY.MM.DD`, UTC) for seconds since the Unix epoch.
///
/// ```
/// assert_eq!(data::pgn::pgn_date(0), "1970.01.01");
/// assert_eq!(data::pgn::pgn_date(1_700_000_000), "2023.11.14");
/// ```
pub fn pgn_date(unix_seconds: u64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = (unix_seconds / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

/// Today's PGN date (UTC).
pub fn pgn_date_today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    pgn_date(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_and_comments() {
        assert_eq!(score_text(Score::Cp(31)), "+0.31");
        assert_eq!(score_text(Score::Cp(-105)), "-1.05");
        assert_eq!(score_text(Score::Cp(0)), "+0.00");
        assert_eq!(score_text(Score::Mate(3)), "+M3");
        assert_eq!(score_text(Score::Mate(-2)), "-M2");
        let info = MoveInfo {
            score: Score::Cp(31),
            depth: 12,
            nodes: 15321,
            time_ms: 120,
        };
        assert_eq!(info.comment(), "+0.31/12 0.120s, n=15321");
    }

    #[test]
    fn wraps_and_numbers_black_after_comments() {
        let mut pos = Position::startpos();
        let mut moves = Vec::new();
        for uci in ["g1f3", "g8f6", "f3g1", "f6g8"].iter().cycle().take(40) {
            let mv = pos.parse_uci_move(uci).unwrap();
            moves.push(MoveRecord::engine(
                mv,
                Some(MoveInfo {
                    score: Score::Cp(-3),
                    depth: 7,
                    nodes: 1234,
                    time_ms: 5,
                }),
            ));
            pos.play_mut(mv);
        }
        let game = GameRecord {
            moves,
            result: Some(GameResult::Draw),
            reason: "Draw by 3-fold repetition".into(),
            ..Default::default()
        };
        let text = format_game(&game).unwrap();
        assert!(
            text.contains("1. Nf3 {-0.03/7 0.005s, n=1234} 1... Nf6"),
            "{text}"
        );
        assert!(text.contains("Draw by 3-fold repetition} 1/2-1/2\n\n"));
        assert!(text.lines().all(|l| l.len() <= LINE_LENGTH));
        assert!(!text.contains("[FEN"));
        assert!(text.contains("[PlyCount \"40\"]"));
    }

    #[test]
    fn refuses_illegal_moves() {
        let pos = Position::startpos();
        let mv = pos.parse_uci_move("e2e4").unwrap();
        let game = GameRecord {
            moves: vec![MoveRecord::book(mv), MoveRecord::book(mv)],
            ..Default::default()
        };
        let err = format_game(&game).unwrap_err();
        assert!(
            matches!(err, PgnWriteError::IllegalMove { ply: 1, .. }),
            "{err}"
        );
        let bad = GameRecord {
            start_fen: "nonsense".into(),
            ..Default::default()
        };
        assert!(format_game(&bad).is_err());
    }
}
