//! One step of a bisect: an SPRT of a commit's build against the good commit's, played as
//! `spar sprt` plays it (its words parsed by the same clap arguments, run in-process: on
//! this machine into `STEP_DIR/results.csv`, or with `--slurm` as a cluster run in
//! `STEP_DIR`, whose merge writes that file), and its numbers read back from the results
//! as `spar status` reads them.

use std::path::Path;

use clap::Parser;
use sprt::{Decision, Model};

use super::args::BisectArgs;
use super::record::{Outcome, Role, Step};
use crate::cluster::csv_tail::of_csv;
use crate::error::{CliError, CliResult};
use crate::jobs::matches::args::MatchArgs;

/// The results file of a step, in its directory.
pub const RESULTS: &str = "results.csv";

/// `spar sprt`'s arguments, parsed from words.
#[derive(clap::Parser)]
#[command(name = "sprt")]
struct SprtWords {
    #[command(flatten)]
    args: MatchArgs,
}

/// What an SPRT step plays: the tested commit's binary and the good commit's, with their
/// short names.
pub struct Sides<'a> {
    /// The tested commit's build and name (the first engine: the numbers are its).
    pub tested: (&'a Path, &'a str),
    /// The good commit's.
    pub good: (&'a Path, &'a str),
}

/// The words of `spar sprt` for a step: both engines, the bisect's engine words and book,
/// the bounds `[-drop, 0]` at `rates`, the step's results file, `--resume` (a step killed
/// before continues its file) and where it is played.
pub fn sprt_words(a: &BisectArgs, sides: &Sides, rates: (f64, f64), dir: &Path) -> Vec<String> {
    let mut w: Vec<String> = vec!["sprt".into()];
    for (bin, name) in [sides.tested, sides.good] {
        w.push("--engine".into());
        w.push(format!("cmd={}", bin.display()));
        if a.build == "spar" {
            w.push("args=uci".into());
        }
        w.push(format!("name={name}"));
    }
    w.push("--each".into());
    w.extend(a.each.iter().cloned());
    if let Some(book) = &a.book.book {
        w.push("--book".into());
        w.extend(book.iter().cloned());
    }
    let mut put = |k: &str, v: String| {
        w.push(k.to_string());
        w.push(v);
    };
    put("--elo0", (-a.drop).to_string());
    put("--elo1", "0".into());
    put("--alpha", rates.0.to_string());
    put("--beta", rates.1.to_string());
    put("--model", a.model.clone());
    put("--seed", a.seed.to_string());
    put("--results", dir.join(RESULTS).display().to_string());
    if a.slurm {
        put("--run-dir", dir.display().to_string());
        if let Some(n) = a.shards {
            put("--shards", n.to_string());
        }
        if let Some(c) = a.cpus_per_shard {
            put("--cpus-per-shard", c.to_string());
        }
        for s in &a.sbatch_args {
            w.push(format!("--sbatch-arg={s}"));
        }
        w.push("--slurm".into());
        if crate::cluster::manifest::Manifest::path(dir).exists() {
            w.push("--resume".into());
        }
    } else {
        if let Some(c) = a.concurrency {
            put("--concurrency", c.to_string());
        }
        w.push("--resume".into());
    }
    if a.quiet {
        w.push("--quiet".into());
    }
    w
}

/// Plays the SPRT of `words` ([`sprt_words`]) in-process, as `spar sprt` would.
pub fn play(words: &[String]) -> CliResult {
    let args = SprtWords::try_parse_from(words)
        .map_err(|e| {
            let text = e.to_string();
            CliError::usage(format!(
                "the step's SPRT does not read ({}): check --each and --book",
                text.lines()
                    .next()
                    .unwrap_or_default()
                    .trim_start_matches("error: ")
            ))
        })?
        .args;
    crate::jobs::matches::run(args, true, None)
}

/// The finished step of commit `commit` (`sha`) whose SPRT wrote `RUN_DIR/rel/results.csv`:
/// its counts, Elo and LLR read back with `spar status`'s reader; an SPRT that has not
/// decided is an error.
#[allow(clippy::too_many_arguments)]
pub fn finished(
    run_dir: &Path,
    rel: &str,
    role: Role,
    commit: usize,
    sha: &str,
    bench: u64,
    rates: (f64, f64),
) -> CliResult<Step> {
    let path = run_dir.join(rel).join(RESULTS);
    let snap = of_csv(&path)?;
    let tally = snap.tally();
    let sprt = snap.sprt.as_ref().ok_or_else(|| {
        CliError::failure(format!(
            "{}: no SPRT in its run record (not a step of this bisect?)",
            path.display()
        ))
    })?;
    let sample = crate::summary::sample(&tally, sprt);
    let status = sprt
        .status(&sample)
        .map_err(|e| CliError::failure(format!("{}: {e}", path.display())))?;
    let outcome = match status.decision {
        Decision::H1 => Outcome::Good,
        Decision::H0 => Outcome::Bad,
        Decision::Continue => {
            return Err(CliError::failure(format!(
                "{}: the step's SPRT has not decided ({} games): rerun with --resume",
                path.display(),
                tally.games.games()
            )))
        }
    };
    let e = sample.estimate();
    let (elo, elo_pm) = match sprt.model() {
        Model::Normalized => (e.nelo, e.nelo_error),
        _ => (e.elo, e.elo_error),
    };
    let g = &tally.games;
    Ok(Step {
        role,
        commit,
        sha: sha.to_string(),
        outcome,
        why: None,
        bench: Some(bench),
        alpha: rates.0,
        beta: rates.1,
        games: g.games(),
        wins: g.wins,
        losses: g.losses,
        draws: g.draws,
        elo: finite(elo),
        elo_pm: finite(elo_pm),
        llr: status.llr,
        lower: status.lower_bound,
        upper: status.upper_bound,
        dir: rel.to_string(),
    })
}

/// A number a JSON line can hold (a count without spread has none: 0).
fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// A skipped step of commit `commit`: why, and the bench its build printed when it built.
pub fn skipped(
    commit: usize,
    sha: &str,
    rel: &str,
    why: String,
    bench: Option<u64>,
    rates: (f64, f64),
) -> Step {
    Step {
        role: Role::Search,
        commit,
        sha: sha.to_string(),
        outcome: Outcome::Skip,
        why: Some(why),
        bench,
        alpha: rates.0,
        beta: rates.1,
        games: 0,
        wins: 0,
        losses: 0,
        draws: 0,
        elo: 0.0,
        elo_pm: 0.0,
        llr: 0.0,
        lower: 0.0,
        upper: 0.0,
        dir: rel.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(extra: &str) -> BisectArgs {
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            a: BisectArgs,
        }
        let line = format!(
            "bisect --repo r --good a --bad b --drop 10 --each nodes=100 --run-dir d {extra}"
        );
        Cli::try_parse_from(line.split_whitespace()).unwrap().a
    }

    #[test]
    fn a_steps_words_read_as_spar_sprt_reads_them() {
        let sides = Sides {
            tested: (Path::new("/b/x/eng"), "x"),
            good: (Path::new("/b/g/eng"), "g"),
        };
        let w = sprt_words(
            &args("--concurrency 2 --seed 7"),
            &sides,
            (0.01, 0.02),
            Path::new("/s"),
        );
        let line = w.join(" ");
        assert!(
            line.starts_with(
                "sprt --engine cmd=/b/x/eng name=x --engine cmd=/b/g/eng name=g --each nodes=100"
            ),
            "{line}"
        );
        assert!(
            line.contains("--elo0 -10 --elo1 0 --alpha 0.01 --beta 0.02"),
            "{line}"
        );
        assert!(
            line.contains("--results /s/results.csv") && line.ends_with("--resume"),
            "{line}"
        );
        let parsed = SprtWords::try_parse_from(&w).unwrap().args;
        assert_eq!(parsed.sprt.elo0, Some(-10.0));
        assert_eq!(parsed.run.concurrency, Some(2));
        let spar = args("--build spar --slurm --shards 2");
        let line = sprt_words(&spar, &sides, (0.01, 0.01), Path::new("/s")).join(" ");
        assert!(line.contains("cmd=/b/x/eng args=uci name=x"), "{line}");
        assert!(line.contains("--run-dir /s --shards 2 --slurm"), "{line}");
        assert!(!line.contains("--resume"), "no manifest yet: {line}");
        let e = play(&["sprt".into(), "--nonsense".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("the step's SPRT does not read"), "{e}");
    }
}
