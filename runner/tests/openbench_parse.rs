//! spar as OpenBench's `fastchess-ob`: a parser written to OpenBench's client rules
//! (Client/worker.py, `MatchRunner.update_results`) reads spar's stdout and gets the
//! W/D/L, pentanomial, crash and time-loss counts spar itself recorded.
//!
//! The rules: only `Finished game` lines count; token 2 (0-based, split at white space) is
//! the game number, token 6 the result; the text after the first `:` is the reason
//! (`disconnect`/`stalls`: a crash, `on time`: a time loss, `illegal`: an illegal move);
//! games (g, g+1) with g odd are a pair whose first game has the dev engine (the first
//! `-engine`) as White.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::run_in;

/// What OpenBench's client counts from a match runner's stdout.
#[derive(Debug, Default, PartialEq)]
struct Results {
    /// [losses, draws, wins] of the dev engine.
    trinomial: [u64; 3],
    /// Pairs by the dev engine's points × 2: [LL, LD, WL+DD, WD, WW].
    pentanomial: [u64; 5],
    crashes: u64,
    timelosses: u64,
    illegals: u64,
}

/// OpenBench's `update_results`, line by line.
fn openbench_parse(stdout: &str) -> Results {
    let mut r = Results::default();
    let mut games: HashMap<u64, String> = HashMap::new();
    let lookup = |s: &str| match s {
        "0-1" => 0,
        "1/2-1/2" => 1,
        "1-0" => 2,
        other => panic!("OpenBench's lookup has no result '{other}'"),
    };
    for line in stdout.lines().filter(|l| l.contains("Finished game")) {
        let reason = line.split(':').nth(1).unwrap();
        r.crashes += u64::from(reason.contains("disconnect") || reason.contains("stalls"));
        r.timelosses += u64::from(reason.contains("on time"));
        r.illegals += u64::from(reason.contains("illegal"));
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let game: u64 = tokens[2].parse().unwrap();
        games.insert(game, tokens[6].to_string());
        let (first, second) = if game % 2 == 1 {
            (game, game + 1)
        } else {
            (game - 1, game)
        };
        let (Some(r1), Some(r2)) = (games.get(&first), games.get(&second)) else {
            continue;
        };
        let (l1, l2) = (lookup(r1), lookup(r2));
        r.pentanomial[l1 + 2 - l2] += 1;
        r.trinomial[l1] += 1;
        r.trinomial[2 - l2] += 1;
        games.remove(&first);
        games.remove(&second);
    }
    assert!(games.is_empty(), "unpaired games: {games:?}");
    r
}

/// What spar recorded: its final results block (`Games: …, Wins: W, Losses: L, Draws: D`,
/// `Ptnml(0-2): […]`) and its PGN's Termination tags (`abandoned`, `stalled connection`,
/// `time forfeit`, `illegal move`: what OpenBench reads there for its error reports).
fn spar_record(stdout: &str, pgn: &Path) -> Results {
    let mut r = Results::default();
    let block = stdout.rsplit("Results of ").next().unwrap();
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("Games: ") {
            let n = |key: &str| -> u64 {
                let at = rest.find(key).unwrap() + key.len();
                rest[at..].split(',').next().unwrap().parse().unwrap()
            };
            r.trinomial = [n("Losses: "), n("Draws: "), n("Wins: ")];
        }
        if let Some(rest) = line.strip_prefix("Ptnml(0-2): [") {
            let counts: Vec<u64> = rest[..rest.find(']').unwrap()]
                .split(", ")
                .map(|c| c.parse().unwrap())
                .collect();
            r.pentanomial.copy_from_slice(&counts);
        }
    }
    let text = std::fs::read_to_string(pgn).unwrap();
    for t in text
        .lines()
        .filter_map(|l| l.strip_prefix("[Termination \""))
    {
        match t.trim_end_matches("\"]") {
            "abandoned" | "stalled connection" => r.crashes += 1,
            "time forfeit" => r.timelosses += 1,
            "illegal move" => r.illegals += 1,
            _ => {}
        }
    }
    r
}

/// A UCI engine that is spar's own (`spar uci`) until its `after`-th `go`, where it
/// `exit 3`s (`crash`) or answers 1.5 s late (`slow`); counts restart with each process.
fn shim(dir: &Path, name: &str, what: &str, after: u32) -> PathBuf {
    let path = dir.join(name);
    let on_go = match what {
        "crash" => "exit 3".to_string(),
        "slow" => "sleep 1.5".to_string(),
        _ => unreachable!(),
    };
    let script = format!(
        "#!/usr/bin/env bash\n\
         fifo=$(mktemp -u)\n\
         mkfifo \"$fifo\"\n\
         '{spar}' uci < \"$fifo\" &\n\
         engine=$!\n\
         trap 'kill $engine 2>/dev/null; rm -f \"$fifo\"' EXIT\n\
         exec 3>\"$fifo\"\n\
         n=0\n\
         while IFS= read -r line; do\n\
           case \"$line\" in go*) n=$((n+1)); if [ \"$n\" -eq {after} ]; then {on_go}; fi ;; esac\n\
           printf '%s\\n' \"$line\" >&3\n\
           [ \"$line\" = quit ] && break\n\
         done\n\
         exec 3>&-\n\
         wait $engine\n",
        spar = env!("CARGO_BIN_EXE_spar")
    );
    std::fs::write(&path, script).unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&path)
        .status()
        .unwrap();
    path
}

/// Runs OpenBench's command-line shape through `spar fastchess` in `dir`; its stdout.
fn openbench_run(dir: &Path, dev: &str, base: &str, tc: &str, rounds: u32) -> String {
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/compat/book.epd"),
        dir.join("book.epd"),
    )
    .unwrap();
    let line = format!(
        "fastchess -recover -variant standard -testEnv -concurrency 2 -rounds {rounds} -games 2 \
         -resign movecount=3 score=400 -draw movenumber=40 movecount=8 score=10 \
         -engine {dev} proto=uci {tc} timemargin=250 option.Threads=1 option.Hash=16 name=dev-dev \
         -engine {base} proto=uci {tc} timemargin=250 option.Threads=1 option.Hash=16 name=base-base \
         -openings file=book.epd format=epd order=random start=3 -srand 11 \
         -pgnout file=games.pgn seldepth=true nodes=true match_line=^info.string.pgncomment.*"
    );
    let o = run_in(dir, &line.split_whitespace().collect::<Vec<_>>());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).expect("OpenBench reads stdout as ASCII")
}

#[test]
fn openbench_reads_the_counts_spar_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let out = openbench_run(
        dir.path(),
        "name=x option.rfp_margin=40",
        "name=y",
        "nodes=300",
        6,
    );
    assert!(out.is_ascii());
    let got = openbench_parse(&out);
    assert_eq!(
        got,
        spar_record(&out, &dir.path().join("games.pgn")),
        "{out}"
    );
    assert_eq!(got.trinomial.iter().sum::<u64>(), 12, "{out}");
    assert_eq!(got.pentanomial.iter().sum::<u64>(), 6, "{out}");
}

#[test]
fn openbench_counts_crashes_of_an_engine_that_exits_mid_game() {
    let dir = tempfile::tempdir().unwrap();
    let crasher = shim(dir.path(), "crasher", "crash", 6);
    let dev = format!("cmd={} dir={}", crasher.display(), dir.path().display());
    let out = openbench_run(dir.path(), &dev, "name=spar", "nodes=300", 3);
    let got = openbench_parse(&out);
    assert!(got.crashes > 0, "{out}");
    assert!(out.contains(" disconnects}"), "{out}");
    // fastchess's count of each engine's crashes and time-outs before `Finished match`.
    let block = format!(
        "\nPlayer: dev-dev\n  Timeouts: 0\n  Crashed: {}\n\nFinished match\n",
        got.crashes
    );
    assert!(out.contains(&block), "{block}\n{out}");
    assert_eq!(
        got,
        spar_record(&out, &dir.path().join("games.pgn")),
        "{out}"
    );
    assert_eq!(got.pentanomial.iter().sum::<u64>(), 3, "{out}");
}

#[test]
fn openbench_counts_time_losses() {
    let dir = tempfile::tempdir().unwrap();
    let slow = shim(dir.path(), "slow", "slow", 4);
    let dev = format!("cmd={}", slow.display());
    let out = openbench_run(dir.path(), &dev, "name=spar", "tc=1+0.01", 1);
    let got = openbench_parse(&out);
    assert!(got.timelosses > 0, "{out}");
    assert!(out.contains(" loses on time}"), "{out}");
    let block = format!("\nPlayer: dev-dev\n  Timeouts: {}\n", got.timelosses);
    assert!(out.contains(&block), "{block}\n{out}");
    assert_eq!(
        got,
        spar_record(&out, &dir.path().join("games.pgn")),
        "{out}"
    );
}
