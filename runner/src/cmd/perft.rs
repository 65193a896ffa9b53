//! `spar perft` (being written).

use crate::error::{CliError, CliResult};

/// Arguments of `spar perft`.
#[derive(clap::Args, Debug)]
pub struct PerftArgs {}

/// Runs `spar perft`.
pub fn run(_args: PerftArgs) -> CliResult {
    Err(CliError::failure("not yet built"))
}
