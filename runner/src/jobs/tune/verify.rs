//! The verification SPRT that ends a tune: the tuned values against the start values, a
//! match job whose arguments are made from the tune's (checked before the tune's first
//! game), run on this machine or as a cluster run of its own.

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

/// The verification SPRT (tuned against start) of a tune as the match job's arguments,
/// without its output files and cluster options: both sides the tune's engine words (its
/// limit words replaced by `--verify-each`'s), one with `finals`, one with the start
/// values; the tune's book, adjudication and seed; the bounds and games of `--verify-*`.
fn verification(args: &TuneArgs, s: &Setup, finals: &[(String, i64)]) -> MatchArgs {
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

/// Checks the verification SPRT's options (`--verify-*` with the tune's engine, book and
/// adjudication) before the tune's first game, as the SPRT at its end will read them: the
/// same match job with the start values where the tuned ones will be (both lie in every
/// parameter's range). Nothing to check with `--no-verify` or `--probe`.
pub(crate) fn check_verification(args: &TuneArgs, s: &Setup) -> CliResult {
    if args.verify.no_verify || args.probe {
        return Ok(());
    }
    let verification = verification(args, s, &start_values(s));
    crate::jobs::matches::args::check(&verification, true).map_err(|e| {
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

/// The verification of a local run: an SPRT of the tuned values against the start values
/// on this machine; returns its summary.
pub(super) fn verify_local(
    args: &TuneArgs,
    s: &Setup,
    finals: &[(String, i64)],
) -> CliResult<Option<serde_json::Value>> {
    let scratch;
    let json = match &args.csv {
        Some(csv) => verify_files(csv).json,
        None => {
            scratch = tempfile::tempdir().map_err(|e| {
                CliError::failure(format!("cannot make a temporary directory: {e}"))
            })?;
            scratch.path().join("verify.json")
        }
    };
    let verification = local_args(args, s, finals, &json);
    if !args.run.quiet {
        eprintln!(
            "\nVerifying: SPRT [{}, {}] of the tuned values against the start values (--no-verify skips it)",
            args.verify.verify_elo0.unwrap_or(0.0),
            args.verify.verify_elo1.unwrap_or(5.0)
        );
    }
    stdout::print("\n")?;
    crate::jobs::matches::run(verification, true, None)?;
    let verdict = read_verdict(&json);
    if let Some(v) = &verdict {
        stdout::print(&format!("{}\n", verdict_line(v)))?;
    }
    Ok(verdict)
}

/// The verification SPRT of a cluster tune: a cluster SPRT of its own in `RUN_DIR/verify`
/// with the tune's shards and CPUs, reattached when it was started before; its verdict goes
/// into the tune's run record (with --csv) and status.
pub(super) fn verify_cluster(
    args: &TuneArgs,
    s: &Setup,
    dir: &Path,
    finals: &[(String, i64)],
    cpus: usize,
) -> CliResult {
    let json = verify_json(dir);
    let verification = cluster_args(args, s, dir, finals, cpus);
    if !args.run.quiet {
        eprintln!(
            "\nVerifying: SPRT [{}, {}] of the tuned values against the start values in {} (--no-verify skips it)",
            args.verify.verify_elo0.unwrap_or(0.0),
            args.verify.verify_elo1.unwrap_or(5.0),
            verify_dir(dir).display()
        );
    }
    stdout::print("\n")?;
    crate::jobs::matches::run(verification, true, None)?;
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
    use crate::summary::OutputFormat;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Tune {
        #[command(flatten)]
        args: TuneArgs,
    }

    fn tune(words: &str) -> (TuneArgs, Setup) {
        let args = Tune::try_parse_from(std::iter::once("tune").chain(words.split_whitespace()))
            .expect("tune words")
            .args;
        let s = super::super::setup::setup(&args).expect("setup");
        (args, s)
    }

    fn strings(words: &str) -> Vec<String> {
        words.split_whitespace().map(String::from).collect()
    }

    /// What `spar sprt` left at its defaults: no output file, no cluster, cutechess output,
    /// the failure policy's and the SPRT's rates and model.
    fn assert_defaults(m: &MatchArgs) {
        assert_eq!(m.output, OutputFormat::Cutechess);
        assert_eq!(m.failure.stall_timeout, 10.0);
        assert!(!m.failure.recover && !m.failure.no_recover);
        assert_eq!((m.sprt.alpha, m.sprt.beta), (0.05, 0.05));
        assert_eq!(m.sprt.model, "normalized");
        assert!(m.files.pgnout.is_none() && m.files.dump_positions.is_none());
        assert!(m.game_lines.is_none());
    }

    /// The verification of a tune with the defaults: the tune's engine words (its limit
    /// kept) on both sides, bounds [0, 5], no game limit, the built-in book.
    #[test]
    fn a_plain_tune_verifies_with_its_own_words_and_the_default_bounds() {
        let (args, s) =
            tune("--param rfp_margin --param lmr_base --each nodes=800 option.Hash=4 --seed 4");
        let start = start_values(&s);
        let finals = vec![
            ("rfp_margin".to_string(), -7),
            ("lmr_base".to_string(), 123),
        ];
        let m = verification(&args, &s, &finals);
        assert_defaults(&m);
        let r = |v: &(String, i64)| format!("option.{}={}", v.0, v.1);
        assert_eq!(
            m.engines.engines,
            vec![
                strings(
                    "name=tuned nodes=800 option.Hash=4 option.rfp_margin=-7 option.lmr_base=123"
                ),
                [
                    strings("name=start nodes=800 option.Hash=4"),
                    start.iter().map(r).collect()
                ]
                .concat(),
            ]
        );
        assert!(m.engines.each.is_empty());
        assert_eq!((m.sprt.elo0, m.sprt.elo1), (Some(0.0), Some(5.0)));
        assert_eq!(m.games, None);
        assert_eq!(
            (m.run.concurrency, m.run.seed, m.run.quiet),
            (None, 4, false)
        );
        assert!(m.book.book.is_none());
        let a = &m.adjudication;
        assert!(a.resign.is_none() && a.draw.is_none() && a.tb.is_none() && a.maxmoves.is_none());
        assert!(m.files.results.is_none() && m.files.json.is_none() && !m.files.resume);
        assert!(!m.slurm.slurm);
        // Without --csv: only the summary, on this machine's threads.
        let json = Path::new("/x/v.json");
        let local = local_args(&args, &s, &finals, json);
        assert_eq!(local.run.concurrency, Some(s.plan.concurrency));
        assert_eq!(local.files.json.as_deref(), Some(json));
        assert!(local.files.results.is_none() && !local.files.resume);
    }

    /// `--verify-each` replaces the limit words; the bounds, games, book, adjudication,
    /// seed and quiet are the tune's; locally the results go to `CSV.verify.csv`
    /// (resumed), as a cluster run into `RUN_DIR/verify` with the tune's shards.
    #[test]
    fn a_tune_verifies_with_its_verify_options_book_and_adjudication() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_string_lossy().into_owned();
        std::fs::write(dir.path().join("b.epd"), "8/8/8/8/8/8/8/K1k5 w - - 0 1\n").unwrap();
        std::fs::write(dir.path().join("p.txt"), "rfp_margin, 70\n").unwrap();
        let (args, s) = tune(&format!(
            "--param rfp_margin --param lmr_base --engine name=x depth=3 params={d}/p.txt \
             --each nodes=800 --verify-each movetime=50 tc=1+0.1 --verify-elo0 -1.5 \
             --verify-elo1 3 --verify-games 40 --book {d}/b.epd order=sequential \
             --resign movecount=3 score=500 --draw --maxmoves 60 --quiet \
             --seed 9 --concurrency 3 --csv {d}/t.csv --slurm --shards 5 \
             --sbatch-arg=--time=10 --sbatch-arg=-p --sbatch-arg=x"
        ));
        let finals = vec![("rfp_margin".to_string(), 1), ("lmr_base".to_string(), 2)];
        let m = verification(&args, &s, &finals);
        assert_defaults(&m);
        let own = format!("params={d}/p.txt");
        assert_eq!(
            m.engines.engines[0],
            [
                vec!["name=tuned".to_string(), own],
                strings("option.rfp_margin=1 option.lmr_base=2")
            ]
            .concat()
        );
        assert_eq!(m.engines.engines[1][0], "name=start");
        assert_eq!(m.engines.each, strings("movetime=50 tc=1+0.1"));
        assert_eq!((m.sprt.elo0, m.sprt.elo1), (Some(-1.5), Some(3.0)));
        assert_eq!(m.games, Some(40));
        assert_eq!(
            (m.run.concurrency, m.run.seed, m.run.quiet),
            (None, 9, true)
        );
        assert_eq!(
            m.book.book,
            Some(vec![format!("{d}/b.epd"), "order=sequential".into()])
        );
        let a = &m.adjudication;
        assert_eq!(a.resign, Some(strings("movecount=3 score=500")));
        assert_eq!(a.draw, Some(vec![]));
        assert_eq!((a.tb.as_ref(), a.maxmoves), (None, Some(60)));
        assert!(!m.slurm.slurm);

        let json = dir.path().join("t.csv.verify.json");
        let local = local_args(&args, &s, &finals, &json);
        assert_eq!(local.run.concurrency, Some(3));
        assert_eq!(
            local.files.results,
            Some(dir.path().join("t.csv.verify.csv"))
        );
        assert!(local.files.resume);
        assert_eq!(local.files.json, Some(json));
        assert!(!local.slurm.slurm);

        let run_dir = dir.path().join("run");
        for resume in [false, true] {
            if resume {
                std::fs::create_dir_all(verify_dir(&run_dir)).unwrap();
                std::fs::write(Manifest::path(&verify_dir(&run_dir)), "{}").unwrap();
            }
            let c = cluster_args(&args, &s, &run_dir, &finals, 7);
            assert!(c.slurm.slurm && !c.slurm.plan_only);
            assert_eq!(c.slurm.run_dir, Some(run_dir.join("verify")));
            assert_eq!((c.slurm.shards, c.slurm.cpus_per_shard), (Some(5), Some(7)));
            assert_eq!(c.slurm.sbatch_args, strings("--time=10 -p x"));
            assert_eq!(c.files.json, Some(run_dir.join("verify.json")));
            assert!(c.files.results.is_none());
            assert_eq!(c.files.resume, resume);
            assert_eq!(c.run.concurrency, None);
        }
    }
}
