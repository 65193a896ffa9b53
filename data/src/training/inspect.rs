//! What a training file holds: counts, the result distribution, a score histogram and a few
//! decoded sample positions, read with every record checked.

use std::io::{self, Read};
use std::path::Path;

use engine::rng::SplitMix64;

use super::text::{self, format_line};
use super::viriformat::{self, wdl_byte, BOARD_BYTES};
use super::{FormatError, TrainingPosition, MATE_SCORE_MIN};

/// The two file formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Binary viriformat.
    Viriformat,
    /// bullet text.
    Text,
}

/// Guesses a file's format from its first bytes (after a UTF-8 BOM, if any): text if they
/// are printable ASCII lines containing `|`, viriformat otherwise.
pub fn detect(path: &Path) -> io::Result<FileKind> {
    let mut head = Vec::with_capacity(256);
    // A regular file only: it is read again after this guess (a pipe could not be).
    crate::text::open_regular(path)?
        .take(256)
        .read_to_end(&mut head)?;
    // A BOM (an editor's mark of UTF-8 text) says text, not a binary record.
    let head = crate::text::strip_bom_bytes(&head);
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let printable = head
        .iter()
        .all(|&b| b == b'\n' || b == b'\r' || (0x20..0x7f).contains(&b));
    Ok(if printable && first_line.contains(&b'|') {
        FileKind::Text
    } else {
        FileKind::Viriformat
    })
}

/// Upper edges of the score histogram's buckets (White-relative centipawns); a last bucket
/// takes larger scores, mates are counted apart.
pub const HISTOGRAM_EDGES: [i32; 14] = [
    -2000, -1000, -500, -200, -100, -50, -10, 10, 50, 100, 200, 500, 1000, 2000,
];

/// Everything `spar datagen --inspect` prints.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The format read.
    pub kind: FileKind,
    /// File size.
    pub bytes: u64,
    /// Games (viriformat only).
    pub games: Option<u64>,
    /// Results of the games, indexed by [`wdl_byte`](super::viriformat::wdl_byte) (viriformat only).
    pub game_results: [u64; 3],
    /// Shortest and longest game in positions (viriformat only).
    pub game_lengths: Option<(u64, u64)>,
    /// Positions read.
    pub positions: u64,
    /// Positions by game result, indexed by [`wdl_byte`](super::viriformat::wdl_byte).
    pub results: [u64; 3],
    /// Positions per histogram bucket ([`HISTOGRAM_EDGES`] plus one).
    pub histogram: [u64; 15],
    /// Positions with a mate score.
    pub mates: u64,
    /// Positions with the side to move in check.
    pub in_check: u64,
    /// Sum of scores, for the mean (mates excluded).
    pub score_sum: i64,
    /// Sum of |score| (mates excluded).
    pub abs_score_sum: u64,
    /// A few positions spread over the file, as text lines (with the move played, for
    /// viriformat).
    pub samples: Vec<String>,
    /// The first bad record, if any; counts cover what came before it.
    pub error: Option<FormatError>,
}

impl Summary {
    fn new(kind: FileKind, bytes: u64) -> Summary {
        Summary {
            kind,
            bytes,
            games: None,
            game_results: [0; 3],
            game_lengths: None,
            positions: 0,
            results: [0; 3],
            histogram: [0; 15],
            mates: 0,
            in_check: 0,
            score_sum: 0,
            abs_score_sum: 0,
            samples: Vec::new(),
            error: None,
        }
    }

    fn add(&mut self, p: &TrainingPosition) {
        self.positions += 1;
        self.results[wdl_byte(p.result) as usize] += 1;
        if p.position.in_check() {
            self.in_check += 1;
        }
        let s = i32::from(p.score);
        if s.abs() >= i32::from(MATE_SCORE_MIN) {
            self.mates += 1;
        } else {
            self.score_sum += i64::from(s);
            self.abs_score_sum += s.unsigned_abs() as u64;
            let bucket = HISTOGRAM_EDGES
                .iter()
                .position(|&edge| s < edge)
                .unwrap_or(HISTOGRAM_EDGES.len());
            self.histogram[bucket] += 1;
        }
    }

    /// The report, one line per entry.
    pub fn report(&self) -> Vec<String> {
        let pct = |n: u64, of: u64| 100.0 * n as f64 / of.max(1) as f64;
        let mut lines = Vec::new();
        let kind = match self.kind {
            FileKind::Viriformat => "viriformat",
            FileKind::Text => "text",
        };
        lines.push(format!("Format: {kind}, {} bytes", self.bytes));
        if let Some(games) = self.games {
            let (shortest, longest) = self.game_lengths.unwrap_or((0, 0));
            lines.push(format!(
                "Games: {games}, positions: {} ({:.1} per game, shortest {shortest}, longest {longest})",
                self.positions,
                self.positions as f64 / games.max(1) as f64
            ));
            let r = &self.game_results;
            lines.push(format!(
                "Game results: 1-0 {} ({:.1} %), 1/2-1/2 {} ({:.1} %), 0-1 {} ({:.1} %)",
                r[2],
                pct(r[2], games),
                r[1],
                pct(r[1], games),
                r[0],
                pct(r[0], games)
            ));
        } else {
            lines.push(format!("Positions: {}", self.positions));
        }
        let r = &self.results;
        let n = self.positions;
        lines.push(format!(
            "Position results (White): 1.0 {} ({:.1} %), 0.5 {} ({:.1} %), 0.0 {} ({:.1} %)",
            r[2],
            pct(r[2], n),
            r[1],
            pct(r[1], n),
            r[0],
            pct(r[0], n)
        ));
        let scored = (n - self.mates).max(1);
        lines.push(format!(
            "Scores (White, cp): mean {:.1}, mean |score| {:.1}; {} mate scores; {} in check ({:.1} %)",
            self.score_sum as f64 / scored as f64,
            self.abs_score_sum as f64 / scored as f64,
            self.mates,
            self.in_check,
            pct(self.in_check, n)
        ));
        lines.push("Score histogram (White, cp):".to_string());
        let most = self.histogram.iter().copied().max().unwrap_or(0).max(1);
        for (i, &count) in self.histogram.iter().enumerate() {
            let label = match i {
                0 => format!("< {}", HISTOGRAM_EDGES[0]),
                i if i == HISTOGRAM_EDGES.len() => {
                    format!(">= {}", HISTOGRAM_EDGES[i - 1])
                }
                i => format!("{} .. {}", HISTOGRAM_EDGES[i - 1], HISTOGRAM_EDGES[i] - 1),
            };
            let bar = "#".repeat((40 * count).div_ceil(most) as usize);
            lines.push(format!(
                "  {label:>13} {count:>10} {:>5.1} % {bar}",
                pct(count, n)
            ));
        }
        if !self.samples.is_empty() {
            lines.push("Samples:".to_string());
            lines.extend(self.samples.iter().map(|s| format!("  {s}")));
        }
        lines
    }
}

/// Reservoir sampling with a fixed seed: the same file gives the same samples.
struct Sampler {
    rng: SplitMix64,
    want: usize,
    seen: u64,
    picked: Vec<String>,
}

impl Sampler {
    fn offer(&mut self, line: impl FnOnce() -> String) {
        self.seen += 1;
        if self.picked.len() < self.want {
            self.picked.push(line());
        } else {
            let j = self.rng.below(self.seen as usize);
            if j < self.want {
                self.picked[j] = line();
            }
        }
    }
}

/// Reads a whole file of either format with every record checked. I/O errors (the file
/// cannot be opened) are returned; format errors end the reading and are in
/// [`Summary::error`].
pub fn inspect(path: &Path, kind: FileKind, samples: usize) -> io::Result<Summary> {
    let bytes = std::fs::metadata(path)?.len();
    let mut summary = Summary::new(kind, bytes);
    let mut sampler = Sampler {
        rng: SplitMix64::new(0x5eed),
        want: samples,
        seen: 0,
        picked: Vec::new(),
    };
    match kind {
        FileKind::Viriformat => {
            let mut games = 0;
            let mut lengths: Option<(u64, u64)> = None;
            for game in viriformat::read_games(path)? {
                let game = match game {
                    Ok(g) => g,
                    Err(e) => {
                        summary.error = Some(e);
                        break;
                    }
                };
                games += 1;
                summary.game_results[wdl_byte(game.result) as usize] += 1;
                let len = game.moves.len() as u64;
                lengths = Some(lengths.map_or((len, len), |(a, b)| (a.min(len), b.max(len))));
                for p in game.positions() {
                    summary.add(&p.labelled);
                    let chess960 = p.labelled.position.is_chess960();
                    sampler.offer(|| {
                        let l = &p.labelled;
                        format!(
                            "{}  (played {})",
                            format_line(&l.position, l.score, l.result),
                            p.mv.to_uci(chess960)
                        )
                    });
                }
            }
            summary.games = Some(games);
            summary.game_lengths = lengths;
            if bytes > 0 && games == 0 && summary.error.is_none() {
                summary.error = Some(FormatError {
                    offset: 0,
                    line: None,
                    message: format!(
                        "no complete game (a game takes at least {BOARD_BYTES} + 4 bytes)"
                    ),
                });
            }
        }
        FileKind::Text => {
            for p in text::read_positions(path)? {
                match p {
                    Ok(p) => {
                        summary.add(&p);
                        sampler.offer(|| format_line(&p.position, p.score, p.result));
                    }
                    Err(e) => {
                        summary.error = Some(e);
                        break;
                    }
                }
            }
        }
    }
    summary.samples = sampler.picked;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bom_marks_text_not_viriformat() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bom.txt");
        let line = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 | 31 | 0.5\n";
        std::fs::write(&path, format!("\u{feff}{line}{line}")).unwrap();
        assert_eq!(detect(&path).unwrap(), FileKind::Text);
        let summary = inspect(&path, FileKind::Text, 1).unwrap();
        assert!(summary.error.is_none(), "{:?}", summary.error);
        assert_eq!(summary.positions, 2);
    }
}
