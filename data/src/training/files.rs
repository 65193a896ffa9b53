//! The files a run appends training games to, and how a run continues after Ctrl-C or
//! `kill -9`.
//!
//! Each game is encoded whole in memory and written with one `write_all` per file, then the
//! next file, in this order: the viriformat file, the text file, the text file's index. A
//! process killed mid-write leaves at most one partial game at the end of one file.
//!
//! viriformat records are self-delimiting, so a partial last game is found by walking the
//! records. Text lines carry no game boundaries, so the text file has a small index next to
//! it (`FILE.idx`): one line `BYTES LINES` per game, the text file's length and line count
//! after that game. On resume every file is cut back to the last game that all of them hold
//! completely, so they stay in step.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use super::filter::TextFilter;
use super::viriformat::{self, BOARD_BYTES, ENTRY_BYTES};
use super::{text, TrainingGame};

/// Which files a run writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// viriformat only, at the given path.
    Viriformat,
    /// bullet text only, at the given path (plus its index, `PATH.idx`).
    Text,
    /// viriformat at the given path and text at `PATH.txt` (plus `PATH.txt.idx`).
    Both,
}

impl Format {
    /// Parses `viriformat`, `text` or `both`.
    pub fn parse(text: &str) -> Result<Format, String> {
        match text {
            "viriformat" | "vf" => Ok(Format::Viriformat),
            "text" | "txt" => Ok(Format::Text),
            "both" => Ok(Format::Both),
            other => Err(format!(
                "format '{other}' is not one of viriformat, text, both"
            )),
        }
    }

    /// The name [`Format::parse`] reads.
    pub fn name(self) -> &'static str {
        match self {
            Format::Viriformat => "viriformat",
            Format::Text => "text",
            Format::Both => "both",
        }
    }

    /// The files written for `path`.
    pub fn paths(self, path: &Path) -> TrainingPaths {
        let with_suffix = |p: &Path, s: &str| {
            let mut os = p.as_os_str().to_owned();
            os.push(s);
            PathBuf::from(os)
        };
        let (viriformat, text) = match self {
            Format::Viriformat => (Some(path.to_path_buf()), None),
            Format::Text => (None, Some(path.to_path_buf())),
            Format::Both => (Some(path.to_path_buf()), Some(with_suffix(path, ".txt"))),
        };
        let index = text.as_deref().map(|t| with_suffix(t, ".idx"));
        TrainingPaths {
            viriformat,
            text,
            index,
        }
    }
}

/// The paths of a run's files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingPaths {
    /// The viriformat file.
    pub viriformat: Option<PathBuf>,
    /// The text file.
    pub text: Option<PathBuf>,
    /// The text file's game index.
    pub index: Option<PathBuf>,
}

/// What was found when continuing a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resumed {
    /// Complete games kept.
    pub games: u64,
    /// Positions (moves) of those games in the viriformat file.
    pub positions: u64,
    /// Lines of those games in the text file.
    pub lines: u64,
    /// Bytes cut from the ends of the files (partial or surplus games).
    pub dropped_bytes: u64,
}

/// Resuming drops at most this many complete games from a file (a match writes its dump a
/// pair ahead of its results); more is refused as a mismatch.
pub const MAX_DROPPED_GAMES: u64 = 2;

/// Appends games to a run's files.
pub struct TrainingWriter {
    viriformat: Option<File>,
    text: Option<(File, File)>,
    paths: TrainingPaths,
    filter: TextFilter,
    games: u64,
    positions: u64,
    lines: u64,
    text_bytes: u64,
    buf: Vec<u8>,
}

/// Counts per game and the byte offset after each game, of one file.
struct Scan {
    /// (end offset, cumulative positions or lines) after each complete game.
    ends: Vec<(u64, u64)>,
    len: u64,
}

impl Scan {
    fn at(&self, games: u64) -> (u64, u64) {
        if games == 0 {
            (0, 0)
        } else {
            self.ends[games as usize - 1]
        }
    }
}

fn io_context(path: &Path) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{}: {e}", path.display())
}

/// Walks the viriformat records of a file without decoding moves: a partial last game is
/// left out; a result byte above 2 is an error (the file is not viriformat).
fn scan_viriformat(path: &Path) -> Result<Scan, String> {
    let mut ends = Vec::new();
    let len = walk_viriformat(path, (0, 0), |end, positions| ends.push((end, positions)))?;
    Ok(Scan { ends, len })
}

/// Walks the viriformat records of the file at `path` from byte `start.0` (where a game
/// starts; `start.1` positions before it), calling `end(offset after the game, positions
/// so far)` for each complete game; returns the file's length (0 when it is missing).
pub(super) fn walk_viriformat(
    path: &Path,
    start: (u64, u64),
    mut end: impl FnMut(u64, u64),
) -> Result<u64, String> {
    let mut file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(io_context(path)(e)),
    };
    let len = file.metadata().map_err(io_context(path))?.len();
    io::Seek::seek(&mut file, io::SeekFrom::Start(start.0)).map_err(io_context(path))?;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let (mut offset, mut positions) = start;
    'games: loop {
        let mut header = [0u8; BOARD_BYTES];
        if reader.read_exact(&mut header).is_err() {
            break;
        }
        if header[30] > 2 {
            return Err(format!(
                "{}: the game at byte offset {offset} has result byte {}: not a viriformat file \
                 (check `spar datagen --inspect {}`, or choose another output file)",
                path.display(),
                header[30],
                path.display()
            ));
        }
        let mut game_end = offset + BOARD_BYTES as u64;
        let mut moves = 0;
        loop {
            let mut entry = [0u8; ENTRY_BYTES];
            if reader.read_exact(&mut entry).is_err() {
                break 'games;
            }
            game_end += ENTRY_BYTES as u64;
            if entry == [0; ENTRY_BYTES] {
                break;
            }
            moves += 1;
        }
        offset = game_end;
        positions += moves;
        end(offset, positions);
    }
    Ok(len)
}

/// Reads a text file's index: complete `BYTES LINES` lines, checked against the text file.
fn scan_text(text_path: &Path, index_path: &Path) -> Result<Scan, String> {
    let mut ends = Vec::new();
    let len = walk_index(text_path, index_path, IndexAt::default(), |_, e| {
        ends.push(e)
    })?;
    Ok(Scan { ends, len })
}

/// Where a walk of a text file's index starts: the byte of the index after the entries
/// already read, their number and the last one's `(bytes, lines)`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct IndexAt {
    pub(super) offset: u64,
    pub(super) entries: u64,
    pub(super) last: (u64, u64),
}

/// Walks the complete `BYTES LINES` entries of `index_path` from `at`, checked against the
/// text file, calling `entry(where the walk is after it, (bytes, lines))` for each; returns
/// the text file's length.
pub(super) fn walk_index(
    text_path: &Path,
    index_path: &Path,
    at: IndexAt,
    mut entry: impl FnMut(IndexAt, (u64, u64)),
) -> Result<u64, String> {
    let len = match std::fs::metadata(text_path) {
        Ok(m) => m.len(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => 0,
        Err(e) => return Err(io_context(text_path)(e)),
    };
    let mut index = match File::open(index_path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return if len == 0 {
                Ok(0)
            } else {
                Err(format!(
                    "{} has no index {}: it cannot be resumed (start a new file)",
                    text_path.display(),
                    index_path.display()
                ))
            };
        }
        Err(e) => return Err(io_context(index_path)(e)),
    };
    io::Seek::seek(&mut index, io::SeekFrom::Start(at.offset)).map_err(io_context(index_path))?;
    let mut reader = BufReader::new(index);
    let mut line = String::new();
    let mut now = at;
    loop {
        line.clear();
        let n = reader
            .read_line(&mut line)
            .map_err(io_context(index_path))?;
        if n == 0 || !line.ends_with('\n') {
            break; // the end, or a half-written last entry
        }
        let number = now.entries + 1;
        let bad = || {
            format!(
                "{} line {number}: '{}' is not `BYTES LINES` of a spar text index",
                index_path.display(),
                line.trim_end()
            )
        };
        let mut words = line.split_whitespace().map(str::parse::<u64>);
        let (Some(Ok(bytes)), Some(Ok(lines)), None) = (words.next(), words.next(), words.next())
        else {
            return Err(bad());
        };
        if bytes < now.last.0 || lines < now.last.1 {
            return Err(bad());
        }
        if bytes > len {
            return Err(format!(
                "{} line {number} says {} holds {bytes} bytes but it holds {len}: \
                 the files do not belong together (start a new file)",
                index_path.display(),
                text_path.display()
            ));
        }
        now = IndexAt {
            offset: now.offset + n as u64,
            entries: number,
            last: (bytes, lines),
        };
        entry(now, (bytes, lines));
    }
    Ok(len)
}

fn open_append(path: &Path) -> Result<File, String> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(io_context(path))
}

fn cut(path: &Path, len: u64) -> Result<u64, String> {
    let file = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(io_context(path))?;
    let old = file.metadata().map_err(io_context(path))?.len();
    if old > len {
        file.set_len(len).map_err(io_context(path))?;
        file.sync_all().map_err(io_context(path))?;
    }
    Ok(old.saturating_sub(len))
}

/// Complete games that every file of `format` at `path` holds: the games a resume keeps
/// (at most; [`TrainingWriter::open`] may be asked to keep fewer). Reads, never changes,
/// the files; missing files hold none.
pub fn complete_games(path: &Path, format: Format) -> Result<u64, String> {
    let paths = format.paths(path);
    let mut games = u64::MAX;
    if let Some(p) = &paths.viriformat {
        games = games.min(scan_viriformat(p)?.ends.len() as u64);
    }
    if let (Some(t), Some(i)) = (&paths.text, &paths.index) {
        games = games.min(scan_text(t, i)?.ends.len() as u64);
    }
    Ok(games)
}

/// Where each complete game ends in the files of `format` at `path`: for each file, the
/// byte offset after each game and the positions (viriformat) or lines (text) up to it.
/// Reads, never changes, the files; missing files hold no games. Used to merge the files
/// of several shards game by game.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GameEnds {
    /// The viriformat file's games: (end offset, positions so far).
    pub viriformat: Vec<(u64, u64)>,
    /// The text file's games, from its index: (end offset, lines so far).
    pub text: Vec<(u64, u64)>,
}

/// The [`GameEnds`] of the files of `format` at `path`.
pub fn game_ends(path: &Path, format: Format) -> Result<GameEnds, String> {
    let paths = format.paths(path);
    let mut ends = GameEnds::default();
    if let Some(p) = &paths.viriformat {
        ends.viriformat = scan_viriformat(p)?.ends;
    }
    if let (Some(t), Some(i)) = (&paths.text, &paths.index) {
        ends.text = scan_text(t, i)?.ends;
    }
    Ok(ends)
}

/// Cuts the files of `format` at `path` back to their first `games` complete games, however
/// many more they hold (the caller has checked that they belong to its run; a match cuts
/// its dump back to the pairs its results file and PGN hold). Files holding no more than
/// `games` are left alone.
pub fn cut_to_games(path: &Path, format: Format, games: u64) -> Result<(), String> {
    let paths = format.paths(path);
    if let Some(p) = &paths.viriformat {
        let s = scan_viriformat(p)?;
        if (s.ends.len() as u64) >= games && s.len > 0 {
            cut(p, s.at(games).0)?;
        }
    }
    if let (Some(t), Some(i)) = (&paths.text, &paths.index) {
        let s = scan_text(t, i)?;
        if (s.ends.len() as u64) >= games {
            if s.len > 0 {
                cut(t, s.at(games).0)?;
            }
            if std::fs::metadata(i).is_ok() {
                let len = index_prefix_len(i, games)?;
                cut(i, len)?;
            }
        }
    }
    Ok(())
}

impl TrainingWriter {
    /// Opens the files of `format` at `path`.
    ///
    /// Without `resume`, existing non-empty files are an error (nothing is overwritten).
    /// With `resume`, the complete games already there are kept and partial ones cut off;
    /// `keep_games` (a match's resumed game count) cuts the files back further to exactly
    /// that many games when they hold more. Files that disagree by more than
    /// [`MAX_DROPPED_GAMES`] games are an error, never cut.
    pub fn open(
        path: &Path,
        format: Format,
        filter: TextFilter,
        resume: bool,
        keep_games: Option<u64>,
    ) -> Result<(TrainingWriter, Resumed), String> {
        let paths = format.paths(path);
        let all: Vec<&PathBuf> = [&paths.viriformat, &paths.text, &paths.index]
            .into_iter()
            .flatten()
            .collect();
        if !resume {
            for p in &all {
                if std::fs::metadata(p).is_ok_and(|m| m.len() > 0) {
                    return Err(format!(
                        "{} exists and is not empty: add --resume to continue it, or choose another file",
                        p.display()
                    ));
                }
            }
        }
        let vf_scan = match &paths.viriformat {
            Some(p) => Some(scan_viriformat(p)?),
            None => None,
        };
        let text_scan = match (&paths.text, &paths.index) {
            (Some(t), Some(i)) => Some(scan_text(t, i)?),
            _ => None,
        };
        let mut games = u64::MAX;
        for s in [&vf_scan, &text_scan].into_iter().flatten() {
            games = games.min(s.ends.len() as u64);
        }
        if let Some(k) = keep_games {
            games = games.min(k);
        }
        // A crash leaves the files at most a game or two apart (a match writes pairs); more
        // means they do not belong together, and cutting them back would delete games.
        for (p, s) in [(&paths.viriformat, &vf_scan), (&paths.text, &text_scan)] {
            if let (Some(p), Some(s)) = (p, s) {
                let held = s.ends.len() as u64;
                if held > games + MAX_DROPPED_GAMES {
                    return Err(format!(
                        "{} holds {held} complete games, but the run's other record holds only {games}: \
                         resuming would delete games. Resume with the same --format and files \
                         as the first run, or choose another file",
                        p.display()
                    ));
                }
            }
        }
        let mut resumed = Resumed {
            games,
            ..Resumed::default()
        };
        let mut text_bytes = 0;
        if let (Some(p), Some(s)) = (&paths.viriformat, &vf_scan) {
            let (end, positions) = s.at(games);
            resumed.positions = positions;
            if s.len > 0 {
                resumed.dropped_bytes += cut(p, end)?;
            }
        }
        if let (Some(t), Some(i), Some(s)) = (&paths.text, &paths.index, &text_scan) {
            let (end, lines) = s.at(games);
            resumed.lines = lines;
            text_bytes = end;
            if s.len > 0 {
                resumed.dropped_bytes += cut(t, end)?;
            }
            if std::fs::metadata(i).is_ok() {
                let index_len = index_prefix_len(i, games)?;
                resumed.dropped_bytes += cut(i, index_len)?;
            }
        }
        let viriformat = paths.viriformat.as_deref().map(open_append).transpose()?;
        let text = match (&paths.text, &paths.index) {
            (Some(t), Some(i)) => Some((open_append(t)?, open_append(i)?)),
            _ => None,
        };
        Ok((
            TrainingWriter {
                viriformat,
                text,
                paths,
                filter,
                games,
                positions: resumed.positions,
                lines: resumed.lines,
                text_bytes,
                buf: Vec::with_capacity(1 << 14),
            },
            resumed,
        ))
    }

    /// Appends one game to every file; returns (positions, text lines) written.
    pub fn write_game(&mut self, game: &TrainingGame) -> Result<(u64, u64), String> {
        let mut lines = 0;
        if let Some(f) = &mut self.viriformat {
            self.buf.clear();
            viriformat::encode_game(game, &mut self.buf);
            let path = self.paths.viriformat.as_deref().expect("path");
            f.write_all(&self.buf).map_err(io_context(path))?;
        }
        if let Some((f, index)) = &mut self.text {
            self.buf.clear();
            lines = text::encode_game(game, &self.filter, &mut self.buf);
            let path = self.paths.text.as_deref().expect("path");
            f.write_all(&self.buf).map_err(io_context(path))?;
            self.text_bytes += self.buf.len() as u64;
            self.lines += lines;
            let entry = format!("{} {}\n", self.text_bytes, self.lines);
            let path = self.paths.index.as_deref().expect("path");
            index
                .write_all(entry.as_bytes())
                .map_err(io_context(path))?;
        }
        self.games += 1;
        let positions = game.moves.len() as u64;
        self.positions += positions;
        Ok((positions, lines))
    }

    /// Forces everything written to disk (at the end of a run).
    pub fn sync(&mut self) -> Result<(), String> {
        if let (Some(f), Some(p)) = (&self.viriformat, &self.paths.viriformat) {
            f.sync_all().map_err(io_context(p))?;
        }
        if let (Some((f, i)), Some(p)) = (&self.text, &self.paths.text) {
            f.sync_all().map_err(io_context(p))?;
            i.sync_all().map_err(io_context(p))?;
        }
        Ok(())
    }

    /// Games in the files.
    pub fn games(&self) -> u64 {
        self.games
    }

    /// Positions (moves) in the viriformat file, or that would be there with text only.
    pub fn positions(&self) -> u64 {
        self.positions
    }

    /// Lines in the text file.
    pub fn lines(&self) -> u64 {
        self.lines
    }

    /// The files written.
    pub fn paths(&self) -> &TrainingPaths {
        &self.paths
    }
}

/// Byte length of the first `games` lines of an index file.
fn index_prefix_len(path: &Path, games: u64) -> Result<u64, String> {
    let mut reader = BufReader::new(File::open(path).map_err(io_context(path))?);
    let mut len = 0;
    let mut line = Vec::new();
    for _ in 0..games {
        line.clear();
        len += reader
            .read_until(b'\n', &mut line)
            .map_err(io_context(path))? as u64;
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_per_format() {
        let p = Path::new("out/games.vf");
        let both = Format::Both.paths(p);
        assert_eq!(both.viriformat.as_deref(), Some(p));
        assert_eq!(both.text.as_deref(), Some(Path::new("out/games.vf.txt")));
        assert_eq!(
            both.index.as_deref(),
            Some(Path::new("out/games.vf.txt.idx"))
        );
        let text = Format::Text.paths(Path::new("g.txt"));
        assert_eq!(text.viriformat, None);
        assert_eq!(text.index.as_deref(), Some(Path::new("g.txt.idx")));
        assert_eq!(Format::parse("both"), Ok(Format::Both));
        assert!(Format::parse("csv")
            .unwrap_err()
            .contains("viriformat, text, both"));
    }
}
