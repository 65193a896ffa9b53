//! The results CSV: one row per finished game, appended and flushed as each game ends,
//! read back by `--resume` and when merging shards.
//!
//! Columns (with a header row):
//!
//! | column | meaning |
//! | --- | --- |
//! | `pair` | 0-based pair index; pair k plays opening k of the book order |
//! | `game` | 0 or 1: the first or second game of the pair (colours swapped in game 1) |
//! | `opening` | the opening's 0-based index in its book file (stable under `order=random`) |
//! | `seed` | the pair's seed, derived from the run seed and the pair index |
//! | `white`, `black` | the variants' names |
//! | `result` | `1-0`, `0-1`, `1/2-1/2` or `*` |
//! | `termination` | PGN termination (`normal`, `adjudication`, `time forfeit`, …) |
//! | `plies` | plies played, book moves included |
//! | `white_nodes`, `black_nodes` | nodes each side searched |
//! | `duration_ms` | wall time of the game |
//!
//! Each row is written with one `write` call and flushed, so a crash can leave at most a
//! half-written last line; [`ResultsWriter::create_or_resume`] cuts it off.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};

use crate::text::MAX_WHOLE_TEXT;
use std::path::{Path, PathBuf};

use engine::types::GameResult;
use serde::{Deserialize, Serialize};

/// The header row, in column order.
pub const HEADER: [&str; 12] = [
    "pair",
    "game",
    "opening",
    "seed",
    "white",
    "black",
    "result",
    "termination",
    "plies",
    "white_nodes",
    "black_nodes",
    "duration_ms",
];

/// One finished game.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResultRow {
    /// 0-based pair index.
    pub pair: u64,
    /// 0 or 1 within the pair.
    pub game: u8,
    /// The opening's index in its book file.
    pub opening: u64,
    /// The pair's seed.
    pub seed: u64,
    /// White's variant name.
    pub white: String,
    /// Black's variant name.
    pub black: String,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: String,
    /// How the game ended (PGN `Termination` value).
    pub termination: String,
    /// Plies played.
    pub plies: u32,
    /// Nodes searched by White.
    pub white_nodes: u64,
    /// Nodes searched by Black.
    pub black_nodes: u64,
    /// Wall time of the game in milliseconds.
    pub duration_ms: u64,
}

impl ResultRow {
    /// The `result` column as a [`GameResult`], if it is a finished game's result (PGN text;
    /// surrounding blanks are ignored and `1/2` and `½-½` are accepted for draws). `*` and
    /// anything else give `None`.
    ///
    /// ```
    /// use engine::types::GameResult;
    /// let row = data::results::ResultRow { result: "0-1".into(), ..Default::default() };
    /// assert_eq!(row.game_result(), Some(GameResult::BlackWins));
    /// ```
    pub fn game_result(&self) -> Option<GameResult> {
        match self.result.trim() {
            "1/2" | "½-½" => Some(GameResult::Draw),
            text => GameResult::from_pgn(text),
        }
    }
}

/// Why the results file could not be opened, read or written.
#[derive(Debug)]
pub enum ResultsError {
    /// An I/O error on the file.
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The file exists, is not empty, and `--resume` was not given.
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The first line is not the expected header.
    Header {
        /// The file.
        path: PathBuf,
        /// The first line as found.
        found: String,
    },
    /// The file is not line-structured UTF-8 text (a binary file, an over-long line).
    Text(Box<crate::text::TextError>),
    /// A row does not parse.
    Row {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        reason: String,
        /// The line's text.
        text: String,
    },
}

impl fmt::Display for ResultsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResultsError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            ResultsError::Exists { path } => write!(
                f,
                "{} already holds results; pass --resume to continue that run, or choose another output path",
                path.display()
            ),
            ResultsError::Header { path, found } => write!(
                f,
                "{}:1: not a spar results file: expected header '{}', found '{found}' (choose another path)",
                path.display(),
                HEADER.join(",")
            ),
            ResultsError::Text(e) => {
                write!(f, "{e} (is this a spar results file? choose another path)")
            }
            ResultsError::Row {
                path,
                line,
                reason,
                text,
            } => write!(
                f,
                "{}:{line}: bad results row: {reason}\n    {text}\n  (fix or delete this line, then resume)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for ResultsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ResultsError::Io { source, .. } => Some(source),
            ResultsError::Text(e) => Some(e),
            _ => None,
        }
    }
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> ResultsError + '_ {
    move |source| ResultsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One row of a results text, borrowed from it (its names and words are not copied).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowRef<'a> {
    /// 0-based pair index.
    pub pair: u64,
    /// 0 or 1 within the pair.
    pub game: u8,
    /// The opening's index in its book file.
    pub opening: u64,
    /// The pair's seed.
    pub seed: u64,
    /// White's variant name.
    pub white: &'a str,
    /// Black's variant name.
    pub black: &'a str,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: &'a str,
    /// How the game ended (PGN `Termination` value).
    pub termination: &'a str,
    /// Plies played.
    pub plies: u32,
    /// Nodes searched by White.
    pub white_nodes: u64,
    /// Nodes searched by Black.
    pub black_nodes: u64,
    /// Wall time of the game in milliseconds.
    pub duration_ms: u64,
}

impl RowRef<'_> {
    /// The row, owned.
    pub fn to_row(&self) -> ResultRow {
        ResultRow {
            pair: self.pair,
            game: self.game,
            opening: self.opening,
            seed: self.seed,
            white: self.white.to_string(),
            black: self.black.to_string(),
            result: self.result.to_string(),
            termination: self.termination.to_string(),
            plies: self.plies,
            white_nodes: self.white_nodes,
            black_nodes: self.black_nodes,
            duration_ms: self.duration_ms,
        }
    }
}

impl ResultRow {
    /// The row, borrowed.
    pub fn as_ref(&self) -> RowRef<'_> {
        RowRef {
            pair: self.pair,
            game: self.game,
            opening: self.opening,
            seed: self.seed,
            white: &self.white,
            black: &self.black,
            result: &self.result,
            termination: &self.termination,
            plies: self.plies,
            white_nodes: self.white_nodes,
            black_nodes: self.black_nodes,
            duration_ms: self.duration_ms,
        }
    }
}

/// Parses results CSV text (header required). `path` is only used in errors.
pub fn parse_results(text: &str, path: &Path) -> Result<Vec<ResultRow>, ResultsError> {
    let mut rows = Vec::with_capacity(text.len() / 64);
    each_row(text, path, |r| rows.push(r.to_row()))?;
    Ok(rows)
}

/// Calls `f` on each row of results CSV text (header required), in order, without copying
/// them: what [`parse_results`] returns, row by row. On an error, `f` may have seen the
/// rows before the bad one. `path` is only used in errors.
pub fn each_row(
    text: &str,
    path: &Path,
    mut f: impl FnMut(RowRef<'_>),
) -> Result<(), ResultsError> {
    let text = crate::text::strip_bom(text);
    let first = text.split('\n').next().unwrap_or("");
    let first = first.strip_suffix('\r').unwrap_or(first);
    if first.is_empty() && text.trim().is_empty() {
        return Ok(());
    }
    if first != HEADER.join(",") {
        return Err(ResultsError::Header {
            path: path.to_path_buf(),
            found: first.chars().take(200).collect(),
        });
    }
    // spar's own files have no quoted field and no carriage return: split them directly
    // (several times the csv crate's speed); anything else, and the rows from the first
    // that the quick reading cannot take, go through the csv crate, whose errors name the
    // line (it reads the rows before that one too, as it would read them alone).
    let mut seen = 0;
    if !text.bytes().any(|b| b == b'"' || b == b'\r') {
        let mut all = true;
        for line in text.split('\n').skip(1).filter(|l| !l.is_empty()) {
            match quick_row(line) {
                Some(row) => {
                    f(row);
                    seen += 1;
                }
                None => {
                    all = false;
                    break;
                }
            }
        }
        if all {
            return Ok(());
        }
    }
    let lines: Vec<&str> = text.split('\n').collect();
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(text.as_bytes());
    for (n, record) in reader.deserialize::<ResultRow>().enumerate() {
        let row = record.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            let text = lines
                .get(line.wrapping_sub(1))
                .map_or("", |l| l.strip_suffix('\r').unwrap_or(l))
                .chars()
                .take(300)
                .collect();
            let reason = match e.kind() {
                csv::ErrorKind::Deserialize { err, .. } => match err.field() {
                    Some(i) => format!(
                        "column '{}': {}",
                        HEADER.get(i as usize).unwrap_or(&"?"),
                        err.kind()
                    ),
                    None => err.to_string(),
                },
                csv::ErrorKind::UnequalLengths { len, .. } => {
                    format!("{len} fields, expected {}", HEADER.len())
                }
                _ => e.to_string(),
            };
            ResultsError::Row {
                path: path.to_path_buf(),
                line,
                reason,
                text,
            }
        })?;
        if n >= seen {
            f(row.as_ref());
        }
    }
    Ok(())
}

/// A line of a results text without quotes or carriage returns, split at commas; `None`
/// when it is not a well-formed results row (the csv crate then reads it and names what
/// is wrong).
fn quick_row(line: &str) -> Option<RowRef<'_>> {
    // Where each of the 12 fields starts, found in one pass over the line.
    let mut starts = [0usize; 13];
    let mut n = 1;
    for (i, &c) in line.as_bytes().iter().enumerate() {
        if c == b',' {
            if n == HEADER.len() {
                return None;
            }
            starts[n] = i + 1;
            n += 1;
        }
    }
    if n != HEADER.len() {
        return None;
    }
    starts[n] = line.len() + 1;
    let field = |k: usize| &line[starts[k]..starts[k + 1] - 1];
    Some(RowRef {
        pair: number(field(0))?,
        game: u8::try_from(number(field(1))?).ok()?,
        opening: number(field(2))?,
        seed: number(field(3))?,
        white: field(4),
        black: field(5),
        result: field(6),
        termination: field(7),
        plies: u32::try_from(number(field(8))?).ok()?,
        white_nodes: number(field(9))?,
        black_nodes: number(field(10))?,
        duration_ms: number(field(11))?,
    })
}

/// An unsigned decimal as `str::parse::<u64>` reads one (an optional `+`, then digits;
/// `None` when empty, not a number or too large).
fn number(text: &str) -> Option<u64> {
    // A byte compare: `strip_prefix('+')` calls memcmp for its one byte.
    let digits = match text.as_bytes() {
        [b'+', rest @ ..] => rest,
        all => all,
    };
    if digits.is_empty() {
        return None;
    }
    let mut n: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    Some(n)
}

/// The rows of a results text without quotes or carriage returns ([`quick_row`] each);
/// `None` when one is not a well-formed results row. Blank lines are skipped, as the csv
/// crate skips them.
#[cfg(test)]
fn quick_rows(text: &str) -> Option<Vec<ResultRow>> {
    text.split('\n')
        .skip(1)
        .filter(|l| !l.is_empty())
        .map(|l| quick_row(l).map(|r| r.to_row()))
        .collect()
}

/// Reads a whole results file.
pub fn read_results(path: impl AsRef<Path>) -> Result<Vec<ResultRow>, ResultsError> {
    let path = path.as_ref();
    let file = crate::text::open_regular(path).map_err(io_err(path))?;
    let text = crate::text::read_all(io::BufReader::new(file), &path.display().to_string())
        .map_err(|e| ResultsError::Text(Box::new(e)))?;
    parse_results(&text, path)
}

/// Appends rows to the results file, one write and one flush per row.
#[derive(Debug)]
pub struct ResultsWriter {
    file: File,
    path: PathBuf,
}

impl ResultsWriter {
    /// Opens the results file.
    ///
    /// Without `resume`, a missing or empty file is started with the header, and an existing
    /// non-empty file is refused ([`ResultsError::Exists`]). With `resume`, existing rows are
    /// read and returned; a half-written last line (no final newline: a crash mid-write) is
    /// cut off first. A missing file is simply started.
    pub fn create_or_resume(
        path: impl AsRef<Path>,
        resume: bool,
    ) -> Result<(ResultsWriter, Vec<ResultRow>), ResultsError> {
        let path = path.as_ref().to_path_buf();
        // Only a regular file is read back, and at most `MAX_WHOLE_TEXT` bytes of it.
        let existing = match crate::text::open_regular(&path) {
            Ok(file) => {
                let mut bytes = Vec::new();
                io::Read::take(file, MAX_WHOLE_TEXT + 1)
                    .read_to_end(&mut bytes)
                    .map_err(io_err(&path))?;
                if bytes.len() as u64 > MAX_WHOLE_TEXT {
                    return Err(ResultsError::Text(Box::new(crate::text::TextError {
                        name: path.display().to_string(),
                        line: 0,
                        kind: crate::text::TextErrorKind::TooBig(MAX_WHOLE_TEXT),
                    })));
                }
                bytes
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_err(&path)(e)),
        };
        if !existing.is_empty() && !resume {
            return Err(ResultsError::Exists { path });
        }
        // Keep everything up to the last newline.
        let keep = existing
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let text = crate::text::read_all(&existing[..keep], &path.display().to_string())
            .map_err(|e| ResultsError::Text(Box::new(e)))?;
        let rows = parse_results(&text, &path)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .map_err(io_err(&path))?;
        if keep < existing.len() {
            file.set_len(keep as u64).map_err(io_err(&path))?;
        }
        let mut writer = ResultsWriter { file, path };
        if keep == 0 {
            let header = format!("{}\n", HEADER.join(","));
            writer.write_bytes(header.as_bytes())?;
        }
        Ok((writer, rows))
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends one row (one write call) and flushes.
    pub fn append(&mut self, row: &ResultRow) -> Result<(), ResultsError> {
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::with_capacity(128));
        csv.serialize(row)
            .map_err(|e| io_err(&self.path)(io::Error::new(io::ErrorKind::InvalidData, e)))?;
        let bytes = csv
            .into_inner()
            .map_err(|e| io_err(&self.path)(io::Error::other(e.to_string())))?;
        self.write_bytes(&bytes)
    }

    fn write_bytes(&mut self, bytes: &[u8]) -> Result<(), ResultsError> {
        self.file.write_all(bytes).map_err(io_err(&self.path))?;
        self.file.flush().map_err(io_err(&self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pair: u64, game: u8) -> ResultRow {
        ResultRow {
            pair,
            game,
            opening: 17 + pair,
            seed: 0xdead_beef_0000 + pair,
            white: "dev, \"quoted\"".into(),
            black: "base".into(),
            result: "1/2-1/2".into(),
            termination: "adjudication".into(),
            plies: 88,
            white_nodes: 123_456,
            black_nodes: 654_321,
            duration_ms: 1500,
        }
    }

    /// The quick reading of spar's own rows equals the csv crate's, and what it cannot take
    /// (quotes, carriage returns, a bad field) is read by the csv crate.
    #[test]
    fn numbers_read_as_the_standard_parser_reads_them() {
        for t in [
            "0",
            "7",
            "+5",
            "",
            "+",
            "-0",
            "-1",
            " 1",
            "1 ",
            "x",
            "12a",
            "00042",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
        ] {
            assert_eq!(number(t), t.parse::<u64>().ok(), "{t:?}");
        }
    }

    #[test]
    fn rows_are_seen_once_in_order_and_a_late_bad_row_is_named() {
        let path = Path::new("r.csv");
        let header = HEADER.join(",");
        let good =
            "0,0,3,77,a,b,1-0,checkmate,45,4600,4400,41\n0,1,3,77,b,a,0-1,checkmate,9,1,2,3\n";
        let text = format!("{header}\n{good}");
        let mut seen = Vec::new();
        each_row(&text, path, |r| seen.push(r.to_row())).unwrap();
        assert_eq!(seen, parse_results(&text, path).unwrap());
        assert_eq!(seen.len(), 2);
        let bad = format!("{text}0,0,4,78,a,b,1-0,checkmate,45,4600\n");
        let e = parse_results(&bad, path).unwrap_err();
        assert!(e.to_string().starts_with("r.csv:4: bad results row"), "{e}");
    }

    #[test]
    fn the_quick_reading_equals_the_csv_crates() {
        let path = Path::new("r.csv");
        let header = HEADER.join(",");
        let body = "0,0,3,77,a,b,1-0,checkmate,45,4600,4400,41\n\n\
                    0,1,3,77,b,a,1/2-1/2,adjudication,90,1,2,3\n";
        let text = format!("{header}\n{body}");
        let quick = quick_rows(&text).unwrap();
        let quoted = format!("{header}\n{}", body.replace(",b,", ",\"b\","));
        assert_eq!(parse_results(&text, path).unwrap(), quick);
        assert_eq!(
            parse_results(&quoted, path).unwrap(),
            quick,
            "through the csv crate"
        );
        let crlf = text.replace('\n', "\r\n");
        assert_eq!(parse_results(&crlf, path).unwrap(), quick);
        for bad in [
            "0,0,3,77,a,b,1-0,checkmate,45,4600,4400",
            "0,0,3,77,a,b,1-0,checkmate,45,4600,4400,41,9",
            "x,0,3,77,a,b,1-0,checkmate,45,4600,4400,41",
            "0,0,3,77,a,b,1-0,checkmate,45,4600,4400,",
        ] {
            assert!(quick_rows(&format!("{header}\n{bad}\n")).is_none(), "{bad}");
            let e = parse_results(&format!("{header}\n{bad}\n"), path).unwrap_err();
            assert!(
                e.to_string().starts_with("r.csv:2: bad results row"),
                "{bad}: {e}"
            );
        }
    }

    #[test]
    fn a_bom_is_dropped_and_binary_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut w = ResultsWriter::create_or_resume(&path, false).unwrap().0;
        w.append(&row(0, 0)).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, format!("\u{feff}{text}")).unwrap();
        assert_eq!(read_results(&path).unwrap(), vec![row(0, 0)]);
        let (_, rows) = ResultsWriter::create_or_resume(&path, true).unwrap();
        assert_eq!(rows, vec![row(0, 0)]);
        std::fs::write(&path, format!("{text}\u{ff}\n").replace('\u{ff}', "\u{1}")).unwrap();
        let mut bytes = std::fs::read(&path).unwrap();
        let at = bytes.len() - 2;
        bytes[at] = 0xff;
        std::fs::write(&path, &bytes).unwrap();
        let e = read_results(&path).unwrap_err();
        assert!(e.to_string().contains("r.csv:3: not UTF-8"), "{e}");
    }

    #[test]
    fn write_resume_and_refuse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("results.csv");
        let (mut w, rows) = ResultsWriter::create_or_resume(&path, false).unwrap();
        assert!(rows.is_empty());
        w.append(&row(0, 0)).unwrap();
        w.append(&row(0, 1)).unwrap();
        drop(w);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("pair,game,opening,seed,white,black,result,termination,plies,white_nodes,black_nodes,duration_ms\n"));
        assert_eq!(read_results(&path).unwrap(), vec![row(0, 0), row(0, 1)]);

        let err = ResultsWriter::create_or_resume(&path, false).unwrap_err();
        assert!(err.to_string().contains("--resume"), "{err}");

        let (mut w, rows) = ResultsWriter::create_or_resume(&path, true).unwrap();
        assert_eq!(rows.len(), 2);
        w.append(&row(1, 0)).unwrap();
        assert_eq!(read_results(&path).unwrap().len(), 3);
    }

    #[test]
    fn truncated_last_line_is_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let (mut w, _) = ResultsWriter::create_or_resume(&path, false).unwrap();
        w.append(&row(0, 0)).unwrap();
        drop(w);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"0,1,17,24477").unwrap();
        drop(f);
        assert!(
            read_results(&path).is_err(),
            "the torn line is visible to a plain read"
        );
        let (mut w, rows) = ResultsWriter::create_or_resume(&path, true).unwrap();
        assert_eq!(rows, vec![row(0, 0)]);
        w.append(&row(0, 1)).unwrap();
        assert_eq!(read_results(&path).unwrap(), vec![row(0, 0), row(0, 1)]);

        // A torn header: the file starts over.
        std::fs::write(&path, "pair,ga").unwrap();
        let (mut w, rows) = ResultsWriter::create_or_resume(&path, true).unwrap();
        assert!(rows.is_empty());
        w.append(&row(3, 0)).unwrap();
        assert_eq!(read_results(&path).unwrap(), vec![row(3, 0)]);
    }

    #[test]
    fn garbage_is_named_by_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.csv");
        let (mut w, _) = ResultsWriter::create_or_resume(&path, false).unwrap();
        w.append(&row(0, 0)).unwrap();
        drop(w);
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"this is not a row\n").unwrap();
        drop(f);
        let (mut w, _) = ResultsWriter::create_or_resume(dir.path().join("h.csv"), false).unwrap();
        w.append(&row(1, 0)).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("0,x,17,1,a,b,1-0,normal,3,1,1,1\n");
        std::fs::write(&path, &text).unwrap();

        let err = ResultsWriter::create_or_resume(&path, true).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("g.csv:3: bad results row"), "{msg}");
        assert!(msg.contains("this is not a row"), "{msg}");

        let text = text.replace("this is not a row\n", "");
        std::fs::write(&path, &text).unwrap();
        let msg = read_results(&path).unwrap_err().to_string();
        assert!(
            msg.contains("g.csv:3: bad results row: column 'game'"),
            "{msg}"
        );

        std::fs::write(&path, "a,b,c\n1,2,3\n").unwrap();
        let err = read_results(&path).unwrap_err();
        assert!(matches!(err, ResultsError::Header { .. }), "{err}");
    }
}
