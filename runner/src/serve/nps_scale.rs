//! Clocks scaled by bench speed (issue 32, OpenBench's "scale nps"): a run whose words
//! carry [`WORD`] plays its time limits multiplied by `reference nps / host nps`, so that a
//! slower machine gets more time and a faster one less. The server's setting
//! `--reference-nps` is the speed the run's clock is meant for; the host's speed is its
//! `spar bench` measured at start ([`super::machines`]). Every time limit form of the
//! engine words is rewritten: `tc=[MOVES/]BASE[+INC]` (seconds, or `M:S`), `st=SECONDS`,
//! `movetime=MS`; node- and depth-limited words are never touched. [`WORD`] itself is the
//! server's: it never reaches the child.

/// The word that asks for scaling (stored with the run's words, left out of the child's).
pub const WORD: &str = "--scale-nps";

/// Whether the words ask for scaling.
pub fn wanted(words: &[String]) -> bool {
    words.iter().any(|w| w == WORD)
}

/// The words without [`WORD`] (what the child and the command line get).
pub fn strip(words: &[String]) -> Vec<String> {
    words.iter().filter(|w| *w != WORD).cloned().collect()
}

/// Whether the words give a clock (`tc=`, `st=` or `movetime=`).
pub fn has_clock(words: &[String]) -> bool {
    words.iter().any(|w| rewrite(w, 1.0).is_some())
}

/// Checks a run's opt-in: with [`WORD`], the server needs `reference` (`--reference-nps`),
/// the local backend, and the run a clock. Words without it pass.
pub fn check(words: &[String], reference: Option<u64>, slurm: bool) -> Result<(), String> {
    if !wanted(words) {
        return Ok(());
    }
    if reference.is_none() {
        return Err(format!(
            "{WORD}: this server has no reference speed to scale by (start it with \
             --reference-nps N, or leave {WORD} out)"
        ));
    }
    if slurm {
        return Err(format!(
            "{WORD}: only the local backend's runs are scaled (a Slurm node's speed is not \
             known when its shard starts); leave {WORD} out"
        ));
    }
    if !has_clock(words) {
        return Err(format!(
            "{WORD}: the run has no clock to scale (give tc=, st= or movetime=, e.g. \
             --each tc=10+0.1; node- and depth-limited runs are never scaled)"
        ));
    }
    Ok(())
}

/// The factor the clocks are multiplied by: `reference / host` (a host twice as slow as
/// the reference gets twice the time).
pub fn factor(reference: u64, host: u64) -> f64 {
    reference as f64 / host.max(1) as f64
}

/// How a run's clocks were scaled: `factor` = `reference` / `host` nps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scaled {
    pub factor: f64,
    pub reference: u64,
    pub host: u64,
}

impl Scaled {
    /// In words, for the event log: `its clocks scaled ×2.000 (reference 2000000 nps /
    /// host 1000000 nps)`.
    pub fn describe(&self) -> String {
        format!(
            "its clocks scaled \u{d7}{:.3} (reference {} nps / host {} nps)",
            self.factor, self.reference, self.host
        )
    }
}

/// The words a run's child plays (without [`WORD`]) and, for a run that asks for scaling,
/// how they were scaled; an error when it asks but the server has no `reference` speed
/// (now) or the host's speed is unknown.
pub fn for_child(
    words: &[String],
    reference: Option<u64>,
    host: Option<u64>,
) -> Result<(Vec<String>, Option<Scaled>), String> {
    let plain = strip(words);
    if !wanted(words) {
        return Ok((plain, None));
    }
    let reference = reference.ok_or_else(|| {
        format!(
            "{WORD}: the server has no --reference-nps now (restart it with --reference-nps \
             N, or submit the run again without {WORD})"
        )
    })?;
    let host = host.ok_or_else(|| {
        format!("{WORD}: this host's bench speed is unknown (its `spar bench` failed)")
    })?;
    let f = factor(reference, host);
    Ok((
        scale(&plain, f),
        Some(Scaled {
            factor: f,
            reference,
            host,
        }),
    ))
}

/// The words with every time limit multiplied by `factor` (rounded to milliseconds, at
/// least 1 ms where the limit had time), the others as they are.
pub fn scale(words: &[String], factor: f64) -> Vec<String> {
    words
        .iter()
        .map(|w| rewrite(w, factor).unwrap_or_else(|| w.clone()))
        .collect()
}

/// One word scaled, when it is a time limit that parses; `None` otherwise.
fn rewrite(word: &str, factor: f64) -> Option<String> {
    let (key, value) = word.split_once('=')?;
    match key {
        "tc" => scale_tc(value, factor).map(|v| format!("tc={v}")),
        "st" => {
            let s: f64 = value.parse().ok().filter(|s: &f64| s.is_finite())?;
            Some(format!("st={}", seconds(ms(s * factor * 1000.0))))
        }
        "movetime" => {
            let m: u64 = value.parse().ok()?;
            Some(format!("movetime={}", ms(m as f64 * factor)))
        }
        _ => None,
    }
}

/// A `tc=` value scaled: its base and increment (the moves stay), written in seconds.
fn scale_tc(value: &str, factor: f64) -> Option<String> {
    let (moves, rest) = match value.split_once('/') {
        Some((m, rest)) => (Some(m), rest),
        None => (None, value),
    };
    let (base, inc) = match rest.split_once('+') {
        Some((b, i)) => (b, Some(i)),
        None => (rest, None),
    };
    let secs = |s: &str| -> Option<f64> {
        let v = match s.split_once(':') {
            Some((m, s)) => m.parse::<f64>().ok()? * 60.0 + s.parse::<f64>().ok()?,
            None => s.parse::<f64>().ok()?,
        };
        (v.is_finite() && v >= 0.0).then_some(v)
    };
    let scaled = |v: f64| -> String {
        if v > 0.0 {
            seconds(ms(v * factor * 1000.0))
        } else {
            "0".into()
        }
    };
    let mut out = moves.map_or(String::new(), |m| format!("{m}/"));
    out.push_str(&scaled(secs(base)?));
    if let Some(i) = inc {
        out.push('+');
        out.push_str(&scaled(secs(i)?));
    }
    Some(out)
}

/// Milliseconds rounded, at least 1.
fn ms(v: f64) -> u64 {
    (v.round() as u64).max(1)
}

/// Milliseconds as seconds, with no trailing zeros (`1500` → `1.5`).
fn seconds(ms: u64) -> String {
    let s = format!("{}.{:03}", ms / 1000, ms % 1000);
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_time_limit_form_is_scaled_and_nothing_else() {
        let words = w(
            "--engine name=a tc=10+0.1 --engine name=b tc=40/60+0.6 --each st=0.5 \
             movetime=50 tc=1:30 tc=5 tc=0+0.05 nodes=1000 depth=8 option.tc=3",
        );
        assert_eq!(
            scale(&words, 2.0),
            w(
                "--engine name=a tc=20+0.2 --engine name=b tc=40/120+1.2 --each st=1 \
             movetime=100 tc=180 tc=10 tc=0+0.1 nodes=1000 depth=8 option.tc=3"
            )
        );
        // Rounded to milliseconds, never below 1 ms.
        assert_eq!(
            scale(&w("tc=10+0.1 st=0.001 movetime=1"), 1.0 / 3.0),
            w("tc=3.333+0.033 st=0.001 movetime=1")
        );
        assert_eq!(scale(&w("tc=8+0.08"), 0.5), w("tc=4+0.04"));
        // What does not parse is left for the child's own check.
        assert_eq!(scale(&w("tc=abc st=x"), 2.0), w("tc=abc st=x"));
        assert_eq!(factor(2_000_000, 1_000_000), 2.0);
        assert_eq!(factor(1, 0), 1.0);
    }

    #[test]
    fn the_opt_in_needs_a_reference_the_local_backend_and_a_clock() {
        assert!(check(&w("--each nodes=500"), None, true).is_ok());
        let e = check(&w("--scale-nps --each tc=1+0.1"), None, false).unwrap_err();
        assert!(e.contains("--reference-nps"), "{e}");
        let e = check(&w("--scale-nps --each tc=1+0.1"), Some(1), true).unwrap_err();
        assert!(e.contains("local backend"), "{e}");
        let e = check(&w("--scale-nps --each nodes=500"), Some(1), false).unwrap_err();
        assert!(e.contains("no clock"), "{e}");
        assert!(check(&w("--scale-nps --each st=0.1"), Some(1), false).is_ok());
        assert_eq!(strip(&w("--scale-nps --each st=0.1")), w("--each st=0.1"));
        assert!(wanted(&w("a --scale-nps")) && !wanted(&w("--scale-nps-x")));
    }

    #[test]
    fn the_child_gets_the_scaled_words_without_the_opt_in() {
        let (v, s) = for_child(&w("--each tc=1+0.01"), Some(2), None).unwrap();
        assert_eq!((v, s), (w("--each tc=1+0.01"), None));
        let (v, s) = for_child(&w("--scale-nps --each tc=1+0.01"), Some(2000), Some(1000)).unwrap();
        assert_eq!(v, w("--each tc=2+0.02"));
        assert_eq!(s.unwrap().factor, 2.0);
        assert!(s
            .unwrap()
            .describe()
            .contains("reference 2000 nps / host 1000 nps"));
        let e = for_child(&w("--scale-nps tc=1"), None, Some(1)).unwrap_err();
        assert!(e.contains("--reference-nps"), "{e}");
        let e = for_child(&w("--scale-nps tc=1"), Some(1), None).unwrap_err();
        assert!(e.contains("unknown"), "{e}");
    }
}
