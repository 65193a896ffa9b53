//! `spar datagen`: training positions from self-play of the builtin engine, and
//! `spar datagen --inspect` to look inside the files.
//!
//! Game k depends only on (seed, k) and the options: its opening comes from a generator
//! seeded with H(seed, k), each game starts with an emptied hash table and histories, and
//! one thread searches each move to a node limit. Games are played by the shared game
//! loop ([`crate::play::game`]) with datagen's adjudication, run by the shared ordered
//! runner ([`crate::play::ordered`]) and written in index order, so the files are the same
//! at any concurrency, and `--resume` continues with the next index.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use data::book::{Book, BookOptions};
use data::rng::{mix_seed, SplitMix64};
use data::training::dfrc::{dfrc_position_from_index, DFRC_POSITIONS};
use data::training::files::{Format, TrainingWriter};
use data::training::filter::TextFilter;
use data::training::inspect::{self, FileKind};
use data::training::{white_score, ScoredMove, TrainingGame, Wdl};
use engine::position::Position;
use engine::search::Limits;
use engine::types::Move;

use crate::cli::{BookArgs, EngineArgs, RunArgs};
use crate::engines::player::{BuiltinPlayer, MoveRequest, Player};
use crate::engines::variant::Variant;
use crate::error::{CliError, CliResult};
use crate::interrupt;
use crate::plan::{MatchPlan, PlanRequest};
use crate::play::adjudication::{Adjudication, TrainingAdjudicator, TrainingRules};
use crate::play::game::{play_game, rules_verdict, GameSetup, Outcome, Seats, Termination};
use crate::play::ordered::{self, Control, Jobs, Worker};
use crate::progress::Progress;
use crate::stdout;

/// Generate training positions by self-play of the builtin engine.
///
/// Each game starts from N random legal plies (from the start position, a random book
/// position, or a random double-Fischer-random start), rejected when the first search
/// scores it beyond --opening-limit. Games end by mate, stalemate, repetition, the
/// fifty-move rule, insufficient material, or adjudication: a win when the score stays at
/// ±2500 cp or beyond for 4 plies, a draw when it stays within ±4 cp for 12 plies from
/// move 40 on.
///
///   spar datagen --out games.vf --positions 100000
///   spar datagen --out games.vf --games 5000 --format both --dfrc --nodes 5000
///   spar datagen --out games.vf --positions 100000 --resume
///   spar datagen --inspect games.vf
#[derive(clap::Args, Debug, Clone)]
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
}

/// Runs `spar datagen`.
pub fn run(args: DatagenArgs) -> CliResult {
    if let Some(path) = &args.inspect {
        return run_inspect(path, args.format.as_deref(), args.samples);
    }
    let plan = plan(&args)?;
    generate(&args, &plan)
}

fn run_inspect(path: &std::path::Path, format: Option<&str>, samples: usize) -> CliResult {
    let shown = path.display();
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
    println!("File: {shown}");
    for line in summary.report() {
        println!("{line}");
    }
    match &summary.error {
        None => {
            println!("Valid: every record decodes");
            Ok(())
        }
        Some(e) => Err(CliError::failure(format!(
            "{shown}: corrupt record at {e} (the counts above cover the records before it)"
        ))),
    }
}

/// Where the random plies start.
enum Source {
    StartPosition,
    Book(Book),
    Dfrc,
}

/// Everything checked before the first game.
struct Plan {
    out: PathBuf,
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

/// How each game is played.
struct GameOptions {
    source: Source,
    random_plies: u32,
    opening_limit: i32,
    /// The self-play engine: builtin defaults, the node limit, the hash size.
    variant: Variant,
    adjudication: TrainingRules,
    seed: u64,
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
    // The one run plan: a single builtin engine playing itself at the node limit.
    let engines = EngineArgs {
        engines: Vec::new(),
        each: vec![
            "name=datagen".to_string(),
            format!("nodes={}", args.nodes),
            format!("option.Hash={}", args.hash),
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
    let source = match (&args.book, args.dfrc) {
        (Some(path), _) => Source::Book(
            Book::load(path, &BookOptions::default())
                .map_err(|e| CliError::usage(format!("--book: {e}")))?,
        ),
        (None, true) => Source::Dfrc,
        (None, false) => Source::StartPosition,
    };
    Ok(Plan {
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
            variant: run.variants[0].clone(),
            adjudication: TrainingRules::default(),
            seed: plan.seed,
        },
    })
}

/// A finished game and what it cost.
struct Played {
    game: TrainingGame,
    search_time: Duration,
    total_time: Duration,
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

fn generate(args: &DatagenArgs, plan: &Plan) -> CliResult {
    let started = Instant::now();
    let quiet = args.run.quiet;
    let (mut writer, resumed) =
        TrainingWriter::open(&plan.out, plan.format, plan.filter, args.resume, None)
            .map_err(CliError::usage)?;
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
                player: BuiltinPlayer::new(&plan.game.variant),
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
            failure.get_or_insert(CliError::usage(e));
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
    if abort.load(Ordering::SeqCst) {
        lines.push(format!(
            "Interrupted after {} complete games; rerun with --resume to continue",
            counts.games
        ));
        stdout::print_lines(&lines)?;
        return Err(CliError::interrupted());
    }
    stdout::print_lines(&lines)
}

/// A worker: one builtin player that plays both sides of its games.
struct GameWorker<'a> {
    options: &'a GameOptions,
    player: BuiltinPlayer,
}

impl Worker for GameWorker<'_> {
    type Output = Played;

    fn run(
        &mut self,
        k: u64,
        stop: &AtomicBool,
        _tick: &dyn Fn(),
    ) -> Result<Option<Played>, String> {
        play_training_game(&mut self.player, self.options, k, stop)
    }

    fn stop_flags(&self) -> Vec<Arc<AtomicBool>> {
        self.player.stop_flag().into_iter().collect()
    }
}

/// Openings tried before giving up (a limit far below what any reasonable setting needs).
const MAX_OPENING_TRIES: u32 = 10_000;

/// Plays game `k` through the shared game loop; `None` if stopped.
///
/// The opening: random plies from the start (chosen by a generator seeded with
/// H(seed, k)), then a search from an emptied hash table that must find the position
/// within --opening-limit. The game loop then plays from there with the same player on
/// both sides and datagen's adjudication; its first search repeats the check's search
/// (same empty state, same result).
fn play_training_game(
    player: &mut BuiltinPlayer,
    options: &GameOptions,
    k: u64,
    stop: &AtomicBool,
) -> Result<Option<Played>, String> {
    let started = Instant::now();
    let limits = &options.variant.limits;
    let search_limits = Limits {
        nodes: limits.nodes,
        ..Limits::default()
    };
    let mut rng = SplitMix64::new(mix_seed(options.seed, k));
    let mut opening_search = Duration::ZERO;
    let mut tries = 0;
    let (origin, plies, start) = loop {
        tries += 1;
        if tries > MAX_OPENING_TRIES {
            return Err(format!(
                "no opening scored within --opening-limit {} cp in {MAX_OPENING_TRIES} tries; \
                 raise --opening-limit or lower --random-plies",
                options.opening_limit
            ));
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let Some((origin, plies, pos, history)) = random_opening(options, &mut rng) else {
            continue;
        };
        player
            .new_game(pos.is_chess960())
            .map_err(|e| e.to_string())?;
        let t0 = Instant::now();
        let first = player.go(&MoveRequest {
            start_fen: "",
            moves: &[],
            position: &pos,
            history: &history,
            limits: &search_limits,
        });
        opening_search += t0.elapsed();
        if first.is_ok_and(|r| {
            r.score
                .is_some_and(|s| s.as_cp().abs() <= options.opening_limit)
        }) {
            break (origin, plies, pos);
        }
    };
    let setup = GameSetup {
        start: &origin,
        book_moves: &plies,
        limits: [limits, limits],
        time_margin: [options.variant.time_margin; 2],
        max_moves: None,
    };
    let mut adjudicator = TrainingAdjudicator::new(options.adjudication);
    let Some(game) = play_game(Seats::Same(player), &setup, &mut adjudicator, stop) else {
        return Ok(None);
    };
    if matches!(
        game.termination,
        Termination::IllegalMove | Termination::Crash | Termination::Stall
    ) {
        return Err(format!(
            "the search found no move in a game from {}: {}",
            start.to_fen(),
            game.reason
        ));
    }
    let mut side = start.side_to_move();
    let mut moves: Vec<ScoredMove> = Vec::with_capacity(game.moves.len());
    let mut search_time = opening_search;
    for m in game.moves.iter().filter(|m| !m.book) {
        let score = m.score.ok_or("the builtin engine reported no score")?;
        moves.push(ScoredMove {
            mv: m.mv,
            score: white_score(score, side),
        });
        search_time += m.time;
        side = !side;
    }
    let result = match game.outcome {
        Outcome::WhiteWins => Wdl::WhiteWins,
        Outcome::BlackWins => Wdl::BlackWins,
        Outcome::Draw => Wdl::Draw,
    };
    Ok(Some(Played {
        game: TrainingGame {
            start,
            moves,
            result,
        },
        search_time,
        total_time: started.elapsed(),
    }))
}

/// A start position, the random plies after it, the position they reach and the keys of
/// the positions before it (for repetitions); `None` if the plies ended the game.
fn random_opening(
    options: &GameOptions,
    rng: &mut SplitMix64,
) -> Option<(Position, Vec<Move>, Position, Vec<u64>)> {
    let origin = match &options.source {
        Source::StartPosition => Position::startpos(),
        Source::Book(book) => book.opening(rng.below(book.len())).position(),
        Source::Dfrc => dfrc_position_from_index(rng.below(DFRC_POSITIONS as usize) as u32),
    };
    let mut pos = origin.clone();
    let mut plies = Vec::with_capacity(options.random_plies as usize);
    let mut history = Vec::with_capacity(256);
    for _ in 0..options.random_plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let mv = legal.as_slice()[rng.below(legal.len())];
        history.push(pos.key());
        plies.push(mv);
        pos.play_mut(mv);
    }
    rules_verdict(&pos, &history)
        .is_none()
        .then_some((origin, plies, pos, history))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> GameOptions {
        let each = ["nodes=300", "option.Hash=1"].map(String::from);
        GameOptions {
            source: Source::Dfrc,
            random_plies: 4,
            opening_limit: 300,
            variant: crate::engines::variant::parse_variant(&[], &each, 0).unwrap(),
            adjudication: TrainingRules::default(),
            seed: 7,
        }
    }

    #[test]
    fn games_are_deterministic_and_balanced() {
        let options = options();
        let stop = AtomicBool::new(false);
        let mut p1 = BuiltinPlayer::new(&options.variant);
        let mut p2 = BuiltinPlayer::new(&options.variant);
        let a = play_training_game(&mut p1, &options, 3, &stop)
            .unwrap()
            .unwrap();
        // A player that played another game first gives the same game: fresh state.
        play_training_game(&mut p2, &options, 4, &stop)
            .unwrap()
            .unwrap();
        let b = play_training_game(&mut p2, &options, 3, &stop)
            .unwrap()
            .unwrap();
        assert_eq!(a.game, b.game);
        assert!(i32::from(a.game.moves[0].score).abs() <= 300);
        assert!(a.search_time <= a.total_time);
    }

    #[test]
    fn a_raised_stop_abandons_the_game() {
        let options = options();
        let stop = AtomicBool::new(true);
        let mut p = BuiltinPlayer::new(&options.variant);
        assert!(play_training_game(&mut p, &options, 0, &stop)
            .unwrap()
            .is_none());
    }
}
