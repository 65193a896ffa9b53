//! PGN: a writer for finished games ([`PgnWriter`], [`format_game`]) and a tolerant reader
//! ([`read_games`]) used by the book loader and the round-trip tests.

mod reader;
mod writer;

pub use reader::{read_games, PgnError, PgnGame, PgnMove};
pub use writer::{
    format_game, pgn_date, pgn_date_today, result_text, score_text, GameRecord, MoveInfo,
    MoveRecord, PgnWriteError, PgnWriter, LINE_LENGTH,
};
