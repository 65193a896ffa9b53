//! What a match writes: the PGN file and the results CSV that `--resume` continues from.
//!
//! Pairs are written in pair order, PGN first, then the two CSV rows. On resume the CSV is
//! the record: complete pairs are kept, a half-written last line or a pair with only one of
//! its rows (a crash between the two writes) is dropped and the file rewritten atomically,
//! so the run continues exactly after the last complete pair.

use std::path::Path;

use data::pgn::{self, GameRecord, MoveInfo, MoveRecord, PgnWriter};
use data::results::{ResultRow, ResultsWriter};
use engine::types::GameResult;

use crate::engines::variant::Variant;
use crate::files::book::OpeningBook;
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::PairOutcome;
use crate::play::tally::GameSummary;

/// A pair read back from the results file.
#[derive(Clone, Copy, Debug)]
pub struct ResumedPair {
    /// Its games as the tally needs them.
    pub games: [GameSummary; 2],
}

/// The files a match appends to.
pub struct MatchFiles {
    pgn: Option<PgnWriter>,
    results: Option<ResultsWriter>,
    resumed: Vec<ResumedPair>,
    date: String,
}

impl MatchFiles {
    /// Opens (or, with `resume`, continues) the output files. `names` are the two variants.
    pub fn open(
        pgn_path: Option<&Path>,
        results_path: Option<&Path>,
        resume: bool,
        names: [&str; 2],
    ) -> Result<MatchFiles, String> {
        let mut resumed = Vec::new();
        let results = match results_path {
            None => None,
            Some(path) => {
                let (writer, rows) =
                    ResultsWriter::create_or_resume(path, resume).map_err(|e| e.to_string())?;
                let (pairs, kept) = complete_pairs(&rows, names, path)?;
                resumed = pairs;
                if kept < rows.len() {
                    drop(writer);
                    rewrite_results(path, &rows[..kept])?;
                    Some(
                        ResultsWriter::create_or_resume(path, true)
                            .map_err(|e| e.to_string())?
                            .0,
                    )
                } else {
                    Some(writer)
                }
            }
        };
        let pgn = match pgn_path {
            Some(p) => Some(
                PgnWriter::append(p)
                    .map_err(|e| format!("cannot open --pgnout {}: {e}", p.display()))?,
            ),
            None => None,
        };
        Ok(MatchFiles {
            pgn,
            results,
            resumed,
            date: pgn::pgn_date_today(),
        })
    }

    /// Complete pairs found in the results file (pairs 0..n).
    pub fn resumed_pairs(&self) -> Vec<ResumedPair> {
        self.resumed.clone()
    }

    /// Writes both games of a pair: PGN first, then the CSV rows.
    pub fn write_pair(
        &mut self,
        pair: &PairOutcome,
        variants: &[Variant; 2],
        _book: &OpeningBook,
    ) -> Result<(), String> {
        for (g, game) in pair.games.iter().enumerate() {
            let (white, black) = if g == 0 {
                (&variants[0], &variants[1])
            } else {
                (&variants[1], &variants[0])
            };
            if let Some(w) = &mut self.pgn {
                let record = pgn_record(pair, g, game, white, black, &self.date);
                w.append_game(&record)
                    .map_err(|e| format!("writing {}: {e}", w.path().display()))?;
            }
            if let Some(r) = &mut self.results {
                let row = result_row(pair, g, game, &white.name, &black.name);
                r.append(&row).map_err(|e| e.to_string())?;
            }
        }
        Ok(())
    }
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

fn result_row(
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
) -> Result<(Vec<ResumedPair>, usize), String> {
    let mut pairs = Vec::new();
    let mut i = 0;
    while i + 1 < rows.len() {
        let (a, b) = (&rows[i], &rows[i + 1]);
        let k = pairs.len() as u64;
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
