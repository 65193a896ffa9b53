//! `spar`: a self-play tuning and testing harness for chess engines.

use clap::{Parser, Subcommand};

mod cmd;
mod error;

use error::CliResult;

/// Self-play SPRT testing, parameter tuning and heuristic statistics for chess engines.
#[derive(Parser, Debug)]
#[command(name = "spar", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Count leaf nodes of the legal move tree (move-generator check and speed test).
    Perft(cmd::perft::PerftArgs),
    /// Match statistics calculator: Elo, LOS, nElo and SPRT from W/D/L or pentanomial counts.
    Stats(cmd::stats::StatsArgs),
    /// Simulate SPRT runs at a true Elo: pass rate and games to a decision.
    Sim(cmd::sim::SimArgs),
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Perft(args) => cmd::perft::run(args),
        Command::Stats(args) => cmd::stats::run(args),
        Command::Sim(args) => cmd::sim::run(args),
    }
}

fn main() {
    let cli = Cli::parse();
    if let Err(err) = run(cli) {
        eprintln!("spar: error: {err}");
        std::process::exit(err.code);
    }
}
