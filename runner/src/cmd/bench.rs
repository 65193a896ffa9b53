//! `spar bench`: the fixed search whose node count is the engine's signature.

use engine::search::Evaluation;

use crate::error::{CliError, CliResult};

/// Which evaluation `spar bench` searches with.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchEval {
    /// The handcrafted evaluation.
    Hce,
    /// The embedded neural network.
    Nnue,
    /// Both, one after the other, with NNUE's speed as a share of HCE's.
    Both,
}

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
    /// Evaluation to search with (default: the engine's default evaluation). `both` runs HCE,
    /// then NNUE, and prints a line for each.
    #[arg(long, value_enum)]
    eval: Option<BenchEval>,
    /// Network file for NNUE instead of the embedded one.
    #[arg(long, value_name = "FILE")]
    eval_file: Option<std::path::PathBuf>,
    /// Syzygy tables to probe (directories separated by ':', as the SyzygyPath option);
    /// adds a line with the tablebase hits and the speed in the positions far from the
    /// tables. `<empty>` prints the same lines without tables, for comparison. The
    /// signature (the node count) is that of the search without tables only.
    #[arg(long, value_name = "DIRS")]
    syzygy: Option<String>,
}

/// Runs `spar bench`.
pub fn run(args: BenchArgs) -> CliResult {
    let depth = args.positional_depth.unwrap_or(args.depth);
    if !(1..=64).contains(&depth) {
        return Err(CliError::usage(format!(
            "--depth {depth}: give a depth from 1 to 64"
        )));
    }
    // The evaluation the network would serve (`both` searches with NNUE too).
    let evaluation = match args.eval {
        Some(BenchEval::Hce) => Evaluation::Hce,
        Some(BenchEval::Nnue | BenchEval::Both) => Evaluation::Nnue,
        None => Evaluation::DEFAULT,
    };
    let file = args.eval_file.as_ref().map(|f| f.to_string_lossy());
    engine::nnue::rule::check(evaluation, file.as_deref(), &engine::nnue::rule::FLAGS)
        .map_err(CliError::usage)?;
    let net = match &args.eval_file {
        Some(path) if !engine::nnue::rule::is_embedded(&path.to_string_lossy()) => {
            std::sync::Arc::new(
                engine::nnue::Net::load(path)
                    .map_err(|e| CliError::usage(format!("--eval-file {e}")))?,
            )
        }
        _ => engine::nnue::default_net(),
    };
    let tb = match args.syzygy.as_deref() {
        None | Some("<empty>") => None,
        Some(dirs) => Some(
            crate::engines::tablebases::open_shared(dirs)
                .map_err(|e| CliError::usage(format!("--syzygy {dirs}: {e}")))?,
        ),
    };
    if let Some(dirs) = &args.syzygy {
        crate::stdout::print(&match &tb {
            Some(tb) => format!(
                "syzygy {dirs}: {} files, up to {} pieces\n",
                tb.file_count(),
                tb.max_pieces()
            ),
            None => "syzygy: none\n".to_string(),
        })?;
    }
    let params = engine::params::Params::defaults();
    let bench = |e| {
        let r = engine::bench::run_tb(depth, &params, e, Some(net.clone()), tb.clone());
        if args.syzygy.is_some() {
            let line = format!(
                "{} tbhits; positions with {}+ pieces: {} nodes {} nps\n",
                r.tbhits,
                engine::bench::FAR_PIECES,
                r.far_nodes,
                r.far_nps()
            );
            // A closed stdout is reported by the last line's print.
            let _ = crate::stdout::print(&line);
        }
        r
    };
    let text = match args.eval {
        None => format!("{}\n", bench(Evaluation::DEFAULT).line()),
        Some(BenchEval::Hce) => format!("{}\n", bench(Evaluation::Hce).line()),
        Some(BenchEval::Nnue) => format!("{}\n", bench(Evaluation::Nnue).line()),
        Some(BenchEval::Both) => {
            let hce = bench(Evaluation::Hce);
            crate::stdout::print(&format!("hce  {}\n", hce.line()))?;
            let nnue = bench(Evaluation::Nnue);
            format!(
                "nnue {} ({}% of hce's nps; net 768->{}x2->1, {} kernel)\n",
                nnue.line(),
                nnue.nps() * 100 / hce.nps().max(1),
                net.hidden(),
                net.kernel().name()
            )
        }
    };
    crate::stdout::print(&text)?;
    Ok(())
}
