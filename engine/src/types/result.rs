//! The result of a finished game, from White's point of view.

use core::fmt;

use super::Color;

/// The result of a finished game, White-relative: what the PGN `Result` tag, the results
/// CSV and the training formats record. An unfinished game (PGN `*`) has no `GameResult`.
///
/// File formats keep their own encodings next to the format (viriformat's `wdl` byte and
/// bullet's `1.0`/`0.5`/`0.0` in `data::training`, PGN's `*` in `data::pgn`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// 1-0.
    WhiteWins,
    /// 0-1.
    BlackWins,
    /// ½-½.
    Draw,
}

impl GameResult {
    /// A win for `color`.
    pub const fn win_for(color: Color) -> GameResult {
        match color {
            Color::White => GameResult::WhiteWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// PGN result text: `1-0`, `0-1` or `1/2-1/2`.
    pub const fn pgn(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// Parses PGN result text, exactly as [`GameResult::pgn`] writes it.
    ///
    /// ```
    /// use engine::types::GameResult;
    /// assert_eq!(GameResult::from_pgn("0-1"), Some(GameResult::BlackWins));
    /// assert_eq!(GameResult::from_pgn("*"), None);
    /// ```
    pub fn from_pgn(text: &str) -> Option<GameResult> {
        match text {
            "1-0" => Some(GameResult::WhiteWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" => Some(GameResult::Draw),
            _ => None,
        }
    }

    /// Points scored by `color` (1, ½ or 0) times two.
    pub const fn half_points(self, color: Color) -> u32 {
        match (self, color) {
            (GameResult::Draw, _) => 1,
            (GameResult::WhiteWins, Color::White) | (GameResult::BlackWins, Color::Black) => 2,
            _ => 0,
        }
    }

    /// White's points: 1.0, 0.5 or 0.0.
    ///
    /// ```
    /// use engine::types::GameResult;
    /// assert_eq!(GameResult::Draw.white_points(), 0.5);
    /// ```
    pub fn white_points(self) -> f32 {
        self.half_points(Color::White) as f32 / 2.0
    }
}

impl fmt::Display for GameResult {
    /// The PGN text.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pgn())
    }
}
