//! A run's training files counted as they grow: the complete games every file holds and
//! their positions (or text lines), each count reading only what was written since the
//! last one — the viriformat file's new records, the text index's new entries — and
//! counting from the start again when a file is now shorter than what was counted or its
//! bytes just before that point changed (it was cut back or replaced). What a server's
//! live reader of a datagen run keeps; [`super::files::game_ends`] reads the whole files.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use super::files::{walk_index, walk_viriformat, Format, IndexAt};

/// How many of the last games' counts are kept: the writer of one file is at most a game
/// or two ahead of the other's.
const RECENT: usize = 64;

/// The bytes just before where a count stopped that the next count checks are unchanged.
const TAIL: u64 = 64;

/// Complete games and the positions (text lines) up to the last of them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Games {
    /// Complete games.
    pub games: u64,
    /// Their positions (viriformat), or their lines (text only).
    pub positions: u64,
}

/// One walked file (the viriformat file, or a text file's index) where its count stopped.
#[derive(Debug, Default)]
struct Followed {
    /// Where the walk stopped: after the last complete game, or the index's last entry.
    at: IndexAt,
    /// Its bytes just before `at.offset`.
    tail: Vec<u8>,
    /// `(games, positions or lines)` after each of the last [`RECENT`] games.
    recent: VecDeque<(u64, u64)>,
}

impl Followed {
    /// The games counted and their positions (lines).
    fn games(&self) -> Games {
        Games {
            games: self.at.entries,
            positions: self.at.last.1,
        }
    }

    /// The positions (lines) after game `games`, when still known.
    fn after(&self, games: u64) -> Option<u64> {
        if games == 0 {
            return Some(0);
        }
        self.recent
            .iter()
            .find(|(g, _)| *g == games)
            .map(|(_, count)| *count)
    }

    /// Notes one more complete game.
    fn push(&mut self, at: IndexAt) {
        self.at = at;
        self.recent.push_back((at.entries, at.last.1));
        if self.recent.len() > RECENT {
            self.recent.pop_front();
        }
    }
}

/// The complete games of the files of a format at a path, counted as they grow (see the
/// module's documentation).
#[derive(Debug)]
pub struct GameCounter {
    viriformat: Option<(PathBuf, Followed)>,
    text: Option<(PathBuf, PathBuf, Followed)>,
}

impl GameCounter {
    /// A counter of the files of `format` at `path` (nothing counted yet).
    pub fn new(path: &Path, format: Format) -> GameCounter {
        let paths = format.paths(path);
        GameCounter {
            viriformat: paths.viriformat.map(|p| (p, Followed::default())),
            text: match (paths.text, paths.index) {
                (Some(t), Some(i)) => Some((t, i, Followed::default())),
                _ => None,
            },
        }
    }

    /// The complete games every file holds now, and the positions of the viriformat file
    /// (else the text file's lines) up to the last of them.
    pub fn count(&mut self) -> Result<Games, String> {
        if let Some((path, f)) = &mut self.viriformat {
            follow(path, f, |from, f| {
                let start = (from.offset, from.last.1);
                walk_viriformat(path, start, |end, positions| {
                    let at = f.at;
                    f.push(IndexAt {
                        offset: end,
                        entries: at.entries + 1,
                        last: (end, positions),
                    });
                })
                .map(|_| ())
            })?;
        }
        if let Some((text, index, f)) = &mut self.text {
            follow(index, f, |from, f| {
                walk_index(text, index, from, |at, _| f.push(at)).map(|_| ())
            })?;
        }
        let vf = self.viriformat.as_ref().map(|(_, f)| f);
        let text = self.text.as_ref().map(|(_, _, f)| f);
        let games = vf
            .iter()
            .chain(text.iter())
            .map(|f| f.games().games)
            .min()
            .unwrap_or(0);
        let Some(counted) = vf.or(text) else {
            return Ok(Games::default());
        };
        let positions = match counted.after(games) {
            Some(p) => p,
            // Far behind the other file (not as a writer leaves them): counted again.
            None => self.positions_after(games)?,
        };
        Ok(Games { games, positions })
    }

    /// The positions (lines) after game `games`, from the start of the counted file.
    fn positions_after(&self, games: u64) -> Result<u64, String> {
        let mut found = 0;
        let mut seen = 0;
        if let Some((path, _)) = &self.viriformat {
            walk_viriformat(path, (0, 0), |_, positions| {
                seen += 1;
                if seen == games {
                    found = positions;
                }
            })?;
        } else if let Some((text, index, _)) = &self.text {
            walk_index(text, index, IndexAt::default(), |at, (_, lines)| {
                if at.entries == games {
                    found = lines;
                }
            })?;
        }
        Ok(found)
    }
}

/// Counts on in the file at `path` with `walk` (from where `f` stopped, or from its start
/// when the file no longer holds what was counted), then notes its bytes before the new
/// stopping point.
fn follow(
    path: &Path,
    f: &mut Followed,
    walk: impl FnOnce(IndexAt, &mut Followed) -> Result<(), String>,
) -> Result<(), String> {
    if !holds(path, f.at.offset, &f.tail)? {
        *f = Followed::default();
    }
    walk(f.at, f)?;
    f.tail = tail(path, f.at.offset)?;
    Ok(())
}

/// Whether the file at `path` is at least `offset` bytes long and holds `tail` just
/// before it (a missing file holds what a count of nothing saw).
fn holds(path: &Path, offset: u64, tail_bytes: &[u8]) -> Result<bool, String> {
    if offset == 0 {
        return Ok(true);
    }
    Ok(tail(path, offset)
        .map(|now| now == tail_bytes)
        .unwrap_or(false))
}

/// The up to [`TAIL`] bytes of the file at `path` just before `offset` (an error when it
/// is shorter).
fn tail(path: &Path, offset: u64) -> Result<Vec<u8>, String> {
    if offset == 0 {
        return Ok(Vec::new());
    }
    let context = |e: io::Error| format!("{}: {e}", path.display());
    let mut file = File::open(path).map_err(context)?;
    let from = offset.saturating_sub(TAIL);
    file.seek(SeekFrom::Start(from)).map_err(context)?;
    let mut bytes = vec![0; (offset - from) as usize];
    file.read_exact(&mut bytes).map_err(context)?;
    Ok(bytes)
}
