//! Self-play: the game loop, adjudication, the pair scheduler and the match totals.
//! Engines come from [`crate::engines`], files from [`crate::files`].

pub mod adjudication;
pub mod game;
pub mod ordered;
pub mod schedule;
pub mod tablebase;
pub mod tally;
pub mod training;
