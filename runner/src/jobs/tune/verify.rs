//! The verification SPRT that ends a tune: the tuned values against the start values, as
//! `spar sprt` arguments made from the tune's (checked before the tune's first game), run
//! on this machine or as a cluster run of its own.

use std::path::Path;

use super::args::{TuneArgs, VerifyArgs};
use super::setup::Setup;
use super::verdict::{read_verdict, verdict_line, verify_dir, verify_files, verify_json};
use crate::cluster::manifest::Manifest;
use crate::error::{CliError, CliResult};
use crate::files::run_record;
use crate::jobs::matches::args::MatchArgs;
use crate::stdout;

/// Engine words that set a limit (replaced by `--verify-each`'s).
fn is_limit(word: &str) -> bool {
    ["nodes=", "depth=", "movetime=", "st=", "tc="]
        .iter()
        .any(|k| word.starts_with(k))
}

/// The `spar sprt` arguments of the verification (tuned against start) of a tune, without
/// its output files and cluster options.
pub(crate) fn verify_argv(args: &TuneArgs, s: &Setup, finals: &[(String, i64)]) -> Vec<String> {
    let v = &args.verify;
    let words: Vec<String> = s.plan.engines[0]
        .words
        .iter()
        .filter(|w| !w.starts_with("name="))
        .filter(|w| v.verify_each.is_empty() || !is_limit(w))
        .cloned()
        .collect();
    let start: Vec<(String, i64)> = s
        .params
        .iter()
        .map(|p| (p.name.clone(), p.start.round() as i64))
        .collect();
    let mut argv: Vec<String> = vec!["sprt".into()];
    for (name, values) in [("tuned", finals), ("start", &start[..])] {
        argv.push("--engine".into());
        argv.push(format!("name={name}"));
        argv.extend(words.iter().cloned());
        argv.extend(values.iter().map(|(n, x)| format!("option.{n}={x}")));
    }
    if !v.verify_each.is_empty() {
        argv.push("--each".into());
        argv.extend(v.verify_each.iter().cloned());
    }
    if let Some(b) = &args.book.book {
        argv.push("--book".into());
        argv.extend(b.iter().cloned());
    }
    let a = &args.adjudication;
    for (flag, w) in [
        ("--resign", &a.resign),
        ("--draw", &a.draw),
        ("--tb", &a.tb),
    ] {
        if let Some(w) = w {
            argv.push(flag.into());
            argv.extend(w.iter().cloned());
        }
    }
    if let Some(m) = a.maxmoves {
        argv.extend(["--maxmoves".to_string(), m.to_string()]);
    }
    argv.extend([
        "--seed".to_string(),
        s.plan.seed.to_string(),
        "--elo0".to_string(),
        v.verify_elo0.unwrap_or(0.0).to_string(),
        "--elo1".to_string(),
        v.verify_elo1.unwrap_or(5.0).to_string(),
    ]);
    if let Some(g) = v.verify_games {
        argv.extend(["--games".to_string(), g.to_string()]);
    }
    if args.run.quiet {
        argv.push("--quiet".into());
    }
    argv
}

/// `spar sprt`'s arguments, parsed.
#[derive(clap::Parser, Debug)]
#[command(name = "spar")]
struct SprtCommand {
    #[command(subcommand)]
    sprt: SprtSub,
}

#[derive(clap::Subcommand, Debug)]
enum SprtSub {
    Sprt(MatchArgs),
}

/// Runs `spar sprt` with these arguments (without the program name).
pub(crate) fn run_sprt(argv: &[String]) -> CliResult {
    crate::jobs::matches::run(parse_sprt(argv)?, true, None)
}

/// Checks the verification SPRT's options (`--verify-*` with the tune's engine, book and
/// adjudication) before the tune's first game, as the SPRT at its end will read them: the
/// same arguments with the start values where the tuned ones will be (both lie in every
/// parameter's range). Nothing to check with `--no-verify` or `--probe`.
pub(crate) fn check_verification(args: &TuneArgs, s: &Setup) -> CliResult {
    if args.verify.no_verify || args.probe {
        return Ok(());
    }
    let start: Vec<(String, i64)> = s
        .params
        .iter()
        .map(|p| (p.name.clone(), p.start.round() as i64))
        .collect();
    let parsed = parse_sprt(&verify_argv(args, s, &start))?;
    crate::jobs::matches::args::check(&parsed, true).map_err(|e| {
        CliError::usage(format!(
            "the verification SPRT's options: {} (or --no-verify to skip it)",
            verify_words(&e.message, &args.verify)
        ))
    })
}

/// A message of `spar sprt` in the words of the tune's options: the SPRT's bounds are
/// `--verify-elo0/--verify-elo1`, its engine words `--verify-each`'s, its `--games`
/// `--verify-games`.
fn verify_words(message: &str, v: &VerifyArgs) -> String {
    let (head, rest) = message.split_once(": ").unwrap_or(("", message));
    let head = if head.starts_with("SPRT ") {
        format!(
            "--verify-elo0 {} --verify-elo1 {}",
            v.verify_elo0.unwrap_or(0.0),
            v.verify_elo1.unwrap_or(5.0)
        )
    } else if head.starts_with("--engine ") && !v.verify_each.is_empty() {
        format!("--verify-each {}", v.verify_each.join(" "))
    } else {
        head.replace("--games", "--verify-games")
    };
    let rest = rest.replace("--games", "--verify-games");
    if head.is_empty() {
        rest
    } else {
        format!("{head}: {rest}")
    }
}

/// `spar sprt`'s arguments (without the program name), parsed.
fn parse_sprt(argv: &[String]) -> CliResult<MatchArgs> {
    use clap::Parser;
    let parsed = SprtCommand::try_parse_from(
        std::iter::once("spar".to_string()).chain(argv.iter().cloned()),
    )
    .map_err(|e| {
        let text = e.to_string();
        CliError::usage(format!(
            "the verification SPRT's options: {}",
            text.lines()
                .next()
                .unwrap_or_default()
                .trim_start_matches("error: ")
        ))
    })?;
    let SprtSub::Sprt(args) = parsed.sprt;
    Ok(args)
}

/// The verification of a local run: an SPRT of the tuned values against the start values
/// on this machine; returns its summary.
pub(super) fn verify_local(
    args: &TuneArgs,
    s: &Setup,
    finals: &[(String, i64)],
) -> CliResult<Option<serde_json::Value>> {
    let mut argv = verify_argv(args, s, finals);
    argv.extend(["--concurrency".to_string(), s.plan.concurrency.to_string()]);
    let scratch;
    let json = match &args.csv {
        Some(csv) => {
            let f = verify_files(csv);
            argv.push("--results".into());
            argv.push(f.results.to_string_lossy().into_owned());
            argv.push("--resume".into());
            f.json
        }
        None => {
            scratch = tempfile::tempdir().map_err(|e| {
                CliError::failure(format!("cannot make a temporary directory: {e}"))
            })?;
            scratch.path().join("verify.json")
        }
    };
    argv.push("--json".into());
    argv.push(json.to_string_lossy().into_owned());
    if !args.run.quiet {
        eprintln!(
            "\nVerifying: SPRT [{}, {}] of the tuned values against the start values (--no-verify skips it)",
            args.verify.verify_elo0.unwrap_or(0.0),
            args.verify.verify_elo1.unwrap_or(5.0)
        );
    }
    stdout::print("\n")?;
    run_sprt(&argv)?;
    let verdict = read_verdict(&json);
    if let Some(v) = &verdict {
        stdout::print(&format!("{}\n", verdict_line(v)))?;
    }
    Ok(verdict)
}

/// The verification SPRT of a cluster tune: `spar sprt --slurm --run-dir RUN_DIR/verify`
/// with the tune's shards and CPUs, reattached when it was started before; its verdict goes
/// into the tune's run record (with --csv) and status.
pub(super) fn verify_cluster(
    args: &TuneArgs,
    s: &Setup,
    dir: &Path,
    finals: &[(String, i64)],
    cpus: usize,
) -> CliResult {
    let vdir = verify_dir(dir);
    let json = verify_json(dir);
    let mut argv = verify_argv(args, s, finals);
    argv.extend([
        "--slurm".to_string(),
        "--run-dir".to_string(),
        vdir.to_string_lossy().into_owned(),
        "--shards".to_string(),
        args.slurm
            .shards
            .unwrap_or(crate::cli::SlurmArgs::DEFAULT_SHARDS)
            .to_string(),
        "--cpus-per-shard".to_string(),
        cpus.to_string(),
        "--json".to_string(),
        json.to_string_lossy().into_owned(),
    ]);
    for a in &args.slurm.sbatch_args {
        argv.push(format!("--sbatch-arg={a}"));
    }
    if Manifest::path(&vdir).exists() {
        argv.push("--resume".into());
    }
    if !args.run.quiet {
        eprintln!(
            "\nVerifying: SPRT [{}, {}] of the tuned values against the start values in {} (--no-verify skips it)",
            args.verify.verify_elo0.unwrap_or(0.0),
            args.verify.verify_elo1.unwrap_or(5.0),
            vdir.display()
        );
    }
    stdout::print("\n")?;
    run_sprt(&argv)?;
    if let Some(v) = read_verdict(&json) {
        stdout::print(&format!("{}\n", verdict_line(&v)))?;
        if let Some(csv) = &args.csv {
            let mut extra = serde_json::Map::new();
            extra.insert("verify".into(), v);
            run_record::write("--csv", csv, "tune", &s.fields, extra)?;
        }
    }
    Ok(())
}
