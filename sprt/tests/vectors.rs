//! Every vector of `tests/data/vectors.json` (fishtest / fastchess reference values) must
//! match the library to 1e-6 (relative, or absolute near zero).

use serde_json::Value;
use sprt::{Model, Pentanomial, Sample, Sprt, Trinomial};

fn vectors() -> Vec<Value> {
    let text = include_str!("data/vectors.json");
    let root: Value = serde_json::from_str(text).expect("vectors.json parses");
    root["vectors"]
        .as_array()
        .expect("a list of vectors")
        .clone()
}

/// Expected number: a JSON number or one of the strings "inf", "-inf", "nan".
fn expected_number(value: &Value) -> f64 {
    match value {
        Value::Number(n) => n.as_f64().unwrap(),
        Value::String(s) => match s.as_str() {
            "inf" => f64::INFINITY,
            "-inf" => f64::NEG_INFINITY,
            "nan" => f64::NAN,
            other => panic!("unexpected string {other}"),
        },
        other => panic!("unexpected value {other}"),
    }
}

fn matches(actual: f64, expected: f64) -> bool {
    if expected.is_nan() {
        return actual.is_nan();
    }
    if expected.is_infinite() {
        return actual == expected;
    }
    let diff = (actual - expected).abs();
    diff <= 1e-6 || diff <= 1e-6 * expected.abs()
}

#[test]
fn all_vectors_match() {
    let mut failures = Vec::new();
    let vectors = vectors();
    assert!(vectors.len() >= 20);
    for vector in &vectors {
        let id = vector["id"].as_str().unwrap();
        let input = &vector["input"];
        let sample: Sample = if let Some(wdl) = input.get("wdl") {
            let v: Vec<u64> = wdl
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            Trinomial::new(v[0], v[1], v[2]).into()
        } else {
            let v: Vec<u64> = input["ptnml"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_u64().unwrap())
                .collect();
            Pentanomial::new([v[0], v[1], v[2], v[3], v[4]]).into()
        };
        let estimate = sample.estimate();
        let mut actual = vec![
            ("score", estimate.score),
            ("elo", estimate.elo),
            ("elo_error", estimate.elo_error),
            ("los", estimate.los),
            ("nelo", estimate.nelo),
            ("nelo_error", estimate.nelo_error),
        ];
        match sample {
            Sample::Trinomial(_) => actual.push(("draw_ratio", estimate.draw_ratio)),
            Sample::Pentanomial(p) => actual.push(("pair_draw_ratio", p.pair_draw_ratio())),
        }
        let expected = &vector["expected"];
        assert_eq!(
            expected["games"].as_u64().unwrap(),
            estimate.games,
            "{id}: games"
        );
        if let Some(params) = vector.get("sprt") {
            let model: Model = params["model"].as_str().unwrap().parse().unwrap();
            let sprt = Sprt::new(
                params["elo0"].as_f64().unwrap(),
                params["elo1"].as_f64().unwrap(),
                params["alpha"].as_f64().unwrap(),
                params["beta"].as_f64().unwrap(),
                model,
            )
            .unwrap();
            let status = sprt.status(&sample).unwrap();
            actual.push(("llr", status.llr));
            actual.push(("lower_bound", status.lower_bound));
            actual.push(("upper_bound", status.upper_bound));
            let decision = expected["decision"].as_str().unwrap();
            if !status.decision.name().eq_ignore_ascii_case(decision) {
                failures.push(format!(
                    "{id}: decision {} expected {decision}",
                    status.decision
                ));
            }
        }
        for (key, value) in actual {
            let want = expected_number(&expected[key]);
            if !matches(value, want) {
                failures.push(format!("{id}: {key} = {value:e}, expected {want:e}"));
            }
        }
        // Every expected key is checked.
        for key in expected.as_object().unwrap().keys() {
            let known = [
                "games",
                "decision",
                "score",
                "elo",
                "elo_error",
                "los",
                "nelo",
                "nelo_error",
                "draw_ratio",
                "pair_draw_ratio",
                "llr",
                "lower_bound",
                "upper_bound",
            ];
            assert!(known.contains(&key.as_str()), "{id}: unchecked key {key}");
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
