//! `spar train` as a user runs it: a net the engine's format reads, kill -9 and `--resume`
//! to the same weights, and bad input.

mod common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;
use data::training::{text, viriformat, ScoredMove, TrainingGame};
use engine::nnue::network::Network;
use engine::position::Position;
use engine::rng::SplitMix64;
use engine::types::{Color, GameResult, PieceType};

/// Random games scored by a material count (White's view), in viriformat.
fn games(n: usize, seed: u64) -> Vec<TrainingGame> {
    let mut rng = SplitMix64::new(seed);
    let values = [100, 300, 320, 500, 900, 0];
    (0..n)
        .map(|_| {
            let start = Position::startpos();
            let mut pos = start.clone();
            let mut moves = Vec::new();
            for _ in 0..80 {
                let legal = pos.legal_moves();
                let Some(&mv) = legal
                    .as_slice()
                    .get(rng.below(legal.as_slice().len().max(1)))
                else {
                    break;
                };
                let material: i32 = PieceType::ALL
                    .iter()
                    .zip(values)
                    .map(|(&k, v)| {
                        v * (pos.colored(Color::White, k).count() as i32
                            - pos.colored(Color::Black, k).count() as i32)
                    })
                    .sum();
                moves.push(ScoredMove {
                    mv,
                    score: material as i16,
                });
                pos.play_mut(mv);
            }
            TrainingGame {
                start,
                moves,
                result: GameResult::Draw,
            }
        })
        .collect()
}

fn write_vf(path: &Path, n: usize, seed: u64) {
    let mut bytes = Vec::new();
    for g in games(n, seed) {
        viriformat::encode_game(&g, &mut bytes);
    }
    std::fs::write(path, bytes).unwrap();
}

fn write_text(path: &Path, n: usize, seed: u64) {
    let mut out = String::new();
    for g in games(n, seed) {
        for p in g.positions() {
            let l = &p.labelled;
            out += &text::format_line(&l.position, l.score, l.result);
            out.push('\n');
        }
    }
    std::fs::write(path, out).unwrap();
}

struct Files {
    _dir: tempfile::TempDir,
    data: PathBuf,
    validation: PathBuf,
    dir: PathBuf,
}

fn files() -> Files {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("train.vf");
    let validation = dir.path().join("val.txt");
    write_vf(&data, 60, 1);
    write_text(&validation, 10, 2);
    Files {
        dir: dir.path().to_path_buf(),
        _dir: dir,
        data,
        validation,
    }
}

fn train_args<'a>(f: &'a Files, out: &'a Path, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "train",
        "--data",
        path_str(&f.data),
        "--validation",
        path_str(&f.validation),
        "--out",
        path_str(out),
        "--hidden",
        "16",
        "--batch",
        "256",
        "--lr",
        "0.01",
        "--threads",
        "1",
        "--quiet",
    ];
    args.extend_from_slice(extra);
    args
}

#[test]
fn train_writes_a_net_the_engine_reads() {
    let f = files();
    let out = f.dir.join("net.nnue");
    let text = ok(&run(&train_args(&f, &out, &["--epochs", "2"])));
    assert!(text.contains("data: "), "{text}");
    assert!(
        text.contains("with a capture or promotion played"),
        "{text}"
    );
    assert!(text.contains("epoch 2/2  train loss"), "{text}");
    assert!(text.contains("validation loss"), "{text}");
    assert!(text.contains("quantised vs float on"), "{text}");
    let net = Network::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(net.hidden, 16);
    assert!(with_ckpt(&out).exists());
    // The checkpoint of a finished run is kept: a new run must say --resume or delete it.
    usage_error(
        &run(&train_args(&f, &out, &["--epochs", "2"])),
        "add --resume",
    );
}

#[test]
fn bucketed_nets_train_load_and_a_bad_layout_is_refused() {
    let f = files();
    let out = f.dir.join("kb.nnue");
    let buckets = [
        "--epochs",
        "2",
        "--king-buckets",
        "4",
        "--output-buckets",
        "8",
    ];
    let text = ok(&run(&train_args(&f, &out, &buckets)));
    assert!(
        text.contains("(hidden 16, 4 king buckets × 8 output buckets)"),
        "{text}"
    );
    let net = Network::from_bytes(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(net.layout.to_string(), "4 king buckets × 8 output buckets");
    // The engine searches with it.
    let bench = ok(&run(&[
        "bench",
        "--depth",
        "4",
        "--eval-file",
        path_str(&out),
    ]));
    assert!(bench.contains(" nodes "), "{bench}");
    // Resuming with other buckets is refused naming the option.
    usage_error(
        &run(&train_args(
            &f,
            &out,
            &["--epochs", "2", "--king-buckets", "2", "--resume"],
        )),
        "--king-buckets 4",
    );
    // A layout this spar cannot run, and a truncated bucketed file, are one-line refusals.
    usage_error(
        &run(&train_args(
            &f,
            &f.dir.join("x.nnue"),
            &["--king-buckets", "3"],
        )),
        "layout 3 king buckets × 1 output bucket, which this spar cannot run",
    );
    let short = f.dir.join("short.nnue");
    let bytes = std::fs::read(&out).unwrap();
    std::fs::write(&short, &bytes[..bytes.len() - 100]).unwrap();
    usage_error(
        &run(&["bench", "--eval-file", path_str(&short)]),
        "4 king buckets × 8 output buckets",
    );
}

fn with_ckpt(out: &Path) -> PathBuf {
    let mut s = out.as_os_str().to_owned();
    s.push(".ckpt");
    PathBuf::from(s)
}

#[test]
fn train_kill_and_resume_end_with_the_same_net() {
    let f = files();
    let whole = f.dir.join("whole.nnue");
    ok(&run(&train_args(&f, &whole, &["--epochs", "3"])));
    let cut = f.dir.join("cut.nnue");
    let o = spar()
        .args(train_args(&f, &cut, &["--epochs", "3"]))
        .env("SPAR_TEST_KILL_AT", "2")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(137), "{}", stderr(&o));
    assert!(!cut.exists());
    let text = ok(&run(&train_args(&f, &cut, &["--epochs", "3", "--resume"])));
    assert!(text.contains("resuming after epoch 2 of 3"), "{text}");
    assert!(!text.contains("epoch 2/3"), "{text}");
    assert_eq!(bytes(&cut), bytes(&whole));
    assert_eq!(bytes(&with_ckpt(&cut)), bytes(&with_ckpt(&whole)));
    // A checkpoint continues only its own run.
    let mut wider = train_args(&f, &cut, &["--epochs", "3", "--resume"]);
    let at = wider.iter().position(|a| *a == "--hidden").unwrap();
    wider[at + 1] = "32";
    usage_error(&run(&wider), "--hidden 16, not 32");
    usage_error(
        &run(&train_args(&f, &cut, &["--epochs", "4", "--resume"])),
        "--epochs 3, this run has 4",
    );
}

#[test]
fn train_ctrl_c_keeps_the_last_checkpoint() {
    let f = files();
    let out = f.dir.join("long.nnue");
    let child = spar()
        .args(train_args(&f, &out, &["--epochs", "1000000"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let ckpt = with_ckpt(&out);
    let start = Instant::now();
    while !ckpt.exists() {
        assert!(start.elapsed() < Duration::from_secs(60), "no checkpoint");
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = interrupted(child);
    let text = stdout(&o);
    assert!(text.contains("interrupted in epoch"), "{text}");
    assert!(text.contains("`--resume` continues after epoch"), "{text}");
    assert!(!out.exists());
    // The checkpoint is whole: a resume with other options reads it and names the difference.
    usage_error(
        &run(&train_args(&f, &out, &["--epochs", "2", "--resume"])),
        "--epochs 1000000, this run has 2",
    );
}

#[test]
fn train_bad_input_is_one_line_naming_the_fix() {
    let f = files();
    let out = f.dir.join("n.nnue");
    let o = path_str(&out);
    let d = path_str(&f.data);
    let missing = f.dir.join("missing.vf");
    let corrupt = f.dir.join("corrupt.vf");
    let mut b = std::fs::read(&f.data).unwrap();
    b.truncate(b.len() - 3);
    std::fs::write(&corrupt, &b).unwrap();
    let garbage = f.dir.join("garbage.bin");
    std::fs::write(&garbage, [0xffu8; 100]).unwrap();
    let bad_text = f.dir.join("bad.txt");
    std::fs::write(&bad_text, "8/8/8/8/8/8/8/8 w - - 0 1 | 10 | 0.5\n").unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["train", "--out", o], "--data: no training files"),
        (
            vec!["train", "--data", path_str(&missing), "--out", o],
            "missing.vf",
        ),
        (
            vec!["train", "--data", path_str(&corrupt), "--out", o],
            "truncated game record",
        ),
        (
            vec!["train", "--data", path_str(&garbage), "--out", o],
            "garbage.bin: byte 0",
        ),
        (
            vec!["train", "--data", path_str(&bad_text), "--out", o],
            "bad.txt: byte 0 (line 1)",
        ),
        (
            vec!["train", "--data", d, "--out", o, "--hidden", "20"],
            "multiple of 16",
        ),
        (
            vec!["train", "--data", d, "--out", o, "--hidden", "4096"],
            "--hidden 4096",
        ),
        (
            vec!["train", "--data", d, "--out", o, "--epochs", "0"],
            "--epochs 0",
        ),
        (
            vec!["train", "--data", d, "--out", o, "--batch", "0"],
            "--batch 0",
        ),
        (
            vec!["train", "--data", d, "--out", o, "--wdl", "1.5"],
            "--wdl 1.5",
        ),
    ];
    usage_errors(&cases);
    assert!(!out.exists());
}

/// Issue 24, class 14: `--batch` is bounded by memory (before the data is read) and by the
/// positions left to train on; each is one line and exit 2, never an abort. Without
/// `--batch`, a data set smaller than the default batch is one batch, as before.
#[test]
fn the_batch_is_bounded_by_memory_and_by_the_data() {
    let f = files();
    let out = f.dir.join("b.nnue");
    let o = path_str(&out);
    let d = path_str(&f.data);
    usage_errors(&[
        (
            vec![
                "train",
                "--data",
                d,
                "--out",
                o,
                "--batch",
                "18446744073709551615",
            ],
            "MiB of memory",
        ),
        (
            vec!["train", "--data", d, "--out", o, "--batch", "1000000"],
            "positions left to train on in --data: give at most",
        ),
    ]);
    assert!(!out.exists());
    let refused = run(&["train", "--data", d, "--out", o, "--batch", "1000000"]);
    assert!(
        refused.stdout.is_empty(),
        "the refusal is the only output: {}",
        stdout(&refused)
    );
    let text = ok(&run(&[
        "train",
        "--data",
        d,
        "--out",
        o,
        "--hidden",
        "16",
        "--epochs",
        "1",
        "--threads",
        "1",
        "--quiet",
    ]));
    assert!(text.contains("wrote"), "{text}");
}

/// Issue 24, class 8: one trainer per `--out`: a second `spar train` on it (with or
/// without `--resume`) is refused before reading any data while the first runs; a
/// `kill -9`'d trainer leaves no lock, so `--resume` goes on at once.
#[test]
fn a_second_trainer_on_the_same_out_is_refused() {
    let f = files();
    let out = f.dir.join("l.nnue");
    let ckpt = f.dir.join("l.nnue.ckpt");
    let long = train_args(&f, &out, &["--epochs", "1000000"]);
    let mut first = spar()
        .args(&long)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while !ckpt.exists() {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "no checkpoint written"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    for extra in [&["--epochs", "1000000", "--resume"][..], &["--epochs", "1"]] {
        let o = run(&train_args(&f, &out, extra));
        usage_error(&o, "--out");
        assert!(
            stderr(&o).contains("in use by another spar (pid"),
            "{}",
            stderr(&o)
        );
    }
    assert!(
        first.try_wait().unwrap().is_none(),
        "the first trainer ended"
    );
    first.kill().unwrap(); // SIGKILL
    first.wait().unwrap();
    let before = std::fs::metadata(&ckpt).unwrap().modified().unwrap();
    let resumed = spar()
        .args(train_args(&f, &out, &["--epochs", "1000000", "--resume"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while std::fs::metadata(&ckpt).unwrap().modified().unwrap() == before {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "the resume wrote no checkpoint"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = interrupted(resumed);
    assert!(
        stdout(&o).contains("resuming after epoch"),
        "{}",
        stdout(&o)
    );
}
