//! Which positions the text format keeps. viriformat keeps every position of a game (trainers
//! filter when they load it); the text format is filtered as it is written, like the usual
//! data-generation filters: no positions in check, none whose best move is a capture or a
//! promotion (their score depends on a tactic the network cannot see), none with a score
//! beyond a limit, and none among the first plies of the game.

use engine::position::Position;
use engine::types::Move;

use super::game_ply;

/// The text format's filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextFilter {
    /// Skip positions before this game ply (counted from the start of the game by the move
    /// counters, opening moves included, as viriformat's filter counts).
    pub min_ply: u32,
    /// Skip positions whose |score| is above this (centipawns).
    pub max_score: i32,
    /// Skip positions where the side to move is in check.
    pub skip_in_check: bool,
    /// Skip positions whose best move captures or promotes.
    pub skip_tactical: bool,
}

impl Default for TextFilter {
    /// `min-ply=16 max-score=3000`, skipping checks and tactical moves.
    fn default() -> Self {
        TextFilter {
            min_ply: 16,
            max_score: 3000,
            skip_in_check: true,
            skip_tactical: true,
        }
    }
}

impl TextFilter {
    /// Keeps every position.
    pub const NONE: TextFilter = TextFilter {
        min_ply: 0,
        max_score: i32::MAX,
        skip_in_check: false,
        skip_tactical: false,
    };

    /// The keys [`TextFilter::set`] knows.
    pub const KEYS: [&'static str; 4] = ["min-ply", "max-score", "keep-check", "keep-tactical"];

    /// Whether a position (with the move played from it and its score) is written.
    ///
    /// ```
    /// use data::training::filter::TextFilter;
    /// use engine::position::Position;
    /// let pos = Position::from_fen("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 20").unwrap();
    /// let f = TextFilter::default();
    /// assert!(f.keeps(&pos, pos.parse_uci_move("e1e2").unwrap(), 50));
    /// assert!(!f.keeps(&pos, pos.parse_uci_move("e4d5").unwrap(), 50)); // a capture
    /// assert!(!f.keeps(&pos, pos.parse_uci_move("e1e2").unwrap(), 3500)); // |score| too big
    /// ```
    pub fn keeps(&self, pos: &Position, best: Move, score: i16) -> bool {
        game_ply(pos) >= self.min_ply
            && i32::from(score).abs() <= self.max_score
            && !(self.skip_in_check && pos.in_check())
            && !(self.skip_tactical && best.is_noisy())
    }

    /// Sets one option from `key=value` words: `min-ply=N`, `max-score=CP`,
    /// `keep-check=true|false`, `keep-tactical=true|false`.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let flag = |v: &str| {
            v.parse::<bool>()
                .map_err(|_| format!("{key}={v}: expected true or false"))
        };
        match key {
            "min-ply" => {
                self.min_ply = value
                    .parse()
                    .map_err(|_| format!("min-ply={value}: expected a number of plies"))?
            }
            "max-score" => {
                self.max_score = value
                    .parse::<u32>()
                    .map_err(|_| format!("max-score={value}: expected centipawns (≥ 0)"))?
                    .min(i32::MAX as u32) as i32
            }
            "keep-check" => self.skip_in_check = !flag(value)?,
            "keep-tactical" => self.skip_tactical = !flag(value)?,
            _ => {
                return Err(format!(
                    "unknown filter key '{key}' (known: {})",
                    Self::KEYS.join(", ")
                ))
            }
        }
        Ok(())
    }
}
