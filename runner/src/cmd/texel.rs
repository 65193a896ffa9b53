//! `spar texel`: Texel tuning of the evaluation weights on positions from `spar datagen`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Instant;

use engine::params::{specs, Params};

use crate::engines::variant::load_params_file;
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::paths::PathCheck;
use crate::stdout;
use crate::tune::report;
use crate::tune::texel::dataset::Dataset;
use crate::tune::texel::load;
use crate::tune::texel::optim::{self, Next, TrainOptions};

/// Fit the evaluation weights to game results (Texel tuning).
///
///   spar texel --data games.txt --out tuned.txt
///
///   spar sprt --engine name=tuned params=tuned.txt --engine name=base --each nodes=5000 --elo0 0 --elo1 5
///
/// K is fitted once (minimising E = mean (R − σ(K·eval))² with σ(x) = 1/(1 + 10^(−x/400)),
/// R = White's result), then E is minimised over every evaluation weight with Adam, using
/// the exact gradient of the tapered linear evaluation. One line per epoch:
/// `Epoch n  Error = e  Rate = r`. The weights are written after every epoch as
/// `name, value` lines (--out) and as `tunable!` declarations for the source (--rust).
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct TexelArgs {
    /// Positions from `spar datagen`: `FEN | score | result` text or viriformat (repeatable).
    #[arg(long, value_name = "FILE", required = true)]
    data: Vec<PathBuf>,
    /// Format of the --data files (auto: text if the file starts with plain UTF-8 text).
    #[arg(long, value_enum, default_value = "auto")]
    format: load::Format,
    /// Where to write the tuned weights as `name, value` lines.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Where to write them as Rust source (default: --out with the extension .rs).
    #[arg(long, value_name = "FILE")]
    rust: Option<PathBuf>,
    /// Passes over the data.
    #[arg(long, default_value_t = 100)]
    epochs: u32,
    /// Adam's step size (centipawns) in the first epoch.
    #[arg(long, default_value_t = 1.0)]
    lr: f64,
    /// Factor applied to the step size after each epoch.
    #[arg(long, default_value_t = 0.98)]
    lr_decay: f64,
    /// Positions per Adam step (0: the whole data set).
    #[arg(long, default_value_t = 16_384)]
    batch_size: usize,
    /// Strength λ of an L2 pull of every weight toward its start value (E + λ·Σ(w − w0)²);
    /// keeps the weights of rarely seen features from chasing a few results (0: off).
    #[arg(long, default_value_t = 1e-7, value_name = "LAMBDA")]
    l2: f64,
    /// Train toward `(1 − W) · result + W · σ(K · score)`, part game result and part the
    /// data's search score (held-out errors are still against the results).
    #[arg(long, default_value_t = 0.0, value_name = "W")]
    score_weight: f64,
    /// Use this K instead of fitting it.
    #[arg(long)]
    k: Option<f64>,
    /// Start from the weights in this file (`name, value` lines) instead of the defaults.
    #[arg(long, value_name = "FILE")]
    params: Option<PathBuf>,
    /// Hold out this fraction of the positions (the last ones, so mostly whole games) to
    /// measure overfitting; the weights of the epoch with the lowest held-out error are kept.
    #[arg(long, default_value_t = 0.0, value_name = "FRACTION")]
    validation: f64,
    /// Use only the first N positions of the data.
    #[arg(long, value_name = "N")]
    max_positions: Option<usize>,
    /// Seed of the batch order.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Threads (default: all cores).
    #[arg(long)]
    concurrency: Option<usize>,
}

/// Runs `spar texel`.
pub fn run(args: TexelArgs) -> CliResult {
    let threads = match args.concurrency {
        Some(0) => return Err(CliError::usage("--concurrency must be at least 1")),
        Some(n) => n,
        None => crate::cli::all_cores(),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::failure(format!("cannot start worker threads: {e}")))?;
    pool.install(|| run_in_pool(&args))
}

fn run_in_pool(args: &TexelArgs) -> CliResult {
    if !(args.l2.is_finite() && args.l2 >= 0.0) {
        return Err(CliError::usage(format!(
            "--l2 {}: must be a non-negative number",
            args.l2
        )));
    }
    for (name, v) in [("--lr", args.lr), ("--lr-decay", args.lr_decay)] {
        if !(v.is_finite() && v > 0.0) {
            return Err(CliError::usage(format!(
                "{name} {v}: must be a positive number"
            )));
        }
    }
    if !(0.0..=1.0).contains(&args.score_weight) {
        return Err(CliError::usage(format!(
            "--score-weight {}: give a weight from 0 (results only) to 1 (scores only)",
            args.score_weight
        )));
    }
    if !(0.0..0.9).contains(&args.validation) {
        return Err(CliError::usage(format!(
            "--validation {}: give a fraction from 0 to 0.9, e.g. 0.1",
            args.validation
        )));
    }
    if let Some(k) = args.k {
        if !(k.is_finite() && k > 0.0) {
            return Err(CliError::usage(format!(
                "--k {k}: must be a positive number"
            )));
        }
    }
    let mut start = Params::defaults();
    if let Some(path) = &args.params {
        load_params_file(path, &mut start)
            .map_err(|e| CliError::usage(format!("--params: {e}")))?;
    }
    let rust_path = args
        .rust
        .clone()
        .unwrap_or_else(|| args.out.with_extension("rs"));
    let mut check = PathCheck::new();
    for d in &args.data {
        check.input("--data", d);
    }
    if let Some(p) = &args.params {
        check.input("--params", p);
    }
    check
        .output("--out", &args.out)
        .output("--rust", &rust_path);
    check.check()?;
    // Standard output gone (`| head`): the epochs go on and the weights are written; the
    // error is returned at the end.
    let mut out = stdout::Lines::default();

    let t0 = Instant::now();
    let mut data = Dataset::new();
    for path in &args.data {
        let left = args.max_positions.map(|m| m.saturating_sub(data.len()));
        if left == Some(0) {
            break;
        }
        data.append(load::file(path, args.format, left).map_err(CliError::usage)?);
    }
    if data.is_empty() {
        return Err(CliError::usage(
            "--data: no positions in the file(s); write some with `spar datagen`",
        ));
    }
    let held = (data.len() as f64 * args.validation).round() as usize;
    let validation = (held > 0).then(|| data.split_tail(held));
    if data.is_empty() {
        return Err(CliError::usage(format!(
            "--validation {}: leaves no positions to fit",
            args.validation
        )));
    }
    let values = start.values().to_vec();
    let k = match args.k {
        Some(k) => k,
        None => optim::fit_k(&data, &values, 0.05, 5.0),
    };
    if args.score_weight > 0.0 {
        data.blend_scores(k, args.score_weight);
    }
    // Against the training targets (blended with the scores if asked), like the epochs.
    let e0 = optim::error_exact(&data, &values, k);
    let held_note = validation
        .as_ref()
        .map_or(String::new(), |v| format!(" (+{} held out)", v.len()));
    out.say(format!(
        "Positions: {}{held_note}  (loaded in {:.1} s)  K = {k:.4}  Error = {e0:.6} (start weights)",
        data.len(),
        t0.elapsed().as_secs_f64()
    ));

    let tuned: Vec<bool> = specs().iter().map(|s| s.eval).collect();
    let bounds: Vec<(f64, f64)> = specs()
        .iter()
        .map(|s| (s.min as f64, s.max as f64))
        .collect();
    let mut w: Vec<f64> = values.iter().map(|&v| v as f64).collect();
    let options = TrainOptions {
        epochs: args.epochs,
        batch_size: args.batch_size,
        lr: args.lr,
        lr_decay: args.lr_decay,
        seed: args.seed,
        l2: args.l2,
    };
    let abort = crate::interrupt::on_ctrl_c("stopping after this epoch");
    let mut write_error = None;
    let mut epochs_done = 0;
    // With a held-out set: the best weights so far, by held-out error.
    let mut best: Option<(f64, u32, Vec<f64>)> = None;
    let mut unsaved = 0;
    let on_epoch = |epoch: u32, error: f64, rate: f64, w: &[f64]| {
        epochs_done = epoch;
        match &validation {
            None => out.say(format!(
                "Epoch {epoch}  Error = {error:.6}  Rate = {rate:.4}"
            )),
            Some(v) => {
                let held_out = optim::error(v, w, k);
                out.say(format!(
                    "Epoch {epoch}  Error = {error:.6}  Rate = {rate:.4}  Validation = {held_out:.6}"
                ));
                if !matches!(&best, Some(b) if b.0 <= held_out) {
                    best = Some((held_out, epoch, w.to_vec()));
                }
            }
        }
        // Every 10th epoch, not every one: the Rust file is some 60 KB.
        unsaved += 1;
        if unsaved == 10 {
            unsaved = 0;
            let keep = best.as_ref().map_or(w, |b| &b.2[..]);
            if let Err(e) = write_outputs(&start, keep, &args.out, &rust_path) {
                write_error = Some(e);
                return Next::Stop;
            }
        }
        if abort.load(Ordering::SeqCst) {
            Next::Stop
        } else {
            Next::Continue
        }
    };
    optim::train(&data, &mut w, &tuned, &bounds, k, &options, on_epoch);
    if let Some(e) = write_error {
        return Err(e);
    }
    if let Some((_, epoch, weights)) = &best {
        out.say(format!(
            "Keeping the weights of epoch {epoch} (lowest validation error)"
        ));
        w = weights.clone();
    }
    let tuned_params = write_outputs(&start, &w, &args.out, &rust_path)?;
    let e1 = optim::error_exact(&data, tuned_params.values(), k);
    if let Some(v) = &validation {
        out.say(format!(
            "Validation error {:.6} (engine evaluation, rounded weights; start {:.6})",
            optim::error_exact(v, tuned_params.values(), k),
            optim::error_exact(v, &values, k)
        ));
    }
    let changed = tuned_params
        .values()
        .iter()
        .zip(&values)
        .filter(|(a, b)| a != b)
        .count();
    out.say(format!(
        "Final error {e1:.6} (engine evaluation, rounded weights; start {e0:.6}); {changed} weights changed; {:.1} s",
        t0.elapsed().as_secs_f64()
    ));
    out.say(format!(
        "Wrote {} and {}",
        args.out.display(),
        rust_path.display()
    ));
    out.say(format!(
        "Check it: spar sprt --engine name=tuned params={} --engine name=base --each nodes=5000 --elo0 0 --elo1 5",
        args.out.display()
    ));
    out.finish()?;
    if abort.load(Ordering::SeqCst) {
        return Err(CliError {
            message: format!(
                "interrupted after epoch {epochs_done}; the weights so far are written (continue with --params {})",
                args.out.display()
            ),
            code: 130,
        });
    }
    Ok(())
}

/// Rounds the weights into a parameter table and writes both output files atomically.
fn write_outputs(start: &Params, w: &[f64], out: &Path, rust: &Path) -> CliResult<Params> {
    let mut p = start.clone();
    let rounded: Vec<i32> = w.iter().map(|&v| v.round() as i32).collect();
    p.set_values(&rounded);
    let lines: Vec<(String, i64)> = p
        .iter()
        .filter(|(s, _)| s.eval)
        .map(|(s, v)| (s.name.clone(), v as i64))
        .collect();
    write_atomically(out, &report::openbench_lines(&lines))
        .map_err(|e| CliError::failure(format!("cannot write --out {}: {e}", out.display())))?;
    let source = format!(
        "// Evaluation weights tuned by `spar texel`; replace the matching declarations.\n\n{}",
        report::rust_tunables(&p, |eval, _| eval)
    );
    write_atomically(rust, &source)
        .map_err(|e| CliError::failure(format!("cannot write --rust {}: {e}", rust.display())))?;
    Ok(p)
}
