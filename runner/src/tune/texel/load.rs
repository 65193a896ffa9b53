//! Reading training positions into a [`Dataset`].
//!
//! The text format is bullet's, as `spar datagen` writes it: one `FEN | score | result` line
//! per position, the result White's (`1.0`, `0.5`, `0.0`; also `1`, `1/2`, `0`, `1-0`,
//! `0-1`, `1/2-1/2`, optionally in brackets). The score (White-relative centipawns) is kept
//! for `--score-weight`. Blank lines and `#` comments are skipped; a last line
//! cut short (no newline, does not parse) is skipped with a note.
//!
//! viriformat files (whole games, binary) are read with `data::training::viriformat`; of
//! each game only the positions the text format would keep are used (the datagen text
//! filter: not in check, best move neither a capture nor a promotion, |score| ≤ 3000, game
//! ply ≥ 16), since a static evaluation cannot see the tactic a noisy position hinges on.
//! A game cut short at the end of the file (a run still writing) is left out with a note.
//!
//! Positions are parsed and traced in parallel, in fixed chunks, so the data set is in file
//! order.

use std::path::Path;

use data::training::filter::TextFilter;
use data::training::viriformat;
use engine::eval::trace;
use engine::position::Position;
use rayon::prelude::*;

use super::dataset::Dataset;

/// Lines per parallel work item.
const CHUNK: usize = 4096;

/// Parses a result field into White's points.
fn parse_result(text: &str) -> Option<f32> {
    let t = text.trim().trim_start_matches('[').trim_end_matches(']');
    match t.trim().trim_matches('"') {
        "1.0" | "1" | "1-0" => Some(1.0),
        "0.5" | "1/2" | "1/2-1/2" => Some(0.5),
        "0.0" | "0" | "0-1" => Some(0.0),
        _ => None,
    }
}

/// Parses one `FEN | score | result` line into a position, White's result and the score.
pub fn parse_line(line: &str) -> Result<(Position, f32, i16), String> {
    let fields: Vec<&str> = line.split('|').map(str::trim).collect();
    if fields.len() != 3 {
        return Err(format!(
            "expected `FEN | score | result` (3 fields separated by '|'), found {} field(s)",
            fields.len()
        ));
    }
    let position = Position::from_fen(fields[0]).map_err(|e| format!("bad FEN: {e}"))?;
    let score = fields[1]
        .parse::<i32>()
        .map_err(|_| format!("score '{}' is not a whole number", fields[1]))?
        .clamp(i16::MIN as i32, i16::MAX as i32) as i16;
    let result = parse_result(fields[2])
        .ok_or_else(|| format!("result '{}' is not 1.0, 0.5 or 0.0", fields[2]))?;
    Ok((position, result, score))
}

/// Builds a data set from the text of a file; errors name the file and line.
pub fn from_text(text: &str, origin: &str, limit: Option<usize>) -> Result<Dataset, String> {
    // A last line without its newline may be cut short (a run still writing, or killed):
    // it is used if it parses and skipped with a note otherwise.
    let mut text = text;
    if !text.ends_with('\n') {
        let cut = text.rfind('\n').map_or(0, |i| i + 1);
        let last = text[cut..].trim();
        if !last.is_empty() && !last.starts_with('#') && parse_line(last).is_err() {
            eprintln!(
                "note: --data {origin}: the last line is cut short; using the lines before it"
            );
            text = &text[..cut];
        }
    }
    let mut lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with('#')
        })
        .collect();
    if let Some(n) = limit {
        lines.truncate(n);
    }
    let parts: Vec<Result<Dataset, String>> = lines
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut d = Dataset::new();
            for &(i, line) in chunk {
                let (pos, result, score) =
                    parse_line(line).map_err(|e| format!("{origin}:{}: {e}", i + 1))?;
                d.push(&trace(&pos), result, score)
                    .map_err(|e| format!("{origin}:{}: {e}", i + 1))?;
            }
            Ok(d)
        })
        .collect();
    joined(parts)
}

/// Reads a text file of positions.
pub fn text_file(path: &Path, limit: Option<usize>) -> Result<Dataset, String> {
    // A regular file is read whole, whatever its size; anything else (a device, a pipe) is
    // read through the bounded reader, so an endless stream is an error, not all memory.
    let text = if let Some(m) = std::fs::metadata(path).ok().filter(|m| m.is_file()) {
        // Held whole in memory (and its positions beside it): bounded by what is free.
        let mib = m.len() >> 20;
        if let Some(have) = crate::plan::available_memory_mib().filter(|&h| mib > h / 2) {
            return Err(format!(
                "--data {}: {mib} MiB of text, more than half of the {have} MiB of memory available: \
                 give a viriformat file (read as a stream) or split the file",
                path.display()
            ));
        }
        let bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
        String::from_utf8(bytes).map_err(|_| {
            format!(
                "--data {}: not UTF-8 text; give --format viriformat for binary files",
                path.display()
            )
        })?
    } else {
        data::text::read_file(path)
            .map_err(|e| format!("--data {e}; give --format viriformat for binary files"))?
    };
    from_text(
        data::text::strip_bom(&text),
        &path.display().to_string(),
        limit,
    )
}

/// Which reader a data file needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Decide from the file's first 4 KiB: text if they are UTF-8 without control
    /// characters, viriformat otherwise.
    Auto,
    /// `FEN | score | result` lines.
    Text,
    /// viriformat games.
    Viriformat,
}

/// Guesses the format of a file from its first bytes.
pub fn detect(path: &Path) -> Result<Format, String> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(4096).read_to_end(&mut head))
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    let utf8 = match std::str::from_utf8(&head) {
        Ok(_) => true,
        // A multi-byte character cut at the end of the sample is still text.
        Err(e) => e.error_len().is_none(),
    };
    let control = head
        .iter()
        .any(|&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t'));
    Ok(if utf8 && !control {
        Format::Text
    } else {
        Format::Viriformat
    })
}

/// Positions per batch traced in parallel when reading viriformat.
const GAME_BATCH: usize = 1 << 16;

fn trace_batch(batch: &[(Position, f32, i16)]) -> Result<Dataset, String> {
    let parts: Vec<Result<Dataset, String>> = batch
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut d = Dataset::new();
            for (pos, result, score) in chunk {
                d.push(&trace(pos), *result, *score)?;
            }
            Ok(d)
        })
        .collect();
    joined(parts)
}

/// Reads the filtered positions of a viriformat file.
pub fn viriformat_file(path: &Path, limit: Option<usize>) -> Result<Dataset, String> {
    let games = viriformat::read_games(path)
        .map_err(|e| format!("cannot read --data {}: {e}", path.display()))?;
    let filter = TextFilter::default();
    let limit = limit.unwrap_or(usize::MAX);
    let mut all = Dataset::new();
    let mut batch: Vec<(Position, f32, i16)> = Vec::with_capacity(GAME_BATCH);
    let mut taken = 0usize;
    'games: for game in games {
        let game = match game {
            Ok(g) => g,
            Err(e) if e.message.starts_with("truncated") && e.offset > 0 => {
                eprintln!(
                    "note: --data {}: the last game is cut short ({e}); using the complete games",
                    path.display()
                );
                break;
            }
            Err(e) => {
                return Err(format!(
                    "--data {}: {e} (not a viriformat file? give --format text for text)",
                    path.display()
                ))
            }
        };
        let result = game.result.white_points();
        for p in game.positions() {
            if taken >= limit {
                break 'games;
            }
            let l = &p.labelled;
            if filter.keeps(&l.position, p.mv, l.score) {
                batch.push((l.position.clone(), result, l.score));
                taken += 1;
                if batch.len() == GAME_BATCH {
                    all.append(trace_batch(&batch)?);
                    batch.clear();
                }
            }
        }
    }
    all.append(trace_batch(&batch)?);
    Ok(all)
}

/// Reads a data file in the given (or detected) format.
pub fn file(path: &Path, format: Format, limit: Option<usize>) -> Result<Dataset, String> {
    let format = match format {
        Format::Auto => detect(path)?,
        f => f,
    };
    match format {
        Format::Viriformat => viriformat_file(path, limit),
        _ => text_file(path, limit),
    }
}

/// The parts read in parallel as one dataset, in their order; the first part's error if any.
fn joined(parts: Vec<Result<Dataset, String>>) -> Result<Dataset, String> {
    let mut all = Dataset::new();
    for p in parts {
        all.append(p?);
    }
    Ok(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_errors() {
        let text = "# comment\n\
            rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 31 | 0.5\r\n\
            \n\
            4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 20 | -12 | [0.0]\n\
            4k3/8/8/3p4/4P3/8/8/4K3 b - - 0 20 | 7 | 1-0\n";
        let d = from_text(text, "f", None).unwrap();
        assert_eq!(d.len(), 3);
        assert_eq!((d.result(0), d.result(1), d.result(2)), (0.5, 0.0, 1.0));
        assert_eq!(from_text(text, "f", Some(1)).unwrap().len(), 1);
        // A torn last line is skipped; a whole one without a newline is used.
        let torn = format!("{text}4k3/8/8/3p4/4P3/8/8/4K3 b - - 0 20 | 7");
        assert_eq!(from_text(&torn, "f", None).unwrap().len(), 3);
        let whole = format!("{text}4k3/8/8/3p4/4P3/8/8/4K3 b - - 0 20 | 7 | 0.5");
        assert_eq!(from_text(&whole, "f", None).unwrap().len(), 4);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.txt");
        std::fs::write(&path, text).unwrap();
        assert_eq!(detect(&path).unwrap(), Format::Text);
        assert_eq!(file(&path, Format::Auto, None).unwrap().len(), 3);
        for (bad, needle) in [
            ("8/8/8/8/8/8/8/8 w - - 0 1 | 0 | 0.5", "f:1: bad FEN"),
            (
                "\n4k3/8/8/8/8/8/8/4K3 w - - 0 1 | x | 0.5",
                "f:2: score 'x'",
            ),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 0 | 2", "result '2'"),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1 | 0", "found 2 field(s)"),
        ] {
            let err = from_text(&format!("{bad}\n"), "f", None).unwrap_err();
            assert!(err.contains(needle), "{bad}: {err}");
        }
    }

    #[test]
    fn viriformat_games_are_filtered_like_the_text_format() {
        use data::training::{ScoredMove, TrainingGame};
        use engine::types::GameResult;
        // 20 quiet king moves from ply 30 on: all kept; a game starting at ply 2: none kept
        // before ply 16.
        let mut bytes = Vec::new();
        for (fen, result) in [
            ("4k3/8/8/8/8/8/8/R3K3 w - - 0 16", GameResult::WhiteWins),
            ("4k3/8/8/8/8/8/8/R3K3 w - - 0 2", GameResult::Draw),
        ] {
            let start = Position::from_fen(fen).unwrap();
            let mut pos = start.clone();
            let mut moves = Vec::new();
            for i in 0..20 {
                let uci = ["e1d1", "e8d8", "d1e1", "d8e8"][i % 4];
                let mv = pos.parse_uci_move(uci).unwrap();
                moves.push(ScoredMove { mv, score: 500 });
                pos = pos.play(mv);
            }
            let game = TrainingGame {
                start,
                moves,
                result,
            };
            viriformat::encode_game(&game, &mut bytes);
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("g.vf");
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(detect(&path).unwrap(), Format::Viriformat);
        let d = file(&path, Format::Auto, None).unwrap();
        // Game 1: all 20 (ply 30..49). Game 2: plies 2..21, kept from ply 16: 6.
        assert_eq!(d.len(), 26);
        assert_eq!((d.result(0), d.result(25)), (1.0, 0.5));
        assert_eq!(file(&path, Format::Viriformat, Some(5)).unwrap().len(), 5);
        // A truncated last game is left out.
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        assert_eq!(file(&path, Format::Auto, None).unwrap().len(), 20);
        for junk in [&b"\xff\xfe short"[..], &[0xee; 100][..]] {
            std::fs::write(&path, junk).unwrap();
            let err = file(&path, Format::Viriformat, None).unwrap_err();
            assert!(err.contains("not a viriformat file?"), "{err}");
        }
    }
}
