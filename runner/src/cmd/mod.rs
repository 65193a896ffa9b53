//! One module per `spar` subcommand: its clap arguments and its `run` function.

pub mod bench;
pub mod bisect;
pub mod compat;
pub mod datagen;
pub mod matches;
pub mod merge;
pub mod params;
pub mod perft;
pub mod report;
pub mod serve;
pub mod shard;
pub mod sim;
pub mod stats;
pub mod status;
pub mod submit;
pub mod texel;
pub mod train;
pub mod tune;
pub mod uci;
