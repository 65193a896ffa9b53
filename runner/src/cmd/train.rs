//! `spar train`: train the engine's NNUE on positions from `spar datagen`.

use std::path::{Path, PathBuf};
use std::time::Instant;

use engine::nnue::network::{Layout, INPUTS, MAX_HIDDEN};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_bytes_atomically;
use crate::files::input::read_bounded;
use crate::files::kill_point;
use crate::files::lock::lock_output;
use crate::files::names::{parent_dir, with_suffix};
use crate::files::paths::PathCheck;
use crate::interrupt;
use crate::progress::Progress;
use crate::stdout;
use crate::train::checkpoint::{Checkpoint, RunOptions};
use crate::train::data::{Filter, PackedFile, PACKED_BYTES};
use crate::train::quantise::{self, MEAN_TOLERANCE_CP};
use crate::train::Trainer;

/// Positions per optimiser step without `--batch` (a smaller data set is one batch).
const DEFAULT_BATCH: usize = 16_384;

/// Positions of the held-out set on which the quantised net is checked against the float one.
const AGREEMENT_POSITIONS: usize = 10_000;

/// Train an NNUE (768 → H → SCReLU → 1, the engine's layout) on spar datagen positions.
///
///   spar train --data a.vf b.vf --validation c.vf --out net.nnue
///   spar train --data a.vf --out net.nnue --king-buckets 4 --output-buckets 8
///
/// With --king-buckets K > 1 the first layer has K blocks of 768 inputs, chosen by the own
/// king's square, the board mirrored so that the king stands on files e–h (K = 4: ranks 1, 2,
/// 3–4, 5–8 of its side; docs/nnue.md has the maps); --output-buckets O gives the output
/// layer O sets of weights chosen by the number of pieces. 1 × 1 is the plain net.
///
/// Target: λ·WDL + (1 − λ)·sigmoid(score/400), both from the side to move; loss: mean
/// (sigmoid(y) − target)², evaluation 400·y centipawns. Dropped: |score| ≥ --max-score (mates),
/// positions in check, and positions whose played move is a capture or promotion (viriformat).
/// AdamW (β 0.9/0.999, weight decay 0.01) with a cosine learning rate from --lr down to
/// --lr/100 over the run; every weight is clipped to ±1.98. The data is converted once into a
/// temporary file beside --out (32 bytes a position) and streamed back in shuffled chunks of
/// 1 Mi positions, so memory stays bounded. After every epoch a checkpoint is written to
/// OUT.ckpt; --resume continues from it after Ctrl-C or a crash. The quantised net is written
/// to --out and checked against the float net on held-out positions.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct TrainArgs {
    /// Training positions: viriformat or `FEN | score | result` text (repeatable). Dropped:
    /// positions in check, those whose played move is a capture or promotion, and --max-score.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    data: Vec<PathBuf>,
    /// Held-out positions for the validation loss and the quantisation check.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    validation: Vec<PathBuf>,
    /// Where to write the quantised network (the checkpoint goes to OUT.ckpt).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Hidden width H (a multiple of 16, 16 to 2048).
    #[arg(long, default_value_t = 128)]
    hidden: usize,
    /// King buckets of the first layer: 1 (none), 2, 4 (the suggested layout) or 8, by the
    /// own king's square, with the board mirrored so the king stands on files e–h.
    #[arg(long, default_value_t = 1, value_name = "K")]
    king_buckets: usize,
    /// Output buckets by the number of pieces on the board, 1 to 8 (8: one per 4 pieces).
    #[arg(long, default_value_t = 1, value_name = "O")]
    output_buckets: usize,
    /// Passes over the data.
    #[arg(long, default_value_t = 10)]
    epochs: u32,
    /// Positions per optimiser step [default: 16384, or all the positions when fewer]; at
    /// most the number of positions left to train on, and what memory holds.
    #[arg(long, value_name = "N")]
    batch: Option<usize>,
    /// Learning rate at the start (cosine decay to a hundredth of it).
    #[arg(long, default_value_t = 0.001)]
    lr: f64,
    /// Weight λ of the game result in the target (0: search score only, 1: result only).
    #[arg(long, default_value_t = 0.4, value_name = "LAMBDA")]
    wdl: f64,
    /// AdamW's decoupled weight decay.
    #[arg(long, default_value_t = 0.01)]
    weight_decay: f64,
    /// Drop positions whose |score| is at least this (centipawns; mates are ±(32000 − plies)).
    #[arg(long, default_value_t = 3000)]
    max_score: i16,
    /// Seed of the initial weights and the shuffles.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Worker threads (default: every core). The same seed and thread count give the same net.
    #[arg(long)]
    threads: Option<usize>,
    /// Continue the run of OUT.ckpt (the options must be the same).
    #[arg(long)]
    resume: bool,
    /// No progress display.
    #[arg(long)]
    quiet: bool,
}

fn check_args(args: &TrainArgs) -> CliResult {
    if args.data.is_empty() {
        return Err(CliError::usage(
            "--data: no training files; name one or more viriformat or text files written by `spar datagen`",
        ));
    }
    if args.hidden == 0 || args.hidden > MAX_HIDDEN || !args.hidden.is_multiple_of(16) {
        return Err(CliError::usage(format!(
            "--hidden {}: the hidden width must be a multiple of 16 from 16 to {MAX_HIDDEN} (e.g. 128)",
            args.hidden
        )));
    }
    if let Err(e) = Layout::new(args.king_buckets, args.output_buckets) {
        return Err(CliError::usage(format!(
            "--king-buckets {} --output-buckets {}: {e}",
            args.king_buckets, args.output_buckets
        )));
    }
    if args.epochs == 0 {
        return Err(CliError::usage("--epochs 0: give at least 1 epoch"));
    }
    if args.batch == Some(0) {
        return Err(CliError::usage(
            "--batch 0: give at least 1 position per step (e.g. 16384)",
        ));
    }
    if let Some(batch) = args.batch {
        // A batch is held in memory, as packed positions and as their copy being filled.
        let need_mib = (batch as u64).saturating_mul(2 * PACKED_BYTES as u64) >> 20;
        let have = crate::plan::available_memory_mib().unwrap_or(u64::MAX);
        if need_mib > have / 2 {
            return Err(CliError::usage(format!(
                "--batch {batch}: one batch needs {need_mib} MiB of memory, more than half of the {have} MiB available; give a smaller --batch (e.g. 16384)"
            )));
        }
    }
    if !(args.lr.is_finite() && args.lr > 0.0) {
        return Err(CliError::usage(format!(
            "--lr {}: the learning rate must be a positive number (e.g. 0.001)",
            args.lr
        )));
    }
    if !(0.0..=1.0).contains(&args.wdl) {
        return Err(CliError::usage(format!(
            "--wdl {}: λ must lie between 0 and 1",
            args.wdl
        )));
    }
    if !(args.weight_decay.is_finite() && args.weight_decay >= 0.0) {
        return Err(CliError::usage(format!(
            "--weight-decay {}: give a number ≥ 0",
            args.weight_decay
        )));
    }
    if args.max_score <= 0 {
        return Err(CliError::usage(format!(
            "--max-score {}: give a positive number of centipawns (e.g. 3000)",
            args.max_score
        )));
    }
    if args.threads == Some(0) {
        return Err(CliError::usage("--threads 0: give at least 1 thread"));
    }
    Ok(())
}

/// Reads the checkpoint of `--resume`, if there is one.
///
/// Only a regular file is read, and at most [`MAX_CHECKPOINT`] bytes of it.
fn load_checkpoint(path: &Path) -> CliResult<Option<Checkpoint>> {
    if std::fs::symlink_metadata(path).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound) {
        return Ok(None);
    }
    let bytes = read_bounded(path, "--resume: checkpoint", MAX_CHECKPOINT)?;
    Checkpoint::from_bytes(&bytes).map(Some).map_err(|e| {
        CliError::usage(format!(
            "--resume: checkpoint {}: {e}; delete it to start the run over",
            path.display()
        ))
    })
}

/// The largest checkpoint read: a network of the largest width and layout with its two AdamW
/// moments (three 4-byte values per weight), plus room for the header and options.
const MAX_CHECKPOINT: u64 = 12
    * ((INPUTS * Layout::LARGEST.king_buckets) as u64
        + 1
        + 2 * Layout::LARGEST.output_buckets as u64
        + 1)
    * MAX_HIDDEN as u64
    + (1 << 20);

/// Runs `spar train`.
pub fn run(args: TrainArgs) -> CliResult {
    check_args(&args)?;
    let ckpt_path = with_suffix(&args.out, ".ckpt");
    let mut check = PathCheck::new();
    for d in &args.data {
        check.input("--data", d);
    }
    for d in &args.validation {
        check.input("--validation", d);
    }
    check
        .output("--out", &args.out)
        .locked("--out", &args.out)
        .record("--out (checkpoint)", &ckpt_path);
    check.check()?;
    // One trainer per --out (its checkpoint and temporary packed data beside it): a second
    // `spar train` on it is refused before reading any data.
    let _lock = lock_output(&args.out, "--out")?;
    let resume = if args.resume {
        load_checkpoint(&ckpt_path)?
    } else if ckpt_path.exists() {
        return Err(CliError::usage(format!(
            "--out: the checkpoint {} of an earlier run exists; add --resume to continue it, or delete it to start over",
            ckpt_path.display()
        )));
    } else {
        None
    };
    if let Some(c) = &resume {
        if c.options.hidden != args.hidden {
            return Err(CliError::usage(format!(
                "--resume: checkpoint {} is of a network with --hidden {}, not {}; give --hidden {} or delete the checkpoint",
                ckpt_path.display(),
                c.options.hidden,
                args.hidden,
                c.options.hidden
            )));
        }
    }

    let mut out = stdout::Lines::default();

    let t0 = Instant::now();
    let filter = Filter {
        max_score: args.max_score,
    };
    let tmp_dir = parent_dir(&args.out);
    let (train, counts) =
        PackedFile::convert("--data", &args.data, filter, tmp_dir).map_err(CliError::usage)?;
    // Before the data summary, so that the refusal is the only output (no positions at all
    // has its own message below).
    let batch = match args.batch {
        Some(b) if b > train.len() && !train.is_empty() => {
            return Err(CliError::usage(format!(
                "--batch {b} is more than the {} positions left to train on in --data: give at most {} (a batch is the positions of one optimiser step)",
                train.len(),
                train.len()
            )))
        }
        Some(b) => b,
        None => DEFAULT_BATCH,
    };
    out.say(format!("data: {}", counts.summary()));
    if train.is_empty() {
        return Err(CliError::usage(
            "--data: no positions left to train on; give more data or raise --max-score",
        ));
    }
    let validation = if args.validation.is_empty() {
        None
    } else {
        let (v, counts) = PackedFile::convert("--validation", &args.validation, filter, tmp_dir)
            .map_err(CliError::usage)?;
        out.say(format!("validation: {}", counts.summary()));
        if v.is_empty() {
            return Err(CliError::usage(
                "--validation: no positions left; give other files or leave it out",
            ));
        }
        Some(v)
    };
    out.say(format!("read in {:.1} s", t0.elapsed().as_secs_f64()));

    let options = RunOptions {
        hidden: args.hidden,
        epochs: args.epochs,
        batch,
        lr: args.lr,
        wdl: args.wdl,
        weight_decay: args.weight_decay,
        seed: args.seed,
        max_score: args.max_score,
        positions: train.len() as u64,
        king_buckets: args.king_buckets,
        output_buckets: args.output_buckets,
    };
    if let Some(c) = &resume {
        if let Some((flag, was, now)) = c.options.difference(&options) {
            return Err(CliError::usage(format!(
                "--resume: checkpoint {} was made with {flag} {was}, this run has {now}; give the same options or delete the checkpoint",
                ckpt_path.display()
            )));
        }
    }
    let threads = args.threads.unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::failure(format!("cannot start {threads} threads: {e}")))?;
    let mut trainer = Trainer::new(options, resume, threads);
    if trainer.state.epoch > 0 {
        out.say(format!(
            "resuming after epoch {} of {}",
            trainer.state.epoch, args.epochs
        ));
    }
    let stop = interrupt::on_ctrl_c("stopping; the checkpoint of the last whole epoch is kept");
    let n = train.len() as u64;
    let progress = Progress::new(
        args.quiet,
        "positions",
        Some(n * u64::from(args.epochs)),
        n * u64::from(trainer.state.epoch),
    );
    let run_start = Instant::now();
    let mut trained = 0u64;
    while trainer.state.epoch < args.epochs {
        let epoch = trainer.state.epoch;
        let t = Instant::now();
        let base = n * u64::from(epoch);
        let result = pool.install(|| {
            trainer.epoch(&train, &stop, |done, loss| {
                progress.set_position(base + done);
                progress.set_message(&format!(
                    "epoch {}/{} loss {loss:.6}",
                    epoch + 1,
                    args.epochs
                ));
            })
        });
        let loss =
            result.map_err(|e| CliError::failure(format!("reading the packed data: {e}")))?;
        let Some(loss) = loss else {
            progress.finish();
            out.say(format!(
                "interrupted in epoch {}; `--resume` continues after epoch {}",
                epoch + 1,
                epoch
            ));
            return Err(out.error_or(CliError::interrupted()));
        };
        let secs = t.elapsed().as_secs_f64();
        trained += n;
        let val = match &validation {
            Some(v) => {
                let (l, r) = pool
                    .install(|| Ok((trainer.loss(v)?, trainer.loss_against(v, 1.0)?)))
                    .map_err(|e: std::io::Error| {
                        CliError::failure(format!("reading the packed data: {e}"))
                    })?;
                format!("  validation loss {l:.6} (against results alone {r:.6})")
            }
            None => String::new(),
        };
        write_bytes_atomically(&ckpt_path, &trainer.state.to_bytes()).map_err(|e| {
            CliError::failure(format!(
                "cannot write checkpoint {}: {e}",
                ckpt_path.display()
            ))
        })?;
        kill_point::record_written();
        progress.set_message("");
        out.say(format!(
            "epoch {}/{}  train loss {loss:.6}{val}  {:.0} positions/s  {secs:.1} s",
            epoch + 1,
            args.epochs,
            n as f64 / secs.max(1e-9)
        ));
    }
    progress.finish();
    if trained > 0 {
        let secs = run_start.elapsed().as_secs_f64();
        out.say(format!(
            "trained {trained} positions in {secs:.1} s ({:.0} positions/s on {threads} threads)",
            trained as f64 / secs.max(1e-9)
        ));
    }

    let net = quantise::quantise(&trainer.state.net);
    write_bytes_atomically(&args.out, &net.to_bytes()).map_err(|e| {
        CliError::failure(format!("cannot write --out {}: {e}", args.out.display()))
    })?;
    let (held, what) = match &validation {
        Some(v) => (v, "validation"),
        None => (&train, "training (no --validation given)"),
    };
    let sample = held
        .head(AGREEMENT_POSITIONS)
        .map_err(|e| CliError::failure(format!("reading the packed data: {e}")))?;
    let (mean, max) = quantise::agreement(&trainer.state.net, &net, &sample);
    let layout = if net.layout.is_plain() {
        String::new()
    } else {
        format!(", {}", net.layout)
    };
    out.say(format!(
        "wrote {} (hidden {}{layout}); quantised vs float on {} {what} positions: mean |diff| {mean:.2} cp, max {max:.1} cp (tolerance: mean ≤ {MEAN_TOLERANCE_CP} cp)",
        args.out.display(),
        args.hidden,
        sample.len()
    ));
    out.finish()?;
    if mean > MEAN_TOLERANCE_CP {
        return Err(CliError::failure(format!(
            "the quantised network differs from the float one by {mean:.2} cp on average, more than {MEAN_TOLERANCE_CP} cp; the net was written, but check the weights (a lower --lr or fewer epochs)"
        )));
    }
    Ok(())
}
