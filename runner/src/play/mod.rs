//! Self-play: engine variants, players, the game loop, adjudication, the pair scheduler and
//! the match totals. `spar match`/`spar sprt` (and later `report`, `datagen`, `tune`) are
//! built from these.

pub mod adjudication;
pub mod build;
pub mod dump;
pub mod game;
pub mod output;
pub mod player;
pub mod schedule;
pub mod tally;
pub mod uci;
pub mod variant;
