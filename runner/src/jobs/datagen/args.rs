//! The arguments of `spar datagen`, as the command line gives them and a cluster run's
//! manifest stores them.

use std::path::PathBuf;

use engine::search::Evaluation;

use crate::cli::{RunArgs, SlurmArgs};

/// Generate training positions by self-play of the builtin engine.
///
/// Each game starts from N random legal plies (from the start position, a random book
/// position, or a random double-Fischer-random start), rejected when the first search
/// scores it beyond --opening-limit. Games end by mate, stalemate, repetition, the
/// fifty-move rule, insufficient material, or adjudication: a win when the score stays at
/// ±2500 cp or beyond for 4 plies, a draw when it stays within ±4 cp for 12 plies from
/// move 40 on; with --tb, at the first position the Syzygy tables cover, with their result.
///
///   spar datagen --out games.vf --positions 100000
///   spar datagen --out games.vf --games 5000 --format both --dfrc --nodes 5000
///   spar datagen --out games.vf --positions 100000 --resume
///   spar datagen --inspect games.vf
#[derive(clap::Args, Debug, Clone, serde::Serialize, serde::Deserialize)]
#[command(verbatim_doc_comment)]
pub struct DatagenArgs {
    /// Output file: viriformat, or bullet text with --format text; --format both writes
    /// viriformat to FILE and text to FILE.txt. Text files get an index FILE.idx for --resume.
    #[arg(long, value_name = "FILE")]
    pub(crate) out: Option<PathBuf>,
    /// Stop after this many games.
    #[arg(long, value_name = "N")]
    pub(crate) games: Option<u64>,
    /// Stop after the game that brings the file to N positions (text lines with
    /// --format text, viriformat positions otherwise).
    #[arg(long, value_name = "N")]
    pub(crate) positions: Option<u64>,
    /// Nodes searched per move.
    #[arg(long, default_value_t = 5000)]
    pub(crate) nodes: u64,
    /// Random legal plies played before the engine takes over.
    #[arg(long, default_value_t = 8, value_name = "N")]
    pub(crate) random_plies: u32,
    /// Reject openings whose first search scores beyond this many centipawns.
    #[arg(long, default_value_t = 1000, value_name = "CP")]
    pub(crate) opening_limit: u32,
    /// Start the random plies from random positions of this EPD or PGN book.
    #[arg(long, value_name = "FILE", conflicts_with = "dfrc")]
    pub(crate) book: Option<PathBuf>,
    /// Start from random double-Fischer-random (DFRC) positions.
    #[arg(long)]
    pub(crate) dfrc: bool,
    /// Syzygy tables: `DIR [pieces=N] [ignore50=false]` (directories separated by ':'). A
    /// game ends at its first position the tables cover, and their result labels every
    /// position of the game.
    #[arg(long, num_args = 1.., value_name = "DIR [KEY=VALUE]")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) tb: Option<Vec<String>>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
    /// Output format: viriformat, text (bullet's `FEN | score | result`) or both.
    /// With --inspect: the file's format (default: guessed from its content).
    #[arg(long, value_name = "FORMAT")]
    pub(crate) format: Option<String>,
    /// Text format: skip positions before this game ply.
    #[arg(long, default_value_t = 16, value_name = "PLY")]
    pub(crate) min_ply: u32,
    /// Text format: skip positions whose |score| is above this.
    #[arg(long, default_value_t = 3000, value_name = "CP")]
    pub(crate) max_score: u32,
    /// Text format: keep positions where the side to move is in check.
    #[arg(long)]
    pub(crate) keep_check: bool,
    /// Text format: keep positions whose best move captures or promotes.
    #[arg(long)]
    pub(crate) keep_tactical: bool,
    /// Hash table per game, MiB.
    #[arg(long, default_value_t = 8, value_name = "MB")]
    pub(crate) hash: usize,
    /// Static evaluation of the self-play engine: nnue (the embedded network, or --eval-file;
    /// the engine's default) or hce (handcrafted)
    #[arg(long, default_value = Evaluation::DEFAULT.name(), value_parser = ["hce", "nnue"])]
    pub(crate) eval: String,
    /// Network file for --eval nnue (default: the embedded net)
    #[arg(long, value_name = "FILE")]
    pub(crate) eval_file: Option<PathBuf>,
    /// Continue an interrupted run: keep the complete games in the files, drop a partial one.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Print counts, results, a score histogram and samples of FILE, checking every record
    /// (exit 1 on a corrupt one).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "games", "positions", "resume"])]
    pub(crate) inspect: Option<PathBuf>,
    /// Sample positions shown by --inspect.
    #[arg(long, default_value_t = 5, value_name = "N")]
    pub(crate) samples: usize,
    #[command(flatten)]
    pub(crate) slurm: SlurmArgs,
}

/// The training-file format a datagen's words ask for (`--format X`), viriformat by
/// default (or when `X` is no format: the command refuses it).
pub fn format_of_words(words: &[String]) -> data::training::files::Format {
    let mut value = None;
    for (i, w) in words.iter().enumerate() {
        if let Some(v) = w.strip_prefix("--format=") {
            value = Some(v.to_string());
        } else if w == "--format" {
            value = words.get(i + 1).cloned();
        }
    }
    data::training::files::Format::parse(value.as_deref().unwrap_or("viriformat"))
        .unwrap_or(data::training::files::Format::Viriformat)
}
