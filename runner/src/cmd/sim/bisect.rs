//! `spar sim --bisect`: simulated whole bisects ([`sprt::simulate_bisect`]) for each
//! combination of the listed drops, commit counts and true drops — the rate of wrong
//! answers against the error rule's bound, and the games per step and in total — as a
//! table and, with `--csv`, a file.

use std::path::PathBuf;

use rayon::prelude::*;
use sprt::simulate::LlrChecks;
use sprt::simulate_bisect::{BisectRun, BisectSetup, BisectSim, BisectSummary};
use sprt::Model;

use crate::error::{CliError, CliResult};
use crate::stdout;

/// The options of `spar sim` that only `--bisect` reads.
#[derive(clap::Args, Debug)]
pub struct BisectArgs {
    /// With --bisect: commits after the good one; a list (8,16,32) or a range (8..64:8)
    /// makes one row each [default: 16]
    #[arg(long, value_name = "N", allow_hyphen_values = true)]
    commits: Option<String>,
    /// With --bisect: the drop the bisect looks for (each step an SPRT [-drop, 0]), in the
    /// units of --model; a list or a range makes one row each [default: 5]
    #[arg(long, value_name = "D", allow_hyphen_values = true)]
    drop: Option<String>,
    /// With --bisect: the culprit's real drop, in the units of --model, or a multiple of
    /// --drop with x (1.5x); a list (2.5,5,10) or a range (0.5x..3x:0.5x) makes one row
    /// each [default: 1x]
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    true_drop: Option<String>,
    /// With --bisect: the culprit's number (1 to --commits) [default: drawn uniformly in
    /// each run]
    #[arg(long, value_name = "K")]
    culprit: Option<usize>,
    /// With --bisect: the culprit loses only this share of the drop (0 to 1) and the next
    /// commit the rest
    #[arg(long, value_name = "F", allow_hyphen_values = true)]
    spread: Option<f64>,
    /// With --bisect: no gate SPRT of the bad commit against the good one first
    #[arg(long)]
    known_bad: bool,
    /// With --bisect: also write one CSV row per setup to this file
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
}

impl BisectArgs {
    /// The first option given that only `--bisect` reads (clap's `requires` cannot tell a
    /// flag's default from its use, so `spar sim` checks this itself).
    pub fn first_given(&self) -> Option<&'static str> {
        [
            ("--commits", self.commits.is_some()),
            ("--drop", self.drop.is_some()),
            ("--true-drop", self.true_drop.is_some()),
            ("--culprit", self.culprit.is_some()),
            ("--spread", self.spread.is_some()),
            ("--known-bad", self.known_bad),
            ("--csv", self.csv.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| flag)
    }
}

/// The options `spar sim` shares with `--bisect` (rates are the whole bisect's).
pub struct Common {
    /// The whole bisect's alpha.
    pub alpha: f64,
    /// The whole bisect's beta.
    pub beta: f64,
    /// Share of drawn games between equal engines.
    pub draw_ratio: f64,
    /// The Elo model's name.
    pub model: String,
    /// Simulated bisects per setup.
    pub runs: u64,
    /// The seed of every setup's runs.
    pub seed: u64,
    /// The pair limit of one SPRT.
    pub max_pairs: u64,
    /// How often the SPRTs recompute the LLR.
    pub checks: LlrChecks,
}

/// Most setups one command simulates.
const MAX_SETUPS: usize = 1000;

/// An amount of Elo, maybe a multiple of the drop (`1.5x`).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Amount {
    value: f64,
    of_drop: bool,
}

impl Amount {
    fn elo(self, drop: f64) -> f64 {
        if self.of_drop {
            self.value * drop
        } else {
            self.value
        }
    }
}

/// Reads `A`, `A,B,…` or `FROM..TO:STEP` (and lists of ranges); with `of_drop`, each
/// number may end in `x` (a multiple of the drop; a range's ends and step alike).
fn parse_list(flag: &str, text: &str, of_drop: bool) -> CliResult<Vec<Amount>> {
    let bad = |why: String| CliError::usage(format!("{flag} {text}: {why}"));
    let number = |word: &str| -> CliResult<Amount> {
        let word = word.trim();
        let (digits, x) = match word.strip_suffix('x') {
            Some(d) if of_drop => (d, true),
            _ => (word, false),
        };
        match digits.parse::<f64>() {
            Ok(value) if value.is_finite() => Ok(Amount { value, of_drop: x }),
            _ => Err(bad(format!(
                "'{word}' is not a number{}",
                if of_drop {
                    " (or a multiple of --drop, e.g. 1.5x)"
                } else {
                    ""
                }
            ))),
        }
    };
    let mut out = Vec::new();
    for item in text.split(',') {
        let Some((from, rest)) = item.split_once("..") else {
            out.push(number(item)?);
            continue;
        };
        let Some((to, step)) = rest.split_once(':') else {
            return Err(bad(format!(
                "the range '{item}' needs a step: FROM..TO:STEP"
            )));
        };
        let (from, to, step) = (number(from)?, number(to)?, number(step)?);
        if from.of_drop != to.of_drop || from.of_drop != step.of_drop {
            return Err(bad(format!(
                "the range '{item}' mixes Elo and multiples of the drop: write x on all three or none"
            )));
        }
        if step.value <= 0.0 || to.value < from.value {
            return Err(bad(format!(
                "the range '{item}' needs FROM <= TO and a positive STEP"
            )));
        }
        let count = ((to.value - from.value) / step.value + 1e-9).floor() as usize + 1;
        if count > MAX_SETUPS {
            return Err(bad(format!(
                "the range '{item}' has more than {MAX_SETUPS} values"
            )));
        }
        out.extend((0..count).map(|i| Amount {
            value: from.value + i as f64 * step.value,
            of_drop: from.of_drop,
        }));
    }
    Ok(out)
}

/// Commit counts: whole numbers.
fn parse_commits(text: &str) -> CliResult<Vec<usize>> {
    parse_list("--commits", text, false)?
        .into_iter()
        .map(|a| {
            if a.value >= 0.0 && a.value.fract() == 0.0 {
                Ok(a.value as usize)
            } else {
                Err(CliError::usage(format!(
                    "--commits {text}: {} is not a whole number of commits",
                    a.value
                )))
            }
        })
        .collect()
}

/// Runs `spar sim --bisect`.
pub fn run(args: &BisectArgs, common: &Common) -> CliResult {
    let model: Model = common
        .model
        .parse()
        .map_err(|e| CliError::usage(format!("--model {}: {e}", common.model)))?;
    if common.runs == 0 {
        return Err(CliError::usage(
            "--runs 0: give at least one run, e.g. --runs 2000",
        ));
    }
    let commits = parse_commits(args.commits.as_deref().unwrap_or("16"))?;
    let drops = parse_list("--drop", args.drop.as_deref().unwrap_or("5"), false)?;
    let true_drops = parse_list(
        "--true-drop",
        args.true_drop.as_deref().unwrap_or("1x"),
        true,
    )?;
    if drops.len() * commits.len() * true_drops.len() > MAX_SETUPS {
        return Err(CliError::usage(format!(
            "--drop, --commits and --true-drop make more than {MAX_SETUPS} setups: list fewer"
        )));
    }
    let mut sims = Vec::new();
    for drop in &drops {
        for &n in &commits {
            for true_drop in &true_drops {
                let setup = BisectSetup {
                    culprit: args.culprit,
                    spread: args.spread,
                    alpha: common.alpha,
                    beta: common.beta,
                    model,
                    draw_ratio: common.draw_ratio,
                    known_bad: args.known_bad,
                    max_pairs: common.max_pairs,
                    checks: common.checks,
                    ..BisectSetup::new(n, drop.value, true_drop.elo(drop.value))
                };
                let sim = BisectSim::new(setup)
                    .map_err(|e| CliError::usage(format!("sim --bisect: {e}")))?;
                sims.push(sim);
            }
        }
    }
    let runs = common.runs;
    let all: Vec<BisectRun> = (0..sims.len() as u64 * runs)
        .into_par_iter()
        .map(|i| sims[(i / runs) as usize].run(common.seed, i % runs))
        .collect();
    let summaries: Vec<BisectSummary> = sims
        .iter()
        .zip(all.chunks(runs as usize))
        .map(|(sim, runs)| BisectSummary::new(sim, runs))
        .collect();
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&sims, &summaries, common)).map_err(|e| {
            CliError::failure(format!("--csv {}: cannot write it: {e}", path.display()))
        })?;
    }
    stdout::print_lines(&report(args, &sims, &summaries, common))
}

/// The printed report: the setup, the table of answers and games, the games by step.
fn report(
    args: &BisectArgs,
    sims: &[BisectSim],
    sums: &[BisectSummary],
    common: &Common,
) -> Vec<String> {
    let first = sims[0].setup();
    let mut lines = vec![
        format!(
            "Bisect: {} Elo, draw ratio {:.2}, alpha {}, beta {}: wrong answers at most \
             max(alpha, beta) = {} when the true drop is at least the drop; {}",
            first.model,
            common.draw_ratio,
            common.alpha,
            common.beta,
            common.alpha.max(common.beta),
            if args.known_bad {
                "bad commit known bad (no gate)"
            } else {
                "gate SPRT of bad against good first"
            }
        ),
        format!(
            "Runs: {} per row (seed {}), culprit {}{}, pair limit {}",
            common.runs,
            common.seed,
            match args.culprit {
                Some(k) => format!("commit {k}"),
                None => "uniform over the commits".into(),
            },
            match args.spread {
                Some(f) => format!(", the drop spread: {f} at the culprit, the rest at the next"),
                None => String::new(),
            },
            common.max_pairs
        ),
        String::new(),
    ];
    let spread = args.spread.is_some();
    let mut head = vec!["drop", "true", "commits", "right"];
    if spread {
        head.push("next");
    }
    head.extend([
        "wrong",
        "+/-",
        "early",
        "late",
        "none",
        "undecided",
        "steps",
        "gate",
        "games/step",
        "total",
        "p50",
        "p90",
    ]);
    let rate = |count: u64, runs: u64| format!("{:.4}", count as f64 / runs as f64);
    let games = |g: f64| {
        if g.is_nan() {
            "-".to_string()
        } else {
            format!("{g:.0}")
        }
    };
    let mut rows = vec![head.iter().map(|h| h.to_string()).collect::<Vec<_>>()];
    for (sim, s) in sims.iter().zip(sums) {
        let setup = sim.setup();
        let mut row = vec![
            format!("{:.2}", setup.drop),
            format!("{:.2}", setup.true_drop),
            setup.commits.to_string(),
            rate(s.right, s.runs),
        ];
        if spread {
            row.push(rate(s.next, s.runs));
        }
        row.extend([
            format!("{:.4}", s.wrong_rate),
            format!("{:.4}", s.wrong_rate_error),
            rate(s.early, s.runs),
            rate(s.late, s.runs),
            rate(s.no_regression, s.runs),
            s.undecided.to_string(),
            format!("{:.2}", s.mean_steps),
            games(s.mean_gate_games),
            games(s.mean_step_games),
            games(s.mean_total_games),
            games(s.p50_total_games),
            games(s.p90_total_games),
        ]);
        rows.push(row);
    }
    lines.extend(table(&rows));
    lines.push(String::new());
    lines.push("Mean games by step (gate, then the search's steps in order):".into());
    let longest = sums
        .iter()
        .map(|s| s.mean_games_by_step.len())
        .max()
        .unwrap_or(0);
    let mut rows = vec![["drop", "true", "commits", "gate"]
        .iter()
        .map(|h| h.to_string())
        .chain((1..=longest).map(|i| i.to_string()))
        .collect::<Vec<_>>()];
    for (sim, s) in sims.iter().zip(sums) {
        let setup = sim.setup();
        let mut row = vec![
            format!("{:.2}", setup.drop),
            format!("{:.2}", setup.true_drop),
            setup.commits.to_string(),
            games(s.mean_gate_games),
        ];
        row.extend(s.mean_games_by_step.iter().map(|&g| games(g)));
        row.resize(longest + 4, "-".into());
        rows.push(row);
    }
    lines.extend(table(&rows));
    lines
}

/// Right-aligned columns two spaces apart.
fn table(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|v| v.len())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|r| {
            r.iter()
                .zip(&width)
                .map(|(v, w)| format!("{v:>w$}"))
                .collect::<Vec<_>>()
                .join("  ")
        })
        .collect()
}

/// One CSV row per setup; the games by step joined by `;`.
fn csv(sims: &[BisectSim], sums: &[BisectSummary], common: &Common) -> String {
    let mut out = String::from(
        "model,draw_ratio,alpha,beta,known_bad,culprit,spread,seed,drop,true_drop,commits,\
         runs,right,next,early,late,no_regression,undecided,wrong_rate,wrong_rate_error,bound,\
         no_regression_rate,mean_steps,mean_gate_games,mean_step_games,mean_total_games,\
         p50_total_games,p90_total_games,mean_games_by_step\n",
    );
    for (sim, s) in sims.iter().zip(sums) {
        let u = sim.setup();
        let opt = |v: Option<String>| v.unwrap_or_default();
        let by_step: Vec<String> = s
            .mean_games_by_step
            .iter()
            .map(|g| format!("{g:.1}"))
            .collect();
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6},{:.6},{},{:.6},{:.4},{:.1},{:.1},{:.1},{},{},{}\n",
            u.model,
            u.draw_ratio,
            u.alpha,
            u.beta,
            u.known_bad,
            opt(u.culprit.map(|k| k.to_string())),
            opt(u.spread.map(|f| f.to_string())),
            common.seed,
            u.drop,
            u.true_drop,
            u.commits,
            s.runs,
            s.right,
            s.next,
            s.early,
            s.late,
            s.no_regression,
            s.undecided,
            s.wrong_rate,
            s.wrong_rate_error,
            s.bound,
            s.no_regression_rate,
            s.mean_steps,
            s.mean_gate_games,
            s.mean_step_games,
            s.mean_total_games,
            s.p50_total_games,
            s.p90_total_games,
            by_step.join(";"),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(text: &str) -> Vec<(f64, bool)> {
        parse_list("--true-drop", text, true)
            .unwrap()
            .into_iter()
            .map(|a| (a.value, a.of_drop))
            .collect()
    }

    #[test]
    fn lists_ranges_and_multiples_of_the_drop() {
        assert_eq!(values("5"), [(5.0, false)]);
        assert_eq!(values("2.5,1x"), [(2.5, false), (1.0, true)]);
        assert_eq!(
            values("0.5x..1.5x:0.5x,7"),
            [(0.5, true), (1.0, true), (1.5, true), (7.0, false)]
        );
        assert_eq!(values("1..2:0.25").len(), 5);
        assert_eq!(parse_commits("8,16..32:8").unwrap(), [8, 16, 24, 32]);
        let x = Amount {
            value: 1.5,
            of_drop: true,
        };
        assert_eq!(x.elo(10.0), 15.0);
    }

    #[test]
    fn bad_lists_say_what_is_wrong() {
        let err = |flag: &str, text: &str, x: bool| parse_list(flag, text, x).unwrap_err().message;
        assert!(err("--drop", "1x", false).contains("'1x' is not a number"));
        assert!(err("--true-drop", "a", true).contains("e.g. 1.5x"));
        assert!(err("--drop", "1..5", false).contains("needs a step"));
        assert!(err("--drop", "5..1:1", false).contains("FROM <= TO"));
        assert!(err("--drop", "1..5:0", false).contains("positive STEP"));
        assert!(err("--true-drop", "1x..2:1", true).contains("mixes Elo"));
        assert!(err("--drop", "0..1e9:1", false).contains("more than 1000"));
        let e = parse_commits("8.5").unwrap_err().message;
        assert!(
            e.contains("--commits 8.5: 8.5 is not a whole number"),
            "{e}"
        );
    }
}
