//! `spar stats`: Elo, LOS, normalized Elo and the SPRT log-likelihood ratio from counts,
//! printed in the formats of cutechess and fastchess, or as JSON.

use serde_json::{json, Map, Value};
use sprt::{format, Estimate, Model, Pentanomial, Sample, Sprt, Trinomial};

use crate::error::{CliError, CliResult};

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
    #[arg(long, allow_negative_numbers = true)]
    elo0: Option<f64>,
    /// SPRT alternative hypothesis (H1): the Elo difference, in the units of --model.
    #[arg(long, allow_negative_numbers = true)]
    elo1: Option<f64>,
    /// SPRT false positive rate: the chance of passing when elo = elo0.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
    alpha: f64,
    /// SPRT false negative rate: the chance of failing when elo = elo1.
    #[arg(long, default_value_t = 0.05, allow_negative_numbers = true)]
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

/// A number for JSON: non-finite values become the strings "inf", "-inf", "nan".
pub(crate) fn number(x: f64) -> Value {
    if x.is_nan() {
        json!("nan")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

/// What the user asked about (also built by `spar match` for its summary).
pub(crate) struct Request {
    pub(crate) games: Option<Trinomial>,
    pub(crate) pairs: Option<Pentanomial>,
    pub(crate) sample: Sample,
    pub(crate) sprt: Option<Sprt>,
}

fn request(args: &StatsArgs) -> CliResult<Request> {
    let games = match &args.wdl {
        Some(values) => {
            let [w, d, l] = parse_counts::<3>("wdl", "wins draws losses", values)?;
            Some(Trinomial::new(w, d, l))
        }
        None => None,
    };
    let pairs = match &args.ptnml {
        Some(values) => Some(Pentanomial::new(parse_counts::<5>(
            "ptnml",
            "pairs scoring 0 0.5 1 1.5 2",
            values,
        )?)),
        None => None,
    };
    let model: Model = args
        .model
        .parse()
        .map_err(|e| CliError::usage(format!("--model {}: {e}", args.model)))?;
    let sprt = match (args.elo0, args.elo1) {
        (Some(elo0), Some(elo1)) => Some(
            Sprt::new(elo0, elo1, args.alpha, args.beta, model).map_err(|e| {
                CliError::usage(format!(
                    "SPRT --elo0 {elo0} --elo1 {elo1} --alpha {} --beta {}: {e}",
                    args.alpha, args.beta
                ))
            })?,
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

pub(crate) fn json_report(req: &Request, estimate: &Estimate) -> CliResult<Value> {
    let mut out = Map::new();
    out.insert("games".into(), json!(estimate.games));
    if let Some(g) = &req.games {
        out.insert("wins".into(), json!(g.wins));
        out.insert("draws".into(), json!(g.draws));
        out.insert("losses".into(), json!(g.losses));
    }
    if let Some(p) = &req.pairs {
        out.insert("ptnml".into(), json!(p.0));
    }
    out.insert("score".into(), number(estimate.score));
    out.insert("elo".into(), number(estimate.elo));
    out.insert("elo_error".into(), number(estimate.elo_error));
    out.insert("los".into(), number(estimate.los));
    match req.sample {
        Sample::Trinomial(_) => {
            out.insert("draw_ratio".into(), number(estimate.draw_ratio));
        }
        Sample::Pentanomial(p) => {
            out.insert("pair_draw_ratio".into(), number(p.pair_draw_ratio()));
            if let Some(g) = &req.games {
                out.insert(
                    "draw_ratio".into(),
                    number(g.draws as f64 / g.games() as f64),
                );
            }
        }
    }
    out.insert("nelo".into(), number(estimate.nelo));
    out.insert("nelo_error".into(), number(estimate.nelo_error));
    if let Some(sprt) = &req.sprt {
        let status = sprt
            .status(&req.sample)
            .map_err(|e| CliError::usage(e.to_string()))?;
        out.insert("llr".into(), number(status.llr));
        out.insert("lower_bound".into(), number(status.lower_bound));
        out.insert("upper_bound".into(), number(status.upper_bound));
        out.insert("decision".into(), json!(status.decision.name()));
        out.insert("model".into(), json!(sprt.model().name()));
    }
    Ok(Value::Object(out))
}

pub(crate) fn text_report(
    req: &Request,
    estimate: &Estimate,
    names: &[String],
) -> CliResult<Vec<String>> {
    let (first, second) = (&names[0], &names[1]);
    let mut lines = Vec::new();
    if let Some(g) = &req.games {
        lines.push(format::cutechess_score(g, first, second));
    }
    lines.push(format::cutechess_elo(estimate));
    lines.push(format::fastchess_elo(estimate));
    let pair_ratio = match req.sample {
        Sample::Pentanomial(p) => Some(p.pair_ratio()),
        Sample::Trinomial(_) => None,
    };
    lines.push(format::fastchess_los(estimate, pair_ratio));
    if let Some(g) = &req.games {
        lines.push(format::fastchess_games(g));
    }
    if let Some(p) = &req.pairs {
        lines.push(format::fastchess_ptnml(p));
    }
    if let Some(sprt) = &req.sprt {
        let forecast = sprt
            .forecast(&req.sample)
            .map_err(|e| CliError::usage(e.to_string()))?;
        lines.push(format::fastchess_llr(sprt, forecast.llr));
        let decision = sprt.decide(forecast.llr);
        if decision == sprt::Decision::Continue {
            if forecast.expected_games.is_finite() {
                lines.push(format!(
                    "Forecast: ~{:.0} more games to a decision, P(pass) {:.2}",
                    forecast.expected_games, forecast.pass_probability
                ));
            }
        } else {
            let verdict = if decision == sprt::Decision::H1 {
                "H1 accepted (pass)"
            } else {
                "H0 accepted (fail)"
            };
            lines.push(format!("SPRT: {verdict}"));
        }
    }
    Ok(lines)
}

/// Runs `spar stats`.
pub fn run(args: StatsArgs) -> CliResult {
    let req = request(&args)?;
    let estimate = req.sample.estimate();
    if args.json {
        let report = json_report(&req, &estimate)?;
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| CliError::failure(e.to_string()))?
        );
    } else {
        for line in text_report(&req, &estimate, &args.names)? {
            println!("{line}");
        }
    }
    Ok(())
}
