//! The driver of `spar bisect`: the plan written (or read back with `--resume`), good and
//! bad built, then while the record says what comes next ([`load`]'s [`Answer`]): the gate,
//! or the next commit built and tested (or skipped), each finished step appended as one
//! line; last, the answer.

use std::path::Path;

use super::answer::{answer, step_line};
use super::args::{same_words, BisectArgs};
use super::record::{append_step, load, step_dir, Answer, Commit, Plan, Role, Step, SCHEMA};
use super::repo::{self, WHO};
use super::steps::{finished, play, skipped, sprt_words, Sides};
use crate::engines::repo_build::{ensure_in, is_url, Built, Cache};
use crate::error::{CliError, CliResult};
use crate::stdout;

/// The lock file that keeps a second bisect out of a run directory.
pub const LOCK: &str = "bisect.lock";

/// Where a bisect builds: the repository read, the cache, and how it reports.
struct Builder<'a> {
    args: &'a BisectArgs,
    name: String,
    source: std::path::PathBuf,
    builds: std::path::PathBuf,
    tmp: std::path::PathBuf,
}

impl Builder<'_> {
    /// The build of `c` from the cache or made now (its messages on stderr unless quiet).
    fn build(&self, c: &Commit) -> Result<Built, String> {
        let quiet = self.args.quiet;
        let log = |_: &str, m: &str| {
            if !quiet {
                eprintln!("{WHO}: {m}");
            }
        };
        let cache = Cache {
            dir: &self.builds,
            tmp: &self.tmp,
            who: if quiet { "" } else { WHO },
        };
        ensure_in(
            cache,
            &self.name,
            &self.args.build,
            &self.source,
            &c.sha,
            &log,
        )
    }

    /// Why commit `c`, built as `b`, is not testable under `--check-bench`.
    fn bench_mismatch(&self, c: &Commit, b: &Built) -> Option<String> {
        let stated = c.bench.filter(|_| self.args.check_bench)?;
        (stated != b.bench).then(|| format!("its bench is {}, its message says {stated}", b.bench))
    }
}

/// Runs `spar bisect`.
pub fn run(args: BisectArgs) -> CliResult {
    let given = args.check()?;
    // Absolute: the engines' paths reach every step's SPRT, and a cluster's nodes.
    let dir = std::path::absolute(&given)
        .map_err(|e| CliError::usage(format!("--run-dir {}: {e}", given.display())))?;
    std::fs::create_dir_all(&dir).map_err(|e| {
        CliError::usage(format!(
            "--run-dir {} is not a directory spar can make: {e}",
            dir.display()
        ))
    })?;
    let _lock =
        crate::files::lock::acquire(&dir.join(LOCK), &format!("--run-dir {}", dir.display()))?;
    let builds = match &args.builds {
        Some(b) => std::path::absolute(b)
            .map_err(|e| CliError::usage(format!("--builds {}: {e}", b.display())))?,
        None => dir.join("builds"),
    };
    let b = Builder {
        args: &args,
        name: args.name(),
        source: repo::source(&args.repo, &builds)?,
        tmp: dir.join("tmp"),
        builds,
    };
    let plan = plan(&args, &dir, &b)?;
    let n = plan.commits.len() - 1;
    if !args.quiet {
        eprintln!(
            "{WHO}: {} commits after good {} up to bad {}: at most {} SPRTs{} of [{}, 0] \
             ({}), alpha {} beta {} in all",
            n,
            plan.commits[0].short(),
            plan.commits[n].short(),
            sprt::bisect::steps_needed(n),
            if plan.known_bad {
                ""
            } else {
                " after the gate"
            },
            -plan.drop,
            plan.model,
            plan.alpha,
            plan.beta
        );
    }
    // Good and bad must build (and bench as their messages say, with --check-bench).
    let mut ends = Vec::new();
    for (what, c) in [("good", &plan.commits[0]), ("bad", &plan.commits[n])] {
        let built = b.build(c).map_err(|e| {
            CliError::usage(format!(
                "the {what} commit {} does not build: {e}",
                c.short()
            ))
        })?;
        if let Some(why) = b.bench_mismatch(c, &built) {
            return Err(CliError::usage(format!(
                "the {what} commit {} is not testable: {why} (--check-bench)",
                c.short()
            )));
        }
        ends.push(built);
    }
    let good = &ends[0];
    let good_name = plan.commits[0].short().to_string();
    let mut printed = 0;
    loop {
        let (plan, steps, state) = load(&dir)?
            .ok_or_else(|| CliError::failure(format!("{}: the plan is gone", dir.display())))?;
        printed = print_steps(&plan, &steps, printed)?;
        let k = steps.iter().filter(|s| s.role == Role::Search).count() + 1;
        let step = match state.next {
            Answer::Gate => {
                let bad = &plan.commits[n];
                let sides = Sides {
                    tested: (&ends[1].binary, bad.short()),
                    good: (&good.binary, &good_name),
                };
                let rates = (plan.alpha, plan.beta);
                sprt_step(
                    &args,
                    &dir,
                    &sides,
                    Role::Gate,
                    (0, n, bad),
                    ends[1].bench,
                    rates,
                )?
            }
            Answer::Test(i) => {
                let c = &plan.commits[i];
                let rel = step_dir(k, &c.sha);
                let rates = state.search.rates();
                match b.build(c) {
                    Err(e) => {
                        let why = note_failure(&dir, &rel, &e);
                        skipped(i, &c.sha, &rel, why, None, rates)
                    }
                    Ok(built) => match b.bench_mismatch(c, &built) {
                        Some(why) => skipped(i, &c.sha, &rel, why, Some(built.bench), rates),
                        None => {
                            let sides = Sides {
                                tested: (&built.binary, c.short()),
                                good: (&good.binary, &good_name),
                            };
                            let at = (k, i, c);
                            sprt_step(&args, &dir, &sides, Role::Search, at, built.bench, rates)?
                        }
                    },
                }
            }
            _ => {
                let (lines, untestable) = answer(&plan, &steps, &state);
                stdout::print_lines(&lines)?;
                return untestable.map_or(Ok(()), |e| Err(CliError::failure(e)));
            }
        };
        append_step(&dir, &step)?;
    }
}

/// The plan of a fresh bisect (written), or the one `--resume` continues (its words
/// checked against these).
fn plan(args: &BisectArgs, dir: &Path, b: &Builder) -> CliResult<Plan> {
    let words = args.plan_words();
    match (Plan::read(dir)?, args.resume) {
        (Some(p), true) => {
            same_words(&p.words, &words)?;
            Ok(p)
        }
        (Some(_), false) => Err(CliError::usage(format!(
            "--run-dir {} already holds a bisect ({}): add --resume to continue it, or give a \
             new --run-dir",
            dir.display(),
            super::record::PLAN
        ))),
        (None, resume) => {
            if resume && !args.quiet {
                // Killed before its plan was written: nothing to continue, so it starts.
                eprintln!(
                    "{WHO}: --run-dir {} holds no plan yet: starting the bisect",
                    dir.display()
                );
            }
            let commits = repo::commits(
                &b.name,
                &b.source,
                is_url(&args.repo),
                &args.good,
                &args.bad,
            )?;
            let p = Plan {
                schema: SCHEMA,
                spar_version: env!("CARGO_PKG_VERSION").into(),
                repo: args.repo.clone(),
                name: b.name.clone(),
                build: args.build.clone(),
                commits,
                drop: args.drop,
                alpha: args.alpha,
                beta: args.beta,
                model: args.model.clone(),
                known_bad: args.known_bad,
                check_bench: args.check_bench,
                words,
                created: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs()),
            };
            p.write(dir)?;
            Ok(p)
        }
    }
}

/// Prints the lines of the steps after the first `printed` ones; the number printed.
fn print_steps(plan: &Plan, steps: &[Step], printed: usize) -> CliResult<usize> {
    let mut k = 0;
    let mut lines = Vec::new();
    for (j, s) in steps.iter().enumerate() {
        if s.role == Role::Search {
            k += 1;
        }
        if j >= printed {
            lines.push(step_line(plan, k, s));
        }
    }
    stdout::print_lines(&lines)?;
    Ok(steps.len())
}

/// Plays the SPRT of a step (`at`: the step's number, the commit's place and the commit)
/// in its directory and reads its finished numbers.
fn sprt_step(
    args: &BisectArgs,
    dir: &Path,
    sides: &Sides,
    role: Role,
    at: (usize, usize, &Commit),
    bench: u64,
    rates: (f64, f64),
) -> CliResult<Step> {
    let (k, i, c) = at;
    let rel = step_dir(if role == Role::Gate { 0 } else { k }, &c.sha);
    let step_dir = dir.join(&rel);
    std::fs::create_dir_all(&step_dir)
        .map_err(|e| CliError::failure(format!("{}: {e}", step_dir.display())))?;
    if !args.quiet {
        let what = match role {
            Role::Gate => "gate: bad".to_string(),
            Role::Search => format!("step {k}: commit {i}"),
        };
        eprintln!(
            "{WHO}: {what} {} \"{}\" against good, alpha {:.4} beta {:.4}, in {}",
            c.short(),
            c.subject,
            rates.0,
            rates.1,
            step_dir.display()
        );
    }
    play(&sprt_words(args, sides, rates, &step_dir))?;
    finished(dir, &rel, role, i, &c.sha, bench, rates)
}

/// Keeps a failed build's message in the step's directory (`build.log`); its first line,
/// the skip's reason.
fn note_failure(dir: &Path, rel: &str, message: &str) -> String {
    let step = dir.join(rel);
    let _ = std::fs::create_dir_all(&step)
        .and_then(|()| std::fs::write(step.join("build.log"), format!("{message}\n")));
    let first = message.lines().next().unwrap_or("the build failed");
    format!("{first} (see {rel}/build.log)")
}
