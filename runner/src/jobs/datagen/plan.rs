//! Datagen's plan: every option checked, the network loaded and the opening source read
//! before the first game.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use data::book::{Book, BookOptions};
use data::training::files::Format;
use data::training::filter::TextFilter;
use engine::nnue::{rule, Net};
use engine::search::Evaluation;

use super::args::DatagenArgs;
use crate::cli::{BookArgs, EngineArgs};
use crate::cluster::manifest::sha256_file;
use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::files::paths::PathCheck;
use crate::files::run_record;
use crate::plan::{MatchPlan, PlanRequest};
use crate::play::adjudication::{Adjudication, TrainingRules};
use crate::play::tablebase::TablebaseRule;
use crate::play::training::{GameOptions, Source};

/// Everything checked before the first game.
pub(crate) struct Plan {
    /// The `--out` file.
    pub(crate) out: PathBuf,
    /// The SHA-256 of the `--eval-file` network (`None`: the embedded net or HCE).
    pub(crate) net_sha256: Option<String>,
    /// The files' format.
    pub(crate) format: Format,
    /// Which positions the text format keeps.
    pub(crate) filter: TextFilter,
    /// Where the run stops.
    pub(crate) target: Target,
    /// Games played at once.
    pub(crate) concurrency: usize,
    /// How each game is played.
    pub(crate) game: GameOptions,
}

/// Where a run stops.
#[derive(Clone, Copy)]
pub(crate) enum Target {
    /// After this many games.
    Games(u64),
    /// After the game that brings the file to this many positions (text lines).
    Positions(u64),
}

/// Checks every option and every file of `args` and makes the plan; nothing is written.
pub(crate) fn plan(args: &DatagenArgs) -> CliResult<Plan> {
    let out = args.out.clone().ok_or_else(|| {
        CliError::usage("give --out FILE (or --inspect FILE to read a file), e.g. spar datagen --out games.vf --positions 100000")
    })?;
    let target = match (args.games, args.positions) {
        (Some(0), _) | (_, Some(0)) => {
            return Err(CliError::usage(
                "--games and --positions must be at least 1",
            ))
        }
        (Some(g), None) => Target::Games(g),
        (None, Some(p)) => Target::Positions(p),
        _ => {
            return Err(CliError::usage(
                "give exactly one of --games N and --positions N",
            ))
        }
    };
    let format = Format::parse(args.format.as_deref().unwrap_or("viriformat"))
        .map_err(|e| CliError::usage(format!("--format: {e}")))?;
    if args.nodes == 0 {
        return Err(CliError::usage("--nodes must be at least 1"));
    }
    if args.hash == 0 {
        return Err(CliError::usage("--hash must be at least 1 MiB"));
    }
    let hash = &crate::engines::variant::HASH_MB;
    if !hash.contains(&args.hash) {
        return Err(CliError::usage(format!(
            "--hash {}: at most {} MiB (1 TiB) per game",
            args.hash,
            hash.end()
        )));
    }
    let evaluation = Evaluation::parse(&args.eval).map_err(CliError::usage)?;
    let eval_file = args.eval_file.as_ref().map(|f| f.to_string_lossy());
    rule::check(evaluation, eval_file.as_deref(), &rule::FLAGS).map_err(CliError::usage)?;
    let mut check = PathCheck::new();
    if let Some(book) = &args.book {
        check.input("--book", book);
    }
    if let Some(f) = net_file(args) {
        check.input("--eval-file", f);
    }
    check.tb_words(args.tb.as_deref());
    if let Some(dir) = args.slurm.run_dir.as_ref().filter(|_| args.slurm.slurm) {
        check.run_dir(dir);
    }
    let paths = format.paths(&out);
    for p in [paths.viriformat, paths.text, paths.index]
        .into_iter()
        .flatten()
    {
        check.record("--out", &p).locked("--out", &p);
    }
    check.record("--out record", run_record::path_for(&out));
    check.check()?;
    // The network is loaded here, so that its errors name --eval-file (datagen's option),
    // and handed to the engine as such.
    let net = net_file(args)
        .map(|f| {
            Net::load(f)
                .map(Arc::new)
                .map_err(|e| CliError::usage(format!("--eval-file {e}")))
        })
        .transpose()?;
    // The one run plan: a single builtin engine playing itself at the node limit.
    let engines = EngineArgs {
        engines: Vec::new(),
        each: vec![
            "name=datagen".to_string(),
            format!("nodes={}", args.nodes),
            format!("option.Hash={}", args.hash),
            format!("option.Eval={}", args.eval),
        ],
    };
    let (plan, run) = MatchPlan::build(&PlanRequest {
        engines: &engines,
        seats: 0..=0,
        example: "",
        run: &args.run,
        games: None,
        default_games: None,
        book: &BookArgs::default(),
        adjudication: Adjudication::default(),
        failure: None,
        recover_by_default: false,
        sprt: None,
    })?;
    let tablebase = args.tb.as_deref().map(datagen_tablebase).transpose()?;
    let source = match (&args.book, args.dfrc) {
        (Some(path), _) => Source::Book(
            Book::load(path, &BookOptions::default())
                .map_err(|e| CliError::usage(format!("--book: {e}")))?,
        ),
        (None, true) => Source::Dfrc,
        (None, false) => Source::StartPosition,
    };
    Ok(Plan {
        net_sha256: net_sha256(args)?,
        out,
        format,
        filter: TextFilter {
            min_ply: args.min_ply,
            max_score: args.max_score.min(i32::MAX as u32) as i32,
            skip_in_check: !args.keep_check,
            skip_tactical: !args.keep_tactical,
        },
        target,
        concurrency: plan.concurrency,
        game: GameOptions {
            source,
            random_plies: args.random_plies,
            opening_limit: args.opening_limit.min(i32::MAX as u32) as i32,
            variant: Variant {
                net,
                ..run.variants[0].clone()
            },
            adjudication: TrainingRules::default(),
            tablebase,
            seed: plan.seed,
        },
    })
}

/// Datagen's `--tb`: the match option's words, but every table result ends a game (the
/// labels are the point), so `adjudicate=` is not taken.
fn datagen_tablebase(words: &[String]) -> CliResult<TablebaseRule> {
    if words.iter().skip(1).any(|w| w.starts_with("adjudicate=")) {
        return Err(CliError::usage(
            "--tb: adjudicate= belongs to matches; datagen ends a game at any table result",
        ));
    }
    TablebaseRule::open("--tb", words).map_err(CliError::usage)
}

/// The network file of `--eval-file` (`None`: the embedded net, also for an empty value).
pub(super) fn net_file(args: &DatagenArgs) -> Option<&Path> {
    args.eval_file
        .as_deref()
        .filter(|f| !rule::is_embedded(&f.to_string_lossy()))
}

/// What identifies the network of the run: `None` for the embedded net (or HCE), else the
/// SHA-256 of the file's bytes, so a resume with a changed file is refused and one with a
/// byte-identical copy at another path is not.
fn net_sha256(args: &DatagenArgs) -> CliResult<Option<String>> {
    net_file(args)
        .map(|f| {
            sha256_file(f).map_err(|e| CliError::usage(format!("--eval-file {}: {e}", f.display())))
        })
        .transpose()
}
