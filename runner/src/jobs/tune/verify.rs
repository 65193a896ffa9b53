//! The verification SPRT that ends a tune: the tuned values against the start values, as
//! `spar sprt` arguments made from the tune's (checked before the tune's first game), run
//! on this machine or as a cluster run of its own.

use std::path::Path;

use super::args::{TuneArgs, VerifyArgs};
use super::setup::Setup;
use super::verdict::{read_verdict, verdict_line, verify_dir, verify_files, verify_json};
use crate::cli::{EngineArgs, RunArgs, SlurmArgs, DEFAULT_SPRT_BOUNDS};
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

/// The verification SPRT (tuned against start) of a tune as the match job's arguments,
/// without its output files and cluster options: both sides the tune's engine words (its
/// limit words replaced by `--verify-each`'s), one with `finals`, one with the start
/// values; the tune's book, adjudication and seed; the bounds and games of `--verify-*`.
pub(crate) fn verification(args: &TuneArgs, s: &Setup, finals: &[(String, i64)]) -> MatchArgs {
    let v = &args.verify;
    let words: Vec<String> = s.plan.engines[0]
        .words
        .iter()
        .filter(|w| !w.starts_with("name="))
        .filter(|w| v.verify_each.is_empty() || !is_limit(w))
        .cloned()
        .collect();
    let start = start_values(s);
    let engine = |name: &str, values: &[(String, i64)]| -> Vec<String> {
        std::iter::once(format!("name={name}"))
            .chain(words.iter().cloned())
            .chain(values.iter().map(|(n, x)| format!("option.{n}={x}")))
            .collect()
    };
    let (elo0, elo1) = DEFAULT_SPRT_BOUNDS;
    MatchArgs::sprt(
        EngineArgs {
            engines: vec![engine("tuned", finals), engine("start", &start)],
            each: v.verify_each.clone(),
        },
        v.verify_games,
        RunArgs {
            concurrency: None,
            seed: s.plan.seed,
            quiet: args.run.quiet,
        },
        args.book.clone(),
        args.adjudication.clone(),
        v.verify_elo0.unwrap_or(elo0),
        v.verify_elo1.unwrap_or(elo1),
    )
}

/// The start values of the tuned parameters, rounded as the engine takes them.
fn start_values(s: &Setup) -> Vec<(String, i64)> {
    s.params
        .iter()
        .map(|p| (p.name.clone(), p.start.round() as i64))
        .collect()
}

/// The verification of a local run as the match job's arguments: on this machine's threads,
/// its results in `CSV.verify.csv` (resumed) when the tune has `--csv`, its summary in `json`.
fn local_args(args: &TuneArgs, s: &Setup, finals: &[(String, i64)], json: &Path) -> MatchArgs {
    let mut m = verification(args, s, finals);
    m.run.concurrency = Some(s.plan.concurrency);
    if let Some(csv) = &args.csv {
        m.files.results = Some(verify_files(csv).results);
        m.files.resume = true;
    }
    m.files.json = Some(json.to_path_buf());
    m
}

/// The verification of a cluster tune as the match job's arguments: a cluster run in
/// `RUN_DIR/verify` with the tune's shards, CPUs and sbatch arguments, reattached when it
/// was started before; its summary in `RUN_DIR/verify.json`.
fn cluster_args(
    args: &TuneArgs,
    s: &Setup,
    dir: &Path,
    finals: &[(String, i64)],
    cpus: usize,
) -> MatchArgs {
    let vdir = verify_dir(dir);
    let mut m = verification(args, s, finals);
    m.slurm = SlurmArgs {
        slurm: true,
        run_dir: Some(vdir.clone()),
        shards: Some(args.slurm.shards.unwrap_or(SlurmArgs::DEFAULT_SHARDS)),
        cpus_per_shard: Some(cpus),
        sbatch_args: args.slurm.sbatch_args.clone(),
        plan_only: false,
    };
    m.files.json = Some(verify_json(dir));
    m.files.resume = Manifest::path(&vdir).exists();
    m
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Tune {
        #[command(flatten)]
        args: TuneArgs,
    }

    fn tune(words: &[String]) -> (TuneArgs, Setup) {
        let args =
            Tune::try_parse_from(std::iter::once("tune".to_string()).chain(words.iter().cloned()))
                .expect("tune words")
                .args;
        let s = super::super::setup::setup(&args).expect("setup");
        (args, s)
    }

    fn same(built: &MatchArgs, argv: &[String]) {
        let parsed = parse_sprt(argv).expect("parses");
        assert_eq!(
            serde_json::to_value(built).unwrap(),
            serde_json::to_value(&parsed).unwrap(),
            "{argv:?}"
        );
    }

    /// The built verification equals what `spar sprt` read of the argv the tune made.
    #[test]
    fn the_verification_is_the_sprt_the_argv_was() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_string_lossy().into_owned();
        std::fs::write(dir.path().join("b.epd"), "8/8/8/8/8/8/8/K1k5 w - - 0 1\n").unwrap();
        std::fs::write(dir.path().join("p.txt"), "rfp_margin, 70\n").unwrap();
        let finals = vec![
            ("rfp_margin".to_string(), -7),
            ("lmr_base".to_string(), 123),
        ];
        let plain = "--param rfp_margin --param lmr_base --each nodes=800 option.Hash=4 --seed 4"
            .to_string();
        let full = format!(
            "--param rfp_margin --param lmr_base --engine name=x depth=3 params={d}/p.txt \
             --each nodes=800 --verify-each movetime=50 tc=1+0.1 --verify-elo0 -1.5 \
             --verify-elo1 3 --verify-games 40 --book {d}/b.epd order=sequential \
             --resign movecount=3 score=500 --draw --maxmoves 60 --quiet \
             --seed 9 --concurrency 3 --csv {d}/t.csv --slurm --shards 5 \
             --sbatch-arg=--time=10 --sbatch-arg=-p --sbatch-arg=x"
        );
        for words in [plain, full] {
            let words: Vec<String> = words.split_whitespace().map(String::from).collect();
            let (args, s) = tune(&words);
            let start = start_values(&s);
            for values in [&finals[..], &start[..]] {
                let argv = verify_argv(&args, &s, values);
                same(&verification(&args, &s, values), &argv);
                // verify_local's words.
                let json = dir.path().join("v.json");
                let mut local = argv.clone();
                local.extend(["--concurrency".to_string(), s.plan.concurrency.to_string()]);
                if let Some(csv) = &args.csv {
                    local.push("--results".into());
                    local.push(verify_files(csv).results.to_string_lossy().into_owned());
                    local.push("--resume".into());
                }
                local.push("--json".into());
                local.push(json.to_string_lossy().into_owned());
                same(&local_args(&args, &s, values, &json), &local);
                // verify_cluster's words, new and reattached.
                for resume in [false, true] {
                    let run_dir = dir.path().join(format!("run{resume}"));
                    let vdir = verify_dir(&run_dir);
                    if resume {
                        std::fs::create_dir_all(&vdir).unwrap();
                        std::fs::write(Manifest::path(&vdir), "{}").unwrap();
                    }
                    let mut cluster = argv.clone();
                    cluster.extend([
                        "--slurm".to_string(),
                        "--run-dir".to_string(),
                        vdir.to_string_lossy().into_owned(),
                        "--shards".to_string(),
                        args.slurm
                            .shards
                            .unwrap_or(crate::cli::SlurmArgs::DEFAULT_SHARDS)
                            .to_string(),
                        "--cpus-per-shard".to_string(),
                        "7".to_string(),
                        "--json".to_string(),
                        verify_json(&run_dir).to_string_lossy().into_owned(),
                    ]);
                    for a in &args.slurm.sbatch_args {
                        cluster.push(format!("--sbatch-arg={a}"));
                    }
                    if resume {
                        cluster.push("--resume".into());
                    }
                    same(&cluster_args(&args, &s, &run_dir, values, 7), &cluster);
                }
            }
        }
    }
}
