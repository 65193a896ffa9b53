//! One module per `spar` subcommand: its clap arguments and its `run` function.

pub mod perft;
pub mod sim;
pub mod stats;
