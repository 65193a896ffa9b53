//! The UCI protocol loop: a thin layer over [`Searcher`].
//!
//! The search runs on its own thread so that `stop`, `isready` and `quit` are answered
//! while it thinks. Malformed commands never stop the loop: they are answered with an
//! `info string` saying what was wrong.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crate::params::{self, Params};
use crate::position::Position;
use crate::search::{Limits, Score, SearchInfo, Searcher};
use crate::types::Move;

/// Name and version sent in `id name`.
pub const ENGINE_NAME: &str = concat!("spar ", env!("CARGO_PKG_VERSION"));

/// Largest `Hash` value offered (MiB).
pub const MAX_HASH_MB: usize = 1 << 20;

/// A hook called when the session ends (`quit` or end of input): the runner uses it to
/// dump `track!` statistics to the file named by the `TrackFile` option.
pub type QuitHook = Box<dyn FnMut(&str) + Send>;

type Out = Arc<Mutex<Box<dyn Write + Send>>>;

struct Session {
    searcher: Arc<Mutex<Searcher>>,
    stop: Arc<AtomicBool>,
    /// Set from `go ponder` until `ponderhit`.
    ponder: Arc<AtomicBool>,
    worker: Option<JoinHandle<()>>,
    position: Position,
    history: Vec<u64>,
    chess960: bool,
    hash_mb: usize,
    threads: usize,
    params: Params,
    track_file: String,
    out: Out,
}

/// The words of `go`, which end a `searchmoves` list.
const GO_WORDS: [&str; 13] = [
    "searchmoves",
    "ponder",
    "wtime",
    "btime",
    "winc",
    "binc",
    "movestogo",
    "depth",
    "nodes",
    "mate",
    "movetime",
    "infinite",
    "perft",
];

fn say(out: &Out, line: &str) {
    let mut out = out.lock().expect("stdout lock");
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Runs the protocol on `input` until `quit` or end of input, writing to `output`.
/// `quit_hook` (if any) receives the `TrackFile` option's value at the end.
pub fn run(input: impl BufRead, output: Box<dyn Write + Send>, mut quit_hook: Option<QuitHook>) {
    let searcher = Searcher::new(Params::defaults());
    let stop = searcher.stop_flag();
    let ponder = searcher.ponder_flag();
    let mut s = Session {
        searcher: Arc::new(Mutex::new(searcher)),
        stop,
        ponder,
        worker: None,
        position: Position::startpos(),
        history: Vec::new(),
        chess960: false,
        hash_mb: 16,
        threads: 1,
        params: Params::defaults(),
        track_file: String::new(),
        out: Arc::new(Mutex::new(output)),
    };
    for line in input.lines() {
        let Ok(line) = line else { break };
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !s.command(line) {
            break;
        }
    }
    s.stop_search();
    if let Some(hook) = quit_hook.as_mut() {
        hook(&s.track_file);
    }
}

impl Session {
    /// Handles one line; `false` on `quit`.
    fn command(&mut self, line: &str) -> bool {
        let mut words = line.split_whitespace();
        let cmd = words.next().unwrap_or("");
        let rest: Vec<&str> = words.collect();
        match cmd {
            "uci" => self.uci(),
            "isready" => say(&self.out, "readyok"),
            "setoption" => self.setoption(&rest),
            "ucinewgame" => {
                self.stop_search();
                self.lock_searcher().clear();
            }
            "position" => {
                self.stop_search();
                self.position(&rest);
            }
            "go" => self.go(&rest),
            "stop" => self.stop_search(),
            // The search goes on, now on the clock (a no-op when not pondering).
            "ponderhit" => self.ponder.store(false, Ordering::SeqCst),
            "quit" => return false,
            "bench" => {
                self.stop_search();
                let depth = rest
                    .first()
                    .and_then(|d| d.parse().ok())
                    .unwrap_or(crate::bench::DEFAULT_DEPTH);
                let result = crate::bench::run(depth, &self.params);
                say(&self.out, &result.line());
            }
            "d" => say(&self.out, &self.position.to_string()),
            "eval" => {
                let w = crate::eval::EvalWeights::new(&self.params);
                say(
                    &self.out,
                    &format!(
                        "info string eval {} cp (side to move)",
                        crate::eval::evaluate(&self.position, &w)
                    ),
                );
            }
            _ => say(&self.out, &format!("info string unknown command '{cmd}'")),
        }
        true
    }

    fn lock_searcher(&self) -> std::sync::MutexGuard<'_, Searcher> {
        self.searcher.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn uci(&self) {
        let mut lines = vec![
            format!("id name {ENGINE_NAME}"),
            "id author the spar developers".to_string(),
            format!("option name Hash type spin default 16 min 1 max {MAX_HASH_MB}"),
            "option name Threads type spin default 1 min 1 max 1024".to_string(),
            "option name Clear Hash type button".to_string(),
            "option name UCI_Chess960 type check default false".to_string(),
            "option name Ponder type check default false".to_string(),
            "option name MultiPV type spin default 1 min 1 max 1".to_string(),
            "option name TrackFile type string default <empty>".to_string(),
        ];
        for spec in params::specs() {
            lines.push(format!(
                "option name {} type spin default {} min {} max {}",
                spec.name, spec.default, spec.min, spec.max
            ));
        }
        lines.push("uciok".to_string());
        say(&self.out, &lines.join("\n"));
    }

    fn setoption(&mut self, rest: &[&str]) {
        // setoption name <id...> [value <x...>]
        let joined = rest.join(" ");
        let Some(after_name) = joined.strip_prefix("name ") else {
            return say(
                &self.out,
                "info string setoption needs 'name <id> [value <x>]'",
            );
        };
        let (name, value) = match after_name.split_once(" value ") {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (after_name.trim(), None),
        };
        self.stop_search();
        let number = |v: Option<&str>| v.and_then(|v| v.parse::<i64>().ok());
        match name.to_ascii_lowercase().as_str() {
            "hash" => match number(value) {
                Some(mb) if (1..=MAX_HASH_MB as i64).contains(&mb) => {
                    self.hash_mb = mb as usize;
                    self.lock_searcher().set_hash_mb(self.hash_mb);
                }
                _ => say(
                    &self.out,
                    &format!("info string Hash needs a value from 1 to {MAX_HASH_MB} (MiB)"),
                ),
            },
            "threads" => match number(value) {
                Some(n) if (1..=1024).contains(&n) => {
                    self.threads = n as usize;
                    self.lock_searcher().set_threads(self.threads);
                }
                _ => say(
                    &self.out,
                    "info string Threads needs a value from 1 to 1024",
                ),
            },
            "clear hash" => self.lock_searcher().clear(),
            "uci_chess960" => match value.map(str::to_ascii_lowercase).as_deref() {
                Some("true") => self.chess960 = true,
                Some("false") => self.chess960 = false,
                _ => say(&self.out, "info string UCI_Chess960 needs true or false"),
            },
            // The GUI decides when to ponder (`go ponder`); the option only says we can.
            "ponder" => match value.map(str::to_ascii_lowercase).as_deref() {
                Some("true" | "false") => {}
                _ => say(&self.out, "info string Ponder needs true or false"),
            },
            "multipv" => {
                if value != Some("1") {
                    say(&self.out, "info string only MultiPV 1 is supported");
                }
            }
            "trackfile" => {
                self.track_file = value.filter(|v| *v != "<empty>").unwrap_or("").to_string()
            }
            _ => {
                let Some(v) = value else {
                    return say(
                        &self.out,
                        &format!("info string option '{name}' needs a value"),
                    );
                };
                match self.params.set_str(name, v) {
                    Ok(()) => self.lock_searcher().set_params(self.params.clone()),
                    Err(e) => say(&self.out, &format!("info string {e}")),
                }
            }
        }
    }

    fn position(&mut self, rest: &[&str]) {
        let (mut pos, moves_at) = match rest.first() {
            Some(&"startpos") => (Position::startpos(), 1),
            Some(&"fen") => {
                let end = rest
                    .iter()
                    .position(|w| *w == "moves")
                    .unwrap_or(rest.len());
                let fen = rest[1..end].join(" ");
                match Position::from_fen(&fen) {
                    Ok(p) => (p, end),
                    Err(e) => {
                        return say(&self.out, &format!("info string {e}; position unchanged"))
                    }
                }
            }
            _ => {
                return say(
                    &self.out,
                    "info string position needs 'startpos' or 'fen <FEN>'",
                )
            }
        };
        pos.set_chess960(self.chess960 || pos.is_chess960());
        let mut history = Vec::new();
        if rest.get(moves_at) == Some(&"moves") {
            for text in &rest[moves_at + 1..] {
                match pos.parse_uci_move(text) {
                    Some(mv) => {
                        history.push(pos.key());
                        pos = pos.play(mv);
                    }
                    None => {
                        return say(
                            &self.out,
                            &format!(
                                "info string illegal move '{text}' in {}; position unchanged",
                                pos.to_fen()
                            ),
                        )
                    }
                }
            }
        }
        self.position = pos;
        self.history = history;
    }

    fn go(&mut self, rest: &[&str]) {
        self.stop_search();
        let mut limits = Limits::default();
        let mut ponder = false;
        let mut i = 0;
        let ms = |v: Option<&&str>| {
            v.and_then(|v| v.parse::<i64>().ok())
                .map(|v| Duration::from_millis(v.max(0) as u64))
        };
        while i < rest.len() {
            let value = rest.get(i + 1);
            let mut takes_value = true;
            match rest[i] {
                "wtime" => limits.wtime = ms(value),
                "btime" => limits.btime = ms(value),
                "winc" => limits.winc = ms(value),
                "binc" => limits.binc = ms(value),
                "movetime" => limits.movetime = ms(value),
                "movestogo" => limits.movestogo = value.and_then(|v| v.parse().ok()),
                "depth" => limits.depth = value.and_then(|v| v.parse().ok()),
                "nodes" => limits.nodes = value.and_then(|v| v.parse().ok()),
                "mate" => limits.mate = value.and_then(|v| v.parse().ok()),
                "perft" => {
                    let depth = value.and_then(|v| v.parse().ok()).unwrap_or(1);
                    return self.perft(depth);
                }
                "infinite" => {
                    limits.infinite = true;
                    takes_value = false;
                }
                "ponder" => {
                    ponder = true;
                    takes_value = false;
                }
                "searchmoves" => {
                    takes_value = false;
                    while let Some(&word) = rest.get(i + 1) {
                        if GO_WORDS.contains(&word) {
                            break;
                        }
                        i += 1;
                        match self.position.parse_uci_move(word) {
                            Some(mv) => limits.searchmoves.push(mv),
                            None => say(
                                &self.out,
                                &format!(
                                    "info string searchmoves: '{word}' is not a legal move \
                                     here; ignored"
                                ),
                            ),
                        }
                    }
                }
                other => {
                    say(
                        &self.out,
                        &format!("info string ignoring unknown go parameter '{other}'"),
                    );
                    takes_value = false;
                }
            }
            if takes_value {
                match value {
                    None => say(
                        &self.out,
                        &format!("info string go {} needs a value", rest[i]),
                    ),
                    // Every go parameter with a value takes an integer: report one that
                    // does not parse (it was ignored above) instead of silently searching
                    // without that limit.
                    Some(v)
                        if match rest[i] {
                            "depth" => v.parse::<i32>().is_err(),
                            "mate" => v.parse::<u32>().is_err(),
                            "nodes" => v.parse::<u64>().is_err(),
                            "movestogo" => v.parse::<u32>().is_err(),
                            _ => v.parse::<i64>().is_err(),
                        } =>
                    {
                        say(
                            &self.out,
                            &format!(
                                "info string go {} needs an integer, got '{v}'; ignored",
                                rest[i]
                            ),
                        )
                    }
                    Some(_) => {}
                }
            }
            i += if takes_value { 2 } else { 1 };
        }
        self.stop.store(false, Ordering::SeqCst);
        // Set before the search starts, so that an early `ponderhit` is never lost.
        self.ponder.store(ponder, Ordering::SeqCst);
        let searcher = Arc::clone(&self.searcher);
        let out = Arc::clone(&self.out);
        let position = self.position.clone();
        let history = self.history.clone();
        let chess960 = self.chess960 || position.is_chess960();
        self.worker = Some(std::thread::spawn(move || {
            let mut searcher = searcher.lock().unwrap_or_else(|e| e.into_inner());
            let result = searcher.search(&position, &history, &limits, &mut |info| {
                say(&out, &info_line(info, chess960))
            });
            let line = match (result.best_move, result.ponder) {
                (Some(b), Some(p)) => format!(
                    "bestmove {} ponder {}",
                    b.to_uci(chess960),
                    p.to_uci(chess960)
                ),
                (Some(b), None) => format!("bestmove {}", b.to_uci(chess960)),
                (None, _) => {
                    // Mate or stalemate on the board: say so, as GUIs expect.
                    let score = match result.score {
                        Score::Mate(n) => format!("mate {n}"),
                        Score::Cp(cp) => format!("cp {cp}"),
                    };
                    format!("info depth 0 score {score}\nbestmove 0000")
                }
            };
            say(&out, &line);
        }));
    }

    fn perft(&self, depth: u32) {
        let start = std::time::Instant::now();
        let mut total = 0;
        for (mv, n) in crate::perft::divide(&self.position, depth) {
            say(&self.out, &format!("{}: {n}", mv.to_uci(self.chess960)));
            total += n;
        }
        let secs = start.elapsed().as_secs_f64().max(1e-9);
        say(
            &self.out,
            &format!(
                "\nNodes searched: {total}\nNodes/second: {}",
                (total as f64 / secs) as u64
            ),
        );
    }

    /// Stops a running search and waits for its `bestmove`.
    fn stop_search(&mut self) {
        if let Some(worker) = self.worker.take() {
            self.stop.store(true, Ordering::SeqCst);
            let _ = worker.join();
        }
    }
}

/// The `info …` line of a finished iteration.
pub fn info_line(info: &SearchInfo, chess960: bool) -> String {
    let score = match info.score {
        Score::Cp(cp) => format!("cp {cp}"),
        Score::Mate(n) => format!("mate {n}"),
    };
    let pv: Vec<String> = info.pv.iter().map(|m: &Move| m.to_uci(chess960)).collect();
    format!(
        "info depth {} seldepth {} score {score} nodes {} nps {} hashfull {} time {} pv {}",
        info.depth,
        info.seldepth,
        info.nodes,
        info.nps,
        info.hashfull,
        info.time.as_millis(),
        pv.join(" ")
    )
}
