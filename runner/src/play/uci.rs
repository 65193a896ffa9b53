//! External UCI engines driven over pipes, the way fastchess drives them.
//!
//! One [`UciPlayer`] owns one engine process. Its stdout is read by a thread that feeds lines
//! into a channel, so every wait has a deadline (`recv_timeout`) and end-of-file shows up as a
//! crash at once. The handshake (`uci`/`uciok`, options, `isready`/`readyok`) runs when the
//! player is made and again whenever a crashed or stalled engine is restarted for a new game
//! (`--recover` semantics: the game loop scores the crash as a loss, the next game gets a fresh
//! process).
//!
//! ## Watchdog
//!
//! Every `go` has a deadline, measured from the moment `go` is sent:
//!
//! * with a clock for the side to move: remaining time + the variant's time margin + grace;
//! * with `movetime`: movetime + grace (the smaller of the two when both are given);
//! * otherwise (nodes/depth limits): the stall timeout (default 10 s).
//!
//! When the deadline passes the player sends `stop` and waits [`STOP_WAIT`] for a `bestmove`.
//! An answer in that window is returned (and counted as a late answer; the game loop, which
//! times every move itself, decides about clock forfeits). No answer: the process is killed and
//! `go` returns [`PlayerError::Stalled`].

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use engine::position::{Position, STARTPOS_FEN};
use engine::search::{Limits, Score};
use engine::types::{Color, Move};

use super::player::{MoveReply, MoveRequest, Player, PlayerError};
use super::variant::{Source, Variant};

/// Default watchdog for searches without time information (node or depth limits).
pub const DEFAULT_STALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Default extra time beyond the clock (plus margin) or movetime before the watchdog fires.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(1);
/// Default time allowed for `uciok` and for each `readyok`.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a stalled engine gets to answer `stop` before it is killed.
pub const STOP_WAIT: Duration = Duration::from_millis(200);
/// How long `shutdown` waits for the engine to exit after `quit` before killing it.
pub const QUIT_WAIT: Duration = Duration::from_millis(200);
/// How often a running `go` looks at the stop flag.
const STOP_POLL: Duration = Duration::from_millis(25);
/// Lines of the engine's stderr kept for crash messages.
const STDERR_TAIL: usize = 6;

/// Timeouts of a [`UciPlayer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciConfig {
    /// Watchdog for a `go` without time information (node/depth limits only).
    pub stall_timeout: Duration,
    /// Extra time beyond clock + margin or movetime before the watchdog fires.
    pub grace: Duration,
    /// Time allowed for `uciok` after `uci`, and for `readyok` after each `isready`.
    pub startup_timeout: Duration,
}

impl Default for UciConfig {
    fn default() -> UciConfig {
        UciConfig {
            stall_timeout: DEFAULT_STALL_TIMEOUT,
            grace: DEFAULT_GRACE,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
        }
    }
}

/// What happened to an engine over its player's life, for the match summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UciStats {
    /// Processes started (the first start included).
    pub starts: u32,
    /// Restarts after a crash or a stall (attempts, successful or not).
    pub restarts: u32,
    /// Times the process died or could not be written to.
    pub crashes: u32,
    /// Times the engine did not answer in time (`go` past the watchdog and `stop`, or `isready`).
    pub stalls: u32,
    /// Moves that came only after the watchdog's `stop`.
    pub late_answers: u32,
}

/// An option the engine announced in its `uci` answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UciOption {
    /// Name, as the engine spells it (may contain spaces).
    pub name: String,
    /// Type: `check`, `spin`, `combo`, `button` or `string`.
    pub kind: String,
    /// Default value, if announced.
    pub default: Option<String>,
}

/// A player backed by an external UCI engine process.
pub struct UciPlayer {
    name: String,
    cmd: PathBuf,
    args: Vec<String>,
    dir: Option<PathBuf>,
    options: Vec<(String, String)>,
    time_margin: Duration,
    config: UciConfig,
    engine_name: Option<String>,
    offered: Vec<UciOption>,
    proc: Option<Process>,
    /// What `UCI_Chess960` is set to in the running process.
    uci960: bool,
    stats: UciStats,
    stop: Arc<AtomicBool>,
}

impl UciPlayer {
    /// Starts the engine of an external (`Source::Uci`) variant with the default timeouts except
    /// for the stall timeout, and runs the handshake. Errors name the engine and the fix (an
    /// unknown `option.X` lists the options the engine offers).
    pub fn new(variant: &Variant, stall_timeout: Duration) -> Result<UciPlayer, String> {
        UciPlayer::with_config(
            variant,
            UciConfig {
                stall_timeout,
                ..UciConfig::default()
            },
        )
    }

    /// Like [`UciPlayer::new`], with every timeout given.
    pub fn with_config(variant: &Variant, config: UciConfig) -> Result<UciPlayer, String> {
        let (cmd, args, dir) = match &variant.source {
            Source::Uci { cmd, args, dir } => (cmd, args, dir),
            _ => {
                return Err(format!(
                "engine '{}' is not an external UCI engine (build variants are turned into one by \
                     build::resolve first)",
                variant.name
            ))
            }
        };
        let mut cmd = PathBuf::from(cmd);
        if let Some(dir) = dir {
            // A relative path with a directory part is relative to dir= (fastchess semantics).
            if cmd.is_relative() && cmd.components().count() > 1 {
                cmd = dir.join(cmd);
            }
        }
        let mut player = UciPlayer {
            name: variant.name.clone(),
            cmd,
            args: args.clone(),
            dir: dir.clone(),
            options: variant.options.clone(),
            time_margin: variant.time_margin,
            config,
            engine_name: None,
            offered: Vec::new(),
            proc: None,
            uci960: false,
            stats: UciStats::default(),
            stop: Arc::new(AtomicBool::new(false)),
        };
        player.start()?;
        Ok(player)
    }

    /// Crash, restart and stall counts so far.
    #[allow(dead_code)] // for the match summary
    pub fn stats(&self) -> UciStats {
        self.stats
    }

    /// The engine's `id name`, if it sent one.
    #[allow(dead_code)] // for PGN headers and messages
    pub fn engine_name(&self) -> Option<&str> {
        self.engine_name.as_deref()
    }

    /// The options the engine announced.
    #[allow(dead_code)] // for diagnostics
    pub fn offered_options(&self) -> &[UciOption] {
        &self.offered
    }

    /// The operating-system id of the engine process, while there is one.
    #[cfg(test)]
    pub fn pid(&self) -> Option<u32> {
        self.proc.as_ref().map(|p| p.child.id())
    }

    /// Whether the engine process is running.
    pub fn is_running(&mut self) -> bool {
        match &mut self.proc {
            Some(p) => matches!(p.child.try_wait(), Ok(None)),
            None => false,
        }
    }

    /// Spawns the process and runs the handshake; on failure nothing is left running.
    fn start(&mut self) -> Result<(), String> {
        if let Some(mut old) = self.proc.take() {
            old.kill();
        }
        self.stats.starts += 1;
        let mut proc = Process::spawn(&self.name, &self.cmd, &self.args, self.dir.as_deref())?;
        let result = self.handshake(&mut proc);
        match result {
            Ok(()) => {
                self.proc = Some(proc);
                Ok(())
            }
            Err(e) => {
                proc.kill();
                Err(e)
            }
        }
    }

    fn handshake(&mut self, proc: &mut Process) -> Result<(), String> {
        let name = self.name.clone();
        let timeout = self.config.startup_timeout;
        let died = |proc: &mut Process, what: &str| {
            format!("engine '{name}' exited {what}{}", proc.exit_description())
        };
        proc.send("uci")
            .map_err(|_| died(proc, "during the UCI handshake"))?;
        let deadline = Instant::now() + timeout;
        let mut offered = Vec::new();
        let mut engine_name = None;
        loop {
            match proc.recv(deadline) {
                Recv::Line(line) => {
                    if line.trim() == "uciok" {
                        break;
                    }
                    if let Some(opt) = parse_option(&line) {
                        offered.push(opt);
                    } else if let Some(rest) = line.trim_start().strip_prefix("id name ") {
                        engine_name = Some(rest.trim().to_string());
                    }
                }
                Recv::Eof => return Err(died(proc, "during the UCI handshake")),
                Recv::Timeout => {
                    return Err(format!(
                        "engine '{name}' ({}) did not answer 'uci' with 'uciok' within {:.1}s: is it a UCI engine?",
                        self.cmd.display(),
                        timeout.as_secs_f64()
                    ))
                }
            }
        }
        self.offered = offered;
        self.engine_name = engine_name;
        let mut uci960 = false;
        let mut commands = Vec::new();
        for (opt, value) in &self.options {
            let Some(o) = self.find_option(opt) else {
                let names: Vec<&str> = self.offered.iter().map(|o| o.name.as_str()).collect();
                let squash = |s: &str| s.to_ascii_lowercase().replace(['_', ' '], "");
                let hint = match names.iter().find(|n| squash(n) == squash(opt)) {
                    Some(n) => {
                        format!(" (did you mean '{n}'? quote the word: \"option.{n}={value}\")")
                    }
                    None => String::new(),
                };
                return Err(format!(
                    "engine '{name}' has no UCI option '{opt}' (given as option.{opt}={value}){hint}; it offers: {}",
                    if names.is_empty() { "none".to_string() } else { names.join(", ") }
                ));
            };
            if o.name.eq_ignore_ascii_case("UCI_Chess960") {
                uci960 = value.eq_ignore_ascii_case("true");
            }
            commands.push(if o.kind == "button" {
                format!("setoption name {}", o.name)
            } else {
                format!("setoption name {} value {value}", o.name)
            });
        }
        self.uci960 = uci960;
        for c in &commands {
            proc.send(c)
                .map_err(|_| died(proc, "while receiving options"))?;
        }
        ping(proc, timeout).map_err(|e| match e {
            PingError::Eof => died(proc, "after its options were set"),
            PingError::Timeout => format!(
                "engine '{name}' did not answer 'isready' with 'readyok' within {:.1}s after its options were set",
                timeout.as_secs_f64()
            ),
        })
    }

    fn find_option(&self, name: &str) -> Option<&UciOption> {
        self.offered
            .iter()
            .find(|o| o.name.eq_ignore_ascii_case(name))
    }

    /// Ends the process after a failure: kills it, counts a crash, describes what happened.
    fn crashed(&mut self, context: &str) -> PlayerError {
        self.stats.crashes += 1;
        let detail = match self.proc.take() {
            Some(mut p) => {
                let d = p.exit_description();
                p.kill();
                d
            }
            None => String::new(),
        };
        PlayerError::Crashed(format!("engine '{}' exited {context}{detail}", self.name))
    }

    fn stalled(&mut self, message: String) -> PlayerError {
        self.stats.stalls += 1;
        if let Some(mut p) = self.proc.take() {
            p.kill();
        }
        PlayerError::Stalled(message)
    }

    /// `ucinewgame` (with `UCI_Chess960` when it changes) and a ping, on a running process.
    fn prepare(&mut self, chess960: bool) -> Result<(), PlayerError> {
        let offers960 = self.find_option("UCI_Chess960").is_some();
        let Some(proc) = self.proc.as_mut() else {
            return Err(PlayerError::Crashed(format!(
                "engine '{}' is not running",
                self.name
            )));
        };
        let mut sent = Ok(());
        if offers960 && self.uci960 != chess960 {
            sent = proc.send(&format!("setoption name UCI_Chess960 value {chess960}"));
            self.uci960 = chess960;
        }
        if sent.is_err() || proc.send("ucinewgame").is_err() {
            return Err(self.crashed("before a new game"));
        }
        match ping(proc, self.config.startup_timeout) {
            Ok(()) => Ok(()),
            Err(PingError::Eof) => Err(self.crashed("at the start of a new game")),
            Err(PingError::Timeout) => {
                let msg = format!(
                    "engine '{}' did not answer 'isready' within {:.1}s at the start of a new game",
                    self.name,
                    self.config.startup_timeout.as_secs_f64()
                );
                Err(self.stalled(msg))
            }
        }
    }

    fn restart(&mut self) -> Result<(), PlayerError> {
        self.stats.restarts += 1;
        self.start().map_err(|e| {
            self.stats.crashes += 1;
            PlayerError::Crashed(format!("restart failed: {e}"))
        })
    }

    /// The watchdog deadline of one `go` (see the module documentation).
    pub fn watchdog(&self, limits: &Limits, side_to_move: Color) -> Duration {
        let clock = match side_to_move {
            Color::White => limits.wtime,
            Color::Black => limits.btime,
        };
        let by_clock = clock.map(|t| t + self.time_margin + self.config.grace);
        let by_movetime = limits.movetime.map(|t| t + self.config.grace);
        match (by_clock, by_movetime) {
            (Some(a), Some(b)) => a.min(b),
            (Some(a), None) | (None, Some(a)) => a,
            (None, None) => self.config.stall_timeout,
        }
    }
}

impl Player for UciPlayer {
    fn new_game(&mut self, chess960: bool) -> Result<(), PlayerError> {
        let mut restarted = false;
        if !self.is_running() {
            if self.proc.is_some() {
                // Died between games: count it, then start afresh.
                let _ = self.crashed("between games");
            }
            self.restart()?;
            restarted = true;
        }
        match self.prepare(chess960) {
            Err(PlayerError::Crashed(_)) if !restarted => {
                self.restart()?;
                self.prepare(chess960)
            }
            other => other,
        }
    }

    fn go(&mut self, request: &MoveRequest) -> Result<MoveReply, PlayerError> {
        let position_cmd = position_command(request.start_fen, request.moves, self.uci960);
        let go_cmd = go_command(request.limits);
        let budget = self.watchdog(request.limits, request.position.side_to_move());
        let Some(proc) = self.proc.as_mut() else {
            return Err(PlayerError::Crashed(format!(
                "engine '{}' is not running (it failed earlier in this game)",
                self.name
            )));
        };
        if proc.send(&position_cmd).is_err() || proc.send(&go_cmd).is_err() {
            return Err(self.crashed("before it could search"));
        }
        let start = Instant::now();
        let mut deadline = start + budget;
        let mut stop_sent = false;
        let mut info = SearchInfo::default();
        // Phase 1: until the watchdog deadline.
        loop {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            match proc.recv(deadline.min(now + STOP_POLL)) {
                Recv::Line(line) => {
                    if let Some(answer) = info.take_line(&line) {
                        return answer_to_reply(&answer, request.position, info);
                    }
                }
                Recv::Eof => return Err(self.crashed("while thinking")),
                Recv::Timeout => {
                    if !stop_sent && self.stop.load(Ordering::Relaxed) {
                        stop_sent = true;
                        if proc.send("stop").is_err() {
                            return Err(self.crashed("while thinking"));
                        }
                        deadline = deadline.min(Instant::now() + self.config.grace.max(STOP_WAIT));
                    }
                }
            }
        }
        // Phase 2: the watchdog fired; ask for a move and wait briefly.
        let _ = proc.send("stop");
        let stop_deadline = Instant::now() + STOP_WAIT;
        loop {
            match proc.recv(stop_deadline) {
                Recv::Line(line) => {
                    if let Some(answer) = info.take_line(&line) {
                        self.stats.late_answers += 1;
                        return answer_to_reply(&answer, request.position, info);
                    }
                }
                Recv::Eof => return Err(self.crashed("while thinking")),
                Recv::Timeout => break,
            }
        }
        let msg = format!(
            "engine '{}' gave no move within {:.2}s ({}) and did not answer 'stop'; killed",
            self.name,
            start.elapsed().as_secs_f64(),
            if request.limits.movetime.is_some()
                || request.limits.wtime.is_some()
                || request.limits.btime.is_some()
            {
                "time limit + margin + grace".to_string()
            } else {
                format!(
                    "stall timeout {:.1}s",
                    self.config.stall_timeout.as_secs_f64()
                )
            }
        );
        Err(self.stalled(msg))
    }

    fn stop_flag(&self) -> Option<Arc<AtomicBool>> {
        Some(self.stop.clone())
    }

    fn shutdown(&mut self) {
        if let Some(mut p) = self.proc.take() {
            let _ = p.send("quit");
            p.stdin = None; // EOF on the engine's stdin too.
            let until = Instant::now() + QUIT_WAIT;
            loop {
                match p.child.try_wait() {
                    Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(5)),
                    _ => break,
                }
            }
            p.kill();
        }
    }
}

/// The `position` command: `position startpos …` for the standard start, else `position fen …`.
pub fn position_command(start_fen: &str, moves: &[Move], chess960: bool) -> String {
    let is_start = start_fen
        .split_whitespace()
        .eq(STARTPOS_FEN.split_whitespace());
    let mut s = if is_start {
        "position startpos".to_string()
    } else {
        format!("position fen {}", start_fen.trim())
    };
    if !moves.is_empty() {
        s.push_str(" moves");
        for m in moves {
            s.push(' ');
            s.push_str(&m.to_uci(chess960));
        }
    }
    s
}

/// The `go` command for the limits: clocks and `movestogo` in milliseconds, `nodes`, `depth`,
/// `movetime`, `infinite`.
pub fn go_command(limits: &Limits) -> String {
    let mut s = "go".to_string();
    let ms = |d: Duration| d.as_millis();
    for (key, value) in [
        ("wtime", limits.wtime),
        ("btime", limits.btime),
        ("winc", limits.winc),
        ("binc", limits.binc),
    ] {
        if let Some(v) = value {
            s.push_str(&format!(" {key} {}", ms(v)));
        }
    }
    if let Some(m) = limits.movestogo {
        s.push_str(&format!(" movestogo {m}"));
    }
    if let Some(n) = limits.nodes {
        s.push_str(&format!(" nodes {n}"));
    }
    if let Some(d) = limits.depth {
        s.push_str(&format!(" depth {d}"));
    }
    if let Some(t) = limits.movetime {
        s.push_str(&format!(" movetime {}", ms(t).max(1)));
    }
    if limits.infinite {
        s.push_str(" infinite");
    }
    s
}

/// Parses an `option name <name> type <type> [default <value>] …` line.
fn parse_option(line: &str) -> Option<UciOption> {
    let rest = line
        .trim()
        .strip_prefix("option")?
        .trim_start()
        .strip_prefix("name ")?;
    let (name, after) = match rest.find(" type ") {
        Some(i) => (&rest[..i], &rest[i + " type ".len()..]),
        None => (rest, ""),
    };
    let mut words = after.split_whitespace();
    let kind = words.next().unwrap_or("").to_string();
    let default = after.find(" default").map(|i| {
        let v = after[i + " default".len()..].trim_start();
        // The default ends where the next keyword starts (spin: min/max; combo: var).
        let end = [" min ", " max ", " var "]
            .iter()
            .filter_map(|k| v.find(k))
            .min()
            .unwrap_or(v.len());
        v[..end].trim().to_string()
    });
    let name = name.trim();
    (!name.is_empty()).then(|| UciOption {
        name: name.to_string(),
        kind,
        default,
    })
}

/// Score, depth and nodes from the `info` lines of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct SearchInfo {
    score: Option<Score>,
    /// Whether `score` is exact (not a `lowerbound`/`upperbound`).
    exact: bool,
    depth: i32,
    nodes: u64,
}

impl SearchInfo {
    /// Digests one line; returns the move text of a `bestmove` line.
    fn take_line(&mut self, line: &str) -> Option<String> {
        let mut words = line.split_whitespace();
        match words.next() {
            Some("info") => {
                self.parse_info(words);
                None
            }
            Some("bestmove") => Some(words.next().unwrap_or("(none)").to_string()),
            _ => None,
        }
    }

    /// Keeps the last depth, nodes and score seen. A bound score (`lowerbound`/`upperbound`)
    /// is kept only while no exact score has been seen.
    fn parse_info<'a>(&mut self, words: impl Iterator<Item = &'a str>) {
        let mut words = words.peekable();
        while let Some(word) = words.next() {
            match word {
                "depth" => {
                    if let Some(d) = words.next().and_then(|v| v.parse().ok()) {
                        self.depth = d;
                    }
                }
                "nodes" => {
                    if let Some(n) = words.next().and_then(|v| v.parse().ok()) {
                        self.nodes = n;
                    }
                }
                "score" => {
                    let kind = words.next();
                    let value = words.next().and_then(|v| v.parse::<i32>().ok());
                    let score = match (kind, value) {
                        (Some("cp"), Some(v)) => Some(Score::Cp(v)),
                        (Some("mate"), Some(v)) => Some(Score::Mate(v)),
                        _ => None,
                    };
                    let bound = matches!(words.peek(), Some(&"lowerbound") | Some(&"upperbound"));
                    if bound {
                        words.next();
                    }
                    if let Some(score) = score {
                        if !bound {
                            self.score = Some(score);
                            self.exact = true;
                        } else if !self.exact {
                            self.score = Some(score);
                        }
                    }
                }
                // Everything after these is free text or moves.
                "string" | "pv" | "refutation" | "currline" => break,
                _ => {}
            }
        }
    }
}

fn answer_to_reply(
    mv: &str,
    position: &Position,
    info: SearchInfo,
) -> Result<MoveReply, PlayerError> {
    if mv == "(none)" || mv == "0000" {
        return Err(PlayerError::IllegalMove(format!("bestmove {mv}")));
    }
    match position.parse_uci_move(mv) {
        Some(m) => Ok(MoveReply {
            mv: m,
            score: info.score,
            depth: info.depth,
            nodes: info.nodes,
        }),
        None => Err(PlayerError::IllegalMove(mv.to_string())),
    }
}

enum PingError {
    Eof,
    Timeout,
}

/// `isready`, then waits for `readyok` (other lines are skipped).
fn ping(proc: &mut Process, timeout: Duration) -> Result<(), PingError> {
    proc.send("isready").map_err(|_| PingError::Eof)?;
    let deadline = Instant::now() + timeout;
    loop {
        match proc.recv(deadline) {
            Recv::Line(line) if line.trim() == "readyok" => return Ok(()),
            Recv::Line(_) => {}
            Recv::Eof => return Err(PingError::Eof),
            Recv::Timeout => return Err(PingError::Timeout),
        }
    }
}

enum Recv {
    Line(String),
    Eof,
    Timeout,
}

/// A running engine process with its reader threads.
struct Process {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl Process {
    fn spawn(
        name: &str,
        cmd: &Path,
        args: &[String],
        dir: Option<&Path>,
    ) -> Result<Process, String> {
        let mut command = Command::new(cmd);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        if let Some(dir) = dir {
            command.current_dir(dir);
        }
        let mut child = command.spawn().map_err(|e| {
            format!(
                "engine '{name}': cannot start '{}'{}: {e} (check cmd=, args= and dir=)",
                cmd.display(),
                dir.map(|d| format!(" in {}", d.display()))
                    .unwrap_or_default()
            )
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, lines) = mpsc::channel();
        // Reader threads are detached: a killed engine's orphaned children may keep the pipes
        // open, and nobody must wait for them.
        thread::Builder::new()
            .name("uci-stdout".into())
            .spawn(move || {
                let mut reader = BufReader::new(stdout);
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match reader.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            let line = String::from_utf8_lossy(&buf);
                            if tx
                                .send(line.trim_end_matches(['\n', '\r']).to_string())
                                .is_err()
                            {
                                break;
                            }
                        }
                    }
                }
            })
            .map_err(|e| format!("engine '{name}': cannot start a reader thread: {e}"))?;
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = stderr_tail.clone();
        thread::Builder::new()
            .name("uci-stderr".into())
            .spawn(move || {
                let reader = BufReader::new(stderr);
                for line in reader.split(b'\n') {
                    let Ok(line) = line else { break };
                    let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                    if tail.len() == STDERR_TAIL {
                        tail.pop_front();
                    }
                    tail.push_back(String::from_utf8_lossy(&line).trim_end().to_string());
                }
            })
            .map_err(|e| format!("engine '{name}': cannot start a reader thread: {e}"))?;
        Ok(Process {
            child,
            stdin,
            lines,
            stderr_tail,
        })
    }

    fn send(&mut self, line: &str) -> std::io::Result<()> {
        let stdin = self
            .stdin
            .as_mut()
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::BrokenPipe))?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()
    }

    fn recv(&mut self, deadline: Instant) -> Recv {
        let timeout = deadline.saturating_duration_since(Instant::now());
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Recv::Line(line),
            Err(RecvTimeoutError::Timeout) => Recv::Timeout,
            Err(RecvTimeoutError::Disconnected) => Recv::Eof,
        }
    }

    /// ` (exit status …); stderr: …` for messages, waiting briefly for the exit.
    fn exit_description(&mut self) -> String {
        let until = Instant::now() + Duration::from_millis(100);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < until => thread::sleep(Duration::from_millis(2)),
                _ => break None,
            }
        };
        let mut s = match status {
            Some(status) => format!(" ({status})"),
            None => String::new(),
        };
        // Give the stderr thread a moment to catch the last words.
        thread::sleep(Duration::from_millis(5));
        let tail = self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner());
        if !tail.is_empty() {
            s.push_str("; stderr: ");
            s.push_str(&tail.iter().cloned().collect::<Vec<_>>().join(" | "));
        }
        s
    }

    /// Kills the process (if still running) and reaps it.
    fn kill(&mut self) {
        self.stdin = None;
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::variant::parse_variant;

    /// A fake UCI engine in bash: `fake.sh <mode> [<log file>]`. It announces a few options,
    /// answers `isready`, and at `go` does what the mode says.
    const FAKE: &str = r#"
mode="$1"
log="$2"
[ "$mode" = nostart ] && { echo "cannot start" >&2; exit 7; }
while IFS= read -r line; do
  [ -n "$log" ] && echo "$line" >> "$log"
  case "$line" in
    uci)
      [ "$mode" = mute ] && continue
      echo "id name Fake Engine 1.0"
      echo "option name Hash type spin default 16 min 1 max 1024"
      echo "option name Move Overhead type spin default 10 min 0 max 5000"
      echo "option name UCI_Chess960 type check default false"
      echo "option name Clear Hash type button"
      echo "uciok";;
    isready) echo readyok;;
    go*)
      case "$mode" in
        crash) echo "boom: index out of bounds" >&2; exit 3;;
        hang|late|noquit) ;;
        illegal) echo "bestmove a1a1";;
        none) echo "bestmove (none)";;
        *)
          echo "info string thinking hard"
          echo "info depth 1 score cp 5 upperbound nodes 10"
          echo "info depth 3 seldepth 5 score cp 12 nodes 100 pv e2e4 e7e5"
          echo "info depth 4 score cp 99 lowerbound nodes 150"
          echo "bestmove e2e4 ponder e7e5";;
      esac;;
    stop) [ "$mode" = late ] && echo "bestmove d2d4";;
    quit) [ "$mode" = noquit ] || exit 0;;
  esac
done
[ "$mode" = noquit ] && while :; do sleep 0.05; done
exit 0
"#;

    struct Fake {
        dir: tempfile::TempDir,
    }

    impl Fake {
        fn new() -> Fake {
            let dir = tempfile::tempdir().unwrap();
            std::fs::write(dir.path().join("fake.sh"), FAKE).unwrap();
            Fake { dir }
        }

        fn log(&self) -> PathBuf {
            self.dir.path().join("log")
        }

        fn logged(&self) -> String {
            std::fs::read_to_string(self.log()).unwrap_or_default()
        }

        /// A variant running the fake through bash (no exec of a just-written file: no
        /// ETXTBSY races between test threads).
        fn variant(&self, mode: &str, extra: &str) -> Variant {
            let script = self.dir.path().join("fake.sh");
            let mut words = vec![
                "name=fake".to_string(),
                "cmd=bash".to_string(),
                format!("args={} {mode} {}", script.display(), self.log().display()),
            ];
            words.extend(extra.split_whitespace().map(String::from));
            if !extra.contains("nodes=") && !extra.contains("tc=") && !extra.contains("movetime=") {
                words.push("nodes=1000".to_string());
            }
            parse_variant(&words, &[], 0).unwrap()
        }

        fn player(&self, mode: &str, stall_ms: u64) -> UciPlayer {
            let config = UciConfig {
                stall_timeout: Duration::from_millis(stall_ms),
                grace: Duration::from_millis(300),
                startup_timeout: Duration::from_secs(5),
            };
            UciPlayer::with_config(&self.variant(mode, ""), config).unwrap()
        }
    }

    fn nodes(n: u64) -> Limits {
        Limits {
            nodes: Some(n),
            ..Limits::default()
        }
    }

    fn go_from(
        player: &mut UciPlayer,
        position: &Position,
        limits: &Limits,
    ) -> Result<MoveReply, PlayerError> {
        player.go(&MoveRequest {
            start_fen: STARTPOS_FEN,
            moves: &[],
            position,
            history: &[],
            limits,
        })
    }

    fn pid_alive(pid: u32) -> bool {
        // A reaped process has no /proc entry; a zombie would still have one.
        Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn handshake_options_and_a_move() {
        let fake = Fake::new();
        let v = fake.variant("ok", "option.hash=32 option.Move_Overhead=1");
        // Unknown option (underscore instead of space): error lists the offered ones.
        let err = UciPlayer::new(&v, Duration::from_secs(1)).err().unwrap();
        assert!(err.contains("no UCI option 'Move_Overhead'"), "{err}");
        assert!(err.contains("did you mean 'Move Overhead'?"), "{err}");
        assert!(
            err.contains("Hash, Move Overhead, UCI_Chess960, Clear Hash"),
            "{err}"
        );

        let v = fake.variant("ok", "option.hash=32 option.Clear_Hash=x");
        assert!(UciPlayer::new(&v, Duration::from_secs(1)).is_err());

        let mut words: Vec<String> = vec!["name=fake".into(), "cmd=bash".into()];
        words.push(format!(
            "args={} ok {}",
            fake.dir.path().join("fake.sh").display(),
            fake.log().display()
        ));
        words.push("option.hash=32".into());
        words.push("option.Move Overhead=50".into());
        words.push("nodes=1000".into());
        let v = parse_variant(&words, &[], 0).unwrap();
        let mut p = UciPlayer::new(&v, Duration::from_secs(1)).unwrap();
        assert_eq!(p.engine_name(), Some("Fake Engine 1.0"));
        assert_eq!(p.offered_options().len(), 4);
        assert_eq!(p.offered_options()[0].default.as_deref(), Some("16"));
        p.new_game(false).unwrap();
        let pos = Position::startpos();
        let reply = go_from(&mut p, &pos, &nodes(1000)).unwrap();
        assert_eq!(reply.mv.to_uci(false), "e2e4");
        // The last exact score wins over the later lowerbound; depth and nodes are the last seen.
        assert_eq!(reply.score, Some(Score::Cp(12)));
        assert_eq!(reply.depth, 4);
        assert_eq!(reply.nodes, 150);
        p.new_game(true).unwrap();
        p.shutdown();
        let log = fake.logged();
        for expected in [
            "setoption name Hash value 32",
            "setoption name Move Overhead value 50",
            "ucinewgame",
            "position startpos",
            "go nodes 1000",
            "setoption name UCI_Chess960 value true",
            "quit",
        ] {
            assert!(
                log.lines().any(|l| l == expected),
                "missing '{expected}' in:\n{log}"
            );
        }
        assert_eq!(
            p.stats(),
            UciStats {
                starts: 1,
                ..UciStats::default()
            }
        );
    }

    #[test]
    fn start_failures_are_clear() {
        let fake = Fake::new();
        let v = parse_variant(
            &["cmd=/nonexistent/engine".into(), "nodes=5".into()],
            &[],
            0,
        )
        .unwrap();
        let err = UciPlayer::new(&v, Duration::from_secs(1)).err().unwrap();
        assert!(err.contains("cannot start '/nonexistent/engine'"), "{err}");

        let err = UciPlayer::new(&fake.variant("nostart", ""), Duration::from_secs(1))
            .err()
            .unwrap();
        assert!(
            err.contains("exited during the UCI handshake (exit status: 7)"),
            "{err}"
        );
        assert!(err.contains("cannot start"), "{err}");

        let config = UciConfig {
            startup_timeout: Duration::from_millis(300),
            ..UciConfig::default()
        };
        let t = Instant::now();
        let err = UciPlayer::with_config(&fake.variant("mute", ""), config)
            .err()
            .unwrap();
        assert!(err.contains("did not answer 'uci' with 'uciok'"), "{err}");
        assert!(t.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn crash_then_restart_for_the_next_game() {
        let fake = Fake::new();
        let mut p = fake.player("crash", 2000);
        p.new_game(false).unwrap();
        let pid = p.pid().unwrap();
        let err = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap_err();
        match &err {
            PlayerError::Crashed(msg) => {
                assert!(msg.contains("exit status: 3"), "{msg}");
                assert!(msg.contains("boom"), "{msg}");
            }
            other => panic!("expected a crash, got {other:?}"),
        }
        assert!(!pid_alive(pid));
        assert!(!p.is_running());
        // Another go in the same game: still crashed, no hang.
        assert!(matches!(
            go_from(&mut p, &Position::startpos(), &nodes(10)),
            Err(PlayerError::Crashed(_))
        ));
        p.new_game(false).unwrap();
        assert!(p.is_running());
        let s = p.stats();
        assert_eq!((s.starts, s.restarts, s.crashes), (2, 1, 1), "{s:?}");
    }

    #[test]
    fn hang_under_node_limit_is_a_stall() {
        let fake = Fake::new();
        let mut p = fake.player("hang", 300);
        p.new_game(false).unwrap();
        let pid = p.pid().unwrap();
        let t = Instant::now();
        let err = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap_err();
        let took = t.elapsed();
        assert!(matches!(err, PlayerError::Stalled(_)), "{err:?}");
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_millis(5000),
            "{took:?}"
        );
        assert!(!pid_alive(pid), "the stalled engine is killed and reaped");
        assert_eq!(p.stats().stalls, 1);
        p.new_game(false).unwrap();
        assert_eq!(p.stats().restarts, 1);
        assert!(fake.logged().contains("stop"));
    }

    #[test]
    fn answer_after_stop_is_late_not_stalled() {
        let fake = Fake::new();
        let mut p = fake.player("late", 300);
        p.new_game(false).unwrap();
        let reply = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap();
        assert_eq!(reply.mv.to_uci(false), "d2d4");
        assert_eq!(p.stats().late_answers, 1);
        assert_eq!(p.stats().stalls, 0);
        assert!(p.is_running());
    }

    #[test]
    fn stop_flag_stops_the_search() {
        let fake = Fake::new();
        let mut p = fake.player("late", 10_000);
        p.new_game(false).unwrap();
        let flag = p.stop_flag().unwrap();
        let setter = thread::spawn(move || {
            thread::sleep(Duration::from_millis(100));
            flag.store(true, Ordering::Relaxed);
        });
        let t = Instant::now();
        let reply = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap();
        setter.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(1));
        assert_eq!(reply.mv.to_uci(false), "d2d4");
        assert_eq!(p.stats().late_answers, 0);
    }

    #[test]
    fn illegal_and_null_moves() {
        let fake = Fake::new();
        let mut p = fake.player("illegal", 1000);
        p.new_game(false).unwrap();
        let err = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap_err();
        assert_eq!(err, PlayerError::IllegalMove("a1a1".into()));
        // The engine is fine: a new game needs no restart.
        p.new_game(false).unwrap();
        assert_eq!(p.stats().restarts, 0);

        let mut p = fake.player("none", 1000);
        p.new_game(false).unwrap();
        let err = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap_err();
        assert_eq!(err, PlayerError::IllegalMove("bestmove (none)".into()));
    }

    #[test]
    fn parallel_shutdown_is_fast() {
        let fake = Fake::new();
        let mut players: Vec<UciPlayer> = (0..8)
            .map(|i| fake.player(if i % 2 == 0 { "ok" } else { "noquit" }, 1000))
            .collect();
        let pids: Vec<u32> = players.iter().map(|p| p.pid().unwrap()).collect();
        let t = Instant::now();
        thread::scope(|s| {
            for p in players.iter_mut() {
                s.spawn(move || p.shutdown());
            }
        });
        let took = t.elapsed();
        assert!(took < Duration::from_secs(1), "{took:?}");
        for (p, pid) in players.iter_mut().zip(pids) {
            assert!(!p.is_running());
            assert!(!pid_alive(pid), "pid {pid} still there");
        }
    }

    #[test]
    fn drop_kills_and_reaps() {
        let fake = Fake::new();
        let p = fake.player("noquit", 1000);
        let pid = p.pid().unwrap();
        assert!(pid_alive(pid));
        drop(p);
        assert!(!pid_alive(pid));
    }

    #[test]
    fn watchdog_rules() {
        let fake = Fake::new();
        let mut v = fake.variant("ok", "timemargin=100");
        v.limits.nodes = Some(5);
        let config = UciConfig {
            stall_timeout: Duration::from_secs(7),
            grace: Duration::from_millis(500),
            startup_timeout: Duration::from_secs(5),
        };
        let p = UciPlayer::with_config(&v, config).unwrap();
        let ms = Duration::from_millis;
        assert_eq!(p.watchdog(&nodes(5), Color::White), Duration::from_secs(7));
        let clocks = Limits {
            wtime: Some(ms(3000)),
            btime: Some(ms(2000)),
            winc: Some(ms(100)),
            binc: Some(ms(100)),
            ..Limits::default()
        };
        assert_eq!(p.watchdog(&clocks, Color::White), ms(3600));
        assert_eq!(p.watchdog(&clocks, Color::Black), ms(2600));
        let movetime = Limits {
            movetime: Some(ms(250)),
            nodes: Some(5),
            ..Limits::default()
        };
        assert_eq!(p.watchdog(&movetime, Color::Black), ms(750));
        let both = Limits {
            movetime: Some(ms(5000)),
            ..clocks.clone()
        };
        assert_eq!(p.watchdog(&both, Color::Black), ms(2600));
    }

    #[test]
    fn command_lines() {
        let ms = Duration::from_millis;
        let limits = Limits {
            wtime: Some(ms(60_000)),
            btime: Some(ms(59_500)),
            winc: Some(ms(600)),
            binc: Some(ms(600)),
            movestogo: Some(40),
            nodes: Some(5000),
            depth: Some(9),
            ..Limits::default()
        };
        assert_eq!(
            go_command(&limits),
            "go wtime 60000 btime 59500 winc 600 binc 600 movestogo 40 nodes 5000 depth 9"
        );
        let mt = Limits {
            movetime: Some(ms(100)),
            ..Limits::default()
        };
        assert_eq!(go_command(&mt), "go movetime 100");
        assert_eq!(
            position_command(STARTPOS_FEN, &[], false),
            "position startpos"
        );
        let pos = Position::startpos();
        let e4 = pos.parse_uci_move("e2e4").unwrap();
        let after = pos.play(e4);
        let e5 = after.parse_uci_move("e7e5").unwrap();
        assert_eq!(
            position_command(&format!("{STARTPOS_FEN}  "), &[e4, e5], false),
            "position startpos moves e2e4 e7e5"
        );
        let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        let castle = Position::from_fen(fen)
            .unwrap()
            .parse_uci_move("e1g1")
            .unwrap();
        assert_eq!(
            position_command(fen, &[castle], false),
            format!("position fen {fen} moves e1g1")
        );
        assert_eq!(
            position_command(fen, &[castle], true),
            format!("position fen {fen} moves e1h1")
        );
    }

    #[test]
    fn option_and_info_parsing() {
        let o =
            parse_option("option name Move Overhead type spin default 10 min 0 max 5000").unwrap();
        assert_eq!(
            (o.name.as_str(), o.kind.as_str(), o.default.as_deref()),
            ("Move Overhead", "spin", Some("10"))
        );
        let o = parse_option("option name SyzygyPath type string default <empty>").unwrap();
        assert_eq!(o.default.as_deref(), Some("<empty>"));
        let o = parse_option("option name Style type combo default Normal var Solid var Normal")
            .unwrap();
        assert_eq!(o.default.as_deref(), Some("Normal"));
        let o = parse_option("option name Clear Hash type button").unwrap();
        assert_eq!((o.kind.as_str(), o.default), ("button", None));
        assert!(parse_option("id name x").is_none());

        let mut info = SearchInfo::default();
        assert_eq!(info.take_line("info depth 2 score mate -3 nodes 77"), None);
        assert_eq!(info.score, Some(Score::Mate(-3)));
        info.take_line("info depth 3 currmove e2e4 currmovenumber 1");
        info.take_line("info string score cp 5000 nodes 1");
        assert_eq!(
            (info.depth, info.nodes, info.score),
            (3, 77, Some(Score::Mate(-3)))
        );
        let mut bounds = SearchInfo::default();
        bounds.take_line("info depth 5 score cp 30 lowerbound nodes 9");
        assert_eq!(bounds.score, Some(Score::Cp(30)));
        assert_eq!(
            bounds.take_line("bestmove e2e4 ponder e7e5").as_deref(),
            Some("e2e4")
        );
        assert_eq!(bounds.take_line("bestmove").as_deref(), Some("(none)"));
    }

    fn stockfish() -> Option<String> {
        for c in [
            "/usr/games/stockfish",
            "/usr/bin/stockfish",
            "/usr/local/bin/stockfish",
        ] {
            if Path::new(c).exists() {
                return Some(c.to_string());
            }
        }
        None
    }

    #[test]
    fn stockfish_plays_a_few_moves() {
        let Some(sf) = stockfish() else {
            eprintln!("notice: stockfish is not installed; skipping stockfish_plays_a_few_moves");
            return;
        };
        let words: Vec<String> = [
            format!("cmd={sf}"),
            "option.Hash=8".into(),
            "option.Threads=1".into(),
            "tc=5+0.1".into(),
        ]
        .to_vec();
        let v = parse_variant(&words, &[], 0).unwrap();
        let mut p = UciPlayer::new(&v, Duration::from_secs(10)).unwrap();
        assert!(p.engine_name().unwrap_or("").contains("Stockfish"));
        for chess960 in [false, true] {
            p.new_game(chess960).unwrap();
            let start = if chess960 {
                "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
            } else {
                STARTPOS_FEN
            };
            let mut pos = Position::from_fen(start).unwrap();
            pos.set_chess960(chess960);
            let mut moves = Vec::new();
            for ply in 0..8 {
                let limits = if ply % 2 == 0 {
                    nodes(3000)
                } else {
                    Limits {
                        wtime: Some(Duration::from_millis(2000)),
                        btime: Some(Duration::from_millis(2000)),
                        winc: Some(Duration::from_millis(20)),
                        binc: Some(Duration::from_millis(20)),
                        ..Limits::default()
                    }
                };
                let reply = p
                    .go(&MoveRequest {
                        start_fen: start,
                        moves: &moves,
                        position: &pos,
                        history: &[],
                        limits: &limits,
                    })
                    .unwrap();
                assert!(
                    reply.depth > 0 && reply.nodes > 0 && reply.score.is_some(),
                    "{reply:?}"
                );
                moves.push(reply.mv);
                pos = pos.play(reply.mv);
            }
        }
        assert_eq!(p.stats().crashes + p.stats().stalls, 0);
        let pid = p.pid().unwrap();
        p.shutdown();
        assert!(!pid_alive(pid));
    }
}
