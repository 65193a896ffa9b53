//! The embedded chess engine of spar: bitboards, slider-attack backends, legal move
//! generation and perft for standard chess and Chess960.
#![deny(missing_docs)]

pub mod attacks;
pub mod bench;
pub mod eval;
pub mod movegen;
pub mod params;
pub mod perft;
pub mod position;
pub mod rng;
pub mod search;
pub mod track;
pub mod types;
pub mod uci;
