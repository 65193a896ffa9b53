//! `spar datagen`: training positions from self-play of the builtin engine, and
//! `spar datagen --inspect` to look inside the files.
//!
//! Game k depends only on (seed, k) and the options: its opening comes from a generator
//! seeded with H(seed, k), each game starts with an emptied hash table and histories, and
//! one thread searches each move to a node limit. Games are played by the shared game
//! loop ([`crate::play::game`]) with datagen's adjudication, run by the shared ordered
//! runner ([`crate::play::ordered`]) and written in index order, so the files are the same
//! at any concurrency, and `--resume` continues with the next index.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use data::book::{Book, BookOptions};
use data::training::files::{Format, TrainingWriter};
use data::training::filter::TextFilter;
use data::training::inspect::{self, FileKind};
use engine::nnue::{rule, Net};
use engine::search::Evaluation;

use crate::cli::{BookArgs, EngineArgs, RunArgs, SlurmArgs};
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::manifest::sha256_file;
use crate::cluster::shard::ShardRun;
use crate::engines::player::BuiltinPlayer;
use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::files::kill_point;
use crate::files::lock::lock_output;
use crate::files::paths::PathCheck;
use crate::files::run_record::{self, Field};
use crate::interrupt;
use crate::plan::{MatchPlan, PlanRequest};
use crate::play::adjudication::{Adjudication, TrainingRules};
use crate::play::ordered::{self, Control, Jobs, Stride};
use crate::play::tablebase::TablebaseRule;
use crate::play::training::{GameOptions, GameWorker, Played, Source};
use crate::progress::Progress;
use crate::stdout;

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
    out: Option<PathBuf>,
    /// Stop after this many games.
    #[arg(long, value_name = "N")]
    games: Option<u64>,
    /// Stop after the game that brings the file to N positions (text lines with
    /// --format text, viriformat positions otherwise).
    #[arg(long, value_name = "N")]
    positions: Option<u64>,
    /// Nodes searched per move.
    #[arg(long, default_value_t = 5000)]
    nodes: u64,
    /// Random legal plies played before the engine takes over.
    #[arg(long, default_value_t = 8, value_name = "N")]
    random_plies: u32,
    /// Reject openings whose first search scores beyond this many centipawns.
    #[arg(long, default_value_t = 1000, value_name = "CP")]
    opening_limit: u32,
    /// Start the random plies from random positions of this EPD or PGN book.
    #[arg(long, value_name = "FILE", conflicts_with = "dfrc")]
    book: Option<PathBuf>,
    /// Start from random double-Fischer-random (DFRC) positions.
    #[arg(long)]
    dfrc: bool,
    /// Syzygy tables: `DIR [pieces=N] [ignore50=false]` (directories separated by ':'). A
    /// game ends at its first position the tables cover, and their result labels every
    /// position of the game.
    #[arg(long, num_args = 1.., value_name = "DIR [KEY=VALUE]")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tb: Option<Vec<String>>,
    #[command(flatten)]
    run: RunArgs,
    /// Output format: viriformat, text (bullet's `FEN | score | result`) or both.
    /// With --inspect: the file's format (default: guessed from its content).
    #[arg(long, value_name = "FORMAT")]
    format: Option<String>,
    /// Text format: skip positions before this game ply.
    #[arg(long, default_value_t = 16, value_name = "PLY")]
    min_ply: u32,
    /// Text format: skip positions whose |score| is above this.
    #[arg(long, default_value_t = 3000, value_name = "CP")]
    max_score: u32,
    /// Text format: keep positions where the side to move is in check.
    #[arg(long)]
    keep_check: bool,
    /// Text format: keep positions whose best move captures or promotes.
    #[arg(long)]
    keep_tactical: bool,
    /// Hash table per game, MiB.
    #[arg(long, default_value_t = 8, value_name = "MB")]
    hash: usize,
    /// Static evaluation of the self-play engine: nnue (the embedded network, or --eval-file;
    /// the engine's default) or hce (handcrafted)
    #[arg(long, default_value = Evaluation::DEFAULT.name(), value_parser = ["hce", "nnue"])]
    eval: String,
    /// Network file for --eval nnue (default: the embedded net)
    #[arg(long, value_name = "FILE")]
    eval_file: Option<PathBuf>,
    /// Continue an interrupted run: keep the complete games in the files, drop a partial one.
    #[arg(long)]
    resume: bool,
    /// Print counts, results, a score histogram and samples of FILE, checking every record
    /// (exit 1 on a corrupt one).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["out", "games", "positions", "resume"])]
    inspect: Option<PathBuf>,
    /// Sample positions shown by --inspect.
    #[arg(long, default_value_t = 5, value_name = "N")]
    samples: usize,
    #[command(flatten)]
    slurm: SlurmArgs,
}

/// Runs `spar datagen`.
pub fn run(args: DatagenArgs) -> CliResult {
    if let Some(path) = &args.inspect {
        return run_inspect(path, args.format.as_deref(), args.samples);
    }
    if args.slurm.slurm {
        return coordinate(args);
    }
    args.slurm.check_local()?;
    let plan = plan(&args)?;
    // One writer per file of --out (the viriformat file and the text file, whose index
    // follows it): a second run on any of them, whatever its --format, is refused here,
    // before any game; the kernel frees the locks when this process ends.
    let paths = plan.format.paths(&plan.out);
    let mut locks = Vec::new();
    for p in [&paths.viriformat, &paths.text].into_iter().flatten() {
        locks.extend(lock_output(p, "--out")?);
    }
    generate(&args, &plan, None)
}

/// The coordinator of `spar datagen --slurm`: shard I plays games I, I+N, …; the merge
/// writes them in game order into --out.
fn coordinate(mut args: DatagenArgs) -> CliResult {
    if args.positions.is_some() {
        return Err(CliError::usage(
            "--positions cannot be sharded (where a shard stops depends on the others): give --games N with --slurm",
        ));
    }
    coordinator::shard_cpus(&mut args.run, &args.slurm)?;
    let resume = args.resume;
    let cluster = coordinator::prepare(&args.slurm, resume)?;
    // Checks every option (and the --out paths) as a local run would.
    let checked = plan(&args)?;
    let Target::Games(games) = checked.target else {
        unreachable!("--positions is refused above")
    };
    let paths = checked.format.paths(&checked.out);
    let has_games = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
    if has_games && !resume {
        return Err(CliError::usage(format!(
            "--out {} already holds games: choose a new file (the merge of the shards writes it)",
            checked.out.display()
        )));
    }
    args.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let manifest = if resume {
        coordinator::reattach(&cluster, "datagen", &stored)?
    } else {
        let book = args
            .book
            .as_ref()
            .map(|b| vec![b.to_string_lossy().into_owned()]);
        let files: Vec<(String, PathBuf)> = args
            .eval_file
            .iter()
            .map(|f| ("--eval-file".to_string(), f.clone()))
            .collect();
        let mut m = coordinator::plan_manifest(
            &cluster,
            "datagen",
            stored,
            None,
            &[],
            &[],
            book.as_deref(),
            &files,
            Some(games),
        )?;
        let tables = checked.game.tablebase.as_ref().map(|t| t.files());
        m.pin_tablebases(&cluster.dir, tables.unwrap_or_default())?;
        m
    };
    coordinator::run(&Submission {
        cluster: &cluster,
        manifest: &manifest,
        quiet: args.run.quiet,
    })
}

/// Plays shard `shard.index` of a datagen run: games I, I+N, … into the shard's own file,
/// continuing it.
pub fn run_shard(args: serde_json::Value, shard: &ShardRun) -> CliResult {
    let mut args: DatagenArgs = serde_json::from_value(args).map_err(|e| {
        CliError::usage(format!(
            "{}: the datagen arguments do not read: {e}",
            shard.dir.display()
        ))
    })?;
    args.out = Some(crate::cluster::shard_positions(&shard.dir, shard.index));
    args.resume = true;
    args.run.concurrency = Some(shard.concurrency);
    args.run.quiet = true;
    args.slurm = SlurmArgs::default();
    let mut plan = plan(&args)?;
    if let Target::Games(g) = plan.target {
        plan.target = Target::Games(shard.stride().count_below(g));
    }
    generate(&args, &plan, Some(shard))
}

fn run_inspect(path: &std::path::Path, format: Option<&str>, samples: usize) -> CliResult {
    let shown = path.display();
    // Read twice (the format guess, then the records): a regular file only.
    crate::files::input::regular(path, "--inspect")?;
    let kind = match format {
        None => {
            inspect::detect(path).map_err(|e| CliError::usage(format!("--inspect {shown}: {e}")))?
        }
        Some("viriformat" | "vf") => FileKind::Viriformat,
        Some("text" | "txt") => FileKind::Text,
        Some(other) => {
            return Err(CliError::usage(format!(
                "--format {other}: --inspect reads viriformat or text"
            )))
        }
    };
    let summary = inspect::inspect(path, kind, samples)
        .map_err(|e| CliError::usage(format!("--inspect {shown}: {e}")))?;
    let mut lines = vec![format!("File: {shown}")];
    lines.extend(summary.report());
    if summary.error.is_none() {
        lines.push("Valid: every record decodes".to_string());
    }
    stdout::print_lines(&lines)?;
    match &summary.error {
        None => Ok(()),
        Some(e) => Err(CliError::failure(format!(
            "{shown}: corrupt record at {e} (the counts above cover the records before it)"
        ))),
    }
}

/// Everything checked before the first game.
struct Plan {
    out: PathBuf,
    /// The SHA-256 of the `--eval-file` network (`None`: the embedded net or HCE).
    net_sha256: Option<String>,
    format: Format,
    filter: TextFilter,
    target: Target,
    concurrency: usize,
    game: GameOptions,
}

#[derive(Clone, Copy)]
enum Target {
    Games(u64),
    Positions(u64),
}

fn plan(args: &DatagenArgs) -> CliResult<Plan> {
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

/// Running totals of the files, for the target and the progress display.
struct Counts {
    games: u64,
    positions: u64,
    lines: u64,
}

impl Counts {
    fn progress(&self, format: Format) -> u64 {
        if format == Format::Text {
            self.lines
        } else {
            self.positions
        }
    }

    fn reached(&self, target: Target, format: Format) -> bool {
        match target {
            Target::Games(g) => self.games >= g,
            Target::Positions(p) => self.progress(format) >= p,
        }
    }

    fn line(&self, format: Format, rate: f64) -> String {
        format!(
            "{} games, {} positions, {} text lines, {rate:.0} {}/s",
            self.games,
            self.positions,
            self.lines,
            unit(format)
        )
    }
}

fn unit(format: Format) -> &'static str {
    if format == Format::Text {
        "lines"
    } else {
        "positions"
    }
}

/// What defines a datagen run for `--resume` (not the target, the concurrency or --quiet).
fn record_fields(args: &DatagenArgs, plan: &Plan) -> Vec<Field> {
    use serde_json::Value::Null;
    let f = &plan.filter;
    vec![
        Field::new("nodes", "--nodes", args.nodes.into()),
        Field::new("seed", "--seed", plan.game.seed.into()),
        Field::new("random-plies", "--random-plies", args.random_plies.into()),
        Field::new(
            "opening-limit",
            "--opening-limit",
            args.opening_limit.into(),
        ),
        // The book by its bytes; a record of an older spar may hold its path.
        match &args.book {
            Some(b) => {
                let path = b.display().to_string();
                Field::input(
                    "book by content",
                    "--book",
                    crate::jobs::record_fields::words_by_content(std::slice::from_ref(&path), true)
                        .and_then(|w| w.into_iter().next())
                        .into(),
                    path.clone().into(),
                )
                .or_older("book", path.into())
            }
            None => Field::input("book", "--book", Null, Null).or_older("book by content", Null),
        },
        Field::new("dfrc", "--dfrc", args.dfrc.into()),
        Field::new(
            "tb",
            "--tb",
            plan.game
                .tablebase
                .as_ref()
                .map_or(serde_json::Value::Null, |t| {
                    serde_json::to_value(t).expect("json")
                }),
        ),
        crate::jobs::record_fields::tables_field(
            &crate::jobs::record_fields::table_files(
                plan.game.tablebase.as_ref(),
                std::slice::from_ref(&plan.game.variant),
            ),
            plan.game
                .tablebase
                .as_ref()
                .map_or("option.SyzygyPath", |t| t.dirs.as_str()),
        ),
        Field::new("format", "--format", plan.format.name().into()),
        Field::new("min-ply", "--min-ply", f.min_ply.into()),
        Field::new("max-score", "--max-score", f.max_score.into()),
        Field::new("keep-check", "--keep-check", (!f.skip_in_check).into()),
        Field::new(
            "keep-tactical",
            "--keep-tactical",
            (!f.skip_tactical).into(),
        ),
        Field::new("hash", "--hash", args.hash.into()),
        // Before --eval, datagen played with the handcrafted evaluation.
        Field::new("eval", "--eval", args.eval.clone().into()).absent_as("hce".into()),
        Field::input(
            "eval-file-sha256",
            "--eval-file",
            plan.net_sha256.clone().into(),
            net_file(args).map(|f| f.display().to_string()).into(),
        )
        .or_older("eval-file", net_identity_before(args).into()),
    ]
}

/// The network as records of older spars named it (key `eval-file`): its path and the
/// checksum in its last 8 bytes (`None`: the embedded net).
fn net_identity_before(args: &DatagenArgs) -> Option<String> {
    let path = args.eval_file.as_ref()?;
    // Bounded, and a regular file only (a network is a few MiB).
    let bytes = crate::files::input::read_bounded(path, "--eval-file", 1 << 32).ok()?;
    let sum = bytes.len().checked_sub(8).map(|at| &bytes[at..])?;
    let hex: String = sum.iter().rev().map(|b| format!("{b:02x}")).collect();
    Some(format!("{} (checksum {hex})", path.display()))
}

/// The network file of `--eval-file` (`None`: the embedded net, also for an empty value).
fn net_file(args: &DatagenArgs) -> Option<&Path> {
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

fn generate(args: &DatagenArgs, plan: &Plan, shard: Option<&ShardRun>) -> CliResult {
    let started = Instant::now();
    let quiet = args.run.quiet;
    let fields = record_fields(args, plan);
    let paths = plan.format.paths(&plan.out);
    let has_games = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .any(|p| std::fs::metadata(p).is_ok_and(|m| m.len() > 0));
    if args.resume && has_games {
        run_record::check_resume("--out", &plan.out, &fields, quiet)?;
    }
    let (mut writer, resumed) =
        TrainingWriter::open(&plan.out, plan.format, plan.filter, args.resume, None)
            .map_err(CliError::usage)?;
    run_record::write(
        "--out",
        &plan.out,
        "datagen",
        &fields,
        serde_json::Map::new(),
    )?;
    let mut counts = Counts {
        games: resumed.games,
        positions: resumed.positions,
        lines: resumed.lines,
    };
    if args.resume && !quiet {
        eprintln!(
            "Resuming after {} games ({} positions, {} text lines){}",
            resumed.games,
            resumed.positions,
            resumed.lines,
            if resumed.dropped_bytes > 0 {
                format!(
                    "; dropped {} bytes of an unfinished game",
                    resumed.dropped_bytes
                )
            } else {
                String::new()
            }
        );
    }
    let first_game = resumed.games;
    let at_start = counts.progress(plan.format);

    let abort = interrupt::on_ctrl_c("finishing up");
    if let Some(s) = shard {
        s.watch_stop(abort.clone());
    }
    let (len, what) = match plan.target {
        Target::Positions(p) => (p, unit(plan.format)),
        Target::Games(g) => (g, "games"),
    };
    let by_games = matches!(plan.target, Target::Games(_));
    let progress = Progress::new(
        quiet,
        what,
        Some(len),
        if by_games { counts.games } else { at_start },
    );
    let mut failure: Option<CliError> = None;
    let (mut search_time, mut worker_time, mut write_time) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);

    if !counts.reached(plan.target, plan.format) {
        let jobs = Jobs {
            stride: shard.map_or(Stride::ALL, ShardRun::stride),
            first: first_game,
            end: match plan.target {
                Target::Games(g) => Some(g),
                Target::Positions(_) => None,
            },
            concurrency: plan.concurrency,
            abort: &abort,
        };
        let make_worker = || {
            Ok(GameWorker {
                options: &plan.game,
                player: BuiltinPlayer::new(&plan.game.variant)?,
            })
        };
        let result = ordered::run(
            &jobs,
            &make_worker,
            || {},
            |played: Played| {
                search_time += played.search_time;
                worker_time += played.total_time;
                let t0 = Instant::now();
                match writer.write_game(&played.game) {
                    Ok((positions, lines)) => {
                        kill_point::record_written();
                        counts.games += 1;
                        counts.positions += positions;
                        counts.lines += lines;
                    }
                    Err(e) => {
                        failure = Some(CliError::failure(e));
                        return Control::Stop;
                    }
                }
                write_time += t0.elapsed();
                let done = counts.progress(plan.format);
                progress.set_position(if by_games { counts.games } else { done });
                let rate = (done - at_start) as f64 / started.elapsed().as_secs_f64().max(1e-9);
                progress.set_message(&counts.line(plan.format, rate));
                if counts.reached(plan.target, plan.format) {
                    Control::Stop
                } else {
                    Control::Continue
                }
            },
        );
        if let Err(e) = result {
            failure.get_or_insert(e);
        }
    }
    progress.finish();
    writer.sync().map_err(CliError::failure)?;

    let elapsed = started.elapsed().as_secs_f64();
    let made = counts.progress(plan.format) - at_start;
    let paths = writer.paths();
    let files: Vec<String> = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    let mut lines = vec![
        format!(
            "{} games, {} positions, {} text lines in {}",
            counts.games,
            counts.positions,
            counts.lines,
            files.join(" and ")
        ),
        format!(
            "This run: {} {} in {elapsed:.1} s ({:.0}/s, {} threads, {} nodes per move)",
            made,
            if plan.format == Format::Text {
                "text lines"
            } else {
                "positions"
            },
            made as f64 / elapsed.max(1e-9),
            plan.concurrency,
            args.nodes
        ),
    ];
    if worker_time > Duration::ZERO {
        let inside = search_time.as_secs_f64() / worker_time.as_secs_f64();
        lines.push(format!(
            "Time in search: {:.1} % of worker time ({:.1} % outside: openings, rules, \
             recording); writing {:.2} s",
            100.0 * inside,
            100.0 * (1.0 - inside),
            write_time.as_secs_f64()
        ));
    }
    if let Some(e) = failure {
        stdout::print_lines(&lines)?;
        return Err(e);
    }
    if abort.load(Ordering::SeqCst) && !shard.is_some_and(ShardRun::stopped) {
        lines.push(format!(
            "Interrupted after {} complete games; {}",
            counts.games,
            ShardRun::how_to_continue(shard)
        ));
        stdout::print_lines(&lines)?;
        return Err(CliError::interrupted());
    }
    stdout::print_lines(&lines)
}
