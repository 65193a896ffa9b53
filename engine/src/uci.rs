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

use crate::nnue::embedded::EMBEDDED_NAME;
use crate::nnue::{default_net, rule, Net};
use crate::params::{self, Params};
use crate::position::Position;
use crate::search::{Evaluation, Limits, Score, SearchInfo, Searcher};
use crate::tablebase::Tablebases;
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
    /// The `EvalFile` value in use (`<embedded>` for the default net).
    eval_file: String,
    /// The `SyzygyPath` value in use (`<empty>`: no tables).
    syzygy_path: String,
    out: Out,
}

/// The `SyzygyPath` value that means no tables.
const NO_SYZYGY: &str = "<empty>";

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

/// The longest input line read (bytes); longer lines are skipped with an `info string`.
/// A `position … moves …` line of a 2,000-move game is about 10 KB.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// What [`read_line`] found.
enum Line {
    /// A line (its bytes in the buffer, without the line end).
    Text,
    /// A line longer than [`MAX_LINE_BYTES`], consumed up to its end and dropped.
    TooLong,
    /// End of input or a read error.
    End,
}

/// Reads one line's bytes into `buf` without ever holding more than [`MAX_LINE_BYTES`].
fn read_line(input: &mut impl BufRead, buf: &mut Vec<u8>) -> Line {
    buf.clear();
    let mut any = false;
    let mut too_long = false;
    loop {
        let chunk = match input.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Line::End,
        };
        if chunk.is_empty() {
            break;
        }
        any = true;
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_LINE_BYTES + 2 {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take);
        if done {
            break;
        }
    }
    if !any {
        return Line::End;
    }
    if too_long {
        return Line::TooLong;
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    Line::Text
}

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
        eval_file: EMBEDDED_NAME.to_string(),
        syzygy_path: NO_SYZYGY.to_string(),
        out: Arc::new(Mutex::new(output)),
    };
    let mut input = input;
    let mut buf = Vec::new();
    loop {
        let line = match read_line(&mut input, &mut buf) {
            Line::End => break,
            Line::TooLong => {
                say(
                    &s.out,
                    &format!("info string input line longer than {MAX_LINE_BYTES} bytes ignored"),
                );
                continue;
            }
            Line::Text => match std::str::from_utf8(&buf) {
                Ok(text) => text,
                Err(e) => {
                    say(
                        &s.out,
                        &format!(
                            "info string input line is not UTF-8 (bad byte at column {}); \
                             line ignored",
                            e.valid_up_to() + 1
                        ),
                    );
                    continue;
                }
            },
        };
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
                let (evaluation, net) = {
                    let mut searcher = self.lock_searcher();
                    (searcher.evaluation(), searcher.net())
                };
                let result = crate::bench::run_with(depth, &self.params, evaluation, Some(net));
                say(&self.out, &result.line());
            }
            "d" => say(&self.out, &self.position.to_string()),
            "eval" => {
                let (evaluation, net) = {
                    let mut searcher = self.lock_searcher();
                    (searcher.evaluation(), searcher.net())
                };
                let eval = match evaluation {
                    Evaluation::Hce => {
                        let w = crate::eval::EvalWeights::new(&self.params);
                        crate::eval::evaluate(&self.position, &w)
                    }
                    Evaluation::Nnue => net.evaluate(&self.position),
                };
                say(
                    &self.out,
                    &format!(
                        "info string eval {eval} cp (side to move, {})",
                        evaluation.name()
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
            format!(
                "option name Eval type combo default {} var hce var nnue",
                Evaluation::DEFAULT.name()
            ),
            format!("option name EvalFile type string default {EMBEDDED_NAME}"),
            format!("option name SyzygyPath type string default {NO_SYZYGY}"),
            "option name SyzygyProbeDepth type spin default 1 min 1 max 100".to_string(),
            "option name SyzygyProbeLimit type spin default 7 min 0 max 7".to_string(),
            "option name Syzygy50MoveRule type check default true".to_string(),
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
        // `value` with nothing after it (a GUI clearing a string option) is an empty value.
        let (name, value) = match after_name.split_once(" value ") {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => match after_name.strip_suffix(" value") {
                Some(n) => (n.trim(), Some("")),
                None => (after_name.trim(), None),
            },
        };
        self.stop_search();
        let number = |v: Option<&str>| v.and_then(|v| v.parse::<i64>().ok());
        match name.to_ascii_lowercase().as_str() {
            "hash" => match number(value) {
                Some(mb) if (1..=MAX_HASH_MB as i64).contains(&mb) => {
                    let resized = self.lock_searcher().try_set_hash_mb(mb as usize);
                    match resized {
                        Ok(()) => self.hash_mb = mb as usize,
                        Err(e) => say(
                            &self.out,
                            &format!("info string {e}; keeping Hash {}", self.hash_mb),
                        ),
                    }
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
            "eval" => match Evaluation::parse(value.unwrap_or(""))
                .and_then(|e| rule::check(e, Some(&self.eval_file), &rule::UCI).map(|()| e))
            {
                Ok(e) => self.lock_searcher().set_evaluation(e),
                Err(e) => say(&self.out, &format!("info string {e}")),
            },
            "evalfile" => self.set_eval_file(value.unwrap_or("")),
            "syzygypath" => self.set_syzygy_path(value.unwrap_or("")),
            "syzygyprobedepth" | "syzygyprobelimit" | "syzygy50moverule" => {
                let mut config = self.lock_searcher().syzygy();
                let ok = match name.to_ascii_lowercase().as_str() {
                    "syzygyprobedepth" => number(value)
                        .filter(|d| (1..=100).contains(d))
                        .map(|d| config.probe_depth = d as i32),
                    "syzygyprobelimit" => number(value)
                        .filter(|n| (0..=7).contains(n))
                        .map(|n| config.probe_limit = n as u32),
                    _ => match value.map(str::to_ascii_lowercase).as_deref() {
                        Some(v @ ("true" | "false")) => {
                            config.rule50 = v == "true";
                            Some(())
                        }
                        _ => None,
                    },
                };
                match ok {
                    Some(()) => self.lock_searcher().set_syzygy(config),
                    None => say(
                        &self.out,
                        &format!(
                            "info string {name} needs {}",
                            match name.to_ascii_lowercase().as_str() {
                                "syzygyprobedepth" => "a value from 1 to 100",
                                "syzygyprobelimit" => "a value from 0 to 7",
                                _ => "true or false",
                            }
                        ),
                    ),
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

    /// `setoption name EvalFile value <path>`: loads a network; `<embedded>` (or nothing)
    /// goes back to the built-in one. A file that cannot be used leaves the net as it was.
    /// The network is read only from a regular file of a network's size, so a FIFO or a
    /// device is an `info string` at once and the loop keeps serving.
    fn set_eval_file(&mut self, value: &str) {
        let value = value.trim();
        let evaluation = self.lock_searcher().evaluation();
        let net = if rule::is_embedded(value) {
            Ok(default_net())
        } else {
            rule::check(evaluation, Some(value), &rule::UCI).and_then(|()| {
                Net::load(std::path::Path::new(value))
                    .map(Arc::new)
                    .map_err(|e| format!("EvalFile {e}"))
            })
        };
        match net {
            Ok(net) => {
                let hidden = net.hidden();
                self.lock_searcher().set_net(net);
                self.eval_file = if value.is_empty() {
                    EMBEDDED_NAME.to_string()
                } else {
                    value.to_string()
                };
                say(
                    &self.out,
                    &format!(
                        "info string EvalFile {}: network 768->{hidden}x2->1 loaded",
                        self.eval_file
                    ),
                );
            }
            Err(e) => say(
                &self.out,
                &format!("info string {e}; keeping {}", self.eval_file),
            ),
        }
    }

    /// `setoption name SyzygyPath value <dirs>`: opens and checks the tables (directories
    /// separated by `:`); `<empty>` (or nothing) turns them off. Tables that cannot be used
    /// leave the ones in use as they were.
    fn set_syzygy_path(&mut self, value: &str) {
        let value = value.trim();
        if value.is_empty() || value == NO_SYZYGY {
            self.lock_searcher().set_tablebases(None);
            self.syzygy_path = NO_SYZYGY.to_string();
            return;
        }
        match Tablebases::open(value).and_then(|tb| tb.verify().map(|()| tb)) {
            Ok(tb) => {
                say(
                    &self.out,
                    &format!(
                        "info string Syzygy: {} files, up to {} pieces",
                        tb.file_count(),
                        tb.max_pieces()
                    ),
                );
                self.lock_searcher().set_tablebases(Some(Arc::new(tb)));
                self.syzygy_path = value.to_string();
            }
            Err(e) => say(
                &self.out,
                &format!(
                    "info string SyzygyPath {value}: {e}; keeping {}",
                    self.syzygy_path
                ),
            ),
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
        // Whether the command named a limit, so that a `go` whose every limit was malformed
        // still ends (instead of searching to the maximum depth as a bare `go` does).
        let mut named_limit = false;
        while i < rest.len() {
            // A missing value: the next word is another parameter, not this one's value.
            let value = rest.get(i + 1).filter(|v| !GO_WORDS.contains(*v));
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
                    let depth = match value.map(|v| v.parse::<u32>()) {
                        Some(Ok(d)) => d,
                        _ => {
                            say(
                                &self.out,
                                &format!(
                                    "info string go perft needs a depth (0 or more), got '{}'; \
                                     using 1",
                                    value.copied().unwrap_or("")
                                ),
                            );
                            1
                        }
                    };
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
                named_limit = true;
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
            i += if takes_value && value.is_some() { 2 } else { 1 };
        }
        let any_limit = limits.depth.is_some()
            || limits.nodes.is_some()
            || limits.movetime.is_some()
            || limits.wtime.is_some()
            || limits.btime.is_some()
            || limits.mate.is_some();
        if named_limit && !any_limit && !limits.infinite && !ponder {
            say(
                &self.out,
                "info string go: no valid limit left; searching to depth 1 so that a bestmove comes",
            );
            limits.depth = Some(1);
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

    /// `go perft N` on the search thread, so `isready`, `stop` and `quit` are answered while
    /// it counts; `stop` ends it early (without a total).
    fn perft(&mut self, depth: u32) {
        self.stop.store(false, Ordering::SeqCst);
        let stop = Arc::clone(&self.stop);
        let out = Arc::clone(&self.out);
        let position = self.position.clone();
        let chess960 = self.chess960 || position.is_chess960();
        self.worker = Some(std::thread::spawn(move || {
            let start = std::time::Instant::now();
            let total = crate::perft::divide_until(&position, depth, &stop, |mv, n| {
                say(&out, &format!("{}: {n}", mv.to_uci(chess960)))
            });
            match total {
                Some(total) => {
                    let secs = start.elapsed().as_secs_f64().max(1e-9);
                    say(
                        &out,
                        &format!(
                            "\nNodes searched: {total}\nNodes/second: {}",
                            (total as f64 / secs) as u64
                        ),
                    );
                }
                None => say(&out, &format!("info string perft {depth} stopped")),
            }
        }));
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
        "info depth {} seldepth {} score {score} nodes {} nps {} hashfull {} tbhits {} time {} pv {}",
        info.depth,
        info.seldepth,
        info.nodes,
        info.nps,
        info.hashfull,
        info.tbhits,
        info.time.as_millis(),
        pv.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Read};
    use std::sync::mpsc::{channel, Receiver, Sender};
    use std::time::Instant;

    /// Input that blocks until the test sends bytes, like a GUI's pipe.
    struct Pipe {
        rx: Receiver<Vec<u8>>,
        pending: Vec<u8>,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.pending.is_empty() {
                match self.rx.recv() {
                    Ok(bytes) => self.pending = bytes,
                    Err(_) => return Ok(0),
                }
            }
            let n = buf.len().min(self.pending.len());
            buf[..n].copy_from_slice(&self.pending[..n]);
            self.pending.drain(..n);
            Ok(n)
        }
    }

    #[derive(Clone)]
    struct Sink(Arc<Mutex<Vec<u8>>>);

    impl Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// A running session: bytes in, lines out.
    struct Session {
        tx: Option<Sender<Vec<u8>>>,
        out: Sink,
        seen: usize,
        thread: Option<std::thread::JoinHandle<()>>,
    }

    const PATIENCE: Duration = Duration::from_secs(20);

    impl Session {
        fn start() -> Session {
            let (tx, rx) = channel();
            let out = Sink(Arc::new(Mutex::new(Vec::new())));
            let sink = out.clone();
            let thread = std::thread::spawn(move || {
                let input = BufReader::new(Pipe {
                    rx,
                    pending: Vec::new(),
                });
                run(input, Box::new(sink), None);
            });
            Session {
                tx: Some(tx),
                out,
                seen: 0,
                thread: Some(thread),
            }
        }

        fn send(&self, bytes: &[u8]) {
            self.tx.as_ref().unwrap().send(bytes.to_vec()).unwrap();
        }

        fn lines(&self) -> Vec<String> {
            let bytes = self.out.0.lock().unwrap().clone();
            String::from_utf8(bytes)
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect()
        }

        /// The new lines up to and including the first that `done` accepts (panics after
        /// `within`).
        fn until(&mut self, within: Duration, done: impl Fn(&str) -> bool) -> Vec<String> {
            let start = Instant::now();
            loop {
                let lines = self.lines();
                if let Some(i) = lines[self.seen..].iter().position(|l| done(l)) {
                    let got = lines[self.seen..=self.seen + i].to_vec();
                    self.seen += i + 1;
                    return got;
                }
                assert!(
                    start.elapsed() < within,
                    "no expected line within {within:?}; got {:?}",
                    &lines[self.seen..]
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }

        /// Ends the session with `quit` and checks it exits promptly.
        fn quit(mut self) {
            self.send(b"quit\n");
            let start = Instant::now();
            let thread = self.thread.take().unwrap();
            while !thread.is_finished() {
                assert!(start.elapsed() < PATIENCE, "no exit after quit");
                std::thread::sleep(Duration::from_millis(5));
            }
            thread.join().unwrap();
        }
    }

    fn info_strings(lines: &[String]) -> Vec<&String> {
        lines
            .iter()
            .filter(|l| l.starts_with("info string"))
            .collect()
    }

    #[test]
    fn a_non_utf8_line_is_skipped_and_the_session_stays_up() {
        let mut s = Session::start();
        s.send(b"isready\ngo \xff\xfe depth 1\nisready\n");
        s.until(PATIENCE, |l| l == "readyok");
        let got = s.until(PATIENCE, |l| l == "readyok");
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].starts_with("info string input line is not UTF-8"),
            "{got:?}"
        );
        s.send(b"go depth 1\n");
        s.until(PATIENCE, |l| l.starts_with("bestmove"));
        s.quit();
    }

    #[test]
    fn an_endless_line_is_skipped_with_bounded_memory() {
        let mut s = Session::start();
        let chunk = vec![b'a'; 64 * 1024];
        for _ in 0..(2 * MAX_LINE_BYTES / chunk.len()) {
            s.send(&chunk);
        }
        s.send(b"\nisready\n");
        let got = s.until(PATIENCE, |l| l == "readyok");
        assert!(got[0].contains("longer than"), "{got:?}");
        s.quit();
    }

    #[test]
    fn malformed_go_limits_are_ignored_and_a_bestmove_always_comes() {
        let mut s = Session::start();
        for go in [
            "go nodes -5",
            "go depth abc",
            "go movetime x",
            "go wtime x btime y",
            "go nodes",
            "go depth movetime",
        ] {
            s.send(format!("{go}\n").as_bytes());
            // No `stop` is sent: the search must end by itself.
            let got = s.until(PATIENCE, |l| l.starts_with("bestmove"));
            assert!(!info_strings(&got).is_empty(), "'{go}': {got:?}");
            assert!(got.last().unwrap() != "bestmove 0000", "'{go}': {got:?}");
        }
        // Only the bad token is dropped: the good limits still apply.
        s.send(b"go nodes -5 depth 3\n");
        let got = s.until(PATIENCE, |l| l.starts_with("bestmove"));
        let last_depth = got
            .iter()
            .rfind(|l| l.starts_with("info depth"))
            .and_then(|l| l.split_whitespace().nth(2))
            .unwrap_or_else(|| panic!("{got:?}"));
        assert_eq!(last_depth, "3", "{got:?}");
        // A value that is another go word is not eaten: `movetime` still applies.
        s.send(b"go depth movetime 50\n");
        let got = s.until(PATIENCE, |l| l.starts_with("bestmove"));
        assert!(
            !got.iter().any(|l| l.contains("searching to depth 1")),
            "{got:?}"
        );
        s.quit();
    }

    #[test]
    fn go_perft_runs_beside_isready_and_stops() {
        let mut s = Session::start();
        s.send(b"position startpos\ngo perft 0\n");
        let got = s.until(PATIENCE, |l| l.starts_with("Nodes searched"));
        assert_eq!(got.last().unwrap(), "Nodes searched: 1");
        // Depth 7 takes minutes: isready is answered meanwhile, and stop ends it.
        s.send(b"go perft 7\nisready\n");
        let start = Instant::now();
        s.until(PATIENCE, |l| l == "readyok");
        assert!(start.elapsed() < Duration::from_secs(5));
        s.send(b"stop\n");
        let got = s.until(PATIENCE, |l| l.starts_with("info string perft 7 stopped"));
        assert!(
            !got.iter().any(|l| l.starts_with("Nodes searched")),
            "{got:?}"
        );
        // Quit while a perft runs exits promptly too.
        s.send(b"go perft 8\n");
        s.quit();
    }

    #[test]
    fn an_impossible_hash_size_is_reported_and_the_old_table_kept() {
        if std::fs::read_to_string("/proc/sys/vm/overcommit_memory").is_ok_and(|s| s.trim() == "1")
        {
            return;
        }
        let mut s = Session::start();
        s.send(format!("setoption name Hash value {MAX_HASH_MB}\nisready\n").as_bytes());
        let got = s.until(PATIENCE, |l| l == "readyok");
        assert!(
            got[0].starts_with("info string cannot allocate") && got[0].contains("keeping Hash 16"),
            "{got:?}"
        );
        s.send(b"go depth 2\n");
        s.until(PATIENCE, |l| l.starts_with("bestmove"));
        s.quit();
    }

    #[test]
    fn eval_and_eval_file_options_switch_and_refuse_bad_files() {
        let dir = std::env::temp_dir().join(format!("spar-uci-evalfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("bad.nnue");
        std::fs::write(&bad, b"SPARNNUE garbage").unwrap();
        let good = dir.join("good.nnue");
        std::fs::write(
            &good,
            crate::nnue::placeholder::material_network(32).to_bytes(),
        )
        .unwrap();

        let mut s = Session::start();
        s.send(b"uci\n");
        let got = s.until(PATIENCE, |l| l == "uciok");
        assert!(got.contains(&"option name Eval type combo default nnue var hce var nnue".into()));
        assert!(got.contains(&"option name EvalFile type string default <embedded>".into()));

        s.send(b"position fen 4k3/8/8/8/8/8/8/3QK3 w - - 0 1\neval\n");
        let nnue = s.until(PATIENCE, |l| l.starts_with("info string eval"));
        assert!(nnue[0].ends_with("(side to move, nnue)"), "{nnue:?}");
        s.send(b"setoption name Eval value hce\neval\n");
        let hce = s.until(PATIENCE, |l| l.starts_with("info string eval"));
        assert!(hce[0].ends_with("(side to move, hce)"), "{hce:?}");
        s.send(b"setoption name Eval value nnue\neval\n");
        let nnue = s.until(PATIENCE, |l| l.starts_with("info string eval"));
        assert!(nnue[0].ends_with("(side to move, nnue)"), "{nnue:?}");

        for (path, why) in [
            (&bad, "bad.nnue: "),
            (&dir.join("none.nnue"), "none.nnue: "),
        ] {
            s.send(
                format!(
                    "setoption name EvalFile value {}\nisready\n",
                    path.display()
                )
                .as_bytes(),
            );
            let got = s.until(PATIENCE, |l| l == "readyok");
            let info = info_strings(&got);
            assert!(
                info.len() == 1 && info[0].contains(why) && info[0].ends_with("keeping <embedded>"),
                "{got:?}"
            );
        }
        s.send(format!("setoption name EvalFile value {}\n", good.display()).as_bytes());
        let got = s.until(PATIENCE, |l| l.starts_with("info string EvalFile"));
        assert!(got[0].ends_with("network 768->32x2->1 loaded"), "{got:?}");
        // The one Eval/EvalFile rule: no handcrafted evaluation with a network file.
        s.send(b"setoption name Eval value hce\nisready\n");
        let got = s.until(PATIENCE, |l| l == "readyok");
        let info = info_strings(&got);
        assert!(
            info.len() == 1
                && info[0].contains("is a network, which only the NNUE evaluation uses"),
            "{got:?}"
        );
        // A FIFO with no writer is refused at once (never opened), and the loop serves on.
        #[cfg(unix)]
        {
            let fifo = dir.join("fifo.nnue");
            let made = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .is_ok_and(|st| st.success());
            if made {
                s.send(
                    format!(
                        "setoption name EvalFile value {}\nisready\n",
                        fifo.display()
                    )
                    .as_bytes(),
                );
                let got = s.until(PATIENCE, |l| l == "readyok");
                let info = info_strings(&got);
                assert!(
                    info.len() == 1 && info[0].contains("not a regular file"),
                    "{got:?}"
                );
            }
        }
        s.send(
            b"setoption name EvalFile value /nowhere.nnue\nsetoption name Eval value hc\nisready\n",
        );
        let got = s.until(PATIENCE, |l| l == "readyok");
        let info = info_strings(&got);
        assert!(
            info[0].ends_with(&format!("keeping {}", good.display())),
            "{got:?}"
        );
        assert!(info[1].contains("expected hce or nnue"), "{got:?}");
        s.send(b"go depth 3\n");
        s.until(PATIENCE, |l| l.starts_with("bestmove"));
        s.quit();
        std::fs::remove_dir_all(&dir).unwrap();
    }
    #[test]
    fn syzygy_options_open_tables_and_refuse_bad_paths() {
        let dir = std::env::temp_dir().join(format!("spar-uci-syzygy-{}", std::process::id()));
        let garbage = dir.join("garbage");
        std::fs::create_dir_all(&garbage).unwrap();
        std::fs::write(garbage.join("KRvK.rtbw"), vec![0x55u8; 80]).unwrap();
        let file = dir.join("file.txt");
        std::fs::write(&file, b"not a directory").unwrap();

        let mut s = Session::start();
        s.send(b"uci\n");
        let got = s.until(PATIENCE, |l| l == "uciok");
        for line in [
            "option name SyzygyPath type string default <empty>",
            "option name SyzygyProbeDepth type spin default 1 min 1 max 100",
            "option name SyzygyProbeLimit type spin default 7 min 0 max 7",
            "option name Syzygy50MoveRule type check default true",
        ] {
            assert!(got.contains(&line.to_string()), "{line}: {got:?}");
        }
        let bad = |s: &mut Session, value: &str, why: &str, keeping: &str| {
            s.send(format!("setoption name SyzygyPath value {value}\nisready\n").as_bytes());
            let got = s.until(PATIENCE, |l| l == "readyok");
            let info = info_strings(&got);
            assert!(
                info.len() == 1
                    && info[0].starts_with(&format!("info string SyzygyPath {value}: "))
                    && info[0].contains(why)
                    && info[0].ends_with(&format!("; keeping {keeping}")),
                "{value}: {got:?}"
            );
        };
        bad(&mut s, "/nonexistent", "does not exist", "<empty>");
        bad(&mut s, file.to_str().unwrap(), "is a file", "<empty>");
        bad(
            &mut s,
            garbage.to_str().unwrap(),
            "not a valid Syzygy table",
            "<empty>",
        );
        bad(&mut s, dir.to_str().unwrap(), "no Syzygy tables", "<empty>");
        for (option, why) in [
            ("SyzygyProbeDepth value 0", "from 1 to 100"),
            ("SyzygyProbeLimit value 8", "from 0 to 7"),
            ("SyzygyProbeLimit value x", "from 0 to 7"),
            ("Syzygy50MoveRule value maybe", "true or false"),
        ] {
            s.send(format!("setoption name {option}\nisready\n").as_bytes());
            let got = s.until(PATIENCE, |l| l == "readyok");
            assert!(got[0].contains(why), "{option}: {got:?}");
        }
        s.send(b"setoption name SyzygyProbeDepth value 2\nsetoption name Syzygy50MoveRule value false\nisready\n");
        let got = s.until(PATIENCE, |l| l == "readyok");
        assert_eq!(got, vec!["readyok".to_string()]);
        s.send(b"position fen 8/8/8/8/3k4/8/8/KBN5 w - - 0 1\ngo depth 3\n");
        let got = s.until(PATIENCE, |l| l.starts_with("bestmove"));
        assert!(got.iter().any(|l| l.contains(" tbhits 0 ")), "{got:?}");

        if let Some(path) = crate::search::syzygy::test_tables_dir("syzygy_options_open_tables") {
            s.send(format!("setoption name SyzygyPath value {path}\n").as_bytes());
            let got = s.until(PATIENCE, |l| l.starts_with("info string"));
            assert_eq!(
                got[0], "info string Syzygy: 70 files, up to 4 pieces",
                "{got:?}"
            );
            bad(&mut s, "/nonexistent", "does not exist", &path);
            s.send(b"go depth 3\n");
            let got = s.until(PATIENCE, |l| l.starts_with("bestmove"));
            let info = got.iter().rfind(|l| l.starts_with("info depth")).unwrap();
            assert!(
                info.contains("score cp 19999") && !info.contains("tbhits 0 "),
                "{got:?}"
            );
            s.send(b"setoption name SyzygyPath value <empty>\ngo depth 3\n");
            let got = s.until(PATIENCE, |l| l.starts_with("bestmove"));
            assert!(got.iter().any(|l| l.contains(" tbhits 0 ")), "{got:?}");
        }
        s.send(b"isready\n");
        s.until(PATIENCE, |l| l == "readyok");
        s.quit();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
