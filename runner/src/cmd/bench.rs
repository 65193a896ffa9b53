//! `spar bench`: the fixed search whose node count is the engine's signature.

use crate::error::{CliError, CliResult};

/// Search 50 built-in positions to a fixed depth; the last line is `N nodes M nps`
/// (OpenBench's format). N is the same on every run and machine for a given build.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// Search depth.
    #[arg(long, default_value_t = engine::bench::DEFAULT_DEPTH)]
    depth: i32,
    /// Bench depth as a bare number (as `spar bench 12`, the form OpenBench runs).
    #[arg(value_name = "DEPTH", conflicts_with = "depth")]
    positional_depth: Option<i32>,
}

/// Runs `spar bench`.
pub fn run(args: BenchArgs) -> CliResult {
    let depth = args.positional_depth.unwrap_or(args.depth);
    if !(1..=64).contains(&depth) {
        return Err(CliError::usage(format!(
            "--depth {depth}: give a depth from 1 to 64"
        )));
    }
    let result = engine::bench::run(depth, &engine::params::Params::defaults());
    crate::stdout::print(&format!("{}\n", result.line()))?;
    Ok(())
}
