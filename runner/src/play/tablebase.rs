//! Tablebase adjudication with fastchess's meaning (its `-tb`, `-tbpieces`, `-tbadjudicate`
//! and `-tbignore50`), in spar's words: `--tb DIR [pieces=N] [adjudicate=win_loss|draw|both]
//! [ignore50=false]`.
//!
//! Before each move, after the rules (mate, stalemate, repetition, fifty moves,
//! insufficient material) and before any other adjudication, a position the tables cover
//! ends the game with the tables' result: no castling rights, the fifty-move counter at
//! zero (the position was just reached by a capture or pawn move, or a start position says
//! so), and at most `pieces` pieces (kings included) and at most the largest tables found. A
//! cursed win or blessed loss (won or lost, but not within the fifty-move rule) is a draw,
//! unless `ignore50=true` counts it as the win or loss. `adjudicate=` picks which results
//! end a game: `win_loss` only wins and losses (a drawn position plays on), `draw` only
//! draws, `both` (default) either. The adjudication is the runner's, never the engines':
//! it works for builtin and external engines alike.

use std::sync::Arc;

use engine::position::Position;
use engine::tablebase::{Tablebases, Wdl};
use engine::types::{Color, GameResult};
use serde::{Deserialize, Serialize};

/// The smallest `pieces=` (3: the smallest Syzygy tables; two kings alone are a draw by
/// insufficient material anyway).
pub const MIN_PIECES: u32 = 3;
/// The largest `pieces=` (7: the largest Syzygy tables there are).
pub const MAX_PIECES: u32 = 7;

/// Which tablebase results end a game (`adjudicate=`, fastchess's `-tbadjudicate`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TbResults {
    /// Wins and losses only; a drawn position plays on.
    WinLoss,
    /// Draws only; a won position plays on.
    Draw,
    /// Wins, losses and draws.
    #[default]
    Both,
}

/// `--tb`: the table directories, the rule's settings and (once opened) the tables.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TablebaseRule {
    /// The table directories as given (separated by `:`).
    pub dirs: String,
    /// Probe only positions with at most this many pieces (`None`: as many as the
    /// largest tables found).
    pub pieces: Option<u32>,
    /// Which results end a game.
    pub adjudicate: TbResults,
    /// Count cursed wins and blessed losses as wins and losses (fastchess's `-tbignore50`).
    pub ignore50: bool,
    /// The opened tables (not part of the plan's data).
    #[serde(skip)]
    tables: Option<Arc<Tablebases>>,
}

impl PartialEq for TablebaseRule {
    fn eq(&self, other: &TablebaseRule) -> bool {
        (&self.dirs, self.pieces, self.adjudicate, self.ignore50)
            == (&other.dirs, other.pieces, other.adjudicate, other.ignore50)
    }
}

impl Eq for TablebaseRule {}

/// The `--tb` keys, for messages.
const KEYS: [&str; 3] = ["pieces", "adjudicate", "ignore50"];

impl TablebaseRule {
    /// Parses `DIR [pieces=N] [adjudicate=win_loss|draw|both] [ignore50=true|false]` without
    /// opening the tables. `flag` names the option in messages.
    pub fn parse(flag: &str, words: &[String]) -> Result<TablebaseRule, String> {
        let usage =
            format!("{flag} DIR [pieces=N] [adjudicate=win_loss|draw|both] [ignore50=true|false]");
        let Some((dirs, rest)) = words.split_first() else {
            return Err(format!("{flag}: give the table directory: {usage}"));
        };
        if KEYS
            .iter()
            .any(|k| dirs.strip_prefix(k).is_some_and(|r| r.starts_with('=')))
        {
            return Err(format!(
                "{flag}: the table directory comes first, then the keys: {usage}"
            ));
        }
        if dirs.trim().is_empty() {
            return Err(format!("{flag}: the table directory is empty: {usage}"));
        }
        let mut rule = TablebaseRule {
            dirs: dirs.clone(),
            pieces: None,
            adjudicate: TbResults::Both,
            ignore50: false,
            tables: None,
        };
        for w in rest {
            let Some((k, v)) = w.split_once('=') else {
                return Err(format!(
                    "{flag}: '{w}' is not key=value (known keys: {})",
                    KEYS.join(", ")
                ));
            };
            match k {
                "pieces" => {
                    let n: u32 = v.parse().map_err(|_| {
                        format!("{flag}: pieces={v} is not a number ({MIN_PIECES} to {MAX_PIECES})")
                    })?;
                    if !(MIN_PIECES..=MAX_PIECES).contains(&n) {
                        return Err(format!(
                            "{flag}: pieces={n} is out of range ({MIN_PIECES} to {MAX_PIECES}, kings included)"
                        ));
                    }
                    rule.pieces = Some(n);
                }
                "adjudicate" => {
                    rule.adjudicate = match v {
                        "win_loss" => TbResults::WinLoss,
                        "draw" => TbResults::Draw,
                        "both" => TbResults::Both,
                        _ => {
                            return Err(format!(
                                "{flag}: adjudicate={v} is unknown (win_loss, draw or both)"
                            ))
                        }
                    }
                }
                "ignore50" => {
                    rule.ignore50 = v
                        .parse()
                        .map_err(|_| format!("{flag}: ignore50={v} is not true or false"))?
                }
                _ => {
                    return Err(format!(
                        "{flag}: unknown key '{k}' (known keys: {})",
                        KEYS.join(", ")
                    ))
                }
            }
        }
        Ok(rule)
    }

    /// Parses the words and opens the tables, checking every file now (a missing
    /// directory, one without tables, a truncated or damaged table is an error naming it).
    pub fn open(flag: &str, words: &[String]) -> Result<TablebaseRule, String> {
        let mut rule = TablebaseRule::parse(flag, words)?;
        let tables = Tablebases::open(&rule.dirs).map_err(|e| format!("{flag}: {e}"))?;
        tables.verify().map_err(|e| format!("{flag}: {e}"))?;
        if tables.max_pieces() < MIN_PIECES {
            return Err(format!(
                "{flag}: no win/draw/loss table (*.rtbw) in {:?}: adjudication needs them",
                rule.dirs
            ));
        }
        rule.tables = Some(Arc::new(tables));
        Ok(rule)
    }

    /// The result the tables give `pos`, if the rule ends the game there: the result and
    /// the reason in fastchess's words (`White wins by adjudication: SyzygyTB`,
    /// `Draw by adjudication: SyzygyTB`).
    pub fn judge(&self, pos: &Position) -> Option<(GameResult, String)> {
        let tables = self.tables.as_ref()?;
        let limit = self.pieces.unwrap_or(MAX_PIECES).min(tables.max_pieces());
        if pos.halfmove_clock() != 0 || !pos.castling().is_empty() || pos.occupied().count() > limit
        {
            return None;
        }
        // A table error cannot happen after `verify`, short of the files changing under a
        // running match; the game then plays on without the tables' word.
        let wdl = tables.probe_wdl(pos).ok().flatten()?;
        let result = game_result(wdl, pos.side_to_move(), self.ignore50);
        let wanted = match result {
            GameResult::Draw => self.adjudicate != TbResults::WinLoss,
            _ => self.adjudicate != TbResults::Draw,
        };
        if !wanted {
            return None;
        }
        let reason = match result {
            GameResult::WhiteWins => win_reason(Color::White),
            GameResult::BlackWins => win_reason(Color::Black),
            GameResult::Draw => "Draw by adjudication: SyzygyTB".to_string(),
        };
        Some((result, reason))
    }

    /// The table files in use with their sizes (what a cluster run pins).
    pub fn files(&self) -> Vec<(std::path::PathBuf, u64)> {
        self.tables.as_ref().map_or_else(Vec::new, |t| t.files())
    }
}

/// The game's result when the side to move `us` has `wdl`: cursed wins and blessed losses
/// are draws under the fifty-move rule, wins and losses with `ignore50`.
fn game_result(wdl: Wdl, us: Color, ignore50: bool) -> GameResult {
    match wdl {
        Wdl::Win => GameResult::win_for(us),
        Wdl::Loss => GameResult::win_for(!us),
        Wdl::CursedWin if ignore50 => GameResult::win_for(us),
        Wdl::BlessedLoss if ignore50 => GameResult::win_for(!us),
        Wdl::CursedWin | Wdl::BlessedLoss | Wdl::Draw => GameResult::Draw,
    }
}

fn win_reason(winner: Color) -> String {
    let side = match winner {
        Color::White => "White",
        Color::Black => "Black",
    };
    format!("{side} wins by adjudication: SyzygyTB")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn parses_the_words_and_refuses_bad_ones() {
        let r = TablebaseRule::parse("--tb", &w("/t pieces=4 adjudicate=win_loss ignore50=true"))
            .unwrap();
        assert_eq!(r.dirs, "/t");
        assert_eq!(r.pieces, Some(4));
        assert_eq!(r.adjudicate, TbResults::WinLoss);
        assert!(r.ignore50);
        let d = TablebaseRule::parse("--tb", &w("/a:/b")).unwrap();
        assert_eq!(
            (d.pieces, d.adjudicate, d.ignore50),
            (None, TbResults::Both, false)
        );
        for (words, needle) in [
            ("", "give the table directory"),
            ("pieces=4", "comes first"),
            ("/t pieces=2", "pieces=2 is out of range"),
            ("/t pieces=8", "pieces=8 is out of range"),
            ("/t pieces=x", "pieces=x is not a number"),
            ("/t adjudicate=wins", "adjudicate=wins is unknown"),
            ("/t ignore50=yes", "ignore50=yes"),
            ("/t depth=3", "unknown key 'depth'"),
            ("/t four", "'four' is not key=value"),
        ] {
            let err = TablebaseRule::parse("--tb", &w(words)).unwrap_err();
            assert!(err.contains(needle), "{words}: {err}");
        }
    }

    #[test]
    fn cursed_wins_and_blessed_losses_are_draws_unless_ignore50() {
        use Color::{Black, White};
        use GameResult::{BlackWins, Draw, WhiteWins};
        for (wdl, us, plain, ignored) in [
            (Wdl::Win, White, WhiteWins, WhiteWins),
            (Wdl::Win, Black, BlackWins, BlackWins),
            (Wdl::Loss, White, BlackWins, BlackWins),
            (Wdl::Draw, Black, Draw, Draw),
            (Wdl::CursedWin, White, Draw, WhiteWins),
            (Wdl::CursedWin, Black, Draw, BlackWins),
            (Wdl::BlessedLoss, White, Draw, BlackWins),
            (Wdl::BlessedLoss, Black, Draw, WhiteWins),
        ] {
            assert_eq!(game_result(wdl, us, false), plain, "{wdl:?} {us:?}");
            assert_eq!(
                game_result(wdl, us, true),
                ignored,
                "{wdl:?} {us:?} ignore50"
            );
        }
    }

    #[test]
    fn json_keeps_the_settings_not_the_tables() {
        let r = TablebaseRule::parse("--tb", &w("/t pieces=5 adjudicate=draw")).unwrap();
        let text = serde_json::to_string(&r).unwrap();
        assert_eq!(
            text,
            r#"{"dirs":"/t","pieces":5,"adjudicate":"draw","ignore50":false}"#
        );
        let back: TablebaseRule = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert!(back.tables.is_none());
    }

    #[test]
    fn a_missing_directory_is_refused() {
        let err = TablebaseRule::open("--tb", &w("/no/such/tables")).unwrap_err();
        assert!(err.starts_with("--tb: "), "{err}");
        assert!(err.contains("/no/such/tables"), "{err}");
    }
}
