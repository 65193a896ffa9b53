//! `spar perft`: leaf counts of the legal move tree, for one position or a whole suite.

use std::path::{Path, PathBuf};
use std::time::Instant;

use engine::perft::{divide, parse_suite_line, perft};
use engine::position::{Position, STARTPOS_FEN};

use crate::error::{CliError, CliResult};
use crate::stdout;

/// Count leaf nodes of the legal move tree.
///
/// With `--depth`, one position (`--fen`, default: the start position): prints
/// `Nodes searched: N` and `Nodes/second: N`, and with `--divide` one `move: count` line per
/// legal move first. With `--suite FILE`, every line `FEN ;D1 n ;D2 n …` of an EPD suite is
/// checked up to `--max-depth`.
#[derive(clap::Args, Debug)]
#[command(group = clap::ArgGroup::new("mode").required(true).args(["depth", "suite"]))]
pub struct PerftArgs {
    /// Depth in plies.
    #[arg(long, short)]
    depth: Option<u32>,
    /// Position to count from (FEN, X-FEN or Shredder-FEN).
    #[arg(long, default_value = STARTPOS_FEN, conflicts_with = "suite")]
    fen: String,
    /// Print the count below each legal move.
    #[arg(long, conflicts_with = "suite")]
    divide: bool,
    /// A perft suite: EPD lines `FEN ;D1 n ;D2 n …` (blank lines and `#` comments skipped).
    #[arg(long, value_name = "FILE")]
    suite: Option<PathBuf>,
    /// With `--suite`: check depths up to this one only.
    #[arg(long, value_name = "D", requires = "suite")]
    max_depth: Option<u32>,
}

/// Runs `spar perft`.
pub fn run(args: PerftArgs) -> CliResult {
    if args.max_depth.is_some() && args.suite.is_none() {
        return Err(CliError::usage(
            "--max-depth limits a --suite run; with --depth, the depth is all there is",
        ));
    }
    match (&args.suite, args.depth) {
        (Some(path), _) => run_suite(path, args.max_depth.unwrap_or(u32::MAX)),
        (None, Some(depth)) => run_single(&args.fen, depth, args.divide),
        (None, None) => Err(CliError::usage("give --depth D or --suite FILE")),
    }
}

fn run_single(fen: &str, depth: u32, show_divide: bool) -> CliResult {
    let pos =
        Position::from_fen(fen).map_err(|e| CliError::usage(format!("{e} in --fen \"{fen}\"")))?;
    let start = Instant::now();
    let mut text = String::new();
    let nodes = if show_divide {
        let mut total = 0;
        for (mv, n) in divide(&pos, depth) {
            text.push_str(&format!("{}: {n}\n", mv.to_uci(pos.is_chess960())));
            total += n;
        }
        text.push('\n');
        total
    } else {
        perft(&pos, depth)
    };
    let secs = start.elapsed().as_secs_f64();
    text.push_str(&format!(
        "Nodes searched: {nodes}\nNodes/second: {}\n",
        (nodes as f64 / secs.max(1e-9)) as u64
    ));
    stdout::print(&text)
}

fn run_suite(path: &Path, max_depth: u32) -> CliResult {
    let text = data::text::read_whole(path).map_err(|e| CliError::usage(format!("--suite {e}")))?;
    // Parse everything first: a malformed line is an input error, reported before any work.
    let mut entries = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let where_ = || format!("{}:{}", path.display(), i + 1);
        let entry =
            parse_suite_line(line).map_err(|e| CliError::usage(format!("{}: {e}", where_())))?;
        let pos = Position::from_fen(&entry.fen)
            .map_err(|e| CliError::usage(format!("{}: {e}", where_())))?;
        entries.push((entry, pos));
    }
    let total = entries.len();
    if total == 0 {
        return Err(CliError::usage(format!(
            "--suite {}: no positions (lines like 'FEN ;D1 20 ;D2 400')",
            path.display()
        )));
    }
    let checked = entries
        .iter()
        .flat_map(|(e, _)| &e.depths)
        .filter(|(d, _)| *d <= max_depth)
        .count();
    if checked == 0 {
        return Err(CliError::usage(format!(
            "--suite {}: no counts at --max-depth {max_depth} or below",
            path.display()
        )));
    }
    let start = Instant::now();
    let mut passed = 0;
    let mut nodes = 0u64;
    for (entry, pos) in &entries {
        let mut ok = true;
        for &(depth, expected) in entry.depths.iter().filter(|(d, _)| *d <= max_depth) {
            let got = perft(pos, depth);
            nodes += got;
            if got != expected {
                stdout::print(&format!(
                    "FAIL {} depth {depth}: expected {expected}, got {got}\n",
                    entry.fen
                ))?;
                ok = false;
            }
        }
        passed += ok as usize;
    }
    let secs = start.elapsed().as_secs_f64();
    stdout::print(&format!("{passed}/{total} positions passed\n"))?;
    eprintln!(
        "({nodes} nodes in {secs:.2} s, {} nodes/second)",
        (nodes as f64 / secs.max(1e-9)) as u64
    );
    if passed == total {
        Ok(())
    } else {
        Err(CliError::failure(format!(
            "{} of {total} positions failed",
            total - passed
        )))
    }
}
