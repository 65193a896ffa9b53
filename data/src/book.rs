//! Opening books: a list of [`Opening`]s (a start position plus book moves), read from EPD
//! or PGN and put in order like fastchess `-openings file=… format=epd|pgn
//! order=random|sequential plies=N start=K`.
//!
//! Every opening is checked when the book is loaded (FEN and each move), so a bad book
//! fails before the first game, with the file, line and text of the problem (the text
//! withheld inside [`crate::quote::withheld`]: a message for the network).
//!
//! ```
//! use data::book::{Book, BookOptions, BookOrder};
//! let book = Book::builtin();
//! assert_eq!(book.len(), 34_700);
//! let (pos, moves) = (book.opening(0).start_position(), book.opening(0).moves());
//! assert!(moves.is_empty() && pos.fullmove_number() == 9);
//! // Opening k of a shuffled book depends only on the seed.
//! let opts = BookOptions { order: BookOrder::Random, seed: 7, ..Default::default() };
//! let a = Book::builtin_with(&opts).unwrap();
//! let b = Book::builtin_with(&opts).unwrap();
//! assert_eq!(a.opening(5).fen(), b.opening(5).fen());
//! ```

use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use engine::position::Position;
use engine::types::Move;

use crate::pgn::read_games;
use engine::rng::SplitMix64;

/// The builtin book's file name.
pub const BUILTIN_NAME: &str = "8moves_v3.epd";

/// The builtin book: the classic balanced fishtest book, 34,700 positions 8 moves deep
/// (see `data/books/SOURCES.md`).
static BUILTIN_EPD: &str = include_str!("../books/8moves_v3.epd");

/// A book file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BookFormat {
    /// One position per line.
    Epd,
    /// Games whose moves are the openings.
    Pgn,
}

impl BookFormat {
    /// The format for a file name's extension (`.epd`, `.fen`, `.txt` → EPD; `.pgn` → PGN).
    pub fn from_path(path: &Path) -> Option<BookFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "epd" | "fen" | "txt" => Some(BookFormat::Epd),
            "pgn" => Some(BookFormat::Pgn),
            _ => None,
        }
    }
}

/// The order openings are handed out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BookOrder {
    /// File order.
    #[default]
    Sequential,
    /// Shuffled once with [`BookOptions::seed`] (SplitMix64 Fisher–Yates).
    Random,
}

/// How to read and order a book; mirrors fastchess `-openings`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BookOptions {
    /// `format=epd|pgn`; `None` guesses from the file extension.
    pub format: Option<BookFormat>,
    /// `order=sequential|random`.
    pub order: BookOrder,
    /// `plies=N`: keep at most N plies of each PGN opening (EPD has none).
    pub plies: Option<usize>,
    /// `start=K`: the 1-based opening (in the chosen order) that pair 0 plays; 0 means 1.
    pub start: usize,
    /// The seed for `order=random`.
    pub seed: u64,
    /// Treat every opening as Chess960 (castling written king-takes-rook in UCI).
    pub chess960: bool,
}

impl Default for BookOptions {
    fn default() -> BookOptions {
        BookOptions {
            format: None,
            order: BookOrder::Sequential,
            plies: None,
            start: 1,
            seed: 0,
            chess960: false,
        }
    }
}

impl BookOptions {
    /// Reads fastchess-style `-openings` arguments (`file=… format=… order=… plies=…
    /// start=…`, plus `seed=` and `variant=`) into the file (if given) and options.
    ///
    /// ```
    /// use data::book::{BookOptions, BookOrder};
    /// let (file, o) = BookOptions::from_args(["file=b.epd", "order=random", "start=3"]).unwrap();
    /// assert_eq!(file.unwrap().to_str(), Some("b.epd"));
    /// assert_eq!((o.order, o.start), (BookOrder::Random, 3));
    /// assert!(BookOptions::from_args(["plies"]).is_err());
    /// ```
    pub fn from_args<'a>(
        args: impl IntoIterator<Item = &'a str>,
    ) -> Result<(Option<std::path::PathBuf>, BookOptions), BookError> {
        let mut options = BookOptions::default();
        let mut file = None;
        for arg in args {
            let Some((key, value)) = arg.split_once('=') else {
                return Err(BookError::Option {
                    option: arg.to_string(),
                    reason: "expected key=value, e.g. file=book.epd or order=random".into(),
                });
            };
            if key == "file" {
                file = Some(std::path::PathBuf::from(value));
            } else {
                options.set(key, value)?;
            }
        }
        Ok((file, options))
    }

    /// Sets one `key=value` option as fastchess spells it: `format`, `order`, `plies`,
    /// `start` (and `seed`, `variant=960`). `file` is not handled here.
    ///
    /// ```
    /// use data::book::{BookOptions, BookOrder};
    /// let mut o = BookOptions::default();
    /// o.set("order", "random").unwrap();
    /// o.set("plies", "8").unwrap();
    /// assert_eq!((o.order, o.plies), (BookOrder::Random, Some(8)));
    /// assert!(o.set("order", "backwards").is_err());
    /// ```
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), BookError> {
        let bad = |reason: &str| BookError::Option {
            option: format!("{key}={value}"),
            reason: reason.to_string(),
        };
        match key {
            "format" => {
                self.format = Some(match value.to_ascii_lowercase().as_str() {
                    "epd" => BookFormat::Epd,
                    "pgn" => BookFormat::Pgn,
                    _ => return Err(bad("expected format=epd or format=pgn")),
                })
            }
            "order" => {
                self.order = match value.to_ascii_lowercase().as_str() {
                    "sequential" => BookOrder::Sequential,
                    "random" => BookOrder::Random,
                    _ => return Err(bad("expected order=sequential or order=random")),
                }
            }
            "plies" => {
                self.plies = Some(
                    value
                        .parse()
                        .map_err(|_| bad("expected a number of plies, e.g. plies=16"))?,
                )
            }
            "start" => {
                self.start = value
                    .parse()
                    .map_err(|_| bad("expected a 1-based opening number, e.g. start=1"))?
            }
            "seed" => {
                self.seed = value
                    .parse()
                    .map_err(|_| bad("expected an unsigned 64-bit number"))?
            }
            "variant" => {
                self.chess960 = match value.to_ascii_lowercase().as_str() {
                    "960" | "chess960" | "fischerandom" | "frc" => true,
                    "standard" => false,
                    _ => return Err(bad("expected variant=standard or variant=960")),
                }
            }
            _ => {
                return Err(bad(
                    "unknown book option (known: file, format, order, plies, start, seed, variant)",
                ))
            }
        }
        Ok(())
    }
}

/// Why a book could not be loaded.
#[derive(Debug)]
pub enum BookError {
    /// The file could not be read.
    Io {
        /// The file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
    /// An EPD line (or a PGN `FEN` tag) is not a valid position.
    Fen {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The FEN field at fault (`placement`, `castling`, …).
        field: &'static str,
        /// What is wrong.
        reason: String,
        /// The line's text.
        text: String,
    },
    /// A PGN game has a syntax error or an illegal, ambiguous or unreadable move.
    Pgn {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// The offending token.
        token: String,
        /// What is wrong.
        reason: String,
    },
    /// The file is not line-structured UTF-8 text (a binary file, an over-long line).
    Text(crate::text::TextError),
    /// The book has no openings.
    Empty {
        /// The file.
        path: String,
    },
    /// A bad `-openings` option.
    Option {
        /// `key=value` as given.
        option: String,
        /// What is expected.
        reason: String,
    },
}

impl fmt::Display for BookError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BookError::Io { path, source } => {
                write!(f, "cannot read opening book {path}: {source}")
            }
            // For the network: the field and what it must hold, never the line's text.
            BookError::Fen {
                path, line, field, ..
            } if crate::quote::is_withheld() => write!(
                f,
                "{path}:{line}: bad FEN {field}: expected {} (fix or delete this line)",
                crate::quote::fen_expected(field)
            ),
            BookError::Fen {
                path,
                line,
                field,
                reason,
                text,
            } => write!(
                f,
                "{path}:{line}: bad FEN {field}: {reason} in '{text}' (fix or delete this line)"
            ),
            BookError::Pgn {
                path,
                line,
                token,
                reason,
            } => write!(
                f,
                "{path}:{line}: {reason} (at '{}'; fix the game or delete it)",
                crate::quote::Quoted(token)
            ),
            BookError::Text(e) => write!(f, "cannot read opening book {e}"),
            BookError::Empty { path } => write!(
                f,
                "opening book {path} has no openings (is it the right file and format?)"
            ),
            BookError::Option { option, reason } => {
                write!(f, "bad opening book option '{option}': {reason}")
            }
        }
    }
}

impl std::error::Error for BookError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            BookError::Io { source, .. } => Some(source),
            BookError::Text(e) => Some(e),
            _ => None,
        }
    }
}

/// One opening: a start position and the book moves played from it.
#[derive(Debug, Clone)]
pub struct Opening {
    start: Position,
    moves: Vec<Move>,
    index: usize,
    line: usize,
}

impl Opening {
    /// An opening from a FEN and UCI moves, each checked.
    ///
    /// ```
    /// let o = data::book::Opening::new(engine::position::STARTPOS_FEN, &["e2e4", "c7c5"]).unwrap();
    /// assert_eq!(o.position().to_fen(), "rnbqkbnr/pp1ppppp/8/2p5/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
    /// assert!(data::book::Opening::new(engine::position::STARTPOS_FEN, &["e2e5"]).is_err());
    /// ```
    pub fn new(fen: &str, uci_moves: &[&str]) -> Result<Opening, BookError> {
        let start = Position::from_fen(fen).map_err(|e| BookError::Fen {
            path: "<opening>".into(),
            line: 1,
            field: e.field,
            reason: e.reason,
            text: fen.to_string(),
        })?;
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(uci_moves.len());
        for uci in uci_moves {
            let mv = pos.parse_uci_move(uci).ok_or_else(|| BookError::Pgn {
                path: "<opening>".into(),
                line: 1,
                token: uci.to_string(),
                reason: format!("not a legal move in {}", pos.to_fen()),
            })?;
            pos.play_mut(mv);
            moves.push(mv);
        }
        Ok(Opening {
            start,
            moves,
            index: 0,
            line: 1,
        })
    }

    /// The position the opening starts from (before the book moves).
    pub fn start_position(&self) -> Position {
        self.start.clone()
    }

    /// The start position's FEN.
    pub fn fen(&self) -> String {
        self.start.to_fen()
    }

    /// The book moves, each legal after the previous ones.
    pub fn moves(&self) -> &[Move] {
        &self.moves
    }

    /// The book moves in UCI notation (king-takes-rook castling for Chess960).
    pub fn uci_moves(&self) -> Vec<String> {
        let chess960 = self.start.is_chess960();
        self.moves.iter().map(|m| m.to_uci(chess960)).collect()
    }

    /// The position after the book moves: where the engines take over.
    pub fn position(&self) -> Position {
        let mut pos = self.start.clone();
        for &mv in &self.moves {
            pos.play_mut(mv);
        }
        pos
    }

    /// Whether this is a Chess960 opening.
    pub fn is_chess960(&self) -> bool {
        self.start.is_chess960()
    }

    /// The 0-based index of the opening in its file (stable under shuffling).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The 1-based line where the opening is in its file.
    pub fn line(&self) -> usize {
        self.line
    }
}

/// An ordered, non-empty list of openings. [`Book::opening`] wraps around.
#[derive(Debug, Clone)]
pub struct Book {
    name: String,
    openings: Arc<[Opening]>,
    order: Vec<u32>,
}

impl Book {
    /// Loads a book file, guessing the format from the extension unless given.
    pub fn load(path: impl AsRef<Path>, options: &BookOptions) -> Result<Book, BookError> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        let file = crate::text::open_regular(path).map_err(|source| BookError::Io {
            path: shown.clone(),
            source,
        })?;
        // Line by line with a bounded line length: a BOM is dropped, and a binary file or
        // an endless input gives an error naming the line instead of unbounded memory.
        let text = crate::text::read_all(std::io::BufReader::new(file), &shown)
            .map_err(BookError::Text)?;
        let format = options
            .format
            .or_else(|| BookFormat::from_path(path))
            .unwrap_or_else(|| {
                if text.trim_start().starts_with('[') {
                    BookFormat::Pgn
                } else {
                    BookFormat::Epd
                }
            });
        let name = path
            .file_name()
            .map_or(shown.clone(), |n| n.to_string_lossy().into_owned());
        let openings = match format {
            BookFormat::Epd => parse_epd(&text, &shown, options.chess960)?,
            BookFormat::Pgn => parse_pgn(&text, &shown, options)?,
        };
        Book::from_openings(name, openings, options).ok_or(BookError::Empty { path: shown })
    }

    /// Reads an EPD book from text; `name` is used in errors and [`Book::name`].
    pub fn from_epd_str(text: &str, name: &str, options: &BookOptions) -> Result<Book, BookError> {
        let openings = parse_epd(text, name, options.chess960)?;
        Book::from_openings(name.to_string(), openings, options).ok_or(BookError::Empty {
            path: name.to_string(),
        })
    }

    /// Reads a PGN book from text; `name` is used in errors and [`Book::name`].
    pub fn from_pgn_str(text: &str, name: &str, options: &BookOptions) -> Result<Book, BookError> {
        let openings = parse_pgn(text, name, options)?;
        Book::from_openings(name.to_string(), openings, options).ok_or(BookError::Empty {
            path: name.to_string(),
        })
    }

    /// A book from openings, ordered by `options`; `None` if there are none.
    pub fn from_openings(
        name: String,
        openings: impl Into<Arc<[Opening]>>,
        options: &BookOptions,
    ) -> Option<Book> {
        let openings: Arc<[Opening]> = openings.into();
        if openings.is_empty() || openings.len() > u32::MAX as usize {
            return None;
        }
        let mut order: Vec<u32> = (0..openings.len() as u32).collect();
        if options.order == BookOrder::Random {
            SplitMix64::new(options.seed).shuffle(&mut order);
        }
        let start = options.start.saturating_sub(1) % order.len();
        order.rotate_left(start);
        Some(Book {
            name,
            openings,
            order,
        })
    }

    /// The balanced book compiled into the binary ([`BUILTIN_NAME`]), in file order.
    /// Parsed once, on first use.
    pub fn builtin() -> Book {
        let openings = builtin_openings();
        let order = (0..openings.len() as u32).collect();
        Book {
            name: BUILTIN_NAME.to_string(),
            openings,
            order,
        }
    }

    /// The builtin book ordered by `options` (format and plies do not apply to it).
    pub fn builtin_with(options: &BookOptions) -> Result<Book, BookError> {
        let mut openings = builtin_openings();
        if options.chess960 {
            let mut list = openings.to_vec();
            for o in &mut list {
                o.start.set_chess960(true);
            }
            openings = list.into();
        }
        Book::from_openings(BUILTIN_NAME.to_string(), openings, options).ok_or(BookError::Empty {
            path: BUILTIN_NAME.to_string(),
        })
    }

    /// The book's name (its file name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many openings there are (never 0).
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Always false: a book has at least one opening.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Opening `k` of the order (pair `k` plays it), wrapping around after the last.
    pub fn opening(&self, k: usize) -> &Opening {
        let i = self.order[k % self.order.len()] as usize;
        &self.openings[i]
    }

    /// The openings in order.
    pub fn iter(&self) -> impl Iterator<Item = &Opening> + '_ {
        self.order.iter().map(|&i| &self.openings[i as usize])
    }
}

/// The builtin book's openings, parsed on first use.
fn builtin_openings() -> Arc<[Opening]> {
    static PARSED: OnceLock<Arc<[Opening]>> = OnceLock::new();
    PARSED
        .get_or_init(|| match parse_epd(BUILTIN_EPD, BUILTIN_NAME, false) {
            Ok(list) if !list.is_empty() => list.into(),
            // Unreachable (a test parses the whole book), but never panic: fall back to
            // the standard start position.
            _ => vec![Opening {
                start: Position::startpos(),
                moves: Vec::new(),
                index: 0,
                line: 1,
            }]
            .into(),
        })
        .clone()
}

/// Parses EPD text: one position per line; blank lines and `#` comments skipped; CRLF
/// stripped; after the four FEN fields, either the two move counters or EPD operations
/// (`bm e4; id "x";`, ignored).
pub fn parse_epd(text: &str, path: &str, chess960: bool) -> Result<Vec<Opening>, BookError> {
    let text = crate::text::strip_bom(text);
    let mut openings = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let counters = fields
            .iter()
            .skip(4)
            .take(2)
            .take_while(|f| f.parse::<u32>().is_ok())
            .count();
        let fen = fields[..fields.len().min(4 + counters)].join(" ");
        let mut start = Position::from_fen(&fen).map_err(|e| BookError::Fen {
            path: path.to_string(),
            line: i + 1,
            field: e.field,
            reason: e.reason,
            text: line.to_string(),
        })?;
        if chess960 {
            start.set_chess960(true);
        }
        openings.push(Opening {
            start,
            moves: Vec::new(),
            index: openings.len(),
            line: i + 1,
        });
    }
    Ok(openings)
}

/// Parses a PGN book: each game's main line (cut to `options.plies`) from its start
/// position (`[FEN]`, `[Variant "Chess960"]` honoured).
pub fn parse_pgn(text: &str, path: &str, options: &BookOptions) -> Result<Vec<Opening>, BookError> {
    let pgn_err = |e: crate::pgn::PgnError| BookError::Pgn {
        path: path.to_string(),
        line: e.line,
        token: e.token,
        reason: e.reason,
    };
    let games = read_games(text).map_err(pgn_err)?;
    let mut openings = Vec::with_capacity(games.len());
    for game in games {
        let (mut start, moves) = game.replay(options.plies).map_err(pgn_err)?;
        if options.chess960 {
            start.set_chess960(true);
        }
        openings.push(Opening {
            start,
            moves,
            index: openings.len(),
            line: game.line,
        });
    }
    Ok(openings)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn book_files_with_a_bom_load_and_endless_or_binary_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bom.epd");
        std::fs::write(&path, "\u{feff}4k3/8/8/8/8/8/8/4K2R w K - 0 1\r\n").unwrap();
        assert_eq!(Book::load(&path, &BookOptions::default()).unwrap().len(), 1);
        let path = dir.path().join("bom.pgn");
        std::fs::write(&path, "\u{feff}[Event \"x\"]\n\n1. e4 e5 *\n").unwrap();
        assert_eq!(Book::load(&path, &BookOptions::default()).unwrap().len(), 1);
        let path = dir.path().join("bin.epd");
        std::fs::write(&path, b"4k3/8/8/8/8/8/8/4K2R w K - 0 1\n\xff\xfe\n").unwrap();
        let e = Book::load(&path, &BookOptions::default()).unwrap_err();
        assert!(e.to_string().contains("bin.epd:2: not UTF-8"), "{e}");
        if Path::new("/dev/zero").exists() {
            let opts = BookOptions {
                format: Some(BookFormat::Epd),
                ..BookOptions::default()
            };
            // Endless: refused before any read, as every device, FIFO or socket is.
            let e = Book::load("/dev/zero", &opts).unwrap_err();
            assert!(
                e.to_string().contains("/dev/zero: not a regular file"),
                "{e}"
            );
        }
    }

    #[test]
    fn epd_lines_counters_operations_comments_crlf() {
        let text =
            "# a comment\r\n\r\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\r\n\
                    rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - bm e4; id \"start\";\n\
                    rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 3 7\n";
        let book = Book::from_epd_str(text, "t.epd", &BookOptions::default()).unwrap();
        assert_eq!(book.len(), 3);
        assert_eq!(book.opening(0).line(), 3);
        assert_eq!(
            book.opening(1).fen(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
        );
        assert_eq!(book.opening(2).start_position().fullmove_number(), 7);
        assert_eq!(book.opening(3).index(), 0, "wraps around");
    }

    #[test]
    fn errors_for_the_network_name_the_file_line_and_expectation_never_the_text() {
        let opts = BookOptions::default();
        let epd = "4k3/8/8/8/8/8/8/4K3 w - - 0 1\nroot:SECRET-7f3a/x w - -\n";
        let e = Book::from_epd_str(epd, "b.epd", &opts).unwrap_err();
        assert!(
            e.to_string().contains("root:SECRET-7f3a/x"),
            "the CLI quotes: {e}"
        );
        let net = crate::quote::withheld(|| e.to_string());
        assert!(
            net.starts_with("b.epd:2: bad FEN placement: expected 8 ranks"),
            "{net}"
        );
        assert!(!net.contains("SECRET") && !net.contains("root"), "{net}");
        // A PGN game: its bad move and a bad FEN tag.
        for pgn in [
            "[Event \"x\"]\n\n1. e4 SECRETmove *\n",
            "[FEN \"4k3/8/8/8/8/8/8/4K3 SECRET - - 0 1\"]\n\n1. Kd2 *\n",
            "[Event \"x\"]\n\n1. e4 e5 2. Qh5 Qh4 3. Qxf7 SECRET@ *\n",
        ] {
            let cli = Book::from_pgn_str(pgn, "b.pgn", &opts)
                .unwrap_err()
                .to_string();
            assert!(cli.contains("SECRET"), "the CLI quotes: {cli}");
            let net = crate::quote::withheld(|| {
                Book::from_pgn_str(pgn, "b.pgn", &opts)
                    .unwrap_err()
                    .to_string()
            });
            assert!(net.starts_with("b.pgn:"), "{net}");
            assert!(!net.contains("SECRET"), "{net}");
        }
    }

    #[test]
    fn epd_errors_name_file_line_field_and_text() {
        let text = "4k3/8/8/8/8/8/8/4K2R w K - 0 1\n4k3/8/8/8/8/8/8/4K2R w Q - 0 1\r\n";
        let err = Book::from_epd_str(text, "bad.epd", &BookOptions::default()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("bad.epd:2: bad FEN castling:"), "{msg}");
        assert!(msg.contains("'4k3/8/8/8/8/8/8/4K2R w Q - 0 1'"), "{msg}");
        assert_eq!(msg.lines().count(), 1, "{msg}");
        for junk in [
            "x",
            "8/8/8 w",
            "\u{0}\u{1}",
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 2 3 4",
        ] {
            // Must not panic; extra tokens after the counters are EPD operations.
            let _ = Book::from_epd_str(junk, "j.epd", &BookOptions::default());
        }
        let err =
            Book::from_epd_str("# only a comment\n", "e.epd", &BookOptions::default()).unwrap_err();
        assert!(matches!(err, BookError::Empty { .. }));
    }

    #[test]
    fn chess960_epd() {
        let text = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\n\
                    nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w KQkq - 0 1";
        let book = Book::from_epd_str(text, "960.epd", &BookOptions::default()).unwrap();
        assert!(book.iter().all(Opening::is_chess960));
        let pos = book.opening(0).start_position();
        assert_eq!(
            pos.to_fen(),
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w KQkq - 2 9"
        );
    }

    #[test]
    fn pgn_book_with_plies_fen_and_variant() {
        let text = "[Event \"a\"]\n1. e4 {x} c5 (1... e5) 2. Nf3 $1 d6 1/2-1/2\n\n\
                    [Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \"nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w KQkq - 0 1\"]\n\
                    1. g3 g6 2. O-O *\n";
        let opts = BookOptions {
            plies: Some(3),
            ..Default::default()
        };
        let book = Book::from_pgn_str(text, "b.pgn", &opts).unwrap();
        assert_eq!(book.len(), 2);
        assert_eq!(book.opening(0).uci_moves(), ["e2e4", "c7c5", "g1f3"]);
        assert!(!book.opening(0).is_chess960());
        assert!(book.opening(1).is_chess960());
        assert_eq!(book.opening(1).line(), 4);
        let all = Book::from_pgn_str(text, "b.pgn", &BookOptions::default()).unwrap();
        let castle = *all.opening(1).moves().last().unwrap();
        assert!(castle.is_castle());
        assert_eq!(all.opening(1).uci_moves().last().unwrap(), "f1g1");

        let err = Book::from_pgn_str("1. e4 e5\n2. Qxf7 *", "bad.pgn", &opts).unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("bad.pgn:2: "), "{msg}");
        assert!(msg.contains("'Qxf7'"), "{msg}");
    }

    #[test]
    fn order_start_and_wrap() {
        let text: String = (1..=8)
            .map(|n| format!("4k3/8/8/8/8/8/8/4K3 w - - 0 {n}\n"))
            .collect();
        let seq = Book::from_epd_str(
            &text,
            "o.epd",
            &BookOptions {
                start: 3,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(seq.opening(0).index(), 2);
        assert_eq!(seq.opening(6).index(), 0);
        let shuffled = |seed| {
            let b = Book::from_epd_str(
                &text,
                "o.epd",
                &BookOptions {
                    order: BookOrder::Random,
                    seed,
                    ..Default::default()
                },
            )
            .unwrap();
            b.iter().map(Opening::index).collect::<Vec<_>>()
        };
        assert_eq!(shuffled(1), shuffled(1));
        assert_ne!(shuffled(1), shuffled(2));
        let mut sorted = shuffled(1);
        sorted.sort();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
    }

    #[test]
    fn builtin_book_parses_completely() {
        let book = Book::builtin();
        assert_eq!(book.len(), 34_700);
        assert_eq!(book.name(), BUILTIN_NAME);
        assert!(book
            .iter()
            .all(|o| o.moves().is_empty() && !o.is_chess960()));
        assert_eq!(book.opening(34_700).index(), 0);
    }
}
