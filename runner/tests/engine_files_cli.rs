//! Issue 33, class 1: no output of any command may be a file its engines run or are
//! handed: the `cmd=` binary (a path, relative to `dir=`, or a name found on `PATH`), an
//! `option.NAME=` file (`EvalFile`, a book), an `args=` file, a table file of
//! `option.SyzygyPath=` or `--tb`, or a build in the cache of `git=` / `features=` engines.
//! Each is refused before any work (exit 2, naming both flags), and the input is unchanged.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

fn words(s: &str) -> Vec<String> {
    s.split_whitespace().map(String::from).collect()
}

/// What every engine file holds before the runs: it must hold it after them.
const PRECIOUS: &[u8] = b"#!/bin/sh\n# a precious engine: must survive\n";

/// The files [`setup`] makes, which no output may touch.
const ENGINE_FILES: [&str; 5] = [
    "eng",
    "net.nnue",
    "book.bin",
    "tb/KRvK.rtbw",
    "tb/KRvK.rtbz",
];

/// A directory with an "engine" `eng` (executable), a network, a book for an external
/// engine, and a table directory `tb` with two table files.
fn setup() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for name in ENGINE_FILES {
        let path = d.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, PRECIOUS).unwrap();
    }
    let chmod = Command::new("chmod")
        .arg("+x")
        .arg(d.join("eng"))
        .status()
        .unwrap();
    assert!(chmod.success());
    dir
}

/// Runs `args` in `dir` (with `dir` first on `PATH`) and asserts a usage error naming
/// `needle` and "give them different names"; then that no engine file changed.
fn refused(dir: &Path, args: &[String], needle: &str) {
    refused_in(dir, dir, args, needle);
}

/// [`refused`], run in `cwd`.
fn refused_in(dir: &Path, cwd: &Path, args: &[String], needle: &str) {
    let path = format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let o = spar()
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .output()
        .unwrap();
    usage_error(&o, needle);
    assert!(
        stderr(&o).contains("give them different names"),
        "{args:?}: {}",
        stderr(&o)
    );
    for name in ENGINE_FILES {
        assert_eq!(bytes(&dir.join(name)), PRECIOUS, "{args:?} changed {name}");
    }
}

#[test]
fn tune_out_onto_the_engine_binary_is_refused() {
    // The example of the issue: the whole tune played, then the engine replaced.
    let dir = setup();
    std::fs::write(
        dir.path().join("spsa.txt"),
        "rfp_margin, int, 75, 0, 200, 10, 0.002\n",
    )
    .unwrap();
    refused(
        dir.path(),
        &words(
            "tune --params spsa.txt --engine cmd=./eng --each nodes=300 --iterations 1 --out ./eng",
        ),
        "--out ./eng is also the --engine cmd= file",
    );
    // The same binary through dir= (a relative cmd= is found there) and through PATH.
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    refused(
        dir.path(),
        &words("tune --params spsa.txt --engine cmd=../eng dir=sub --each nodes=300 --iterations 1 --out eng"),
        "--out eng is also the --engine cmd= file",
    );
    refused_in(
        dir.path(),
        &sub,
        &words("tune --params ../spsa.txt --engine cmd=eng --each nodes=300 --iterations 1 --out ../eng"),
        "--out ../eng is also the --engine cmd= file",
    );
}

#[test]
fn match_and_fastchess_outputs_onto_engine_files_are_refused() {
    let dir = setup();
    let m = |opt: &str, out: &str| {
        format!(
            "match --engine name=a {opt} --engine name=b --each nodes=300 --games 2 --quiet {out}"
        )
    };
    let cases = [
        (
            m("option.EvalFile=net.nnue", "--pgnout net.nnue"),
            "--pgnout net.nnue is also the --engine option.EvalFile= file",
        ),
        (
            m("option.SyzygyPath=tb", "--results tb/KRvK.rtbz"),
            "--results tb/KRvK.rtbz is also the --engine option.SyzygyPath= file",
        ),
        (
            m("", "--tb tb --json tb/KRvK.rtbw"),
            "--json tb/KRvK.rtbw is also the --tb file",
        ),
        (
            "match --engine cmd=./eng option.OwnBook=book.bin --engine name=b --each nodes=300 \
             --games 2 --json book.bin"
                .to_string(),
            "--json book.bin is also the --engine option.OwnBook= file",
        ),
        (
            "match --engine cmd=./eng args=--book=book.bin --engine name=b --each nodes=300 \
             --games 2 --pgnout book.bin"
                .to_string(),
            "--pgnout book.bin is also the --engine args= file",
        ),
        (
            "fastchess -engine cmd=./eng name=a -engine name=b -each nodes=300 tc=inf \
             -rounds 1 -pgnout file=eng"
                .to_string(),
            "--pgnout eng is also the --engine cmd= file",
        ),
        (
            "cutechess -engine cmd=eng name=a -engine name=b -each nodes=300 tc=inf \
             -games 2 -repeat -pgnout ./eng"
                .to_string(),
            "--pgnout ./eng is also the --engine cmd= file",
        ),
    ];
    for (args, needle) in cases {
        refused(dir.path(), &words(&args), needle);
    }
}

#[test]
fn datagen_and_tune_outputs_onto_tables_or_nets_are_refused() {
    let dir = setup();
    let cases = [
        (
            "datagen --games 1 --nodes 300 --tb tb --out tb/KRvK.rtbw",
            "--out tb/KRvK.rtbw is also the --tb file",
        ),
        (
            "datagen --games 1 --nodes 300 --eval-file net.nnue --out net.nnue",
            "--out net.nnue is also the --eval-file file",
        ),
        (
            "tune --param rfp_margin --each nodes=300 option.SyzygyPath=tb --iterations 1 \
             --csv tb/KRvK.rtbw",
            "--csv tb/KRvK.rtbw is also the --engine option.SyzygyPath= file",
        ),
    ];
    for (args, needle) in cases {
        refused(dir.path(), &words(args), needle);
    }
}

/// The cache of built engines (`target/spar-builds` of the repository spar runs in).
fn build_cache() -> PathBuf {
    let out = Command::new("git")
        .args(["rev-parse", "--show-toplevel"])
        .output()
        .expect("git");
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
        .join("target")
        .join("spar-builds")
}

#[test]
fn no_output_lands_in_the_cache_of_built_engines() {
    let cache = build_cache();
    let inside = cache.join("0123-default").join("spar");
    for args in [
        format!(
            "match --engine features=pext --engine name=b --each nodes=300 --games 2 --json {}",
            inside.display()
        ),
        format!(
            "tune --engine git=HEAD --param rfp_margin --each nodes=300 --iterations 1 --out {}",
            cache.join("notes.txt").display()
        ),
    ] {
        let o = run(&words(&args));
        usage_error(&o, "where spar keeps the engines it builds");
        assert!(!inside.exists() && !cache.join("notes.txt").exists());
    }
}

#[test]
fn status_html_onto_a_file_of_the_run_is_refused() {
    // `spar status FILE --html PAGE`: the page may be none of the files the run's engines
    // were handed (read from its record), whether the run was a match or a tune.
    let Some(tables) = syzygy_tables("status_html_onto_a_file_of_the_run") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir(d.join("tb")).unwrap();
    for name in ["KRvK.rtbw", "KRvK.rtbz"] {
        std::fs::copy(tables.join(name), d.join("tb").join(name)).unwrap();
    }
    let before = [
        bytes(&d.join("tb/KRvK.rtbw")),
        bytes(&d.join("tb/KRvK.rtbz")),
    ];
    ok(&run_in(
        d,
        &words(
            "match --engine name=a --engine name=b --each nodes=300 --games 2 --quiet --tb tb \
             --results r.csv",
        ),
    ));
    ok(&run_in(
        d,
        &words(
            "tune --param rfp_margin --each nodes=300 option.SyzygyPath=tb --iterations 1 \
             --pairs-per-iteration 1 --no-verify --quiet --csv t.csv",
        ),
    ));
    for (args, needle) in [
        (
            "status r.csv --html tb/KRvK.rtbz",
            "--html tb/KRvK.rtbz is also the --tb file",
        ),
        (
            "status t.csv --html tb/KRvK.rtbw",
            "--html tb/KRvK.rtbw is also the --engine option.SyzygyPath= file",
        ),
    ] {
        usage_error(&run_in(d, &words(args)), needle);
        assert_eq!(
            [
                bytes(&d.join("tb/KRvK.rtbw")),
                bytes(&d.join("tb/KRvK.rtbz"))
            ],
            before,
            "{args}"
        );
    }
    ok(&run_in(d, &words("status r.csv --html page.html")));
    assert!(d.join("page.html").is_file());
}
