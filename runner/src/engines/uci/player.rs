//! The player over an external UCI engine: handshake, options, `go` with its watchdog,
//! restart after a crash, shutdown.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use engine::search::Limits;
use engine::types::Color;

use super::process::{Process, Recv};
use super::protocol::{
    answer_to_reply, go_command, parse_option, position_command, SearchInfo, UciOption,
};
use super::*;
use crate::engines::player::{MoveReply, MoveRequest, Player, PlayerError};
use crate::engines::variant::{Source, Variant};

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

/// A player backed by an external UCI engine process.
pub struct UciPlayer {
    name: String,
    cmd: PathBuf,
    args: Vec<String>,
    dir: Option<PathBuf>,
    options: Vec<(String, String)>,
    /// Options sent before every `ucinewgame` (the tuned values of `spar tune`).
    per_game: Vec<(String, String)>,
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
            per_game: Vec::new(),
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
    pub fn offered_options(&self) -> &[UciOption] {
        &self.offered
    }

    /// Options (name, value) to send with `setoption` before each later `ucinewgame`, in
    /// this order, after the variant's own `option.X=` words (and again after a restart).
    pub fn set_per_game_options(&mut self, options: Vec<(String, String)>) {
        self.per_game = options;
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
        for (name, value) in &self.per_game {
            if sent.is_ok() {
                sent = proc.send(&format!("setoption name {name} value {value}"));
            }
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

pub(super) enum PingError {
    Eof,
    Timeout,
}

/// `isready`, then waits for `readyok` (other lines are skipped).
pub(super) fn ping(proc: &mut Process, timeout: Duration) -> Result<(), PingError> {
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
