//! The arguments of `spar bisect`, their checks before anything is built or played, and
//! the words a plan keeps of them (what `--resume` must give again).

use std::path::PathBuf;

use crate::cli::{BookArgs, SprtBounds};
use crate::engines::repo_build::{check_name, check_rev, BUILDS_KINDS};
use crate::error::{CliError, CliResult};

/// Find the first commit of a first-parent line that lost at least --drop Elo.
///
/// Each step is an SPRT of a commit against the good one with bounds [-drop, 0], played by
/// spar as `spar sprt` plays it (the engine words after --each, --book, --seed,
/// --concurrency; --slurm for a cluster), in RUN_DIR/steps/; the bisect's alpha and beta
/// are shared out among the steps. The last line printed is the first bad commit's hash.
///
///   spar bisect --repo ~/src/engine --good v1.0 --bad main --drop 10 --each tc=8+0.08 --run-dir bisect1
///
///   spar bisect --repo https://github.com/o/engine --build make --good v1.0 --bad main \
///       --drop 5 --each tc=10+0.1 --book books/UHO.epd --run-dir b2 --slurm --shards 16
///
/// Builds: `--build make` runs `make -j EXE=NAME` in a checkout of each commit, then
/// `./NAME bench` (OpenBench's convention); `--build spar` builds spar's own engine.
#[derive(clap::Args, Debug, Clone)]
#[command(verbatim_doc_comment)]
pub struct BisectArgs {
    /// The engine's git repository: a path (a work tree or a bare repository) or a URL
    /// (mirrored into the builds cache first).
    #[arg(long, value_name = "PATH|URL")]
    pub repo: String,
    /// The engine's name: make's `EXE=` and the builds' name [default: the repository's
    /// directory name without `.git`].
    #[arg(long)]
    pub name: Option<String>,
    /// How each commit is built: `make` (`make -j EXE=NAME`, then `./NAME bench`) or `spar`
    /// (spar's own engine, played as `cmd=BIN args=uci`).
    #[arg(long, default_value = "make")]
    pub build: String,
    /// The builds' cache: one directory per commit, `DIR/SHA/` [default: RUN_DIR/builds].
    #[arg(long, value_name = "DIR")]
    pub builds: Option<PathBuf>,
    /// A commit known to be good (a branch, tag or sha).
    #[arg(long, value_name = "REV")]
    pub good: String,
    /// A later commit, on good's first-parent line, thought to be worse by --drop.
    #[arg(long, value_name = "REV")]
    pub bad: String,
    /// The Elo drop looked for (in --model units): each step's SPRT has bounds [-drop, 0].
    #[arg(long, value_name = "ELO", allow_hyphen_values = true)]
    pub drop: f64,
    /// The whole bisect's rate of calling a commit at least --drop worse good.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    pub alpha: f64,
    /// The whole bisect's rate of calling a commit no worse bad.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    pub beta: f64,
    /// The Elo model of --drop: normalized, logistic or bayesian.
    #[arg(long, default_value = "normalized")]
    pub model: String,
    /// Take --bad as bad without the gate (the SPRT of bad against good that comes first).
    #[arg(long)]
    pub known_bad: bool,
    /// Skip a commit whose bench is not the one its message states (`Bench: N`).
    #[arg(long)]
    pub check_bench: bool,
    /// The bisect's directory: its plan, its steps and each step's SPRT.
    #[arg(long, value_name = "DIR")]
    pub run_dir: Option<PathBuf>,
    /// Continue the bisect in --run-dir (the same words otherwise).
    #[arg(long)]
    pub resume: bool,
    /// Engine words for both sides of every SPRT, as in `spar sprt` (e.g. `tc=8+0.08`,
    /// `nodes=20000`).
    #[arg(long, num_args = 1.., value_name = "KEY=VALUE")]
    pub each: Vec<String>,
    #[command(flatten)]
    pub book: BookArgs,
    /// Games played at once (default: all cores; with --slurm, --cpus-per-shard).
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Seed of every step's SPRT.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Play each step as a cluster run on Slurm (in its step directory).
    #[arg(long)]
    pub slurm: bool,
    /// Array tasks (shards) of each step [default: 8].
    #[arg(long, value_name = "N")]
    pub shards: Option<u64>,
    /// CPUs per array task [default: 1].
    #[arg(long, value_name = "C")]
    pub cpus_per_shard: Option<usize>,
    /// An extra sbatch option, e.g. `--sbatch-arg=--partition=long` (repeat for more).
    #[arg(long = "sbatch-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub sbatch_args: Vec<String>,
    /// No progress display (the steps and the answer are still printed).
    #[arg(long)]
    pub quiet: bool,
}

impl BisectArgs {
    /// Checks what can be checked before git is asked: the run directory, the drop, the
    /// rates and model (as the steps' SPRTs will read them), the build, the name, the
    /// revisions and the cluster options. Returns the run directory.
    pub fn check(&self) -> CliResult<PathBuf> {
        let dir = self.run_dir.clone().ok_or_else(|| {
            CliError::usage(
                "spar bisect needs --run-dir DIR: the directory of its plan, steps and games \
                 (give the same with --resume to continue)",
            )
        })?;
        if !(self.drop.is_finite() && self.drop > 0.0) {
            return Err(CliError::usage(format!(
                "--drop {}: give the Elo drop looked for as a number above 0 (e.g. --drop 10)",
                self.drop
            )));
        }
        for (flag, v) in [("--alpha", self.alpha), ("--beta", self.beta)] {
            if !(v > 0.0 && v < 1.0) {
                return Err(CliError::usage(format!(
                    "{flag} {v}: give a rate between 0 and 1 (e.g. {flag} 0.05)"
                )));
            }
        }
        self.bounds(self.alpha, self.beta).check_options()?;
        if !BUILDS_KINDS.contains(&self.build.as_str()) {
            return Err(CliError::usage(format!(
                "--build {}: give one of {}",
                self.build,
                BUILDS_KINDS.join(", ")
            )));
        }
        check_name(&self.name())
            .map_err(|m| CliError::usage(format!("{m} (give --name NAME; it is make's EXE=)")))?;
        for (flag, rev) in [("--good", &self.good), ("--bad", &self.bad)] {
            check_rev(rev).map_err(|m| CliError::usage(format!("{flag}: {m}")))?;
        }
        if self.concurrency == Some(0) {
            return Err(CliError::usage("--concurrency must be at least 1"));
        }
        let cluster = [
            (self.shards.is_some(), "--shards"),
            (self.cpus_per_shard.is_some(), "--cpus-per-shard"),
            (!self.sbatch_args.is_empty(), "--sbatch-arg"),
        ];
        if let Some((_, flag)) = cluster.iter().find(|(g, _)| *g && !self.slurm) {
            return Err(CliError::usage(format!(
                "{flag} belongs to a cluster bisect: add --slurm, or leave {flag} out"
            )));
        }
        if self.slurm && self.concurrency.is_some() {
            return Err(CliError::usage(
                "--concurrency is a local bisect's: with --slurm give --cpus-per-shard",
            ));
        }
        if self.each.is_empty() {
            return Err(CliError::usage(
                "spar bisect needs --each WORDS: the engine words of every SPRT, e.g. --each \
                 tc=8+0.08 or --each nodes=20000",
            ));
        }
        Ok(dir)
    }

    /// The SPRT of a step at rates `alpha` and `beta`: bounds `[-drop, 0]` in the model.
    pub fn bounds(&self, alpha: f64, beta: f64) -> SprtBounds {
        SprtBounds {
            elo0: -self.drop,
            elo1: 0.0,
            alpha,
            beta,
            model: self.model.clone(),
        }
    }

    /// `--name`, or the repository's last path component without `.git` (of a path's
    /// absolute form: `--repo .` is named after the current directory).
    pub fn name(&self) -> String {
        if let Some(n) = &self.name {
            return n.clone();
        }
        let path = if crate::engines::repo_build::is_url(&self.repo) {
            PathBuf::from(&self.repo)
        } else {
            std::path::absolute(&self.repo).unwrap_or_else(|_| PathBuf::from(&self.repo))
        };
        let last = path
            .components()
            .rfind(|c| !matches!(c, std::path::Component::CurDir))
            .map_or_else(String::new, |c| {
                c.as_os_str().to_string_lossy().into_owned()
            });
        let last = last.rsplit(':').next().unwrap_or(&last);
        last.strip_suffix(".git").unwrap_or(last).to_string()
    }

    /// The words a plan keeps (what defines the bisect; `--resume` must give the same):
    /// every option but the run directory, the builds' cache, `--resume`, `--quiet`, and
    /// where and how wide the games are played (`--concurrency`, the cluster's options),
    /// which change no game.
    pub fn plan_words(&self) -> Vec<String> {
        let mut w: Vec<String> = Vec::new();
        let mut put = |k: &str, v: &str| {
            w.push(k.to_string());
            w.push(v.to_string());
        };
        put("--repo", &self.repo);
        put("--name", &self.name());
        put("--build", &self.build);
        put("--good", &self.good);
        put("--bad", &self.bad);
        put("--drop", &self.drop.to_string());
        put("--alpha", &self.alpha.to_string());
        put("--beta", &self.beta.to_string());
        put("--model", &self.model);
        put("--seed", &self.seed.to_string());
        if self.known_bad {
            w.push("--known-bad".into());
        }
        if self.check_bench {
            w.push("--check-bench".into());
        }
        if let Some(book) = &self.book.book {
            w.push("--book".into());
            w.extend(book.iter().cloned());
        }
        w.push("--each".into());
        w.extend(self.each.iter().cloned());
        w
    }
}

/// The options of `words` (each `--flag` with the words after it up to the next flag), in
/// order.
fn options(words: &[String]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for w in words {
        match out.last_mut() {
            Some(last) if !w.starts_with("--") => last.1.push(w.clone()),
            _ => out.push((w.clone(), Vec::new())),
        }
    }
    out
}

/// Compares a plan's words with a resumed command's: `Err` names the first option that
/// differs, with both values, and the fix.
pub fn same_words(planned: &[String], given: &[String]) -> CliResult {
    if planned == given {
        return Ok(());
    }
    let (p, g) = (options(planned), options(given));
    let value = |opts: &[(String, Vec<String>)], flag: &str| {
        opts.iter()
            .find(|(f, _)| f == flag)
            .map_or("(not given)".to_string(), |(_, v)| {
                if v.is_empty() {
                    "(given)".to_string()
                } else {
                    v.join(" ")
                }
            })
    };
    let flags = p.iter().chain(&g).map(|(f, _)| f.clone());
    for flag in flags {
        let (a, b) = (value(&p, &flag), value(&g, &flag));
        if a != b {
            return Err(CliError::usage(format!(
                "--resume: {flag} differs from the bisect's plan: it has {a}, this command \
                 {b} (give the plan's words, or a new --run-dir)"
            )));
        }
    }
    Err(CliError::usage(
        "--resume: the words differ from the bisect's plan (their order): give the plan's \
         words, or a new --run-dir",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: BisectArgs,
    }

    fn parse(line: &str) -> BisectArgs {
        Cli::try_parse_from(std::iter::once("bisect").chain(line.split_whitespace()))
            .expect("parses")
            .args
    }

    const OK: &str = "--repo /r/eng.git --good a --bad b --drop 10 --each nodes=100 --run-dir d";

    #[test]
    fn the_name_defaults_to_the_repository_and_good_words_pass() {
        assert_eq!(parse(OK).name(), "eng");
        assert_eq!(
            parse(&OK.replace("/r/eng.git", "https://x.org/o/stash.git/")).name(),
            "stash"
        );
        assert_eq!(parse(&format!("{OK} --name sf")).name(), "sf");
        let here = std::env::current_dir().unwrap();
        let want = here.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(parse(&OK.replace("/r/eng.git", ".")).name(), want);
        assert_eq!(parse(&OK.replace("/r/eng.git", "./")).name(), want);
        assert_eq!(
            parse(&OK.replace("/r/eng.git", "git@host:eng.git")).name(),
            "eng"
        );
        assert_eq!(parse(OK).check().unwrap(), PathBuf::from("d"));
    }

    #[test]
    fn bad_inputs_are_refused_with_the_fix() {
        for (line, want) in [
            (OK.replace(" --run-dir d", ""), "needs --run-dir"),
            (OK.replace("--drop 10", "--drop 0"), "--drop 0: give"),
            (OK.replace("--drop 10", "--drop -3"), "--drop -3: give"),
            (format!("{OK} --alpha 1.5"), "--alpha 1.5: give a rate"),
            (format!("{OK} --beta 0"), "--beta 0: give a rate"),
            (format!("{OK} --model elo"), "--model elo"),
            (
                format!("{OK} --build cmake"),
                "--build cmake: give one of make, spar",
            ),
            (format!("{OK} --name a/b"), "engine name 'a/b'"),
            (OK.replace("--good a", "--good=-x"), "--good: revision '-x'"),
            (format!("{OK} --shards 2"), "--shards belongs to a cluster"),
            (format!("{OK} --slurm --concurrency 2"), "with --slurm give"),
            (format!("{OK} --concurrency 0"), "at least 1"),
            (OK.replace(" --each nodes=100", ""), "needs --each"),
        ] {
            let e = parse(&line).check().unwrap_err().to_string();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn a_resume_with_other_words_names_the_option() {
        let a = parse(OK).plan_words();
        assert!(same_words(&a, &a).is_ok());
        // Where the games are played changes nothing of the plan.
        let b = parse(&format!("{OK} --concurrency 3 --quiet --resume")).plan_words();
        assert!(same_words(&a, &b).is_ok());
        let c = parse(&OK.replace("--drop 10", "--drop 5")).plan_words();
        let e = same_words(&a, &c).unwrap_err().to_string();
        assert!(
            e.contains("--drop differs") && e.contains("it has 10, this command 5"),
            "{e}"
        );
        let d = parse(&format!("{OK} --known-bad")).plan_words();
        let e = same_words(&a, &d).unwrap_err().to_string();
        assert!(
            e.contains("--known-bad differs") && e.contains("(not given)"),
            "{e}"
        );
    }
}
