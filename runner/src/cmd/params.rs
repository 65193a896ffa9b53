//! `spar params`: the tunable parameters in OpenBench SPSA input format.

use crate::error::CliResult;

/// List the tunable parameters, one per line, as OpenBench SPSA input:
/// `name, int, default, min, max, c_end, r_end`.
#[derive(clap::Args, Debug)]
pub struct ParamsArgs {
    /// Only search parameters (not evaluation weights).
    #[arg(long, conflicts_with = "eval")]
    search: bool,
    /// Only evaluation weights.
    #[arg(long)]
    eval: bool,
}

/// Runs `spar params`.
pub fn run(args: ParamsArgs) -> CliResult {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for s in engine::params::specs() {
        if (args.search && s.eval) || (args.eval && !s.eval) {
            continue;
        }
        let _ = writeln!(
            out,
            "{}, int, {}, {}, {}, {}, {}",
            s.name, s.default, s.min, s.max, s.c_end, s.r_end
        );
    }
    Ok(())
}
