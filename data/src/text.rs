//! Reading outside text safely: one place that strips a UTF-8 byte-order mark and reads
//! line by line with a bound on the line length, so that a binary file, a file saved by an
//! editor that writes a BOM, or an endless input like `/dev/zero` gives a one-line error
//! naming the file and line instead of garbage, a panic or unbounded memory.
//!
//! ```
//! use data::text::{strip_bom, LineReader};
//! assert_eq!(strip_bom("\u{feff}a,b"), "a,b");
//! let mut lines = LineReader::new("\u{feff}one\r\ntwo".as_bytes(), "x.txt");
//! assert_eq!(lines.next_line().unwrap(), Some("one"));
//! assert_eq!(lines.next_line().unwrap(), Some("two"));
//! assert_eq!(lines.next_line().unwrap(), None);
//! ```

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

/// The UTF-8 byte-order mark some editors put at the start of a text file.
pub const BOM: &str = "\u{feff}";

/// The longest line accepted by [`LineReader`] by default (1 MiB), far beyond any FEN, EPD,
/// PGN, CSV or parameter line.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// `text` without a leading byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `bytes` without a leading UTF-8 byte-order mark.
pub fn strip_bom_bytes(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM.as_bytes()).unwrap_or(bytes)
}

/// What is wrong with a line of outside text.
#[derive(Debug)]
pub enum TextErrorKind {
    /// The line is longer than the limit (in bytes).
    TooLong(usize),
    /// The line is not valid UTF-8.
    NotUtf8,
    /// Reading failed.
    Io(io::Error),
    /// The whole input is longer than the limit (in bytes) of a file read whole.
    TooBig(u64),
}

/// A line that could not be read: the input's name, the 1-based line number and why.
#[derive(Debug)]
pub struct TextError {
    /// The file (or stream) name, as given to the reader.
    pub name: String,
    /// The 1-based line number.
    pub line: u64,
    /// What went wrong.
    pub kind: TextErrorKind,
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.line == 0 {
            self.name.clone()
        } else {
            format!("{}:{}", self.name, self.line)
        };
        match &self.kind {
            TextErrorKind::TooLong(max) => write!(
                f,
                "{at}: line longer than {max} bytes: is this really a text file? \
                 (give the text file, one record per line)"
            ),
            TextErrorKind::NotUtf8 => write!(f, "{at}: not UTF-8 text (save the file as UTF-8)"),
            // Refused before any read (not a regular file): no "read error".
            TextErrorKind::Io(e) if e.kind() == io::ErrorKind::InvalidInput => {
                write!(f, "{at}: {e}")
            }
            TextErrorKind::Io(e) => write!(f, "{at}: read error: {e}"),
            TextErrorKind::TooBig(max) => write!(
                f,
                "{at}: longer than {} MiB: is it the right file?",
                max >> 20
            ),
        }
    }
}

impl std::error::Error for TextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            TextErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// Reads text line by line with a bounded line length: a leading BOM is dropped, `\n` and
/// `\r\n` end lines, and a line longer than the limit or not UTF-8 is an error naming the
/// input and line. Memory stays within the limit whatever the input.
pub struct LineReader<R> {
    reader: R,
    name: String,
    line: u64,
    offset: u64,
    max: usize,
    buf: Vec<u8>,
    failed: bool,
}

impl<R: BufRead> LineReader<R> {
    /// A reader of `reader`, called `name` in errors, with lines up to [`MAX_LINE_BYTES`].
    pub fn new(reader: R, name: impl Into<String>) -> LineReader<R> {
        LineReader {
            reader,
            name: name.into(),
            line: 0,
            offset: 0,
            max: MAX_LINE_BYTES,
            buf: Vec::new(),
            failed: false,
        }
    }

    /// The same reader with another line-length limit (in bytes, at least 1).
    pub fn with_max_line(mut self, max: usize) -> LineReader<R> {
        self.max = max.max(1);
        self
    }

    /// The 1-based number of the last line returned (0 before the first).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// Bytes consumed so far (including line ends and a BOM).
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The input's name, as given.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The next line without its line end, `None` at the end of the input. After an error
    /// the reader stays at the end (every later call returns `Ok(None)`).
    pub fn next_line(&mut self) -> Result<Option<&str>, TextError> {
        if self.failed {
            return Ok(None);
        }
        match self.fill_line() {
            Ok(true) => {}
            Ok(false) => return Ok(None),
            Err(kind) => {
                self.failed = true;
                return Err(TextError {
                    name: self.name.clone(),
                    line: self.line,
                    kind,
                });
            }
        }
        let mut bytes = &self.buf[..];
        if self.line == 1 {
            bytes = strip_bom_bytes(bytes);
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Some(s)),
            Err(_) => {
                self.failed = true;
                Err(TextError {
                    name: self.name.clone(),
                    line: self.line,
                    kind: TextErrorKind::NotUtf8,
                })
            }
        }
    }

    /// Reads the next line's bytes into `buf` (line end removed); `false` at the end.
    fn fill_line(&mut self) -> Result<bool, TextErrorKind> {
        self.buf.clear();
        let mut any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.line += 1;
                    return Err(TextErrorKind::Io(e));
                }
            };
            if chunk.is_empty() {
                if !any {
                    return Ok(false);
                }
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            // The limit counts the line's content; the line end itself is free.
            let content = if done { take - 1 } else { take };
            if self.buf.len() + content > self.max {
                self.line += 1;
                return Err(TextErrorKind::TooLong(self.max));
            }
            self.buf.extend_from_slice(&chunk[..take]);
            self.reader.consume(take);
            self.offset += take as u64;
            if done {
                break;
            }
        }
        if self.line == 0 && self.buf == BOM.as_bytes() {
            // A file of just a BOM is empty, not one empty line.
            return Ok(false);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        Ok(true)
    }
}

/// The largest input [`read_all`] and [`read_file`] read whole (64 MiB): parameter files,
/// suites, saved statistics and trajectories are far smaller.
pub const MAX_WHOLE_TEXT: u64 = 64 << 20;

/// Reads all of `reader` as text through a [`LineReader`]: BOM dropped, lines joined with
/// `\n` (CRLF becomes LF), every line bounded and checked for UTF-8, the whole at most
/// [`MAX_WHOLE_TEXT`] bytes (an endless input is an error, not unbounded memory).
pub fn read_all(reader: impl BufRead, name: &str) -> Result<String, TextError> {
    let mut lines = LineReader::new(reader, name);
    let mut text = String::new();
    while let Some(line) = lines.next_line()? {
        if (text.len() + line.len()) as u64 >= MAX_WHOLE_TEXT {
            return Err(TextError {
                name: name.to_string(),
                line: 0,
                kind: TextErrorKind::TooBig(MAX_WHOLE_TEXT),
            });
        }
        text.push_str(line);
        text.push('\n');
    }
    Ok(text)
}

/// Opens `path` for reading only when it is a regular file: a FIFO with no writer would
/// block the open forever, a device like `/dev/zero` never ends, and a pipe cannot be read
/// twice. Anything else is an [`io::ErrorKind::InvalidInput`] error saying so (checked from
/// the metadata, before any open).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let meta = std::fs::metadata(path)?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory: give a file",
        ));
    }
    if !meta.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a device, pipe or socket): give a file",
        ));
    }
    File::open(path)
}

/// Reads a whole text file with [`read_all`]; errors name the file (and line). Only a
/// regular file is read ([`open_regular`]).
pub fn read_file(path: &Path) -> Result<String, TextError> {
    let name = path.display().to_string();
    let file = open_regular(path).map_err(|e| TextError {
        name: name.clone(),
        line: 0,
        kind: TextErrorKind::Io(e),
    })?;
    read_all(BufReader::new(file), &name)
}

/// Reads a whole regular file of at most [`MAX_WHOLE_TEXT`] bytes as UTF-8 text, byte for byte
/// (line ends and a missing last newline kept, so a torn last line can be recognised), with
/// a leading byte-order mark dropped.
pub fn read_whole(path: &Path) -> Result<String, TextError> {
    let name = path.display().to_string();
    let error = |line, kind| TextError {
        name: name.clone(),
        line,
        kind,
    };
    let file = open_regular(path).map_err(|e| error(0, TextErrorKind::Io(e)))?;
    let mut bytes = Vec::new();
    file.take(MAX_WHOLE_TEXT + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| error(0, TextErrorKind::Io(e)))?;
    if bytes.len() as u64 > MAX_WHOLE_TEXT {
        return Err(error(0, TextErrorKind::TooBig(MAX_WHOLE_TEXT)));
    }
    let body = strip_bom_bytes(&bytes);
    match std::str::from_utf8(body) {
        Ok(text) => Ok(text.to_string()),
        Err(e) => {
            let line = body[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64
                + 1;
            Err(error(line, TextErrorKind::NotUtf8))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::time::{Duration, Instant};

    fn lines(input: &[u8]) -> Result<Vec<String>, TextError> {
        let mut r = LineReader::new(input, "t.txt");
        let mut out = Vec::new();
        while let Some(l) = r.next_line()? {
            out.push(l.to_string());
        }
        Ok(out)
    }

    #[test]
    fn strips_a_bom_only_at_the_start() {
        assert_eq!(strip_bom("\u{feff}x"), "x");
        assert_eq!(strip_bom("x\u{feff}"), "x\u{feff}");
        assert_eq!(strip_bom_bytes(b"\xef\xbb\xbfx"), b"x");
        assert_eq!(
            lines(b"\xef\xbb\xbfa\n\xef\xbb\xbfb").unwrap(),
            ["a", "\u{feff}b"]
        );
    }

    #[test]
    fn splits_lf_and_crlf_and_keeps_blank_lines() {
        assert_eq!(lines(b"a\r\n\nb\n").unwrap(), ["a", "", "b"]);
        assert_eq!(lines(b"").unwrap(), Vec::<String>::new());
        assert_eq!(lines(b"\n").unwrap(), [""]);
        assert_eq!(lines(b"last").unwrap(), ["last"]);
        assert_eq!(lines(b"\xef\xbb\xbf").unwrap(), Vec::<String>::new());
        assert_eq!(lines(b"\xef\xbb\xbf\n").unwrap(), [""]);
    }

    #[test]
    fn counts_lines_and_bytes() {
        let mut r = LineReader::new(&b"ab\r\ncd\n"[..], "t");
        r.next_line().unwrap();
        assert_eq!((r.line_number(), r.offset()), (1, 4));
        r.next_line().unwrap();
        assert_eq!((r.line_number(), r.offset()), (2, 7));
    }

    #[test]
    fn non_utf8_names_file_and_line() {
        let e = lines(b"ok\nbad \xff byte\n").unwrap_err();
        assert!(matches!(e.kind, TextErrorKind::NotUtf8));
        assert_eq!(e.line, 2);
        let msg = e.to_string();
        assert!(msg.starts_with("t.txt:2: not UTF-8"), "{msg}");
        assert_eq!(msg.lines().count(), 1);
    }

    #[test]
    fn long_lines_are_refused_at_the_limit() {
        let ok = LineReader::new(&b"abcd\n"[..], "t")
            .with_max_line(4)
            .next_line()
            .unwrap()
            .map(str::to_string);
        assert_eq!(ok.as_deref(), Some("abcd"));
        let mut r = LineReader::new(&b"abcde\n"[..], "t").with_max_line(4);
        let e = r.next_line().unwrap_err();
        assert!(matches!(e.kind, TextErrorKind::TooLong(4)));
        assert!(e.to_string().starts_with("t:1: line longer than 4 bytes"));
        // The reader stops after an error.
        assert!(r.next_line().unwrap().is_none());
    }

    #[test]
    fn endless_input_errors_quickly_with_bounded_memory() {
        let start = Instant::now();
        // `/dev/zero`: no line end, ever.
        let reader = BufReader::new(io::repeat(0));
        let e = read_all(reader, "/dev/zero").unwrap_err();
        assert!(matches!(e.kind, TextErrorKind::TooLong(MAX_LINE_BYTES)));
        assert_eq!(e.line, 1);
        // Endless newlines of garbage bytes: the first line is not UTF-8.
        let e = read_all(BufReader::new(io::repeat(0xff).take(u64::MAX)), "ff").unwrap_err();
        assert!(matches!(
            e.kind,
            TextErrorKind::TooLong(_) | TextErrorKind::NotUtf8
        ));
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn read_file_names_a_missing_file() {
        let e = read_file(Path::new("/nonexistent/book.epd")).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("/nonexistent/book.epd: read error"));
    }

    #[test]
    fn endless_short_lines_are_cut_off_as_a_whole() {
        let t = Instant::now();
        let lines = std::io::BufReader::new(Cycle(b"a,1\n", 0));
        let e = read_all(lines, "yes").unwrap_err();
        assert!(matches!(e.kind, TextErrorKind::TooBig(_)), "{e}");
        assert!(t.elapsed() < Duration::from_secs(30));
    }

    /// An endless reader repeating `pattern`.
    struct Cycle(&'static [u8], usize);

    impl Read for Cycle {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            for b in buf.iter_mut() {
                *b = self.0[self.1 % self.0.len()];
                self.1 += 1;
            }
            Ok(buf.len())
        }
    }

    #[test]
    fn whole_files_keep_their_bytes_and_are_bounded() {
        let dir = std::env::temp_dir().join(format!("spar-text-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.csv");
        std::fs::write(&path, b"\xEF\xBB\xBFa,1\r\nb,2").unwrap();
        assert_eq!(read_whole(&path).unwrap(), "a,1\r\nb,2");
        std::fs::write(&path, b"a,1\nb,\xFF\n").unwrap();
        let e = read_whole(&path).unwrap_err();
        assert_eq!(
            (e.line, matches!(e.kind, TextErrorKind::NotUtf8)),
            (2, true)
        );
        let e = read_whole(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("not a regular file"), "{e}");
        // A regular file past the bound (sparse: no disk used).
        let big = dir.join("big.csv");
        std::fs::File::create(&big)
            .unwrap()
            .set_len(MAX_WHOLE_TEXT + 1)
            .unwrap();
        let e = read_whole(&big).unwrap_err();
        assert!(matches!(e.kind, TextErrorKind::TooBig(_)), "{e}");
        #[cfg(unix)]
        {
            // A FIFO with no writer: refused from its metadata, never opened (no hang).
            let fifo = dir.join("fifo");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .is_ok_and(|s| s.success());
            if made {
                for e in [
                    read_whole(&fifo).unwrap_err().to_string(),
                    read_file(&fifo).unwrap_err().to_string(),
                    open_regular(&fifo).unwrap_err().to_string(),
                ] {
                    assert!(e.contains("not a regular file"), "{e}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
