//! Training positions for NNUE trainers and Texel tuners: positions labelled with a search
//! score and the game's result, in the formats trainers read without conversion.
//!
//! | module | concern |
//! |---|---|
//! | [`viriformat`] | Viridithas's whole-game binary format (bullet reads it): writer and reader |
//! | [`text`] | bullet's text format, one `FEN \| score \| result` line per position |
//! | [`filter`] | which positions the text format keeps |
//! | [`files`] | appending games to the files of a run, resuming after a crash |
//! | [`inspect`] | counts, result distribution, score histogram and validation of a file |
//! | [`dfrc`] | double-Fischer-random start positions |
//!
//! Every score here is **White-relative centipawns** in an `i16`, and every result is
//! White's ([`GameResult`]). [`white_score`] converts an engine score (side to move's view, mates
//! as `Score::Mate`) into that convention.
//!
//! Reading back, for a tuner:
//!
//! ```no_run
//! use data::training::{text, viriformat};
//! // Every position of every game of a viriformat file, with score and result.
//! for pos in viriformat::read_positions("games.vf").unwrap() {
//!     let pos = pos.unwrap();
//!     let _ = (pos.position.to_fen(), pos.score, pos.result.white_points());
//! }
//! // Every line of a text file.
//! for pos in text::read_positions("games.txt").unwrap() {
//!     let pos = pos.unwrap();
//!     let _ = (pos.position.to_fen(), pos.score, pos.result);
//! }
//! ```

pub mod counter;
pub mod dfrc;
pub mod files;
pub mod filter;
pub mod inspect;
pub mod text;
pub mod viriformat;

use std::fmt;

use engine::position::Position;
use engine::search::Score;
use engine::types::{Color, GameResult, Move};

/// Scores at least this large (in absolute value) are mates: a mate in `p` plies is stored as
/// ±(32000 − p). They lie above viriformat's default `max_eval` filter (31339), so trainers
/// drop them by default, as they drop Viridithas's own mate scores.
pub const MATE_SCORE_MIN: i16 = 31_000;

/// Centipawn scores are clamped into ±`CP_LIMIT`, below [`MATE_SCORE_MIN`].
pub const CP_LIMIT: i32 = 30_000;

/// An engine score (from the side to move's view) as White-relative `i16` centipawns; mates
/// become ±(32000 − plies to mate).
///
/// ```
/// use data::training::white_score;
/// use engine::search::Score;
/// use engine::types::Color;
/// assert_eq!(white_score(Score::Cp(35), Color::White), 35);
/// assert_eq!(white_score(Score::Cp(35), Color::Black), -35);
/// assert_eq!(white_score(Score::Mate(1), Color::Black), -31999);
/// assert_eq!(white_score(Score::Mate(-2), Color::White), -31996);
/// ```
pub fn white_score(score: Score, side_to_move: Color) -> i16 {
    let stm = match score {
        Score::Cp(cp) => cp.clamp(-CP_LIMIT, CP_LIMIT),
        Score::Mate(n) if n > 0 => 32_000 - (2 * n - 1).min(1000),
        Score::Mate(n) => -(32_000 - (-2 * n).min(1000)),
    };
    (stm * side_to_move.sign()) as i16
}

/// One move of a game and the score of the position it was played in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoredMove {
    /// The move played (the engine's best move).
    pub mv: Move,
    /// White-relative score of the position before the move.
    pub score: i16,
}

/// A game as viriformat stores it: a start position, scored moves, the result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingGame {
    /// The position the scored moves start from (after any opening moves).
    pub start: Position,
    /// The moves, each with the score of the position it was played in.
    pub moves: Vec<ScoredMove>,
    /// The result of the game.
    pub result: GameResult,
}

impl TrainingGame {
    /// Every position of the game (one per scored move), with the move played there.
    pub fn positions(&self) -> GamePositions<'_> {
        GamePositions {
            game: self,
            next: 0,
            position: self.start.clone(),
        }
    }
}

/// One labelled position.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrainingPosition {
    /// The position.
    pub position: Position,
    /// White-relative score in centipawns.
    pub score: i16,
    /// The game's result, White's view.
    pub result: GameResult,
}

/// A position of a game together with the move the engine played there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GamePosition {
    /// The position, its score and the game result.
    pub labelled: TrainingPosition,
    /// The move played from it.
    pub mv: Move,
    /// Index of the position in the game's move list (0 = the start position).
    pub index: usize,
}

/// Iterator over [`TrainingGame::positions`].
pub struct GamePositions<'a> {
    game: &'a TrainingGame,
    next: usize,
    position: Position,
}

impl Iterator for GamePositions<'_> {
    type Item = GamePosition;

    fn next(&mut self) -> Option<GamePosition> {
        let scored = *self.game.moves.get(self.next)?;
        let after = self.position.play(scored.mv);
        let position = std::mem::replace(&mut self.position, after);
        let index = self.next;
        self.next += 1;
        Some(GamePosition {
            labelled: TrainingPosition {
                position,
                score: scored.score,
                result: self.game.result,
            },
            mv: scored.mv,
            index,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.game.moves.len() - self.next;
        (n, Some(n))
    }
}

/// The ply of a position counted from the start of the game, from its move counters
/// (`2 × (fullmove − 1)`, plus one with Black to move), as viriformat's filter counts it.
pub fn game_ply(position: &Position) -> u32 {
    2 * (position.fullmove_number().max(1) as u32 - 1)
        + (position.side_to_move() == Color::Black) as u32
}

/// A format error with the byte offset (binary) or line number (text) where it was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatError {
    /// Byte offset of the record (viriformat) or of the line (text).
    pub offset: u64,
    /// 1-based line number for text files, `None` for binary ones.
    pub line: Option<u64>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line} (byte {}): {}", self.offset, self.message),
            None => write!(f, "byte offset {}: {}", self.offset, self.message),
        }
    }
}

impl std::error::Error for FormatError {}
