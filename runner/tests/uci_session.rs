//! `spar uci` driven through whole sessions, as a GUI or match runner drives it.
//!
//! Every test starts the real binary, writes commands to its stdin and reads its stdout
//! line by line on a reader thread (each line time-stamped on arrival), so answers can
//! be waited for with timeouts and the latency of `stop` and `quit` can be measured.
//! Moves the engine prints (best moves, PVs, perft divides) are checked for legality
//! with the engine crate's own move generator, in the notation the session asked for.
//!
//! The tests run one at a time (a shared lock): several of them measure reaction times,
//! and on a small machine a search running in a neighbouring test would distort them.
//!
//! The last test drives the engine through python-chess (`chess.engine`) when `python3`
//! with the `chess` package is installed, and prints a `NOTICE` that it was skipped
//! otherwise; under `CI=true` it fails instead of skipping (`.ci/setup` installs it).

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{missing_client, python_chess, spar};
use engine::position::Position;
use engine::search::Score;

const SPAR: &str = env!("CARGO_BIN_EXE_spar");

/// Generous upper bound for anything that should come back quickly: the machine that
/// runs the suite may be busy compiling.
const PATIENCE: Duration = Duration::from_secs(20);

/// Serialises the tests (see the module documentation).
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// A running `spar uci` process.
struct Uci {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<(Instant, String)>,
    /// Everything sent and received, for failure messages.
    transcript: Vec<String>,
}

impl Uci {
    fn start() -> Uci {
        let mut child = spar()
            .arg("uci")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start spar uci");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Uci {
            stdin: child.stdin.take(),
            child,
            lines: rx,
            transcript: Vec::new(),
        }
    }

    /// Sends one command line; returns the moment it was written.
    fn send(&mut self, line: &str) -> Instant {
        self.transcript.push(format!("> {line}"));
        let stdin = self.stdin.as_mut().expect("stdin still open");
        writeln!(stdin, "{line}").expect("write to spar uci");
        stdin.flush().expect("flush to spar uci");
        Instant::now()
    }

    /// The next line, or `None` after `timeout` (or at end of output).
    fn recv(&mut self, timeout: Duration) -> Option<(Instant, String)> {
        match self.lines.recv_timeout(timeout) {
            Ok((t, line)) => {
                self.transcript.push(format!("< {line}"));
                Some((t, line))
            }
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => None,
        }
    }

    fn fail(&self, what: &str) -> ! {
        panic!(
            "{what}\n--- session transcript (last 60 lines) ---\n{}",
            self.transcript[self.transcript.len().saturating_sub(60)..].join("\n")
        )
    }

    /// Reads lines until one satisfies `done`; returns the lines before it, that line, and
    /// its arrival time. Fails the test after `timeout`.
    fn until(
        &mut self,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> (Vec<String>, String, Instant) {
        let deadline = Instant::now() + timeout;
        let mut before = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.recv(left) {
                Some((t, line)) if done(&line) => return (before, line, t),
                Some((_, line)) => before.push(line),
                None => self.fail(&format!("no expected answer within {timeout:?}")),
            }
        }
    }

    /// `isready` → `readyok`; returns the lines that came before `readyok`.
    fn sync(&mut self) -> Vec<String> {
        self.send("isready");
        self.until(PATIENCE, |l| l == "readyok").0
    }

    /// Sends a `go …` command and collects its answer up to `bestmove`.
    fn go(&mut self, command: &str) -> Search {
        let sent = self.send(command);
        let (lines, best, at) = self.until(PATIENCE, |l| l.starts_with("bestmove"));
        let mut infos = Vec::new();
        let mut other = Vec::new();
        for line in lines {
            if line.starts_with("info depth") {
                infos.push(Info::parse(&line).unwrap_or_else(|e| self.fail(&e)));
            } else {
                other.push(line);
            }
        }
        let words: Vec<&str> = best.split_whitespace().collect();
        let (bestmove, ponder) = match words.as_slice() {
            ["bestmove", b] => (b.to_string(), None),
            ["bestmove", b, "ponder", p] => (b.to_string(), Some(p.to_string())),
            _ => self.fail(&format!("malformed bestmove line '{best}'")),
        };
        Search {
            infos,
            other,
            bestmove,
            ponder,
            elapsed: at - sent,
        }
    }

    /// `go perft N`: returns the divide lines (`move: count`, blank lines dropped) and the
    /// total, after checking the `Nodes searched` / `Nodes/second` trailer.
    fn perft(&mut self, depth: u32) -> (Vec<String>, u64) {
        self.send(&format!("go perft {depth}"));
        let (lines, total, _) = self.until(PATIENCE, |l| l.starts_with("Nodes searched: "));
        let total = total["Nodes searched: ".len()..]
            .parse()
            .unwrap_or_else(|_| self.fail("bad 'Nodes searched' line"));
        let (between, nps, _) = self.until(PATIENCE, |l| l.starts_with("Nodes/second: "));
        if !between.is_empty() || nps["Nodes/second: ".len()..].parse::<u64>().is_err() {
            self.fail("bad 'Nodes/second' line");
        }
        let divide = lines.into_iter().filter(|l| !l.is_empty()).collect();
        (divide, total)
    }

    /// Waits for the process to exit; returns how long that took, or `None` on timeout
    /// (the process is then killed).
    fn wait_exit(&mut self, timeout: Duration) -> Option<Duration> {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                assert!(status.success(), "spar uci exited with {status}");
                return Some(start.elapsed());
            }
            if start.elapsed() > timeout {
                let _ = self.child.kill();
                let _ = self.child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

impl Drop for Uci {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The answer to one `go`.
struct Search {
    infos: Vec<Info>,
    /// Lines other than `info depth …` before the `bestmove`.
    other: Vec<String>,
    bestmove: String,
    ponder: Option<String>,
    /// From writing `go` to reading `bestmove`.
    elapsed: Duration,
}

/// One `info depth …` line, with every field this engine promises.
#[derive(Debug)]
struct Info {
    depth: u32,
    seldepth: u32,
    score: Score,
    nodes: u64,
    nps: u64,
    hashfull: u32,
    time: u64,
    pv: Vec<String>,
}

impl Info {
    fn parse(line: &str) -> Result<Info, String> {
        let w: Vec<&str> = line.split_whitespace().collect();
        let bad = |why: &str| Err(format!("malformed info line ({why}): '{line}'"));
        if w.first() != Some(&"info") {
            return bad("does not start with 'info'");
        }
        let mut depth = None;
        let mut seldepth = None;
        let mut score = None;
        let mut nodes = None;
        let mut nps = None;
        let mut hashfull = None;
        let mut time = None;
        let mut pv = None;
        let mut i = 1;
        while i < w.len() {
            let v = w.get(i + 1).copied().unwrap_or("");
            match w[i] {
                "depth" => depth = v.parse().ok(),
                "seldepth" => seldepth = v.parse().ok(),
                "nodes" => nodes = v.parse().ok(),
                "nps" => nps = v.parse().ok(),
                "hashfull" => hashfull = v.parse().ok(),
                "tbhits" if v.parse::<u64>().is_ok() => {}
                "time" => time = v.parse().ok(),
                "score" => {
                    let n = w.get(i + 2).and_then(|n| n.parse().ok());
                    score = match (v, n) {
                        ("cp", Some(n)) => Some(Score::Cp(n)),
                        ("mate", Some(n)) => Some(Score::Mate(n)),
                        _ => return bad("score is not 'cp N' or 'mate N'"),
                    };
                    if matches!(w.get(i + 3), Some(&"lowerbound" | &"upperbound")) {
                        i += 1;
                    }
                    i += 1;
                }
                "pv" => {
                    pv = Some(w[i + 1..].iter().map(|m| m.to_string()).collect());
                    break;
                }
                other => return bad(&format!("unexpected token '{other}'")),
            }
            i += 2;
        }
        let (
            Some(depth),
            Some(seldepth),
            Some(score),
            Some(nodes),
            Some(nps),
            Some(hashfull),
            Some(time),
            Some(pv),
        ) = (depth, seldepth, score, nodes, nps, hashfull, time, pv)
        else {
            return bad("a field is missing or not a number");
        };
        if hashfull > 1000 {
            return bad("hashfull above 1000");
        }
        Ok(Info {
            depth,
            seldepth,
            score,
            nodes,
            nps,
            hashfull,
            time,
            pv,
        })
    }
}

fn position(fen: &str, chess960: bool) -> Position {
    let mut pos = Position::from_fen(fen).expect("test FEN");
    pos.set_chess960(chess960 || pos.is_chess960());
    pos
}

/// Plays `moves` from `pos`, each of which must be a legal move written exactly as the
/// engine must write it (`chess960`: castling as king takes rook). Returns the result.
fn play_strict(mut pos: Position, moves: &[String], chess960: bool) -> Result<Position, String> {
    for text in moves {
        let Some(mv) = pos
            .legal_moves()
            .iter()
            .copied()
            .find(|m| m.to_uci(chess960) == *text)
        else {
            return Err(format!(
                "'{text}' is not a legal move in {} (chess960: {chess960})",
                pos.to_fen()
            ));
        };
        pos = pos.play(mv);
    }
    Ok(pos)
}

/// Checks a whole `go` answer from `pos`: ascending depths, consistent fields, legal PVs,
/// a legal best move (and ponder move) that starts the last PV.
fn check_search(uci: &Uci, search: &Search, pos: &Position, chess960: bool) {
    if search.infos.is_empty() {
        uci.fail("no info line before bestmove");
    }
    let mut last_depth = 0;
    for info in &search.infos {
        if info.depth <= last_depth {
            uci.fail(&format!("depth not ascending: {info:?}"));
        }
        last_depth = info.depth;
        if info.seldepth == 0 || info.nodes == 0 || info.pv.is_empty() || info.hashfull > 1000 {
            uci.fail(&format!("empty info fields: {info:?}"));
        }
        if let Err(e) = play_strict(pos.clone(), &info.pv, chess960) {
            uci.fail(&format!("illegal PV {:?}: {e}", info.pv));
        }
        // nps must be consistent with nodes and time (time is rounded down to ms).
        if info.time >= 20 {
            let implied = info.nodes * 1000 / info.time;
            if info.nps < implied / 2 || info.nps > implied * 2 {
                uci.fail(&format!("nps {} far from nodes/time {implied}", info.nps));
            }
        }
    }
    let mut line = vec![search.bestmove.clone()];
    line.extend(search.ponder.clone());
    if let Err(e) = play_strict(pos.clone(), &line, chess960) {
        uci.fail(&format!("illegal bestmove/ponder {line:?}: {e}"));
    }
    let last = search.infos.last().expect("checked non-empty");
    if last.pv[0] != search.bestmove {
        uci.fail(&format!(
            "bestmove {} is not the first move of the last PV {:?}",
            search.bestmove, last.pv
        ));
    }
}

fn has_info_string(lines: &[String]) -> bool {
    lines.iter().any(|l| l.starts_with("info string "))
}

#[test]
fn handshake_lists_the_standard_and_tunable_options() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("uci");
    let (lines, _, _) = uci.until(PATIENCE, |l| l == "uciok");
    assert!(
        lines.iter().any(|l| l.starts_with("id name spar")),
        "{lines:?}"
    );
    assert!(
        lines.iter().any(|l| l.starts_with("id author ")),
        "{lines:?}"
    );
    let options: Vec<&String> = lines
        .iter()
        .filter(|l| l.starts_with("option name "))
        .collect();
    for want in [
        "option name Hash type spin default ",
        "option name Threads type spin default 1 ",
        "option name UCI_Chess960 type check default false",
        "option name Ponder type check default false",
        "option name Clear Hash type button",
    ] {
        assert!(
            options.iter().any(|o| o.starts_with(want)),
            "missing '{want}' in {options:?}"
        );
    }
    // Every option line is well-formed: name, then a known type with its fields.
    for o in &options {
        let (_, rest) = o["option name ".len()..]
            .split_once(" type ")
            .unwrap_or_else(|| panic!("no type in '{o}'"));
        let kind = rest.split_whitespace().next().unwrap();
        match kind {
            "spin" => {
                let w: Vec<&str> = rest.split_whitespace().collect();
                assert_eq!(w.len(), 7, "'{o}'");
                assert_eq!((w[1], w[3], w[5]), ("default", "min", "max"), "'{o}'");
                let [d, lo, hi] = [w[2], w[4], w[6]].map(|n| n.parse::<i64>().unwrap());
                assert!(lo <= d && d <= hi, "default outside min..max in '{o}'");
            }
            "check" => assert!(
                rest.ends_with("default true") || rest.ends_with("default false"),
                "'{o}'"
            ),
            "button" => assert_eq!(rest, "button", "'{o}'"),
            "string" => assert!(rest.starts_with("string default "), "'{o}'"),
            "combo" => {
                let w: Vec<&str> = rest.split_whitespace().collect();
                assert_eq!(w[1], "default", "'{o}'");
                let vars: Vec<&str> = w[3..].chunks(2).map(|c| c[1]).collect();
                assert!(
                    w[3..].chunks(2).all(|c| c.len() == 2 && c[0] == "var"),
                    "'{o}'"
                );
                assert!(vars.contains(&w[2]), "default not among the vars in '{o}'");
            }
            _ => panic!("unknown option type in '{o}'"),
        }
    }
    // Every tunable parameter is a spin option with its registry default and range.
    let specs = engine::params::specs();
    assert!(!specs.is_empty());
    for spec in specs {
        let want = format!(
            "option name {} type spin default {} min {} max {}",
            spec.name, spec.default, spec.min, spec.max
        );
        assert!(
            options.iter().any(|o| **o == want),
            "missing tunable '{want}'"
        );
    }
    assert!(uci.sync().is_empty());
    uci.send("quit");
    assert!(uci.wait_exit(Duration::from_secs(5)).is_some());
}

#[test]
fn setoption_accepts_good_values_and_explains_bad_ones() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("uci");
    uci.until(PATIENCE, |l| l == "uciok");
    uci.send("setoption name Hash value 8");
    uci.send("setoption name Threads value 1");
    uci.send("setoption name rfp_margin value 60");
    uci.send("setoption name Clear Hash");
    uci.send("setoption name UCI_Chess960 value false");
    let quiet = uci.sync();
    assert!(quiet.is_empty(), "good setoptions answered with {quiet:?}");

    for bad in [
        "setoption name NoSuchOption value 3",
        "setoption name rfp_margin value 99999",
        "setoption name rfp_margin value abc",
        "setoption name Hash value 0",
        "setoption name Hash value lots",
        "setoption name Threads value 0",
        "setoption name UCI_Chess960 value maybe",
        "setoption",
        "setoption value 3",
    ] {
        uci.send(bad);
        let answer = uci.sync();
        assert!(
            answer.len() == 1 && has_info_string(&answer),
            "'{bad}' answered with {answer:?}, want one info string"
        );
    }
    // The session still searches normally afterwards.
    uci.send("position startpos");
    let search = uci.go("go depth 3");
    check_search(&uci, &search, &Position::startpos(), false);
}

#[test]
fn fixed_depth_search_from_a_move_list() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("uci");
    uci.until(PATIENCE, |l| l == "uciok");
    uci.send("setoption name Hash value 8");
    uci.send("ucinewgame");
    uci.send("position startpos moves e2e4 e7e5 g1f3");
    uci.sync();
    let search = uci.go("go depth 6");
    let pos = play_strict(
        Position::startpos(),
        &["e2e4", "e7e5", "g1f3"].map(String::from),
        false,
    )
    .unwrap();
    check_search(&uci, &search, &pos, false);
    let depths: Vec<u32> = search.infos.iter().map(|i| i.depth).collect();
    assert_eq!(
        depths,
        (1..=6).collect::<Vec<_>>(),
        "one info per iteration"
    );
    for info in &search.infos {
        assert!(info.seldepth >= info.depth.min(2), "{info:?}");
        assert!(
            matches!(info.score, Score::Cp(cp) if cp.abs() < 300),
            "{info:?}"
        );
    }
    // `position` without `ucinewgame` replaces the position (a GUI's next move).
    uci.send("position startpos moves d2d4");
    let pos = play_strict(Position::startpos(), &["d2d4".to_string()], false).unwrap();
    let search = uci.go("go depth 4");
    check_search(&uci, &search, &pos, false);
    assert_eq!(search.infos.last().unwrap().depth, 4);
}

#[test]
fn node_limited_search_is_deterministic() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("setoption name Hash value 8");
    let mut runs = Vec::new();
    for _ in 0..2 {
        uci.send("ucinewgame");
        uci.send("position startpos moves d2d4 g8f6 c2c4");
        let search = uci.go("go nodes 5000");
        let last = search.infos.last().expect("an iteration within 5000 nodes");
        assert!(last.nodes <= 5000, "{last:?}");
        runs.push((
            search.bestmove.clone(),
            search.ponder.clone(),
            search
                .infos
                .iter()
                .map(|i| (i.depth, i.nodes, i.pv.clone()))
                .collect::<Vec<_>>(),
        ));
    }
    assert_eq!(runs[0], runs[1], "same search twice after ucinewgame");
}

#[test]
fn infinite_search_stops_promptly_and_isready_is_answered_while_searching() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("position startpos moves e2e4");
    uci.sync();
    uci.send("go infinite");
    // Let it get going, then check it is still thinking and still listening.
    uci.until(PATIENCE, |l| l.starts_with("info depth 5"));
    std::thread::sleep(Duration::from_millis(300));
    let sent = uci.send("isready");
    let (before, _, at) = uci.until(PATIENCE, |l| l == "readyok" || l.starts_with("bestmove"));
    assert!(
        !before.iter().any(|l| l.starts_with("bestmove")),
        "bestmove before stop in infinite mode"
    );
    let ready = at - sent;
    let sent = uci.send("stop");
    let (before, best, at) = uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    let stop = at - sent;
    eprintln!("isready during search answered in {ready:?}, stop in {stop:?}");
    assert!(before.iter().all(|l| l.starts_with("info ")), "{before:?}");
    let mv = best.split_whitespace().nth(1).unwrap().to_string();
    let pos = play_strict(Position::startpos(), &["e2e4".to_string()], false).unwrap();
    play_strict(pos, &[mv], false).unwrap_or_else(|e| uci.fail(&e));
    // ~100 ms is the target; the bound leaves room for a busy machine.
    assert!(
        ready < Duration::from_millis(2000),
        "isready took {ready:?}"
    );
    assert!(stop < Duration::from_millis(2000), "stop took {stop:?}");
    // A second stop, with nothing running, is ignored.
    uci.send("stop");
    assert!(uci.sync().is_empty());
}

#[test]
fn searchmoves_restricts_the_root_moves() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("position startpos");
    // The list ends at the next `go` word; a move that is not legal is reported and dropped.
    let search = uci.go("go searchmoves a2a3 h2h3 e2e5 depth 6");
    assert!(
        ["a2a3", "h2h3"].contains(&search.bestmove.as_str()),
        "bestmove {} outside searchmoves",
        search.bestmove
    );
    assert!(
        search
            .other
            .iter()
            .any(|l| l.contains("'e2e5' is not a legal move")),
        "{:?}",
        search.other
    );
    for info in &search.infos {
        assert!(["a2a3", "h2h3"].contains(&info.pv[0].as_str()), "{info:?}");
    }
    // The list may come last, and a single move is searched alone.
    uci.send("setoption name Clear Hash");
    let search = uci.go("go depth 5 searchmoves g1h3");
    assert_eq!(search.bestmove, "g1h3");
    // The restriction lasts one `go`: without it the engine plays its own choice again.
    let search = uci.go("go depth 5");
    assert_ne!(search.bestmove, "g1h3");
    // Nothing legal in the list: every move is searched.
    let search = uci.go("go depth 4 searchmoves e7e5");
    check_search(&uci, &search, &Position::startpos(), false);
    uci.send("quit");
    assert!(uci.wait_exit(Duration::from_secs(5)).is_some());
}

#[test]
fn pondering_waits_for_ponderhit_then_keeps_the_clock() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("setoption name Ponder value true");
    uci.send("position startpos moves e2e4 e7e5");
    assert!(uci.sync().is_empty(), "Ponder is a known option");
    // 100 ms on the clock would end a normal search within ~60 ms; pondering ignores it.
    uci.send("go ponder wtime 100 btime 100");
    std::thread::sleep(Duration::from_millis(700));
    let before = uci.sync();
    assert!(
        !before.iter().any(|l| l.starts_with("bestmove")),
        "bestmove while pondering: {before:?}"
    );
    let sent = uci.send("ponderhit");
    let (_, best, at) = uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    let after = at - sent;
    eprintln!("bestmove {after:?} after ponderhit");
    let mv = best.split_whitespace().nth(1).unwrap().to_string();
    let pos = position(
        "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2",
        false,
    );
    play_strict(pos, &[mv], false).unwrap_or_else(|e| uci.fail(&e));
    // The clock runs from ponderhit: 100 ms left means an answer well within a second
    // (the bound leaves room for a busy machine).
    assert!(after < Duration::from_millis(3000), "took {after:?}");

    // `stop` ends a ponder search (the opponent played another move) with a bestmove.
    uci.send("go ponder movetime 50");
    std::thread::sleep(Duration::from_millis(400));
    assert!(!uci.sync().iter().any(|l| l.starts_with("bestmove")));
    uci.send("stop");
    uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    // A ponder search that runs out of depth still waits.
    uci.send("go ponder depth 2");
    std::thread::sleep(Duration::from_millis(300));
    assert!(!uci.sync().iter().any(|l| l.starts_with("bestmove")));
    uci.send("ponderhit");
    uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    // A stray ponderhit with nothing running changes nothing.
    uci.send("ponderhit");
    assert!(uci.sync().is_empty());
    uci.send("quit");
    assert!(uci.wait_exit(Duration::from_secs(5)).is_some());
}

#[test]
fn checkmated_or_stalemated_side_answers_with_a_null_move() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("position fen 7k/6Q1/6K1/8/8/8/8/8 b - - 0 1");
    uci.send("go depth 5");
    let (before, best, _) = uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    assert_eq!(best, "bestmove 0000");
    assert_eq!(before, ["info depth 0 score mate 0"]);
    // `go infinite` answers only after `stop`, even with nothing to search.
    uci.send("position fen 7k/5Q2/6K1/8/8/8/8/8 b - - 0 1");
    uci.send("go infinite");
    std::thread::sleep(Duration::from_millis(300));
    assert!(uci.sync().is_empty(), "no answer before stop");
    uci.send("stop");
    let (before, best, _) = uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    assert_eq!(best, "bestmove 0000");
    assert_eq!(before, ["info depth 0 score cp 0"]);
    uci.send("quit");
    assert!(uci.wait_exit(Duration::from_secs(5)).is_some());
}

#[test]
fn movetime_and_clock_limits_are_kept() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("ucinewgame");
    uci.send("position startpos");
    uci.sync();
    let search = uci.go("go movetime 100");
    check_search(&uci, &search, &Position::startpos(), false);
    eprintln!("go movetime 100 answered in {:?}", search.elapsed);
    assert!(
        search.elapsed >= Duration::from_millis(80),
        "movetime 100 returned after {:?}",
        search.elapsed
    );
    assert!(
        search.elapsed < Duration::from_millis(3000),
        "movetime 100 took {:?}",
        search.elapsed
    );

    // One second on the clock each: a move must come well within the remaining time.
    for (moves, fen_moves) in [("", vec![]), (" moves e2e4", vec!["e2e4"])] {
        uci.send(&format!("position startpos{moves}"));
        let search = uci.go("go wtime 1000 btime 1000 winc 10 binc 10");
        let pos = play_strict(
            Position::startpos(),
            &fen_moves.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
            false,
        )
        .unwrap();
        check_search(&uci, &search, &pos, false);
        eprintln!("go wtime 1000 … answered in {:?}", search.elapsed);
        assert!(
            search.elapsed < Duration::from_millis(3000),
            "used {:?} of a 1 s clock for one move",
            search.elapsed
        );
    }
    // movestogo and a nearly empty clock.
    uci.send("position startpos");
    let search = uci.go("go wtime 50 btime 50 movestogo 1");
    check_search(&uci, &search, &Position::startpos(), false);
    assert!(
        search.elapsed < Duration::from_millis(2000),
        "{:?}",
        search.elapsed
    );
}

#[test]
fn chess960_castling_is_king_takes_rook() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("setoption name UCI_Chess960 value true");
    // King b1, rooks a1 and h1: both castlings are legal.
    let fen = "rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1";
    uci.send(&format!("position fen {fen}"));
    let (divide, _) = uci.perft(1);
    let moves: Vec<&str> = divide
        .iter()
        .filter_map(|l| l.strip_suffix(": 1"))
        .collect();
    assert!(
        moves.contains(&"b1h1") && moves.contains(&"b1a1"),
        "{moves:?}"
    );
    // (b1c1 is also an ordinary king move, so only b1g1 proves the notation.)
    assert!(!moves.contains(&"b1g1"), "{moves:?}");
    let pos = position(fen, true);
    assert_eq!(moves.len(), pos.legal_moves().len());

    // Castling in the move list, then a search whose moves are all in 960 notation.
    uci.send(&format!("position fen {fen} moves b1h1 b8a8"));
    uci.send("d");
    let (board, _, _) = uci.until(PATIENCE, |l| l.contains('/'));
    assert!(board.is_empty() || board.len() == 8, "{board:?}");
    let after = play_strict(pos.clone(), &["b1h1", "b8a8"].map(String::from), true).unwrap();
    let search = uci.go("go depth 5");
    check_search(&uci, &search, &after, true);

    // A Chess960 start position (Shredder-FEN castling field), searched from the start.
    let fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
    uci.send("ucinewgame");
    uci.send(&format!("position fen {fen}"));
    let search = uci.go("go depth 6");
    check_search(&uci, &search, &position(fen, true), true);

    // The same option in a standard position: castling is written e1h1 / e1a1.
    let fen = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
    uci.send(&format!("position fen {fen}"));
    let (divide, _) = uci.perft(1);
    assert!(divide.iter().any(|l| l == "e1h1: 1"), "{divide:?}");
    assert!(divide.iter().any(|l| l == "e1a1: 1"), "{divide:?}");
    // … and switched off again: e1g1 / e1c1.
    uci.send("setoption name UCI_Chess960 value false");
    uci.send(&format!("position fen {fen}"));
    let (divide, _) = uci.perft(1);
    assert!(divide.iter().any(|l| l == "e1g1: 1"), "{divide:?}");
    assert!(divide.iter().any(|l| l == "e1c1: 1"), "{divide:?}");
}

#[test]
fn go_perft_divides_and_counts() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("position startpos");
    let (lines, total) = uci.perft(3);
    assert_eq!(total, 8902);
    let divide: Vec<(String, u64)> = lines
        .iter()
        .map(|l| {
            let (m, n) = l.split_once(": ").unwrap_or_else(|| panic!("'{l}'"));
            (m.to_string(), n.parse().unwrap())
        })
        .collect();
    assert_eq!(divide.len(), 20);
    assert_eq!(divide.iter().map(|d| d.1).sum::<u64>(), 8902);
    for (m, _) in &divide {
        play_strict(Position::startpos(), std::slice::from_ref(m), false).unwrap();
    }
    // Kiwipete depth 2 as a second reference.
    uci.send("position fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    assert_eq!(uci.perft(2).1, 2039);
}

#[test]
fn malformed_commands_are_explained_and_the_session_goes_on() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.send("uci");
    uci.until(PATIENCE, |l| l == "uciok");
    uci.send("position startpos moves e2e4");

    uci.send("foo");
    let answer = uci.sync();
    assert!(
        answer.len() == 1 && answer[0].starts_with("info string") && answer[0].contains("foo"),
        "{answer:?}"
    );

    // A bad FEN leaves the position as it was (1. e4 played: 20 replies).
    for bad in [
        "position fen garbage",
        "position fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
        "position fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "position",
        "position startpos moves e7e5 e2e4",
        "position startpos moves e2e5",
    ] {
        uci.send(bad);
        let answer = uci.sync();
        assert!(
            answer.len() == 1 && has_info_string(&answer),
            "'{bad}' answered with {answer:?}"
        );
        assert_eq!(uci.perft(1).1, 20, "position changed by '{bad}'");
    }

    // `go depth x`: the bad value is reported (and ignored); the search still answers
    // with a legal bestmove once stopped, as a GUI expects after any `go`.
    uci.send("go depth x");
    let first = match uci.recv(PATIENCE) {
        Some((_, line)) => line,
        None => uci.fail("no answer to 'go depth x'"),
    };
    assert!(
        first.starts_with("info string"),
        "'go depth x' answered with '{first}'"
    );
    std::thread::sleep(Duration::from_millis(100));
    uci.send("stop");
    let (_, best, _) = uci.until(PATIENCE, |l| l.starts_with("bestmove"));
    let pos = play_strict(Position::startpos(), &["e2e4".to_string()], false).unwrap();
    let mv = best.split_whitespace().nth(1).unwrap().to_string();
    play_strict(pos.clone(), &[mv], false).unwrap_or_else(|e| uci.fail(&e));

    // Unknown go words are reported; the known ones still apply.
    let search = uci.go("go sideways depth 3");
    assert!(has_info_string(&search.other), "{:?}", search.other);
    assert_eq!(search.infos.last().unwrap().depth, 3);
    // A missing value too.
    let search = uci.go("go depth 2 nodes");
    assert!(has_info_string(&search.other), "{:?}", search.other);
    check_search(&uci, &search, &pos, false);

    // Still a working session.
    assert!(uci.sync().is_empty());
    let search = uci.go("go depth 4");
    check_search(&uci, &search, &pos, false);
    uci.send("quit");
    assert!(uci.wait_exit(Duration::from_secs(5)).is_some());
}

#[test]
fn finds_mate_in_two() {
    let _g = serial();
    let mut uci = Uci::start();
    // 1. Ra6! bxa6 2. b7#
    let fen = "kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1";
    uci.send("ucinewgame");
    uci.send(&format!("position fen {fen}"));
    let search = uci.go("go depth 10");
    check_search(&uci, &search, &position(fen, false), false);
    assert_eq!(search.infos.last().unwrap().score, Score::Mate(2));
    assert_eq!(search.bestmove, "a1a6");

    // 1. Nf6+ gxf6 2. Bxf7#
    let fen = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1";
    uci.send(&format!("position fen {fen}"));
    let search = uci.go("go depth 8");
    check_search(&uci, &search, &position(fen, false), false);
    assert_eq!(search.infos.last().unwrap().score, Score::Mate(2));
    assert_eq!(search.bestmove, "d5f6");

    // The losing side sees the mate too: after 1. Ra6, black is mated in 1 (b7#) whatever
    // it plays, as far as the search can tell: score mate -1.
    uci.send("position fen kbK5/pp6/1P6/8/8/8/8/R7 w - - 0 1 moves a1a6");
    let search = uci.go("go depth 8");
    assert_eq!(search.infos.last().unwrap().score, Score::Mate(-1));

    // Checkmated and stalemated: no legal move, `bestmove 0000`.
    for fen in [
        "kbK5/pP6/p7/8/8/8/8/8 b - - 0 2",
        "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1",
    ] {
        uci.send(&format!("position fen {fen}"));
        uci.send("go depth 5");
        let (_, best, _) = uci.until(PATIENCE, |l| l.starts_with("bestmove"));
        assert!(
            best == "bestmove 0000" || best == "bestmove (none)",
            "{fen}: {best}"
        );
    }
}

#[test]
fn quit_exits_promptly_even_while_searching() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.sync();
    uci.send("quit");
    let idle = uci.wait_exit(Duration::from_secs(5));
    eprintln!("quit while idle: exit after {idle:?}");
    assert!(idle.is_some_and(|d| d < Duration::from_secs(1)), "{idle:?}");

    let mut uci = Uci::start();
    uci.send("setoption name Hash value 64");
    uci.send("go infinite");
    uci.until(PATIENCE, |l| l.starts_with("info depth 6"));
    uci.send("quit");
    let busy = uci.wait_exit(Duration::from_secs(5));
    eprintln!("quit while searching: exit after {busy:?}");
    assert!(busy.is_some_and(|d| d < Duration::from_secs(1)), "{busy:?}");
}

#[test]
fn end_of_input_exits() {
    let _g = serial();
    let mut uci = Uci::start();
    uci.sync();
    drop(uci.stdin.take());
    let idle = uci.wait_exit(Duration::from_secs(5));
    eprintln!("EOF while idle: exit after {idle:?}");
    assert!(idle.is_some_and(|d| d < Duration::from_secs(1)), "{idle:?}");

    // EOF in the middle of a search ends the session like `quit`.
    let mut uci = Uci::start();
    uci.send("go infinite");
    uci.until(PATIENCE, |l| l.starts_with("info depth 6"));
    drop(uci.stdin.take());
    let busy = uci.wait_exit(Duration::from_secs(5));
    eprintln!("EOF while searching: exit after {busy:?}");
    assert!(busy.is_some_and(|d| d < Duration::from_secs(1)), "{busy:?}");
}

/// python-chess as the client: its UCI parser is strict about the protocol, so this
/// catches anything the hand-written checks above miss.
#[test]
fn python_chess_client() {
    let _g = serial();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/uci_python_client.py");
    let Some(version) = python_chess() else {
        missing_client(
            "python_chess_client",
            "python3 with the `chess` package is not installed (pip install chess)",
        );
        return;
    };
    eprintln!("python-chess {version} found");
    let out = Command::new("python3")
        .arg(script)
        .arg(SPAR)
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("{stdout}");
    assert!(
        out.status.success(),
        "python-chess client failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    assert!(stdout.contains("ALL OK"), "{stdout}\n{stderr}");
}

/// Issue 24, classes 10 and 13: `setoption name EvalFile value FIFO` (no writer) or a
/// device is answered at once with one `info string` and the session keeps serving (`quit`
/// ends it promptly); a network file with `Eval hce` is refused with the rule's message,
/// and an empty EvalFile is the embedded net, as in engine words.
#[test]
fn an_eval_file_that_is_no_regular_file_is_refused_at_once_and_quit_still_works() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("net.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    let net = dir.path().join("n.nnue");
    std::fs::write(
        &net,
        engine::nnue::placeholder::material_network(16).to_bytes(),
    )
    .unwrap();
    let mut uci = Uci::start();
    uci.send("uci");
    uci.until(PATIENCE, |l| l == "uciok");
    let mut odd = vec!["/dev/zero".to_string()];
    if made {
        odd.push(fifo.display().to_string());
    }
    for file in &odd {
        let sent = uci.send(&format!("setoption name EvalFile value {file}"));
        let answer = uci.sync();
        assert!(
            answer.len() == 1
                && answer[0].starts_with("info string EvalFile")
                && answer[0].contains("not a regular file")
                && answer[0].ends_with("keeping <embedded>"),
            "{answer:?}"
        );
        assert!(sent.elapsed() < Duration::from_secs(5), "answered late");
    }
    // The rule shared with engine words, `spar bench` and datagen.
    uci.send(&format!("setoption name EvalFile value {}", net.display()));
    let loaded = uci.sync();
    assert!(
        loaded[0].ends_with("network 768->16x2->1 loaded"),
        "{loaded:?}"
    );
    uci.send("setoption name Eval value hce");
    let refused = uci.sync();
    assert!(
        refused.len() == 1
            && refused[0].contains("is a network, which only the NNUE evaluation uses"),
        "{refused:?}"
    );
    uci.send("setoption name EvalFile value");
    let embedded = uci.sync();
    assert!(
        embedded[0].contains("EvalFile <embedded>: network"),
        "{embedded:?}"
    );
    uci.send("setoption name Eval value hce");
    assert!(uci.sync().is_empty());
    uci.send("position startpos");
    let search = uci.go("go depth 3");
    check_search(&uci, &search, &Position::startpos(), false);
    uci.send("quit");
    assert!(
        uci.wait_exit(Duration::from_secs(5)).is_some(),
        "quit was ignored"
    );
}
