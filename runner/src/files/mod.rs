//! Files a run reads and writes: the opening book, the match files (PGN and results CSV),
//! training-position dumps, atomic whole-file writes, the checks of the paths a command
//! names ([`paths`]) with the files engines are handed ([`engine_files`]), bounded reads of regular files ([`input`]), one writer per output
//! ([`lock`]), the record of what defines a resumable run ([`run_record`]), the names of
//! the files beside a file ([`names`]) and the files a cluster run directory owns
//! ([`run_dir`]).

pub mod atomic;
pub mod book;
pub mod engine_files;
pub mod input;
pub mod kill_point;
pub mod lock;
pub mod match_files;
pub mod names;
pub mod paths;
pub mod position_dump;
pub mod run_dir;
pub mod run_record;
