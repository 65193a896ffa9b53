//! A test repository for `spar bisect` (and a server watching a branch): an engine whose
//! `make` writes a script `$(EXE)` that answers `bench` with a fixed `N nodes 1000 nps`
//! line and otherwise execs the spar under test as `spar uci WORDS`, the words those of
//! the repository's `engine.words` (its `#` lines are comments). Each commit after the
//! root changes a comment of `engine.words` (harmless: the engine plays the same); one,
//! the weak commit, adds `--setoption Eval=hce` (the hand-crafted evaluation, far weaker at
//! a node limit); a broken commit's Makefile fails.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// The bench every build prints and every commit's message states.
pub const BENCH: u64 = 4242;

/// What a test repository holds.
pub struct Repo {
    /// The commits' full hashes, the root first.
    pub shas: Vec<String>,
}

/// Runs git in `dir` as a test author; its stdout.
pub fn git_out(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The engine's script, with its words put in by `make`.
fn script() -> String {
    format!(
        "#!/bin/sh\nif [ \"$1\" = bench ]; then echo \"{BENCH} nodes 1000 nps\"; exit 0; fi\nexec {} uci @WORDS@\n",
        env!("CARGO_BIN_EXE_spar")
    )
}

/// The Makefile: `$(EXE)` is the script with the words of `engine.words` (comments out).
const MAKEFILE: &str = "EXE ?= eng\n$(EXE): engine.sh engine.words mk.sh\n\tsh mk.sh $(EXE)\n";
const MK: &str = "words=$(grep -v '^#' engine.words | tr '\\n' ' ')\nsed \"s|@WORDS@|$words|\" engine.sh > \"$1\"\nchmod +x \"$1\"\n";
const BROKEN: &str = "all:\n\t@echo 'engine.c:1: error: deliberate failure'\n\t@false\n";

/// Makes the repository in `dir` on branch `main`: the root, then commits `1..=n`; from
/// commit `weak` on the engine plays `Eval=hce`; the commits in `broken` do not build (the
/// next one builds again); a commit in `wrong_bench` states a bench its build does not
/// print. Every message states `Bench: N` (OpenBench's convention).
pub fn make_repo(
    dir: &Path,
    n: usize,
    weak: usize,
    broken: &[usize],
    wrong_bench: &[usize],
) -> Repo {
    std::fs::create_dir_all(dir).unwrap();
    git_out(dir, &["init", "--quiet", "--initial-branch=main"]);
    std::fs::write(dir.join("engine.sh"), script()).unwrap();
    std::fs::write(dir.join("mk.sh"), MK).unwrap();
    let mut shas = Vec::new();
    for i in 0..=n {
        let mut words = format!("# the engine's words, revision {i}\n");
        if i >= weak {
            words.push_str("--setoption Eval=hce\n");
        }
        std::fs::write(dir.join("engine.words"), words).unwrap();
        let make = if broken.contains(&i) {
            BROKEN
        } else {
            MAKEFILE
        };
        std::fs::write(dir.join("Makefile"), make).unwrap();
        git_out(dir, &["add", "."]);
        let subject = match i {
            0 => "the first engine".to_string(),
            i if i == weak => format!("commit {i}: a simpler evaluation"),
            i => format!("commit {i}: tidy the words"),
        };
        let bench = if wrong_bench.contains(&i) {
            BENCH + 1
        } else {
            BENCH
        };
        let msg = format!("{subject}\n\nBench: {bench}\n");
        git_out(dir, &["commit", "--quiet", "-m", &msg]);
        shas.push(git_out(dir, &["rev-parse", "HEAD"]).trim().to_string());
    }
    Repo { shas }
}

/// A place for the weak commit in `1..=n` from `seed` (printed by the caller), so that the
/// tests cover different places over time yet replay exactly.
pub fn weak_place(n: usize, seed: u64) -> usize {
    let mut x = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(0x2545_F491_4F6C_DD1D);
    x ^= x >> 31;
    1 + (x % n as u64) as usize
}
