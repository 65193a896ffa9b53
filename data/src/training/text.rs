//! bullet's text format: one line per position, `FEN | score | result`, the score in
//! White-relative centipawns and the result White's (`1.0`, `0.5`, `0.0`).
//!
//! ```
//! use data::training::text::{format_line, parse_line};
//! use engine::types::GameResult;
//! use engine::position::Position;
//! let line = format_line(&Position::startpos(), 31, GameResult::Draw);
//! assert_eq!(line, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 31 | 0.5");
//! let back = parse_line(&line).unwrap();
//! assert_eq!((back.score, back.result), (31, GameResult::Draw));
//! ```

use std::fs::File;
use std::io::{self, BufRead, BufReader};

use crate::text::{LineReader, TextErrorKind};
use std::path::Path;

use engine::position::Position;
use engine::types::GameResult;

use super::filter::TextFilter;
use super::{FormatError, TrainingGame, TrainingPosition};

/// A result as bullet's text format writes it: `1.0`, `0.5` or `0.0` (White's points).
pub const fn result_text(result: GameResult) -> &'static str {
    match result {
        GameResult::WhiteWins => "1.0",
        GameResult::Draw => "0.5",
        GameResult::BlackWins => "0.0",
    }
}

/// One line, without the newline.
pub fn format_line(pos: &Position, score: i16, result: GameResult) -> String {
    format!("{} | {score} | {}", pos.to_fen(), result_text(result))
}

/// Parses a line (a leading BOM and a trailing `\r` are ignored). Results may be written as bullet accepts them:
/// `1.0`, `0.5`, `0.0`, with or without brackets, or `1`, `1/2`, `0`.
pub fn parse_line(line: &str) -> Result<TrainingPosition, String> {
    let line = crate::text::strip_bom(line).trim_end_matches(['\r', '\n']);
    let mut fields = line.split('|');
    let (Some(fen), Some(score), Some(result), None) =
        (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err("expected `FEN | score | result` (three fields separated by '|')".to_string());
    };
    let position = Position::from_fen(fen.trim()).map_err(|e| e.to_string())?;
    let score = score.trim().parse::<i16>().map_err(|_| {
        format!(
            "score '{}' is not a whole number of centipawns",
            score.trim()
        )
    })?;
    let result = match result.trim() {
        "1.0" | "[1.0]" | "1" => GameResult::WhiteWins,
        "0.5" | "[0.5]" | "1/2" => GameResult::Draw,
        "0.0" | "[0.0]" | "0" => GameResult::BlackWins,
        other => return Err(format!("result '{other}' is not 1.0, 0.5 or 0.0")),
    };
    Ok(TrainingPosition {
        position,
        score,
        result,
    })
}

/// Appends the lines of the positions of `game` that `filter` keeps; returns how many.
pub fn encode_game(game: &TrainingGame, filter: &TextFilter, out: &mut Vec<u8>) -> u64 {
    let mut lines = 0;
    for p in game.positions() {
        if filter.keeps(&p.labelled.position, p.mv, p.labelled.score) {
            out.extend_from_slice(
                format_line(&p.labelled.position, p.labelled.score, p.labelled.result).as_bytes(),
            );
            out.push(b'\n');
            lines += 1;
        }
    }
    lines
}

/// Reads a text file line by line; blank lines are skipped, a leading BOM is dropped and
/// lines are bounded ([`crate::text::LineReader`]). After the first bad line (with its line
/// number and byte offset) the iterator ends.
pub struct TextReader<R> {
    lines: LineReader<R>,
    failed: bool,
}

impl<R: BufRead> TextReader<R> {
    /// A reader over a stream.
    pub fn new(reader: R) -> TextReader<R> {
        TextReader {
            lines: LineReader::new(reader, "text training data"),
            failed: false,
        }
    }

    /// Byte offset after the last line read.
    pub fn offset(&self) -> u64 {
        self.lines.offset()
    }
}

impl<R: BufRead> Iterator for TextReader<R> {
    type Item = Result<TrainingPosition, FormatError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.failed {
            let start = self.lines.offset();
            let line = match self.lines.next_line() {
                Ok(None) => return None,
                Ok(Some(line)) => line,
                Err(e) => {
                    self.failed = true;
                    let message = match e.kind {
                        TextErrorKind::NotUtf8 => "not UTF-8 text".to_string(),
                        TextErrorKind::TooLong(max) => {
                            format!("line longer than {max} bytes: not a text training file?")
                        }
                        TextErrorKind::Io(e) => format!("read error: {e}"),
                        TextErrorKind::TooBig(max) => format!("longer than {max} bytes"),
                    };
                    return Some(Err(FormatError {
                        offset: start,
                        line: Some(e.line),
                        message,
                    }));
                }
            };
            if line.trim().is_empty() {
                continue;
            }
            let parsed = parse_line(line).map_err(|message| FormatError {
                offset: start,
                line: Some(self.lines.line_number()),
                message,
            });
            self.failed = parsed.is_err();
            return Some(parsed);
        }
        None
    }
}

/// Opens a text file for reading position by position (a regular file only: see
/// [`crate::text::open_regular`]).
pub fn read_positions(path: impl AsRef<Path>) -> io::Result<TextReader<BufReader<File>>> {
    Ok(TextReader::new(BufReader::with_capacity(
        1 << 20,
        crate::text::open_regular(path.as_ref())?,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 31 | 0.5";

    #[test]
    fn a_bom_is_dropped() {
        assert!(parse_line(&format!("\u{feff}{LINE}")).is_ok());
        let text = format!("\u{feff}{LINE}\r\n\n{LINE}\n");
        let read: Vec<_> = TextReader::new(text.as_bytes()).collect();
        assert_eq!(read.len(), 2);
        assert!(read.iter().all(Result::is_ok), "{read:?}");
    }

    #[test]
    fn endless_or_binary_input_is_an_error_on_its_line() {
        let mut r = TextReader::new(BufReader::new(io::repeat(0)));
        let e = r.next().unwrap().unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(e.message.contains("line longer than"), "{e:?}");
        assert!(r.next().is_none());
        let text = format!("{LINE}\n\u{ff}\n").replace('\u{ff}', "x");
        let mut bytes = text.into_bytes();
        let at = bytes.len() - 2;
        bytes[at] = 0xff;
        let read: Vec<_> = TextReader::new(&bytes[..]).collect();
        let e = read[1].as_ref().unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (Some(2), "not UTF-8 text"));
    }
}
