//! `spar datagen`: training positions from self-play of the builtin engine, and
//! `spar datagen --inspect` to look inside the files.
//!
//! Game k depends only on (seed, k) and the options: its opening comes from a generator
//! seeded with H(seed, k), each game starts with an emptied hash table and histories, and
//! one thread searches each move to a node limit. Games are written in index order, so the
//! files are the same at any concurrency, and `--resume` continues with the next index.

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use data::book::{Book, BookOptions};
use data::rng::{mix_seed, SplitMix64};
use data::training::dfrc::{dfrc_position_from_index, DFRC_POSITIONS};
use data::training::files::{Format, TrainingWriter};
use data::training::filter::TextFilter;
use data::training::inspect::{self, FileKind};
use data::training::{white_score, ScoredMove, TrainingGame, Wdl};
use engine::params::Params;
use engine::position::Position;
use engine::search::{Limits, SearchResult, Searcher};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::{CliError, CliResult};
use crate::play::game::{rules_verdict, Outcome};

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
    /// Games played at once (default: all cores).
    #[arg(long)]
    concurrency: Option<usize>,
    /// Seed of the openings.
    #[arg(long, default_value_t = 1)]
    seed: u64,
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
    /// No progress display.
    #[arg(long)]
    quiet: bool,
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

struct GameOptions {
    source: Source,
    random_plies: u32,
    opening_limit: i32,
    nodes: u64,
    hash_mb: usize,
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
    let concurrency = match args.concurrency {
        Some(0) => return Err(CliError::usage("--concurrency must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
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
        concurrency,
        game: GameOptions {
            source,
            random_plies: args.random_plies,
            opening_limit: args.opening_limit.min(i32::MAX as u32) as i32,
            nodes: args.nodes,
            hash_mb: args.hash,
            seed: args.seed,
        },
    })
}

/// A finished game and what it cost.
struct Played {
    game: TrainingGame,
    search_time: Duration,
    total_time: Duration,
}

enum Message {
    Game(u64, Box<Played>),
    Failed(String),
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
}

fn generate(args: &DatagenArgs, plan: &Plan) -> CliResult {
    let started = Instant::now();
    let (mut writer, resumed) =
        TrainingWriter::open(&plan.out, plan.format, plan.filter, args.resume, None)
            .map_err(CliError::usage)?;
    let mut counts = Counts {
        games: resumed.games,
        positions: resumed.positions,
        lines: resumed.lines,
    };
    if args.resume && !args.quiet {
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

    let abort = Arc::new(AtomicBool::new(false));
    install_ctrl_c(abort.clone());
    let mut display = Display::new(args.quiet, plan, at_start);
    let mut failure: Option<CliError> = None;
    let (mut search_time, mut worker_time, mut write_time) =
        (Duration::ZERO, Duration::ZERO, Duration::ZERO);

    if !counts.reached(plan.target, plan.format) {
        let end_game = match plan.target {
            Target::Games(g) => Some(g),
            Target::Positions(_) => None,
        };
        let next = AtomicU64::new(first_game);
        let stop = AtomicBool::new(false);
        let stop_flags: Mutex<Vec<Arc<AtomicBool>>> = Mutex::new(Vec::new());
        let (tx, rx) = mpsc::channel::<Message>();
        std::thread::scope(|scope| {
            for _ in 0..plan.concurrency {
                let tx = tx.clone();
                let (next, stop, stop_flags) = (&next, &stop, &stop_flags);
                let options = &plan.game;
                std::thread::Builder::new()
                    .name("spar-datagen".to_string())
                    .stack_size(64 << 20)
                    .spawn_scoped(scope, move || {
                        worker(options, end_game, next, stop, stop_flags, &tx)
                    })
                    .expect("start a worker thread");
            }
            drop(tx);
            let halt = || {
                stop.store(true, Ordering::SeqCst);
                for f in stop_flags.lock().expect("stop flags").iter() {
                    f.store(true, Ordering::SeqCst);
                }
            };
            let mut buffer: BTreeMap<u64, Box<Played>> = BTreeMap::new();
            let mut expected = first_game;
            let mut stopped = false;
            loop {
                let msg = rx.recv_timeout(Duration::from_millis(100));
                if abort.load(Ordering::Relaxed) && !stopped {
                    stopped = true;
                    halt();
                }
                let msg = match msg {
                    Ok(m) => m,
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        display.tick(&counts);
                        continue;
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                };
                match msg {
                    Message::Failed(e) => {
                        failure.get_or_insert(CliError::usage(e));
                        stopped = true;
                        halt();
                    }
                    Message::Game(k, played) => {
                        search_time += played.search_time;
                        worker_time += played.total_time;
                        if stopped {
                            continue;
                        }
                        buffer.insert(k, played);
                        while let Some(p) = buffer.remove(&expected) {
                            expected += 1;
                            let t0 = Instant::now();
                            match writer.write_game(&p.game) {
                                Ok((positions, lines)) => {
                                    counts.games += 1;
                                    counts.positions += positions;
                                    counts.lines += lines;
                                }
                                Err(e) => {
                                    failure = Some(CliError::failure(e));
                                    stopped = true;
                                }
                            }
                            write_time += t0.elapsed();
                            if counts.reached(plan.target, plan.format) {
                                stopped = true;
                            }
                            if stopped {
                                halt();
                                break;
                            }
                        }
                        display.tick(&counts);
                    }
                }
            }
        });
    }
    display.finish();
    writer.sync().map_err(CliError::failure)?;

    let elapsed = started.elapsed().as_secs_f64();
    let made = counts.progress(plan.format) - at_start;
    let paths = writer.paths();
    let files: Vec<String> = [&paths.viriformat, &paths.text]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    println!(
        "{} games, {} positions, {} text lines in {}",
        counts.games,
        counts.positions,
        counts.lines,
        files.join(" and ")
    );
    println!(
        "This run: {} {} in {elapsed:.1} s ({:.0}/s, {} threads, {} nodes per move)",
        made,
        if plan.format == Format::Text {
            "text lines"
        } else {
            "positions"
        },
        made as f64 / elapsed.max(1e-9),
        plan.concurrency,
        plan.game.nodes
    );
    if worker_time > Duration::ZERO {
        let inside = search_time.as_secs_f64() / worker_time.as_secs_f64();
        println!(
            "Time in search: {:.1} % of worker time ({:.1} % outside: openings, rules, \
             recording); writing {:.2} s",
            100.0 * inside,
            100.0 * (1.0 - inside),
            write_time.as_secs_f64()
        );
    }
    if let Some(e) = failure {
        return Err(e);
    }
    if abort.load(Ordering::SeqCst) {
        println!(
            "Interrupted after {} complete games; rerun with --resume to continue",
            counts.games
        );
        return Err(CliError {
            message: "interrupted".to_string(),
            code: 130,
        });
    }
    Ok(())
}

fn worker(
    options: &GameOptions,
    end_game: Option<u64>,
    next: &AtomicU64,
    stop: &AtomicBool,
    stop_flags: &Mutex<Vec<Arc<AtomicBool>>>,
    tx: &mpsc::Sender<Message>,
) {
    let mut searcher = Searcher::new(Params::defaults());
    searcher.set_hash_mb(options.hash_mb);
    stop_flags
        .lock()
        .expect("stop flags")
        .push(searcher.stop_flag());
    loop {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let k = next.fetch_add(1, Ordering::SeqCst);
        if end_game.is_some_and(|end| k >= end) {
            return;
        }
        match play_game(&mut searcher, options, k, stop) {
            Ok(Some(played)) => {
                if tx.send(Message::Game(k, Box::new(played))).is_err() {
                    return;
                }
            }
            Ok(None) => return,
            Err(e) => {
                let _ = tx.send(Message::Failed(e));
                return;
            }
        }
    }
}

/// Openings tried before giving up (a limit far below what any reasonable setting needs).
const MAX_OPENING_TRIES: u32 = 10_000;

/// Win adjudication: |score| at least this …
const WIN_SCORE: i32 = 2500;
/// … for this many consecutive plies.
const WIN_PLIES: u32 = 4;
/// Draw adjudication: |score| at most this …
const DRAW_SCORE: i32 = 4;
/// … for this many consecutive plies …
const DRAW_PLIES: u32 = 12;
/// … from this full move on.
const DRAW_MOVE: u16 = 40;

/// Plays game `k`; `None` if stopped.
fn play_game(
    searcher: &mut Searcher,
    options: &GameOptions,
    k: u64,
    stop: &AtomicBool,
) -> Result<Option<Played>, String> {
    let started = Instant::now();
    let mut search_time = Duration::ZERO;
    let limits = Limits {
        nodes: Some(options.nodes),
        ..Limits::default()
    };
    let mut search = |searcher: &mut Searcher, pos: &Position, history: &[u64]| {
        let t0 = Instant::now();
        let r = searcher.search(pos, history, &limits, &mut |_| {});
        search_time += t0.elapsed();
        r
    };
    let mut rng = SplitMix64::new(mix_seed(options.seed, k));

    // The opening: random plies, then a first search that must find it balanced.
    let (mut pos, mut history, first): (Position, Vec<u64>, SearchResult) = {
        let mut tries = 0;
        loop {
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
            let Some((pos, history)) = random_opening(options, &mut rng) else {
                continue;
            };
            searcher.clear();
            let first = search(searcher, &pos, &history);
            if first.best_move.is_some() && first.score.as_cp().abs() <= options.opening_limit {
                break (pos, history, first);
            }
        }
    };

    let start = pos.clone();
    let mut moves: Vec<ScoredMove> = Vec::with_capacity(256);
    let mut adjudicator = Adjudicator::default();
    let mut result = Some(first);
    let outcome = loop {
        if let Some((outcome, _, _)) = rules_verdict(&pos, &history) {
            break outcome;
        }
        if stop.load(Ordering::Relaxed) {
            return Ok(None);
        }
        let r = match result.take() {
            Some(r) => r,
            None => search(searcher, &pos, &history),
        };
        let Some(mv) = r.best_move else {
            return Err(format!("the search found no move in {}", pos.to_fen()));
        };
        let score = white_score(r.score, pos.side_to_move());
        moves.push(ScoredMove { mv, score });
        let white_cp = r.score.as_cp() * pos.side_to_move().sign();
        let verdict = adjudicator.update(white_cp, pos.fullmove_number());
        history.push(pos.key());
        pos.play_mut(mv);
        if let Some(v) = verdict {
            break v;
        }
    };
    let result = match outcome {
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

/// A start position and the random plies after it (with the keys of the positions before
/// the last one, for repetitions); `None` if the plies ended the game.
fn random_opening(options: &GameOptions, rng: &mut SplitMix64) -> Option<(Position, Vec<u64>)> {
    let mut pos = match &options.source {
        Source::StartPosition => Position::startpos(),
        Source::Book(book) => book.opening(rng.below(book.len())).position(),
        Source::Dfrc => dfrc_position_from_index(rng.below(DFRC_POSITIONS as usize) as u32),
    };
    let mut history = Vec::with_capacity(256);
    for _ in 0..options.random_plies {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return None;
        }
        let mv = legal.as_slice()[rng.below(legal.len())];
        history.push(pos.key());
        pos.play_mut(mv);
    }
    rules_verdict(&pos, &history)
        .is_none()
        .then_some((pos, history))
}

/// Datagen's adjudication, on White-relative scores after each move.
#[derive(Default)]
struct Adjudicator {
    /// Consecutive plies at ±[`WIN_SCORE`] or beyond, with the sign of the last one.
    win: (i32, u32),
    /// Consecutive plies within ±[`DRAW_SCORE`] from move [`DRAW_MOVE`] on.
    draw: u32,
}

impl Adjudicator {
    fn update(&mut self, white_cp: i32, fullmove: u16) -> Option<Outcome> {
        let sign = if white_cp >= WIN_SCORE {
            1
        } else if white_cp <= -WIN_SCORE {
            -1
        } else {
            0
        };
        self.win = match (sign, self.win) {
            (0, _) => (0, 0),
            (s, (last, n)) if s == last => (s, n + 1),
            (s, _) => (s, 1),
        };
        if fullmove >= DRAW_MOVE && white_cp.abs() <= DRAW_SCORE {
            self.draw += 1;
        } else {
            self.draw = 0;
        }
        if self.win.1 >= WIN_PLIES {
            Some(if self.win.0 > 0 {
                Outcome::WhiteWins
            } else {
                Outcome::BlackWins
            })
        } else if self.draw >= DRAW_PLIES {
            Some(Outcome::Draw)
        } else {
            None
        }
    }
}

/// The progress display: a bar of positions (or games) with the rate, on a terminal; a
/// plain line every 10 s otherwise; nothing with --quiet.
struct Display {
    bar: Option<ProgressBar>,
    plain: bool,
    format: Format,
    by_games: bool,
    started: Instant,
    last_plain: Instant,
    at_start: u64,
}

impl Display {
    fn new(quiet: bool, plan: &Plan, at_start: u64) -> Display {
        let tty = std::io::stderr().is_terminal();
        let unit = if plan.format == Format::Text {
            "lines"
        } else {
            "positions"
        };
        let bar = (!quiet && tty).then(|| {
            let (len, what) = match plan.target {
                Target::Positions(p) => (p, unit),
                Target::Games(g) => (g, "games"),
            };
            let bar = ProgressBar::new(len);
            bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(4));
            let template = format!(
                "{{spinner}} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} {what} {{msg}}"
            );
            bar.set_style(
                ProgressStyle::with_template(&template)
                    .expect("template")
                    .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(250));
            bar
        });
        Display {
            bar,
            plain: !quiet && !tty,
            format: plan.format,
            by_games: matches!(plan.target, Target::Games(_)),
            started: Instant::now(),
            last_plain: Instant::now(),
            at_start,
        }
    }

    fn tick(&mut self, counts: &Counts) {
        let done = counts.progress(self.format);
        let rate = (done - self.at_start) as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        let line = format!(
            "{} games, {} positions, {} text lines, {rate:.0} {}/s",
            counts.games,
            counts.positions,
            counts.lines,
            if self.format == Format::Text {
                "lines"
            } else {
                "positions"
            }
        );
        if let Some(bar) = &self.bar {
            bar.set_position(if self.by_games { counts.games } else { done });
            bar.set_message(line);
        } else if self.plain && self.last_plain.elapsed() >= Duration::from_secs(10) {
            self.last_plain = Instant::now();
            eprintln!("[{:.0}s] {line}", self.started.elapsed().as_secs_f64());
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// First Ctrl-C: stop, keep the complete games, print the summary. Second: exit at once
/// (every game is one whole write per file, so `--resume` finds the files intact).
fn install_ctrl_c(abort: Arc<AtomicBool>) {
    let _ = ctrlc::set_handler(move || {
        if abort.swap(true, Ordering::SeqCst) {
            eprintln!("\nspar: second interrupt, exiting now");
            std::process::exit(130);
        }
        eprintln!("\nspar: interrupt: finishing up (press Ctrl-C again to exit at once)");
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn win_needs_four_plies_on_one_side() {
        let mut a = Adjudicator::default();
        assert_eq!(a.update(2600, 10), None);
        assert_eq!(a.update(2500, 10), None);
        assert_eq!(a.update(-2600, 11), None, "a swing restarts the count");
        assert_eq!(a.update(-2600, 11), None);
        assert_eq!(a.update(-2700, 12), None);
        assert_eq!(a.update(-29999, 12), Some(Outcome::BlackWins));
        let mut b = Adjudicator::default();
        for _ in 0..3 {
            assert_eq!(b.update(3000, 20), None);
        }
        assert_eq!(b.update(3000, 21), Some(Outcome::WhiteWins));
    }

    #[test]
    fn draw_needs_twelve_quiet_plies_from_move_40() {
        let mut a = Adjudicator::default();
        for _ in 0..30 {
            assert_eq!(a.update(0, 39), None, "too early");
        }
        for i in 0..11 {
            assert_eq!(a.update(if i % 2 == 0 { 4 } else { -4 }, 40), None);
        }
        assert_eq!(a.update(0, 41), Some(Outcome::Draw));
        let mut b = Adjudicator::default();
        for _ in 0..11 {
            b.update(1, 50);
        }
        assert_eq!(
            b.update(5, 50),
            None,
            "one score beyond ±4 restarts the count"
        );
        for _ in 0..11 {
            assert_eq!(b.update(-2, 51), None);
        }
        assert_eq!(b.update(3, 52), Some(Outcome::Draw));
    }

    #[test]
    fn games_are_deterministic_and_balanced() {
        let options = GameOptions {
            source: Source::Dfrc,
            random_plies: 4,
            opening_limit: 300,
            nodes: 300,
            hash_mb: 1,
            seed: 7,
        };
        let stop = AtomicBool::new(false);
        let mut s1 = Searcher::new(Params::defaults());
        s1.set_hash_mb(1);
        let mut s2 = Searcher::new(Params::defaults());
        s2.set_hash_mb(1);
        let a = play_game(&mut s1, &options, 3, &stop).unwrap().unwrap();
        // A searcher that played another game first gives the same game: fresh state.
        play_game(&mut s2, &options, 4, &stop).unwrap().unwrap();
        let b = play_game(&mut s2, &options, 3, &stop).unwrap().unwrap();
        assert_eq!(a.game, b.game);
        assert!(i32::from(a.game.moves[0].score).abs() <= 300);
        assert!(a.search_time <= a.total_time);
    }
}
