use super::player::*;
use super::protocol::*;

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::thread;
use std::time::{Duration, Instant};

use engine::position::{Position, STARTPOS_FEN};
use engine::search::{Limits, Score};
use engine::types::Color;

use crate::engines::player::{MoveReply, MoveRequest, Player, PlayerError};
use crate::engines::variant::parse_variant;
use crate::engines::variant::Variant;

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
fn a_stall_kill_reaches_the_engine_behind_a_wrapper_script() {
    // `run.sh` starts the real engine without exec: killing only the script would orphan it.
    let fake = Fake::new();
    let dir = fake.dir.path();
    let wrapper = dir.join("run.sh");
    let pid_file = dir.join("engine.pid");
    std::fs::write(
        &wrapper,
        format!(
            "bash {} noquit <&0 &\necho $! > {}\nwait\n",
            dir.join("fake.sh").display(),
            pid_file.display()
        ),
    )
    .unwrap();
    let words = [
        "name=wrapped".to_string(),
        "cmd=bash".to_string(),
        format!("args={}", wrapper.display()),
        "nodes=1000".to_string(),
    ];
    let config = UciConfig {
        stall_timeout: Duration::from_millis(300),
        grace: Duration::from_millis(300),
        startup_timeout: Duration::from_secs(5),
    };
    let mut p = UciPlayer::with_config(&parse_variant(&words, &[], 0).unwrap(), config).unwrap();
    p.new_game(false).unwrap();
    let engine_pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(pid_alive(engine_pid));
    let err = go_from(&mut p, &Position::startpos(), &nodes(10)).unwrap_err();
    assert!(matches!(err, PlayerError::Stalled(_)), "{err:?}");
    let t = Instant::now();
    while pid_alive(engine_pid) && t.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !pid_alive(engine_pid),
        "the engine started by the wrapper is killed with it"
    );
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
    let o = parse_option("option name Move Overhead type spin default 10 min 0 max 5000").unwrap();
    assert_eq!(
        (o.name.as_str(), o.kind.as_str(), o.default.as_deref()),
        ("Move Overhead", "spin", Some("10"))
    );
    assert_eq!((o.min, o.max), (Some(0), Some(5000)));
    let o = parse_option("option name backward_eg type spin default -8 min -100 max 100").unwrap();
    assert_eq!((o.min, o.max), (Some(-100), Some(100)));
    let o = parse_option("option name SyzygyPath type string default <empty>").unwrap();
    assert_eq!(o.default.as_deref(), Some("<empty>"));
    assert_eq!((o.min, o.max), (None, None));
    let o =
        parse_option("option name Style type combo default Normal var Solid var Normal").unwrap();
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
    assert_eq!(info.seldepth, 0);
    info.take_line("info depth 4 seldepth 9 score cp 12 nodes 100 pv e2e4");
    assert_eq!((info.depth, info.seldepth), (4, 9));
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
