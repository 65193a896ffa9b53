//! The new-run form's engine fields, as OpenBench's form has them — one engine, the dev and
//! base revisions, the bench each should print, and each side's own words — turned into the
//! engine words a run has (`--engine name=dev engine=NAME rev=REV bench=N …`). The form, the
//! API and `spar submit` then take one path: [`super::actions::submit`] (which builds,
//! checks the benches and refuses what is wrong).

/// The engine select's value for spar's embedded engine (no registered name has a `:`).
pub const EMBEDDED: &str = ":spar";

/// The form's engine fields, trimmed; the words of each side already split.
#[derive(Clone, Debug, Default)]
pub struct EngineFields {
    /// Empty (the words name the engines), [`EMBEDDED`], or a registered engine's name.
    pub engine: String,
    pub dev_rev: String,
    pub dev_bench: String,
    /// The dev engine's own words (`option.X=V`, `tc=`, `nodes=`).
    pub dev_words: Vec<String>,
    pub base_rev: String,
    pub base_bench: String,
    pub base_words: Vec<String>,
}

/// The words of the run: `words` as given when no engine is chosen, else the dev and base
/// `--engine`s the fields describe followed by `words`. Refused, with the field named: a
/// revision or bench without an engine (or with the embedded one), a missing revision of a
/// registered engine, a bench that is not a whole number, `--engine` in the words beside
/// the engine fields, a flag or an `engine=`/`rev=`/`bench=`/`name=` in a side's words.
pub fn engine_words(f: &EngineFields, words: Vec<String>) -> Result<Vec<String>, String> {
    let sides = [
        ("dev", &f.dev_rev, &f.dev_bench, &f.dev_words),
        ("base", &f.base_rev, &f.base_bench, &f.base_words),
    ];
    if f.engine.is_empty() {
        for (side, rev, bench, own) in sides {
            let given = [("revision", rev.as_str()), ("bench", bench.as_str())]
                .into_iter()
                .find(|(_, v)| !v.is_empty())
                .map(|(what, v)| format!("{side} {what} '{v}'"))
                .or_else(|| (!own.is_empty()).then(|| format!("{side} words")));
            if let Some(what) = given {
                return Err(format!(
                    "{what}: choose the engine first (or leave the dev and base fields empty \
                     and name the engines in the words)"
                ));
            }
        }
        return Ok(words);
    }
    if let Some(w) = words
        .iter()
        .find(|w| *w == "--engine" || w.starts_with("--engine="))
    {
        return Err(format!(
            "words '{w}': the engines come from the engine fields (dev and base): leave \
             --engine out of the words, or choose \"engines in the words\""
        ));
    }
    let mut out = Vec::new();
    for (side, rev, bench, own) in sides {
        for w in own.iter() {
            let key = w.split('=').next().unwrap_or(w);
            if w.starts_with('-') {
                return Err(format!(
                    "{side} words '{w}': only that engine's words go here (option.X=V, tc=, \
                     nodes=); flags go in the words"
                ));
            }
            if ["engine", "rev", "bench", "name"].contains(&key) {
                return Err(format!(
                    "{side} words '{w}': {key}= comes from the form's fields: leave it out"
                ));
            }
        }
        out.push("--engine".to_string());
        out.push(format!("name={side}"));
        if f.engine == EMBEDDED {
            let given = [("revision", rev.as_str()), ("bench", bench.as_str())]
                .into_iter()
                .find(|(_, v)| !v.is_empty());
            if let Some((what, v)) = given {
                return Err(format!(
                    "{side} {what} '{v}': spar's embedded engine is this server's own spar; \
                     to test revisions, register its repository on /engines and choose it"
                ));
            }
        } else {
            if rev.is_empty() {
                return Err(format!(
                    "{side} revision: required (a branch, tag or sha of engine {})",
                    f.engine
                ));
            }
            out.push(format!("engine={}", f.engine));
            out.push(format!("rev={rev}"));
            if !bench.is_empty() {
                if bench.parse::<u64>().is_err() {
                    return Err(format!(
                        "{side} bench '{bench}': the node count its bench prints, a whole \
                         number (or leave it empty)"
                    ));
                }
                out.push(format!("bench={bench}"));
            }
        }
        out.extend(own.iter().cloned());
    }
    out.extend(words);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn fields(engine: &str, dev: (&str, &str), base: (&str, &str)) -> EngineFields {
        EngineFields {
            engine: engine.into(),
            dev_rev: dev.0.into(),
            dev_bench: dev.1.into(),
            base_rev: base.0.into(),
            base_bench: base.1.into(),
            ..EngineFields::default()
        }
    }

    #[test]
    fn a_registered_engine_becomes_dev_and_base_engine_words() {
        let mut f = fields("stash", ("my-branch", "4370213"), ("master", ""));
        f.dev_words = w("option.Hash=16");
        let got = engine_words(&f, w("--each nodes=500 --games 4")).unwrap();
        assert_eq!(
            got,
            w(
                "--engine name=dev engine=stash rev=my-branch bench=4370213 option.Hash=16 \
               --engine name=base engine=stash rev=master --each nodes=500 --games 4"
            )
        );
    }

    #[test]
    fn the_embedded_engine_and_no_engine() {
        let mut f = fields(EMBEDDED, ("", ""), ("", ""));
        f.dev_words = w("option.rfp_margin=60");
        assert_eq!(
            engine_words(&f, w("--games 2")).unwrap(),
            w("--engine name=dev option.rfp_margin=60 --engine name=base --games 2")
        );
        let words = w("--engine name=a --engine name=b --games 2");
        assert_eq!(
            engine_words(&EngineFields::default(), words.clone()).unwrap(),
            words
        );
    }

    #[test]
    fn what_does_not_fit_is_refused_with_the_field_named() {
        let cases = [
            (
                fields("", ("main", ""), ("", "")),
                "",
                "dev revision 'main'",
            ),
            (fields("", ("", ""), ("", "12")), "", "base bench '12'"),
            (
                fields(EMBEDDED, ("x", ""), ("", "")),
                "",
                "dev revision 'x'",
            ),
            (
                fields("e", ("", ""), ("m", "")),
                "",
                "dev revision: required",
            ),
            (fields("e", ("a", "1k"), ("m", "")), "", "dev bench '1k'"),
            (
                fields("e", ("a", ""), ("m", "")),
                "--engine name=c",
                "leave --engine out",
            ),
        ];
        for (f, words, needle) in cases {
            let e = engine_words(&f, w(words)).unwrap_err();
            assert!(e.contains(needle), "{f:?}: {e}");
        }
        let mut f = fields("e", ("a", ""), ("m", ""));
        f.base_words = w("rev=x");
        assert!(engine_words(&f, vec![])
            .unwrap_err()
            .contains("base words 'rev=x'"));
        f.base_words = w("--games");
        assert!(engine_words(&f, vec![])
            .unwrap_err()
            .contains("flags go in the words"));
    }
}
