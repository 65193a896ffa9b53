//! `--dump-positions FILE [format=…]`: training positions from the games a match plays anyway.
//!
//! Every finished game is appended (both games of a pair, in pair order, before the pair's
//! results-CSV rows) as a viriformat record and/or bullet text lines. A game's record starts
//! where the engines took over (after the book moves) and runs up to the first move without
//! a score (external engines that report none); games lost to a crash, a hang, an illegal
//! move or the clock are written without moves, so the files keep one record per game and
//! `--resume` can cut them back to the pairs the results file holds.

use std::path::PathBuf;

use data::training::files::{Format, TrainingWriter};
use data::training::filter::TextFilter;
use data::training::{white_score, ScoredMove, TrainingGame};
use engine::position::Position;

use crate::error::{CliError, CliResult};
use crate::play::game::{PlayedGame, Termination};
use crate::play::schedule::PairOutcome;

/// What `--dump-positions` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DumpSpec {
    /// The file (viriformat, or text with `format=text`; `FILE.txt` too with `format=both`).
    pub path: PathBuf,
    /// Which formats.
    pub format: Format,
    /// The text format's filter.
    pub filter: TextFilter,
}

/// The usage line, for errors.
const USAGE: &str = "--dump-positions FILE [format=viriformat|text|both] [min-ply=16] \
                     [max-score=3000] [keep-check=false] [keep-tactical=false]";

/// Parses `FILE [format=viriformat|text|both] [min-ply=N] [max-score=CP] [keep-check=B]
/// [keep-tactical=B]`.
/// The spec of an optional `--dump-positions` (a usage error when it does not parse).
pub fn spec_of(words: Option<&[String]>) -> crate::error::CliResult<Option<DumpSpec>> {
    words
        .map(parse_spec)
        .transpose()
        .map_err(crate::error::CliError::usage)
}

pub fn parse_spec(words: &[String]) -> Result<DumpSpec, String> {
    let mut path = None;
    let mut format = Format::Viriformat;
    let mut filter = TextFilter::default();
    for (i, w) in words.iter().enumerate() {
        match w.split_once('=') {
            Some(("format", f)) => {
                format = Format::parse(f).map_err(|e| format!("--dump-positions: {e}"))?
            }
            Some((k, v)) => filter
                .set(k, v)
                .map_err(|e| format!("--dump-positions: {e} (usage: {USAGE})"))?,
            None if i == 0 => path = Some(PathBuf::from(w)),
            None => {
                return Err(format!(
                    "--dump-positions: '{w}' is not key=value (usage: {USAGE})"
                ))
            }
        }
    }
    let path = path.ok_or_else(|| format!("--dump-positions needs a file first: {USAGE}"))?;
    Ok(DumpSpec {
        path,
        format,
        filter,
    })
}

/// The training record of a played game.
pub fn training_game(game: &PlayedGame) -> Result<TrainingGame, String> {
    let mut start = Position::from_fen(&game.start_fen)
        .map_err(|e| format!("game start {}: {e}", game.start_fen))?;
    start.set_chess960(game.chess960);
    let book = game.moves.iter().take_while(|m| m.book).count();
    for m in &game.moves[..book] {
        start.play_mut(m.mv);
    }
    let result = game.outcome;
    let failed = matches!(
        game.termination,
        Termination::Crash
            | Termination::Stall
            | Termination::IllegalMove
            | Termination::TimeForfeit
    );
    let mut moves = Vec::with_capacity(game.moves.len() - book);
    if !failed {
        let mut pos = start.clone();
        for m in &game.moves[book..] {
            let Some(score) = m.score else { break };
            moves.push(ScoredMove {
                mv: m.mv,
                score: white_score(score, pos.side_to_move()),
            });
            pos.play_mut(m.mv);
        }
    }
    Ok(TrainingGame {
        start,
        moves,
        result,
    })
}

/// The dump of a match; does nothing when `--dump-positions` was not given.
pub struct PositionDump {
    writer: Option<TrainingWriter>,
}

impl PositionDump {
    /// Opens the dump. With `resume`, the files are cut back to `resumed_games` games (the
    /// games of the pairs in the results file); a dump holding fewer games is continued
    /// with a warning (the missing games' positions are not in it).
    pub fn open(
        words: Option<&[String]>,
        resume: bool,
        resumed_games: u64,
        quiet: bool,
    ) -> Result<PositionDump, String> {
        let Some(words) = words else {
            return Ok(PositionDump { writer: None });
        };
        let spec = parse_spec(words)?;
        let keep = resume.then_some(resumed_games);
        let (writer, resumed) =
            TrainingWriter::open(&spec.path, spec.format, spec.filter, resume, keep)
                .map_err(|e| format!("--dump-positions: {e}"))?;
        if resume && resumed.games < resumed_games && !quiet {
            eprintln!(
                "spar: warning: --dump-positions {} holds {} games but the results file {}; \
                 the positions of the missing games are not in the dump",
                spec.path.display(),
                resumed.games,
                resumed_games
            );
        }
        Ok(PositionDump {
            writer: Some(writer),
        })
    }

    /// Appends both games of a pair.
    pub fn write_pair(&mut self, pair: &PairOutcome) -> CliResult {
        let Some(writer) = &mut self.writer else {
            return Ok(());
        };
        for game in &pair.games {
            let record = training_game(game).map_err(CliError::failure)?;
            writer
                .write_game(&record)
                .map_err(|e| CliError::failure(format!("--dump-positions: {e}")))?;
            crate::files::kill_point::record_written();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::PlayedMove;
    use engine::search::Score;
    use engine::types::GameResult;
    use std::time::Duration;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn spec_words() {
        let s = parse_spec(&words("d.vf format=both min-ply=4 keep-check=true")).unwrap();
        assert_eq!(s.path, PathBuf::from("d.vf"));
        assert_eq!(s.format, Format::Both);
        assert_eq!(s.filter.min_ply, 4);
        assert!(!s.filter.skip_in_check && s.filter.skip_tactical);
        assert!(parse_spec(&words("format=text"))
            .unwrap_err()
            .contains("needs a file"));
        assert!(parse_spec(&words("d.vf format=csv"))
            .unwrap_err()
            .contains("viriformat"));
        assert!(parse_spec(&words("d.vf bogus=1"))
            .unwrap_err()
            .contains("unknown filter key"));
        assert!(parse_spec(&words("d.vf extra"))
            .unwrap_err()
            .contains("key=value"));
    }

    fn played(moves: &[(&str, bool, Option<Score>)], termination: Termination) -> PlayedGame {
        let mut pos = Position::startpos();
        let moves = moves
            .iter()
            .map(|&(uci, book, score)| {
                let mv = pos.parse_uci_move(uci).unwrap();
                pos = pos.play(mv);
                PlayedMove {
                    mv,
                    score,
                    depth: 1,
                    seldepth: 1,
                    nodes: 1,
                    time: Duration::ZERO,
                    book,
                }
            })
            .collect();
        PlayedGame {
            start_fen: Position::startpos().to_fen(),
            chess960: false,
            moves,
            outcome: GameResult::BlackWins,
            termination,
            reason: String::new(),
            nodes: [0, 0],
            duration: Duration::ZERO,
        }
    }

    #[test]
    fn games_start_after_the_book_with_white_relative_scores() {
        let g = played(
            &[
                ("e2e4", true, None),
                ("e7e5", false, Some(Score::Cp(30))),
                ("g1f3", false, Some(Score::Cp(40))),
                ("b8c6", false, None),
                ("f1c4", false, Some(Score::Cp(10))),
            ],
            Termination::ResignAdjudication,
        );
        let t = training_game(&g).unwrap();
        let start = Position::startpos();
        assert_eq!(t.start, start.play(start.parse_uci_move("e2e4").unwrap()));
        // Black's +30 is White's -30; the record stops at the unscored move.
        let scores: Vec<i16> = t.moves.iter().map(|m| m.score).collect();
        assert_eq!(scores, [-30, 40]);
        assert_eq!(t.result, GameResult::BlackWins);
        let crashed = training_game(&played(
            &[("e2e4", false, Some(Score::Cp(5)))],
            Termination::Crash,
        ))
        .unwrap();
        assert!(crashed.moves.is_empty());
    }
}
