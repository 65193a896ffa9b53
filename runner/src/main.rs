//! `spar`: a self-play tuning and testing harness for chess engines.

use clap::{Parser, Subcommand};

mod cli;
mod cluster;
mod cmd;
mod engines;
mod error;
mod files;
mod html;
mod interrupt;
mod job;
mod jobs;
mod live;
mod live_files;
mod plan;
mod play;
mod progress;
mod report;
mod serve;
mod stdout;
mod summary;
mod track_dump;
mod train;
mod tune;

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
    /// Simulate SPRT runs at a true Elo: pass rate and games to a decision (--bisect: whole bisects).
    Sim(cmd::sim::SimArgs),
    /// Play a fixed number of games between two engine variants.
    Match(cmd::matches::MatchArgs),
    /// Play two engine variants against each other until an SPRT decides.
    Sprt(cmd::matches::MatchArgs),
    /// Find the commit that lost the Elo: a noisy bisection whose steps are SPRTs.
    Bisect(cmd::bisect::BisectArgs),
    /// Generate training positions (viriformat / bullet text) by self-play; --inspect a file.
    Datagen(cmd::datagen::DatagenArgs),
    /// Run the embedded engine as a UCI engine on stdin/stdout.
    Uci(cmd::uci::UciArgs),
    /// Fixed-depth search of 50 positions: prints `N nodes M nps`.
    Bench(cmd::bench::BenchArgs),
    /// List the tunable parameters in OpenBench SPSA format.
    Params(cmd::params::ParamsArgs),
    /// Play games and report every `track!` site's statistics and histograms per variant.
    Report(cmd::report::ReportArgs),
    /// Tune parameters by SPSA self-play (OpenBench's algorithm); --plot draws a run.
    Tune(cmd::tune::TuneArgs),
    /// Tune the evaluation weights on scored positions (Texel tuning).
    Texel(cmd::texel::TexelArgs),
    /// Train an NNUE (the engine's network layout) on positions from `spar datagen`.
    Train(cmd::train::TrainArgs),
    /// Play one shard of a cluster run (what a Slurm array task runs).
    Shard(cmd::shard::ShardArgs),
    /// Merge the shards of a cluster run into the local command's files and summary.
    Merge(cmd::merge::MergeArgs),
    /// Where a cluster run, a local results CSV or a tune's CSV stands; --html writes a live page.
    Status(cmd::status::StatusArgs),
    /// The team server: queue, watch and search runs in the browser or by its JSON API.
    Serve(cmd::serve::ServeArgs),
    /// Send a run (`sprt`, `match`, `tune`, `datagen` and its words) to a spar server.
    Submit(cmd::submit::SubmitArgs),
    /// fastchess's command line (`-engine … -rounds N -games 2 …`) run as `spar match`/`sprt`;
    /// also spar's behaviour under a program name starting with `fastchess` (docs/compat.md).
    Fastchess {
        /// fastchess's options, single-dash.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// cutechess-cli's command line (`-engine … -games N -repeat …`) run as `spar match`/`sprt`,
    /// with cutechess-cli's output; also spar under a program name starting with `cutechess`.
    Cutechess {
        /// cutechess-cli's options, single-dash.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

fn run(cli: Cli) -> CliResult {
    match cli.command {
        Command::Perft(args) => cmd::perft::run(args),
        Command::Stats(args) => cmd::stats::run(args),
        Command::Sim(args) => cmd::sim::run(args),
        Command::Match(args) => cmd::matches::run(args, false),
        Command::Sprt(args) => cmd::matches::run(args, true),
        Command::Bisect(args) => cmd::bisect::run(args),
        Command::Datagen(args) => cmd::datagen::run(args),
        Command::Uci(args) => cmd::uci::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Params(args) => cmd::params::run(args),
        Command::Report(args) => cmd::report::run(args),
        Command::Tune(args) => cmd::tune::run(args),
        Command::Texel(args) => cmd::texel::run(args),
        Command::Train(args) => cmd::train::run(args),
        Command::Shard(args) => cmd::shard::run(args),
        Command::Merge(args) => cmd::merge::run(args),
        Command::Status(args) => cmd::status::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Submit(args) => cmd::submit::run(args),
        Command::Fastchess { args } => personality(cmd::compat::Tool::Fastchess, &args),
        Command::Cutechess { args } => personality(cmd::compat::Tool::Cutechess, &args),
    }
}

/// A personality (fastchess, cutechess-cli): the tool's arguments translated, then parsed
/// and run as spar's own command line.
fn personality(tool: cmd::compat::Tool, args: &[String]) -> CliResult {
    cmd::compat::run(tool, args, |argv| {
        let cli =
            Cli::try_parse_from(std::iter::once("spar".to_string()).chain(argv)).map_err(|e| {
                // One line, as every refusal of the personality.
                let text = e.to_string();
                let first = text.lines().next().unwrap_or_default();
                error::CliError::usage(format!(
                    "{}: {}",
                    tool.name(),
                    first.trim_start_matches("error: ")
                ))
            })?;
        run(cli)
    })
}

fn main() {
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let by_name = argv.first().and_then(|a| cmd::compat::Tool::of_program(a));
    let by_word = match argv.get(1).map(String::as_str) {
        Some("fastchess") => Some(cmd::compat::Tool::Fastchess),
        Some("cutechess") => Some(cmd::compat::Tool::Cutechess),
        _ => None,
    };
    let result = if let Some(tool) = by_name {
        personality(tool, &argv[1..])
    } else if let Some(tool) = by_word {
        personality(tool, &argv[2..])
    } else {
        run(Cli::parse())
    };
    if let Err(err) = result {
        if !err.message.is_empty() {
            // One line, whatever a message carries (an engine's stderr, a tool's output).
            let line: Vec<&str> = err
                .message
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect();
            eprintln!("spar: error: {}", line.join("; "));
        }
        std::process::exit(err.code);
    }
}
