//! Crash capture: a tune game in which an engine crashed or stopped answering under a
//! perturbation is recorded with both parameter sets, the position the game started from
//! and a one-line `spar match` command that replays the pair.
//!
//! Records are JSON lines appended to `CSV.crashes.jsonl` (a local run with `--csv`) or to
//! `RUN_DIR/shards/I/crashes.jsonl` (a shard), each next to a one-position EPD book
//! `…crash-pair-K.epd` that the command names; every crash is also printed on stderr.
//! The game itself counts as a loss of the engine that failed, as in a match with
//! `--recover`, and the next game gets a fresh process.

use std::io::Write;
use std::path::{Path, PathBuf};

use engine::position::Position;
use serde_json::json;

use super::spsa::Perturbation;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::plan::MatchPlan;
use crate::play::game::{PlayedGame, Termination};
use crate::progress::Progress;

/// The crash records of a run.
pub struct Crashes {
    file: Option<PathBuf>,
    words: Vec<String>,
    extra: Vec<String>,
    names: Vec<String>,
    /// Crashes seen by this process.
    pub count: u64,
}

/// The crash record file of a local run whose trajectory is `csv`.
pub fn crash_file(csv: &Path) -> PathBuf {
    let mut name = csv.file_name().unwrap_or_default().to_os_string();
    name.push(".crashes.jsonl");
    csv.with_file_name(name)
}

/// Quotes a word for a POSIX shell when it needs it.
fn quote(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_=./:,+@%".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl Crashes {
    /// Records into `file` (`None`: stderr only) for a run with `plan`'s engine and
    /// adjudication, tuning `names`.
    pub fn new(file: Option<PathBuf>, plan: &MatchPlan, names: &[String]) -> Crashes {
        let words = plan.engines[0]
            .words
            .iter()
            .filter(|w| !w.starts_with("name="))
            .cloned()
            .collect();
        let mut extra = Vec::new();
        let a = &plan.adjudication;
        if let Some(m) = a.max_moves {
            extra.push(format!("--maxmoves {m}"));
        }
        Crashes {
            file,
            words,
            extra,
            names: names.to_vec(),
            count: 0,
        }
    }

    /// Looks at a finished pair: each game that ended in a crash or stall is recorded.
    pub fn check(
        &mut self,
        pair: u64,
        games: &[PlayedGame; 2],
        engines: &Perturbation,
        progress: &Progress,
    ) -> CliResult {
        for (g, game) in games.iter().enumerate() {
            if !matches!(game.termination, Termination::Crash | Termination::Stall) {
                continue;
            }
            self.count += 1;
            let line = self.record(pair, g, game, engines)?;
            progress.warn(&line);
        }
        Ok(())
    }

    fn record(
        &mut self,
        pair: u64,
        g: usize,
        game: &PlayedGame,
        engines: &Perturbation,
    ) -> CliResult<String> {
        // Dev has White in the pair's first game.
        let dev_white = g == 0;
        let white_lost = game.outcome.half_points(engine::types::Color::White) == 0;
        let who = if white_lost == dev_white {
            "dev"
        } else {
            "base"
        };
        let what = if game.termination == Termination::Crash {
            "crashed"
        } else {
            "stopped answering"
        };
        // The position after the book moves: the replay's one-opening book.
        let mut position = Position::from_fen(&game.start_fen)
            .map_err(|e| CliError::failure(format!("crash record: {e}")))?;
        for m in game.moves.iter().take_while(|m| m.book) {
            position = position.play(m.mv);
        }
        let fen = position.to_fen();
        let epd: String = fen.split(' ').take(4).collect::<Vec<_>>().join(" ");
        let values = |v: &[i64]| -> serde_json::Map<String, serde_json::Value> {
            self.names
                .iter()
                .zip(v)
                .map(|(n, x)| (n.clone(), json!(x)))
                .collect()
        };
        let side = |name: &str, v: &[i64]| -> String {
            let mut w = vec!["--engine".to_string(), format!("name={name}")];
            w.extend(self.words.iter().map(|x| quote(x)));
            w.extend(
                self.names
                    .iter()
                    .zip(v)
                    .map(|(n, x)| quote(&format!("option.{n}={x}"))),
            );
            w.join(" ")
        };
        let book = self.file.as_ref().map(|f| {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            let stem = name.strip_suffix("crashes.jsonl").unwrap_or(&name);
            f.with_file_name(format!("{stem}crash-pair-{pair}.epd"))
        });
        let book_word = book
            .as_ref()
            .map_or("POSITION.epd".to_string(), |b| quote(&b.to_string_lossy()));
        let mut replay = format!(
            "spar match {} {} --book {book_word} order=sequential --games 2 --concurrency 1 --recover",
            side("dev", &engines.dev),
            side("base", &engines.base),
        );
        for e in &self.extra {
            replay.push(' ');
            replay.push_str(e);
        }
        let record = json!({
            "pair": pair,
            "iteration": engines.k,
            "game": 2 * pair + g as u64 + 1,
            "engine": who,
            "termination": if game.termination == Termination::Crash { "crash" } else { "stall" },
            "reason": game.reason,
            "dev": values(&engines.dev),
            "base": values(&engines.base),
            "position": epd,
            "replay": replay,
        });
        if let (Some(file), Some(book)) = (&self.file, &book) {
            write_atomically(book, &format!("{epd}\n"))
                .map_err(|e| CliError::failure(format!("cannot write {}: {e}", book.display())))?;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(file)
                .map_err(|e| CliError::failure(format!("cannot open {}: {e}", file.display())))?;
            f.write_all(format!("{record}\n").as_bytes())
                .map_err(|e| CliError::failure(format!("cannot write {}: {e}", file.display())))?;
        }
        let mut line = format!(
            "crash: pair {pair} (iteration {}), game {}: engine '{who}' {what} ({}); replay: {replay}",
            engines.k,
            2 * pair + g as u64 + 1,
            game.reason
        );
        if book.is_none() {
            line.push_str(&format!(" (POSITION.epd holds: {epd})"));
        }
        if let Some(f) = &self.file {
            line.push_str(&format!("; recorded in {}", f.display()));
        }
        Ok(line)
    }
}
