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
    let mut text = String::new();
    for s in engine::params::specs() {
        if (args.search && s.eval) || (args.eval && !s.eval) {
            continue;
        }
        text.push_str(&format!(
            "{}, int, {}, {}, {}, {}, {}\n",
            s.name, s.default, s.min, s.max, s.c_end, s.r_end
        ));
    }
    crate::stdout::print(&text)
}
