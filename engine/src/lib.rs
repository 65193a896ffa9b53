//! The embedded chess engine of spar, for standard chess and Chess960.
//!
//! - [`types`]: squares, pieces, colours, bitboards, moves, castling rights.
//! - [`attacks`]: leaper tables and the slider backends (magic, runtime magic, kindergarten,
//!   PEXT), one chosen by cargo feature.
//! - [`position`]: the board, FEN / X-FEN / Shredder-FEN, make-move, Zobrist keys.
//! - [`movegen`], [`perft`]: legal move generation and leaf counts.
//! - [`search`]: iterative deepening PVS with a shared transposition table (Lazy SMP).
//! - [`eval`]: the handcrafted tapered evaluation, weights tunable.
//! - [`nnue`]: the NNUE evaluation and its network format.
//! - [`params`]: the `tunable!` registry of search and evaluation parameters.
//! - [`track`]: `track!` instrumentation sites and their statistics.
//! - [`tablebase`]: Syzygy endgame tablebase probing (WDL and DTZ).
//! - [`bench`]: the fixed-depth bench and its node signature.
//! - [`uci`]: the UCI protocol loop.
#![deny(missing_docs)]

pub mod attacks;
pub mod bench;
pub mod eval;
pub mod movegen;
pub mod nnue;
pub mod params;
pub mod perft;
pub mod position;
pub mod rng;
pub mod search;
pub mod tablebase;
pub mod track;
pub mod types;
pub mod uci;
