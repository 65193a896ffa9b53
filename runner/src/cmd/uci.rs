//! `spar uci`: the embedded engine as a UCI engine on stdin/stdout.

use crate::error::CliResult;

/// Speak UCI on stdin/stdout (for GUIs, fastchess, cutechess, python-chess).
#[derive(clap::Args, Debug)]
pub struct UciArgs {}

/// Runs `spar uci`.
pub fn run(_args: UciArgs) -> CliResult {
    let stdin = std::io::stdin().lock();
    engine::uci::run(
        stdin,
        Box::new(std::io::stdout()),
        Some(crate::track_dump::quit_hook()),
    );
    Ok(())
}
