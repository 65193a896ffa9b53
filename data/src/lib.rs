//! What flows in and out of spar: opening books, PGN games and the results CSV.
//!
//! - [`san`]: Standard Algebraic Notation, written and read (also for Chess960 castling).
//! - [`book`]: opening books (EPD and PGN), ordered like fastchess `-openings`, plus a
//!   balanced book compiled into the binary ([`book::Book::builtin`]).
//! - [`pgn`]: a PGN writer that appends one whole game per write, and a tolerant reader.
//! - [`results`]: the per-game results CSV that `--resume` reads back.
//! - [`text`]: reading outside text: BOM stripping and a bounded line reader.
//! - [`params_file`]: parameter files (`name, value` lines) for builtin engines.
//! - [`quote`]: a file's text quoted in error messages, withheld in messages for the
//!   network.
//! - [`training`]: training positions for NNUE trainers and tuners (viriformat, bullet
//!   text), their filters, resumable writers and readers.
#![deny(missing_docs)]

pub mod book;
pub mod params_file;
pub mod pgn;
pub mod quote;
pub mod results;
pub mod san;
pub mod text;
pub mod training;
