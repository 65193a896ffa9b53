//! The one run plan: every command that plays games (`match`, `sprt`, `report`, `tune`,
//! `datagen`) builds a [`MatchPlan`] from its flattened argument groups
//! ([`crate::cli`]), and everything is checked here, once, before the first game.
//!
//! The plan is plain data (serde), complete enough to replay the run: the engines' words,
//! the number of pairs or the SPRT, concurrency, seed, book, adjudication and failure
//! policy. [`MatchPlan::resolve`] turns it into the live objects a run needs ([`Run`]).

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use sprt::Sprt;

use crate::cli::{BookArgs, EngineArgs, FailureArgs, RunArgs, SprtArgs};
use crate::engines::git_build;
use crate::engines::player::Player;
use crate::engines::variant::{parse_variant, Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::book::OpeningBook;
use crate::play::adjudication::Adjudication;
use crate::play::schedule::{OpeningStart, Schedule, Stride};

pub use crate::cli::DEFAULT_SPRT_BOUNDS;

/// One engine of the plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EnginePlan {
    /// The name it plays under (made unique when two engines share one).
    pub name: String,
    /// Its words: the `--each` words, then its own (later words win).
    pub words: Vec<String>,
}

/// The SPRT of a plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SprtPlan {
    /// Elo of the null hypothesis.
    pub elo0: f64,
    /// Elo of the alternative.
    pub elo1: f64,
    /// False positive rate.
    pub alpha: f64,
    /// False negative rate.
    pub beta: f64,
    /// Elo model of the bounds (`normalized`, `logistic`, `bayesian`).
    pub model: String,
}

impl SprtPlan {
    /// The checked test.
    pub fn sprt(&self) -> CliResult<Sprt> {
        crate::cli::SprtBounds {
            elo0: self.elo0,
            elo1: self.elo1,
            alpha: self.alpha,
            beta: self.beta,
            model: self.model.clone(),
        }
        .check_options()
    }
}

/// Everything that defines a run of games.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchPlan {
    /// The engines in seat order.
    pub engines: Vec<EnginePlan>,
    /// Game pairs to play (`None`: until the SPRT decides or the caller stops).
    pub pairs: Option<u64>,
    /// Games played at once.
    pub concurrency: usize,
    /// Run seed: pair k plays opening k with seeds derived from (seed, k).
    pub seed: u64,
    /// `--book` words (`None`: the built-in book).
    pub book: Option<Vec<String>>,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// Seconds an external engine may stay silent under node or depth limits.
    pub stall_timeout: f64,
    /// Restart crashed or hung engines and go on.
    pub recover: bool,
    /// The SPRT, for `spar sprt`.
    pub sprt: Option<SprtPlan>,
}

/// What a command asks of the plan builder.
pub struct PlanRequest<'a> {
    /// `--engine` / `--each`.
    pub engines: &'a EngineArgs,
    /// How many `--engine` options the command takes (`0..=0`: none; the one engine is
    /// made of the `--each` words).
    pub seats: RangeInclusive<usize>,
    /// An example `--engine` list for the error message.
    pub example: &'a str,
    /// `--concurrency`, `--seed`.
    pub run: &'a RunArgs,
    /// `--games` as given.
    pub games: Option<u64>,
    /// Games when `--games` is absent (`None`: unbounded).
    pub default_games: Option<u64>,
    /// `--book`.
    pub book: &'a BookArgs,
    /// Adjudication rules.
    pub adjudication: Adjudication,
    /// `--stall-timeout`, `--recover`, `--no-recover` (`None`: the defaults).
    pub failure: Option<&'a FailureArgs>,
    /// Whether engines are restarted after a crash unless `--no-recover`.
    pub recover_by_default: bool,
    /// The SPRT options of `spar sprt` (`None`: no SPRT).
    pub sprt: Option<&'a SprtArgs>,
}

impl MatchPlan {
    /// Builds and checks a plan; the [`Run`] it resolves to comes with it.
    pub fn build(req: &PlanRequest) -> CliResult<(MatchPlan, Run)> {
        let given = req.engines.engines.len();
        if !req.seats.contains(&given) {
            let (lo, hi) = (*req.seats.start(), *req.seats.end());
            let want = if lo == hi {
                format!("exactly {}", count_word(lo))
            } else {
                format!("{} or {}", count_word(lo), count_word(hi))
            };
            return Err(CliError::usage(format!(
                "give {want} --engine options (got {given}), e.g. {}",
                req.example
            )));
        }
        // No `--engine` at all (tune, datagen): one engine made of the `--each` words.
        let n = given.max(1);
        let mut engines = Vec::with_capacity(n);
        for i in 0..n {
            let own = req.engines.engines.get(i).map_or(&[][..], |w| &w[..]);
            let v = parse_variant(own, &req.engines.each, i).map_err(|e| {
                if own.is_empty() {
                    CliError::usage(format!("--each {}: {e}", req.engines.each.join(" ")))
                } else {
                    CliError::usage(format!("--engine {}: {e}", own.join(" ")))
                }
            })?;
            let words = req.engines.each.iter().chain(own).cloned().collect();
            engines.push(EnginePlan {
                name: v.name,
                words,
            });
        }
        if engines.len() == 2 && engines[0].name == engines[1].name {
            let name = engines[0].name.clone();
            engines[0].name = format!("{name}-1");
            engines[1].name = format!("{name}-2");
        }
        let pairs = match req.games.or(req.default_games) {
            Some(0) => return Err(CliError::usage("--games must be at least 2")),
            Some(g) if g % 2 == 1 => {
                return Err(CliError::usage(format!(
                    "--games {g} is odd: games are played in pairs (each opening once per colour); use {} or {}",
                    g - 1,
                    g + 1
                )))
            }
            g => g.map(|g| g / 2),
        };
        let sprt = match req.sprt {
            None => None,
            Some(s) => {
                let (elo0, elo1) = match (s.elo0, s.elo1) {
                    (Some(e0), Some(e1)) => (e0, e1),
                    (None, None) => DEFAULT_SPRT_BOUNDS,
                    _ => return Err(CliError::usage("give both --elo0 and --elo1")),
                };
                let plan = SprtPlan {
                    elo0,
                    elo1,
                    alpha: s.alpha,
                    beta: s.beta,
                    model: s.model.clone(),
                };
                // Checked here, before any engine is built or file written.
                plan.sprt()?;
                Some(plan)
            }
        };
        let (stall_timeout, recover) = match req.failure {
            Some(f) => (
                f.stall_timeout,
                !f.no_recover && (f.recover || req.recover_by_default),
            ),
            None => (10.0, req.recover_by_default),
        };
        // More workers than pairs would only sit idle (each with its engines' hash tables).
        let concurrency = match pairs {
            Some(p) => req.run.concurrency()?.min(p.max(1) as usize),
            None => req.run.concurrency()?,
        };
        let plan = MatchPlan {
            engines,
            pairs,
            concurrency,
            seed: req.run.seed,
            book: req.book.book.clone(),
            adjudication: req.adjudication.clone(),
            stall_timeout,
            recover,
            sprt,
        };
        let run = plan.resolve()?;
        Ok((plan, run))
    }

    /// Checks the plan and makes the live objects of the run.
    pub fn resolve(&self) -> CliResult<Run> {
        let mut variants = Vec::with_capacity(self.engines.len());
        for (i, e) in self.engines.iter().enumerate() {
            let mut v = parse_variant(&e.words, &[], i)
                .map_err(|err| CliError::usage(format!("engine '{}': {err}", e.name)))?;
            v.name = e.name.clone();
            if let Source::Uci { cmd, .. } = &v.source {
                if which(cmd).is_none() {
                    return Err(CliError::usage(format!(
                        "engine '{}': cannot find executable '{cmd}' (give a path or put it on PATH)",
                        v.name
                    )));
                }
            }
            variants.push(v);
        }
        if !(self.stall_timeout.is_finite() && self.stall_timeout > 0.0) {
            return Err(CliError::usage(
                "--stall-timeout must be a positive number of seconds",
            ));
        }
        check_memory(&variants, self.concurrency)?;
        let book = OpeningBook::load(self.book.as_deref(), self.seed).map_err(CliError::usage)?;
        let sprt = self.sprt.as_ref().map(SprtPlan::sprt).transpose()?;
        Ok(Run {
            variants,
            book,
            sprt,
            stall_timeout: Duration::from_secs_f64(self.stall_timeout),
        })
    }
}

impl MatchPlan {
    /// The pair schedule of this plan for `variants` (the seats), starting at `first_pair`.
    pub fn schedule<'a>(
        &'a self,
        variants: &'a [Variant; 2],
        first_pair: u64,
        opening: &'a (dyn Fn(u64) -> OpeningStart + Sync),
        make_player: &'a (dyn Fn(usize) -> CliResult<Box<dyn Player>> + Sync),
        abort: &'a AtomicBool,
    ) -> Schedule<'a> {
        Schedule {
            variants,
            stride: Stride::ALL,
            first_pair,
            end_pair: self.pairs,
            concurrency: self.concurrency,
            seed: self.seed,
            adjudication: &self.adjudication,
            opening,
            make_player,
            abort,
            admit: None,
        }
    }
}

/// The live objects of a plan.
pub struct Run {
    /// The engines, in seat order.
    pub variants: Vec<Variant>,
    /// The openings.
    pub book: OpeningBook,
    /// The SPRT, if any.
    pub sprt: Option<Sprt>,
    /// The watchdog of external engines under node or depth limits.
    pub stall_timeout: Duration,
}

impl Run {
    /// Builds the `git=` / `features=` variants (once, cached) and turns them into external
    /// UCI engines; other variants are left as they are.
    pub fn build_variants(&mut self, quiet: bool) -> CliResult {
        if !self
            .variants
            .iter()
            .any(|v| matches!(v.source, Source::Build { .. }))
        {
            return Ok(());
        }
        let repo = std::env::current_dir()
            .map_err(|e| CliError::failure(format!("cannot read the current directory: {e}")))?;
        for v in self.variants.iter_mut() {
            *v = git_build::resolve(v, &repo, quiet).map_err(CliError::usage)?;
        }
        Ok(())
    }

    /// The first two engines as the two seats of a match.
    pub fn seats(&self) -> [Variant; 2] {
        let second = self.variants.get(1).unwrap_or(&self.variants[0]);
        [self.variants[0].clone(), second.clone()]
    }
}

/// Refuses a run whose builtin engines' hash tables (one per seat and worker) would not fit
/// in the memory this machine has available.
fn check_memory(variants: &[Variant], concurrency: usize) -> CliResult {
    let per_worker_mib: u64 = variants
        .iter()
        .filter(|v| v.source == Source::Builtin)
        .map(|v| v.hash_mb as u64)
        .sum::<u64>()
        * if variants.len() == 1 { 2 } else { 1 };
    let need_mib = per_worker_mib.saturating_mul(concurrency as u64);
    match available_memory_mib() {
        Some(have) if need_mib > have => Err(CliError::usage(format!(
            "--concurrency {concurrency} needs {need_mib} MiB of hash tables ({per_worker_mib} MiB per worker) \
             but only {have} MiB of memory is available: lower --concurrency or option.Hash"
        ))),
        _ => Ok(()),
    }
}

/// `MemAvailable` of `/proc/meminfo`, in MiB (`None` where there is no such file).
pub(crate) fn available_memory_mib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

fn count_word(n: usize) -> &'static str {
    match n {
        0 => "no",
        1 => "one",
        2 => "two",
        _ => "more",
    }
}

/// Finds an executable the way a shell would.
pub fn which(cmd: &str) -> Option<PathBuf> {
    let path = Path::new(cmd);
    if cmd.contains('/') {
        return path.is_file().then(|| path.to_path_buf());
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(cmd))
            .find(|p| p.is_file())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn engines(list: &[&[&str]], each: &[&str]) -> EngineArgs {
        EngineArgs {
            engines: list
                .iter()
                .map(|w| w.iter().map(|s| s.to_string()).collect())
                .collect(),
            each: each.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn run_args() -> RunArgs {
        RunArgs {
            concurrency: Some(2),
            seed: 7,
            quiet: true,
        }
    }

    fn request<'a>(e: &'a EngineArgs, r: &'a RunArgs, b: &'a BookArgs) -> PlanRequest<'a> {
        PlanRequest {
            engines: e,
            seats: 2..=2,
            example: "--engine name=a --engine name=b",
            run: r,
            games: Some(10),
            default_games: Some(100),
            book: b,
            adjudication: Adjudication::default(),
            failure: None,
            recover_by_default: false,
            sprt: None,
        }
    }

    #[test]
    fn a_plan_round_trips_through_json_and_resolves_the_same() {
        let e = engines(
            &[&["name=dev", "option.rfp_margin=60"], &["name=base"]],
            &["nodes=1000"],
        );
        let (r, b) = (run_args(), BookArgs::default());
        let (plan, run) = MatchPlan::build(&request(&e, &r, &b)).unwrap();
        assert_eq!(plan.pairs, Some(5));
        assert_eq!(
            plan.engines[0].words,
            ["nodes=1000", "name=dev", "option.rfp_margin=60"]
        );
        let text = serde_json::to_string(&plan).unwrap();
        let back: MatchPlan = serde_json::from_str(&text).unwrap();
        assert_eq!(back, plan);
        let again = back.resolve().unwrap();
        assert_eq!(again.variants[0].params, run.variants[0].params);
        assert_eq!(again.variants[1].limits, run.variants[1].limits);
    }

    #[test]
    fn same_names_are_made_unique_and_seat_counts_checked() {
        let e = engines(&[&["name=x"], &["name=x"]], &["nodes=100"]);
        let (r, b) = (run_args(), BookArgs::default());
        let (plan, run) = MatchPlan::build(&request(&e, &r, &b)).unwrap();
        assert_eq!(run.variants[0].name, "x-1");
        assert_eq!(plan.engines[1].name, "x-2");
        let one = engines(&[&["name=x"]], &["nodes=100"]);
        let err = MatchPlan::build(&request(&one, &r, &b)).err().unwrap();
        assert_eq!(err.code, 2);
        assert!(
            err.message.contains("exactly two --engine"),
            "{}",
            err.message
        );
    }

    #[test]
    fn odd_games_and_half_sprt_bounds_are_usage_errors() {
        let e = engines(&[&["name=a"], &["name=b"]], &["nodes=100"]);
        let (r, b) = (run_args(), BookArgs::default());
        let mut req = request(&e, &r, &b);
        req.games = Some(7);
        assert!(MatchPlan::build(&req)
            .err()
            .unwrap()
            .message
            .contains("odd"));
        let s = SprtArgs {
            elo0: Some(0.0),
            elo1: None,
            alpha: 0.05,
            beta: 0.05,
            model: "normalized".into(),
        };
        req.games = None;
        req.sprt = Some(&s);
        let err = MatchPlan::build(&req).err().unwrap();
        assert!(err.message.contains("both --elo0 and --elo1"));
    }
}
