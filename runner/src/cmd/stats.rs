//! `spar stats`: Elo, LOS, normalized Elo and the SPRT log-likelihood ratio from counts,
//! printed in the formats of cutechess and fastchess, or as JSON.

use sprt::{Model, Pentanomial, Sample, Trinomial};

use crate::cli::SprtBounds;
use crate::error::{CliError, CliResult};
use crate::stdout;
use crate::summary::{json_report, text_report, Request};

/// Match statistics calculator.
///
/// Give the result of a match as W/D/L counts or as pentanomial counts of game pairs (or
/// both, for the same games) and, for an SPRT, its bounds:
///
///   spar stats --wdl 136 111 96
///
///   spar stats --ptnml 365 16618 36229 16974 390 --elo0 0 --elo1 2
///
/// Prints the cutechess `Score of …`/`Elo difference: …` lines and the fastchess
/// `Elo: …`, `LOS: …`, `Ptnml(0-2): …` and `LLR: …` lines, or with --json one JSON object.
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct StatsArgs {
    /// Wins, draws and losses of the tested engine.
    #[arg(long, num_args = 1.., value_name = "W D L", allow_negative_numbers = true)]
    wdl: Option<Vec<String>>,
    /// Game pairs scoring 0, 0.5, 1, 1.5 and 2 points (LL, LD+DL, WL+LW+DD, WD+DW, WW).
    #[arg(long, num_args = 1.., value_name = "LL LD WL_DD WD WW", allow_negative_numbers = true)]
    ptnml: Option<Vec<String>>,
    /// SPRT null hypothesis (H0): the Elo difference, in the units of --model.
    #[arg(long, allow_hyphen_values = true)]
    elo0: Option<f64>,
    /// SPRT alternative hypothesis (H1): the Elo difference, in the units of --model.
    #[arg(long, allow_hyphen_values = true)]
    elo1: Option<f64>,
    /// SPRT false positive rate: the chance of passing when elo = elo0.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    alpha: f64,
    /// SPRT false negative rate: the chance of failing when elo = elo1.
    #[arg(long, default_value_t = 0.05, allow_hyphen_values = true)]
    beta: f64,
    /// Elo model of the bounds: normalized (nElo), logistic or bayesian (BayesElo, W/D/L only).
    #[arg(long, default_value = "normalized")]
    model: String,
    /// Names of the tested engine and its opponent in the output lines.
    #[arg(long, num_args = 2, value_names = ["FIRST", "SECOND"], default_values = ["dev", "base"])]
    names: Vec<String>,
    /// Print one JSON object instead of the text lines.
    #[arg(long)]
    json: bool,
}

/// Parses `N` non-negative counts given to `--{flag}`.
fn parse_counts<const N: usize>(flag: &str, names: &str, values: &[String]) -> CliResult<[u64; N]> {
    if values.len() != N {
        return Err(CliError::usage(format!(
            "--{flag} takes {N} counts ({names}), got {}: e.g. --{flag} {}",
            values.len(),
            vec!["10"; N].join(" ")
        )));
    }
    let mut counts = [0u64; N];
    for (count, text) in counts.iter_mut().zip(values) {
        *count = text.trim().parse().map_err(|_| {
            CliError::usage(format!(
                "--{flag} {}: '{text}' is not a count; give {N} whole numbers >= 0 ({names})",
                values.join(" ")
            ))
        })?;
    }
    Ok(counts)
}

/// Checks that W/D/L counts and pentanomial counts can describe the same games.
fn check_consistent(games: &Trinomial, pairs: &Pentanomial) -> CliResult {
    let [ll, ld, wl_dd, wd, ww] = pairs.0.map(i128::from);
    let (w, d, l) = (
        i128::from(games.wins),
        i128::from(games.draws),
        i128::from(games.losses),
    );
    // Pairs of one win and one loss: the wins not explained by WD and WW pairs.
    let win_loss = w - wd - 2 * ww;
    let draw_draw_twice = d - ld - wd;
    let consistent = win_loss >= 0
        && win_loss == l - 2 * ll - ld
        && draw_draw_twice >= 0
        && draw_draw_twice == 2 * (wl_dd - win_loss);
    if consistent {
        Ok(())
    } else {
        Err(CliError::usage(format!(
            "--wdl {} {} {} and --ptnml {} {} {} {} {} cannot describe the same games: \
             give counts from the same match, or only one of them",
            games.wins,
            games.draws,
            games.losses,
            pairs.0[0],
            pairs.0[1],
            pairs.0[2],
            pairs.0[3],
            pairs.0[4]
        )))
    }
}

fn request(args: &StatsArgs) -> CliResult<Request> {
    let games = match &args.wdl {
        Some(values) => {
            let [w, d, l] = parse_counts::<3>("wdl", "wins draws losses", values)?;
            Some(
                Trinomial::try_new(w, d, l)
                    .map_err(|e| CliError::usage(format!("--wdl {w} {d} {l}: {e}")))?,
            )
        }
        None => None,
    };
    let pairs = match &args.ptnml {
        Some(values) => {
            let counts = parse_counts::<5>("ptnml", "pairs scoring 0 0.5 1 1.5 2", values)?;
            Some(
                Pentanomial::try_new(counts)
                    .map_err(|e| CliError::usage(format!("--ptnml {}: {e}", values.join(" "))))?,
            )
        }
        None => None,
    };
    // A bad model is refused even without bounds.
    args.model
        .parse::<Model>()
        .map_err(|e| CliError::usage(format!("--model {}: {e}", args.model)))?;
    let sprt = match (args.elo0, args.elo1) {
        (Some(elo0), Some(elo1)) => Some(
            SprtBounds {
                elo0,
                elo1,
                alpha: args.alpha,
                beta: args.beta,
                model: args.model.clone(),
            }
            .check_options()?,
        ),
        (None, None) => None,
        (Some(_), None) => {
            return Err(CliError::usage(
                "--elo0 needs --elo1 too: give both SPRT bounds, e.g. --elo0 0 --elo1 2",
            ))
        }
        (None, Some(_)) => {
            return Err(CliError::usage(
                "--elo1 needs --elo0 too: give both SPRT bounds, e.g. --elo0 0 --elo1 2",
            ))
        }
    };
    if let (Some(g), Some(p)) = (&games, &pairs) {
        check_consistent(g, p)?;
    }
    let bayesian = sprt.is_some_and(|s| s.model() == Model::Bayesian);
    let sample = match (games, pairs) {
        (Some(g), Some(_)) if bayesian => Sample::Trinomial(g),
        (_, Some(_)) if bayesian => {
            return Err(CliError::usage(
                "--model bayesian needs W/D/L counts: give --wdl W D L, or use --model normalized or logistic with --ptnml",
            ));
        }
        (_, Some(p)) => Sample::Pentanomial(p),
        (Some(g), None) => Sample::Trinomial(g),
        (None, None) => {
            return Err(CliError::usage(
                "no counts given: use --wdl W D L (wins draws losses) or --ptnml LL LD WL_DD WD WW (game pairs)",
            ))
        }
    };
    Ok(Request {
        games,
        pairs,
        sample,
        sprt,
    })
}

/// Runs `spar stats`.
pub fn run(args: StatsArgs) -> CliResult {
    let req = request(&args)?;
    let estimate = req.sample.estimate();
    if args.json {
        let report = json_report(&req, &estimate)?;
        let text =
            serde_json::to_string_pretty(&report).map_err(|e| CliError::failure(e.to_string()))?;
        stdout::print(&(text + "\n"))
    } else {
        stdout::print_lines(&text_report(&req, &estimate, &args.names)?)
    }
}
