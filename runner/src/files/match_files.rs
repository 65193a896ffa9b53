//! What a match writes: the PGN file, the position dump and the results CSV that
//! `--resume` continues from.
//!
//! Pairs are written in pair order: both games to the position dump, then both games to
//! the PGN, then the two CSV rows. The CSV is the commit record: a pair counts once its
//! second row is written. On resume the files are brought back into step with it, so that
//! after a kill at any moment the finished run is the same as an uninterrupted one:
//!
//! - the CSV keeps its complete pairs (a half-written last line or a pair with one row is
//!   dropped, the file rewritten atomically);
//! - the PGN (from where this run's games start, see [`MatchFiles::pgn_start`]) and the
//!   dump are cut back to exactly those pairs' games (a torn last game, or games of a pair
//!   that never reached the CSV, are dropped);
//! - if the PGN or the dump holds fewer games than the CSV (lost after a crash of the
//!   machine), the missing games cannot be rebuilt: the CSV is cut back to the pairs that
//!   every file holds, and those pairs are played again;
//! - a PGN or dump that does not exist at all while the CSV holds finished pairs is a wrong
//!   path, not a crash: the resume is refused and nothing is changed.

use std::path::Path;

use data::pgn::{self, GameRecord, MoveInfo, MoveRecord, PgnWriter};
use data::results::{ResultRow, ResultsWriter};
use data::training::files::{complete_games, cut_to_games};
use engine::types::GameResult;

use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::files::kill_point;
use crate::files::position_dump::{parse_spec, PositionDump};
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::{PairOutcome, Stride};
use crate::play::tally::GameSummary;

/// A pair read back from the results file.
#[derive(Clone, Copy, Debug)]
pub struct ResumedPair {
    /// Its games as the tally needs them.
    pub games: [GameSummary; 2],
}

/// What [`MatchFiles::open`] opens.
pub struct OpenFiles<'a> {
    /// `--pgnout`.
    pub pgn: Option<&'a Path>,
    /// `--results`.
    pub results: Option<&'a Path>,
    /// `--dump-positions` words.
    pub dump: Option<&'a [String]>,
    /// `--resume`.
    pub resume: bool,
    /// The two variants' names.
    pub names: [&'a str; 2],
    /// Where this run's games start in the PGN (the run record's `pgn_start`; 0 when the
    /// run has no record).
    pub pgn_start: u64,
    /// No warnings on stderr.
    pub quiet: bool,
    /// The pairs this run plays (all; or every Nth, for a shard of a cluster run): the
    /// results file holds them in this order.
    pub stride: Stride,
}

/// A PGN layout in place of spar's own (a personality's: `ToolPgn` in cmd/compat): game `g`
/// (0 or 1) of a pair, its White and Black, and when it ended, as the game's PGN text
/// (ending with a blank line, as spar's).
pub type PgnFormat = Box<
    dyn Fn(&PairOutcome, usize, &Variant, &Variant, std::time::SystemTime) -> Result<String, String>
        + Send,
>;

/// The refusal of a `--resume` whose PGN or position dump does not exist while the results
/// file holds finished pairs: most likely a wrong path, and going on would drop those pairs'
/// results to play them again.
fn missing_file(flag: &str, path: &Path, results: Option<&Path>, committed: u64) -> String {
    let results = results.map_or(String::new(), |r| r.display().to_string());
    format!(
        "--resume: {flag} {} does not exist, but the results file {results} holds {committed} finished \
         pairs whose games it should hold: give the run's own {flag} file (nothing was changed); \
         to play the run again from its first pair, start a new --results file",
        path.display()
    )
}

/// The files a match appends to.
pub struct MatchFiles {
    pgn: Option<PgnWriter>,
    pgn_format: Option<PgnFormat>,
    results: Option<ResultsWriter>,
    dump: PositionDump,
    resumed: Vec<ResumedPair>,
    pgn_start: u64,
    date: String,
}

impl MatchFiles {
    /// Opens (or, with `resume`, continues and repairs) the output files.
    pub fn open(o: &OpenFiles) -> Result<MatchFiles, String> {
        let mut resumed = Vec::new();
        let mut rows = Vec::new();
        let mut kept = 0;
        let mut results = None;
        if let Some(path) = o.results {
            let (writer, all) =
                ResultsWriter::create_or_resume(path, o.resume).map_err(|e| e.to_string())?;
            let (pairs, k) = complete_pairs(&all, o.names, path, o.stride)?;
            resumed = pairs;
            kept = k;
            rows = all;
            results = Some(writer);
        }
        let committed = resumed.len() as u64;
        // The pairs every file holds.
        let mut pairs = committed;
        let mut pgn_games = None;
        let mut pgn_start = 0;
        if let Some(p) = o.pgn {
            // A special file (`/dev/null`, a FIFO to a reader) is written in place and never
            // read back: reading `/dev/zero` would never end, a FIFO would block.
            let text = match std::fs::metadata(p) {
                Ok(m) if !m.is_file() => Vec::new(),
                _ => match std::fs::read(p) {
                    Ok(t) => t,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        if o.resume && committed > 0 {
                            return Err(missing_file("--pgnout", p, o.results, committed));
                        }
                        Vec::new()
                    }
                    Err(e) => return Err(format!("cannot read --pgnout {}: {e}", p.display())),
                },
            };
            pgn_start = text.len() as u64;
            if o.resume {
                // A PGN shorter than where the run started was replaced: take it whole.
                pgn_start = if o.pgn_start <= text.len() as u64 {
                    o.pgn_start
                } else {
                    0
                };
                let ends = game_ends(&text[pgn_start as usize..]).ok_or_else(|| {
                    format!(
                        "--resume: --pgnout {} has no PGN game at byte {pgn_start}, where this run's games start: \
                         it is not this run's PGN (give a new --pgnout file)",
                        p.display()
                    )
                })?;
                let held = ends.len() as u64;
                if held > 2 * committed + 2 {
                    return Err(format!(
                        "--resume: --pgnout {} holds {held} games of the run but the results file {} only {}: \
                         they are not the same run's files (give a new --pgnout file)",
                        p.display(),
                        o.results.map_or(String::new(), |r| r.display().to_string()),
                        2 * committed
                    ));
                }
                pairs = pairs.min(held / 2);
                pgn_games = Some(ends);
            }
        }
        let mut dump_spec = None;
        if let (true, Some(words)) = (o.resume, o.dump) {
            let spec = parse_spec(words)?;
            if committed > 0 && !spec.path.exists() {
                return Err(missing_file(
                    "--dump-positions",
                    &spec.path,
                    o.results,
                    committed,
                ));
            }
            let held = complete_games(&spec.path, spec.format)
                .map_err(|e| format!("--dump-positions: {e}"))?;
            // A kill leaves the dump at most a pair ahead of the results file.
            if held > 2 * committed + 2 {
                return Err(format!(
                    "--resume: --dump-positions {} holds {held} games but the results file only {}: \
                     they are not the same run's files (give a new --dump-positions file)",
                    spec.path.display(),
                    2 * committed
                ));
            }
            pairs = pairs.min(held / 2);
            dump_spec = Some(spec);
        }
        // Nothing has been changed so far; from here on the files are cut back to `pairs`.
        if let Some(spec) = &dump_spec {
            cut_to_games(&spec.path, spec.format, 2 * pairs)
                .map_err(|e| format!("--dump-positions: {e}"))?;
        }
        let dump = PositionDump::open(o.dump, o.resume, 2 * pairs, o.quiet)?;
        if let Some(path) = o.results {
            if pairs < committed {
                if !o.quiet {
                    eprintln!(
                        "spar: warning: --resume: the PGN or the position dump holds only the games of \
                         {pairs} of the {committed} pairs in {}; the missing games cannot be rebuilt, so \
                         pairs {pairs}.. are played again",
                        path.display()
                    );
                }
                resumed.truncate(pairs as usize);
                kept = 2 * pairs as usize;
            }
            if kept < rows.len() {
                drop(results.take());
                rewrite_results(path, &rows[..kept])?;
                results = Some(
                    ResultsWriter::create_or_resume(path, true)
                        .map_err(|e| e.to_string())?
                        .0,
                );
            }
        }
        if let (Some(p), Some(ends)) = (o.pgn, &pgn_games) {
            let games = 2 * pairs as usize;
            let end = pgn_start + if games == 0 { 0 } else { ends[games - 1] };
            cut(p, end).map_err(|e| format!("cannot cut --pgnout {}: {e}", p.display()))?;
        }
        let pgn = match o.pgn {
            Some(p) => Some(
                PgnWriter::append(p)
                    .map_err(|e| format!("cannot open --pgnout {}: {e}", p.display()))?,
            ),
            None => None,
        };
        Ok(MatchFiles {
            pgn,
            pgn_format: None,
            results,
            dump,
            resumed,
            pgn_start,
            date: pgn::pgn_date_today(),
        })
    }

    /// Complete pairs found in the results file (pairs 0..n).
    pub fn resumed_pairs(&self) -> Vec<ResumedPair> {
        self.resumed.clone()
    }

    /// The byte offset in the PGN where this run's games start (its length when a new run
    /// began appending to it): kept in the run record so a resume cuts only this run's games.
    pub fn pgn_start(&self) -> u64 {
        self.pgn_start
    }

    /// Writes the PGN's games in `format` instead of spar's own layout.
    pub fn set_pgn_format(&mut self, format: PgnFormat) {
        self.pgn_format = Some(format);
    }

    /// Writes both games of a pair: to the dump, then the PGN, then the CSV rows (the
    /// commit record, last). A failed write is a failure (exit 1), not bad input.
    pub fn write_pair(&mut self, pair: &PairOutcome, variants: &[Variant; 2]) -> CliResult {
        self.dump.write_pair(pair)?;
        let seats = |g: usize| {
            if g == 0 {
                (&variants[0], &variants[1])
            } else {
                (&variants[1], &variants[0])
            }
        };
        if let Some(w) = &mut self.pgn {
            // A game's clock time for a tool's PGN: spar keeps none, so the second game is
            // taken to end now, when its pair is written, and the first game the second's
            // duration before.
            let now = std::time::SystemTime::now();
            for (g, game) in pair.games.iter().enumerate() {
                let (white, black) = seats(g);
                let written = match &self.pgn_format {
                    Some(format) => {
                        let ended = if g == 0 {
                            now.checked_sub(pair.games[1].duration).unwrap_or(now)
                        } else {
                            now
                        };
                        format(pair, g, white, black, ended)
                            .and_then(|text| w.append_text(&text).map_err(|e| e.to_string()))
                    }
                    None => {
                        let record = pgn_record(pair, g, game, white, black, &self.date);
                        w.append_game(&record).map_err(|e| e.to_string())
                    }
                };
                written.map_err(|e| {
                    CliError::failure(format!("writing {}: {e}", w.path().display()))
                })?;
                kill_point::record_written();
            }
        }
        if let Some(r) = &mut self.results {
            for (g, game) in pair.games.iter().enumerate() {
                let (white, black) = seats(g);
                let row = result_row(pair, g, game, &white.name, &black.name);
                r.append(&row)
                    .map_err(|e| CliError::failure(e.to_string()))?;
                kill_point::record_written();
            }
        }
        Ok(())
    }
}

/// The byte offsets after each complete game of PGN text written by spar, up to the first
/// incomplete (torn) one; `None` when the text is not empty and does not start with a game.
pub fn game_ends(text: &[u8]) -> Option<Vec<u64>> {
    const EVENT: &[u8] = b"[Event ";
    if text.is_empty() {
        return Some(Vec::new());
    }
    if !text.starts_with(EVENT) {
        return None;
    }
    let mut starts: Vec<usize> = vec![0];
    for i in 1..text.len() {
        if text[i - 1] == b'\n' && text[i..].starts_with(EVENT) {
            starts.push(i);
        }
    }
    let mut ends = Vec::new();
    for (k, &s) in starts.iter().enumerate() {
        let e = starts.get(k + 1).copied().unwrap_or(text.len());
        let game = &text[s..e];
        let complete = [&b"1-0"[..], b"0-1", b"1/2-1/2", b"*"].iter().any(|r| {
            game.len() > r.len() + 2
                && game.ends_with(b"\n\n")
                && game[..game.len() - 2].ends_with(r)
                && matches!(game[game.len() - 3 - r.len()], b' ' | b'\n')
        });
        if !complete {
            break;
        }
        ends.push(e as u64);
    }
    Some(ends)
}

/// Cuts a file back to `len` bytes (when longer).
fn cut(path: &Path, len: u64) -> std::io::Result<()> {
    let f = match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if f.metadata()?.len() > len {
        f.set_len(len)?;
        f.sync_all()?;
    }
    Ok(())
}

fn pgn_record(
    pair: &PairOutcome,
    g: usize,
    game: &PlayedGame,
    white: &Variant,
    black: &Variant,
    date: &str,
) -> GameRecord {
    let moves = game
        .moves
        .iter()
        .map(|m| {
            if m.book {
                MoveRecord::book(m.mv)
            } else {
                let info = m.score.map(|s| MoveInfo {
                    score: s,
                    depth: m.depth.max(0) as u32,
                    nodes: m.nodes,
                    time_ms: m.time.as_millis() as u64,
                });
                MoveRecord::engine(m.mv, info)
            }
        })
        .collect();
    let tc = white.limits.describe();
    GameRecord {
        event: "spar match".to_string(),
        site: "?".to_string(),
        date: date.to_string(),
        round: format!("{}.{}", pair.pair + 1, g + 1),
        white: white.name.clone(),
        black: black.name.clone(),
        result: Some(game.outcome),
        start_fen: game.start_fen.clone(),
        chess960: game.chess960,
        opening: pair.opening.to_string(),
        termination: game.termination.pgn().to_string(),
        reason: game.reason.clone(),
        time_control: if black.limits.describe() == tc {
            tc
        } else {
            format!("{tc} vs {}", black.limits.describe())
        },
        moves,
        extra_tags: Vec::new(),
    }
}

/// The results row of game `g` of a pair, `white` against `black`.
pub(crate) fn result_row(
    pair: &PairOutcome,
    g: usize,
    game: &PlayedGame,
    white: &str,
    black: &str,
) -> ResultRow {
    ResultRow {
        pair: pair.pair,
        game: g as u8,
        opening: pair.opening as u64,
        seed: pair.seed,
        white: white.to_string(),
        black: black.to_string(),
        result: game.outcome.pgn().to_string(),
        termination: game.termination.key().to_string(),
        plies: game.moves.iter().filter(|m| !m.book).count() as u32,
        white_nodes: game.nodes[0],
        black_nodes: game.nodes[1],
        duration_ms: game.duration.as_millis() as u64,
    }
}

/// The complete pairs 0..n at the start of the rows, and how many rows they span.
fn complete_pairs(
    rows: &[ResultRow],
    names: [&str; 2],
    path: &Path,
    stride: Stride,
) -> Result<(Vec<ResumedPair>, usize), String> {
    let mut pairs = Vec::new();
    let mut i = 0;
    while i + 1 < rows.len() {
        let (a, b) = (&rows[i], &rows[i + 1]);
        let k = stride.job(pairs.len() as u64);
        if a.pair != k || b.pair != k || a.game != 0 || b.game != 1 {
            break;
        }
        let mut games = [None, None];
        for (slot, row) in games.iter_mut().zip([a, b]) {
            let first_is_white = row.white == names[0] && row.black == names[1];
            let first_is_black = row.white == names[1] && row.black == names[0];
            if !first_is_white && !first_is_black {
                return Err(format!(
                    "--resume: {} has games of '{}' vs '{}', not of '{}' vs '{}': resume with the same engines, or write to a new --results file",
                    path.display(),
                    row.white,
                    row.black,
                    names[0],
                    names[1]
                ));
            }
            let outcome = GameResult::from_pgn(&row.result).ok_or_else(|| {
                format!(
                    "--resume: {} pair {}: unknown result '{}'",
                    path.display(),
                    row.pair,
                    row.result
                )
            })?;
            let termination = Termination::from_key(&row.termination).ok_or_else(|| {
                format!(
                    "--resume: {} pair {}: unknown termination '{}'",
                    path.display(),
                    row.pair,
                    row.termination
                )
            })?;
            *slot = Some(GameSummary {
                first_is_white,
                outcome,
                termination,
            });
        }
        pairs.push(ResumedPair {
            games: games.map(|g| g.expect("both set")),
        });
        i += 2;
    }
    Ok((pairs, i))
}

fn rewrite_results(path: &Path, rows: &[ResultRow]) -> Result<(), String> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let tmp = tempfile::Builder::new()
        .prefix(".spar-results")
        .tempfile_in(dir)
        .map_err(|e| format!("cannot rewrite {}: {e}", path.display()))?;
    {
        let (mut w, _) =
            ResultsWriter::create_or_resume(tmp.path(), true).map_err(|e| e.to_string())?;
        for row in rows {
            w.append(row).map_err(|e| e.to_string())?;
        }
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = tmp
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644));
    }
    tmp.persist(path)
        .map_err(|e| format!("cannot rewrite {}: {e}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::game_ends;

    #[test]
    fn games_are_counted_up_to_a_torn_one() {
        let g1 = "[Event \"spar match\"]\n[Result \"1-0\"]\n\n1. e4 {book} e5 1-0\n\n";
        let g2 = "[Event \"spar match\"]\n[Result \"*\"]\n\n1. d4 *\n\n";
        let both = format!("{g1}{g2}");
        assert_eq!(
            game_ends(both.as_bytes()),
            Some(vec![g1.len() as u64, both.len() as u64])
        );
        for cut in [1, 2, 5, g2.len() - 9] {
            let torn = &both.as_bytes()[..both.len() - cut];
            assert_eq!(game_ends(torn), Some(vec![g1.len() as u64]), "cut {cut}");
        }
        // Cut right after the tags: not a game yet.
        let tags = format!("{g1}[Event \"x\"]\n[Result \"1-0\"]\n\n");
        assert_eq!(game_ends(tags.as_bytes()), Some(vec![g1.len() as u64]));
        assert_eq!(game_ends(b""), Some(vec![]));
        assert_eq!(game_ends(b"not a pgn"), None);
    }
}
