//! Files a run reads and writes: the opening book, the match files (PGN and results CSV),
//! training-position dumps, and atomic whole-file writes.

pub mod atomic;
pub mod book;
pub mod match_files;
pub mod position_dump;
