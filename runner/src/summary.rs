//! What a match reports: the summary lines in the cutechess or fastchess format, the JSON
//! summary, the live status line, and the statistics lines `spar stats` prints.

use std::time::Duration;

use serde_json::{json, Map, Value};
use sprt::{format, Decision, Estimate, Model, Pentanomial, Sample, Sprt, Trinomial};

use crate::error::{CliError, CliResult};
use crate::play::schedule::PairOutcome;
use crate::play::tally::{GameSummary, Tally};

/// Summary formats.
#[derive(
    clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize,
)]
pub enum OutputFormat {
    /// cutechess-cli lines.
    Cutechess,
    /// fastchess lines.
    Fastchess,
}

/// What a match summary describes besides the counts.
pub struct MatchInfo<'a> {
    /// The two engines' names.
    pub names: [&'a str; 2],
    /// The limits, as the header says them.
    pub limits: String,
    /// The book, as the header says it.
    pub book: &'a str,
    /// The SPRT, if any.
    pub sprt: Option<&'a Sprt>,
}

/// A number for JSON: non-finite values become the strings "inf", "-inf", "nan".
pub fn number(x: f64) -> Value {
    if x.is_nan() {
        json!("nan")
    } else if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

/// What the user asked about (also built by `spar match` for its summary).
pub struct Request {
    pub games: Option<Trinomial>,
    pub pairs: Option<Pentanomial>,
    pub sample: Sample,
    pub sprt: Option<Sprt>,
}

pub fn json_report(req: &Request, estimate: &Estimate) -> CliResult<Value> {
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

pub fn text_report(req: &Request, estimate: &Estimate, names: &[String]) -> CliResult<Vec<String>> {
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

/// The two games of a pair as the tally counts them.
pub fn pair_summaries(pair: &PairOutcome) -> [GameSummary; 2] {
    [0, 1].map(|g| GameSummary {
        first_is_white: g == 0,
        outcome: pair.games[g].outcome,
        termination: pair.games[g].termination,
    })
}

/// The SPRT sample: pairs, or games for the bayesian model (trinomial only).
pub fn sample(tally: &Tally, sprt: &Sprt) -> Sample {
    if sprt.model() == Model::Bayesian {
        Sample::Trinomial(tally.games)
    } else {
        Sample::Pentanomial(tally.pairs)
    }
}

/// The statistics request of a match's totals.
pub fn request(tally: &Tally, sprt: Option<&Sprt>) -> Request {
    let sample = match sprt {
        Some(s) => sample(tally, s),
        None => Sample::Pentanomial(tally.pairs),
    };
    Request {
        games: Some(tally.games),
        pairs: Some(tally.pairs),
        sample,
        sprt: sprt.copied(),
    }
}

/// The final summary of a match in `format`, with a line per engine that failed.
pub fn summary_lines(
    tally: &Tally,
    info: &MatchInfo,
    format: OutputFormat,
) -> CliResult<Vec<String>> {
    let names = info.names;
    let req = request(tally, info.sprt);
    let estimate = req.sample.estimate();
    let mut lines = Vec::new();
    match format {
        OutputFormat::Cutechess => {
            lines.push(format::cutechess_score(&tally.games, names[0], names[1]));
            // cutechess computes its Elo line from W/D/L.
            lines.push(format::cutechess_elo(&tally.games.estimate()));
            if let Some(s) = info.sprt {
                let st = s
                    .status(&req.sample)
                    .map_err(|e| CliError::failure(e.to_string()))?;
                let verdict = match st.decision {
                    Decision::H1 => " - H1 was accepted",
                    Decision::H0 => " - H0 was accepted",
                    Decision::Continue => "",
                };
                lines.push(format!(
                    "SPRT: llr {:.3} ({:.1}%), lbound {:.2}, ubound {:.2}{verdict}",
                    st.llr,
                    s.fraction(st.llr) * 100.0,
                    st.lower_bound,
                    st.upper_bound
                ));
            }
            lines.push(format::fastchess_ptnml(&tally.pairs));
        }
        OutputFormat::Fastchess => {
            lines.push(format!(
                "Results of {} vs {} ({}, {}):",
                names[0], names[1], info.limits, info.book
            ));
            lines.extend(
                // Skip the two cutechess lines (score, Elo difference).
                text_report(&req, &estimate, &names.map(String::from))?
                    .into_iter()
                    .skip(2),
            );
        }
    }
    let f = &tally.failures;
    let fail_total =
        |i: usize| f[i].crashes + f[i].stalls + f[i].time_forfeits + f[i].illegal_moves;
    for i in 0..2 {
        if fail_total(i) > 0 {
            lines.push(format!(
                "{}: {} crashes, {} stalls, {} time forfeits, {} illegal moves",
                names[i], f[i].crashes, f[i].stalls, f[i].time_forfeits, f[i].illegal_moves
            ));
        }
    }
    // How many games the tables ended (`--tb`); no line without any, so a match without
    // tables prints what it always did.
    let by_tables = tally
        .terminations
        .get(&crate::play::game::Termination::TablebaseAdjudication)
        .copied()
        .unwrap_or(0);
    if by_tables > 0 {
        lines.push(format!(
            "Tablebase adjudications: {by_tables} of {} games (SyzygyTB)",
            tally.games.games()
        ));
    }
    Ok(lines)
}

/// The `--json` summary of a match.
pub fn json_summary(
    tally: &Tally,
    info: &MatchInfo,
    seed: u64,
    decision: Option<Decision>,
    command_line: &[String],
    elapsed: Duration,
) -> CliResult<Value> {
    let req = request(tally, info.sprt);
    let estimate = req.sample.estimate();
    let mut report = json_report(&req, &estimate)?;
    let obj = report.as_object_mut().expect("object");
    if let Some(d) = decision {
        obj.insert("decision".into(), json!(d.name()));
    }
    obj.insert("engines".into(), json!(info.names));
    obj.insert("pairs".into(), json!(tally.pairs.pairs()));
    let terminations: Map<String, Value> = tally
        .terminations
        .iter()
        .map(|(t, n)| (t.key().to_string(), json!(n)))
        .collect();
    obj.insert("terminations".into(), Value::Object(terminations));
    let failures: Map<String, Value> = (0..2)
        .map(|i| {
            let f = tally.failures[i];
            (
                info.names[i].to_string(),
                json!({"crashes": f.crashes, "stalls": f.stalls, "time_forfeits": f.time_forfeits, "illegal_moves": f.illegal_moves}),
            )
        })
        .collect();
    obj.insert("failures".into(), Value::Object(failures));
    obj.insert(
        "crashes".into(),
        json!(tally.failures[0].crashes + tally.failures[1].crashes),
    );
    obj.insert(
        "time_forfeits".into(),
        json!(tally.failures[0].time_forfeits + tally.failures[1].time_forfeits),
    );
    obj.insert("seed".into(), json!(seed));
    obj.insert("command_line".into(), json!(command_line.join(" ")));
    obj.insert("duration_seconds".into(), number(elapsed.as_secs_f64()));
    Ok(report)
}

/// `W-L-D 10-8-12  Elo 23.2 ± 45.1  nElo 30.1 ± 58.8  LLR 0.41 [-2.94, 2.94]  Ptnml [..]  ~1200 games to go, P(pass) 0.71`
pub fn status_line(tally: &Tally, sprt: Option<&Sprt>, names: [&str; 2]) -> String {
    let sample = match sprt {
        Some(s) if s.model() == Model::Bayesian => Sample::Trinomial(tally.games),
        _ => Sample::Pentanomial(tally.pairs),
    };
    let e = sample.estimate();
    let g = &tally.games;
    // No spread yet (no games, or only draws): nElo is undefined, said so rather than "nan";
    // `+ 0.0` turns a negative zero into a plain one.
    let nelo = if e.nelo.is_nan() {
        "n/a".to_string()
    } else {
        format!(
            "{} ± {}",
            format::number(e.nelo + 0.0, 1),
            format::number(e.nelo_error, 1)
        )
    };
    let mut s = format!(
        "{} vs {}: W-L-D {}-{}-{}  Elo {} ± {}  nElo {}  Ptnml {:?}",
        names[0],
        names[1],
        g.wins,
        g.losses,
        g.draws,
        format::number(e.elo + 0.0, 1),
        format::number(e.elo_error, 1),
        nelo,
        tally.pairs.0
    );
    if let Some(sp) = sprt {
        if let Ok(f) = sp.forecast(&sample) {
            s.push_str(&format!(
                "  LLR {:.2} [{:.2}, {:.2}]",
                f.llr,
                sp.lower_bound(),
                sp.upper_bound()
            ));
            if sp.decide(f.llr) == Decision::Continue && f.expected_games.is_finite() {
                s.push_str(&format!(
                    "  ~{:.0} games to go, P(pass) {:.2}",
                    f.expected_games, f.pass_probability
                ));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(w: u64, d: u64, l: u64, pairs: [u64; 5]) -> Tally {
        Tally {
            games: Trinomial {
                wins: w,
                draws: d,
                losses: l,
            },
            pairs: Pentanomial::new(pairs),
            ..Tally::default()
        }
    }

    #[test]
    fn status_line_says_n_a_for_an_undefined_nelo_and_no_negative_zero() {
        let line = status_line(&tally(0, 2, 0, [0, 0, 1, 0, 0]), None, ["dev", "base"]);
        assert_eq!(
            line,
            "dev vs base: W-L-D 0-0-2  Elo 0.0 ± 0.0  nElo n/a  Ptnml [0, 0, 1, 0, 0]"
        );
        let line = status_line(&tally(3, 2, 1, [0, 1, 0, 1, 1]), None, ["a", "b"]);
        assert!(line.contains("nElo ") && !line.contains("n/a"), "{line}");
    }
}
