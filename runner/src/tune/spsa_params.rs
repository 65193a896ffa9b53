//! The parameters an SPSA run tunes: their start values, ranges and step sizes.
//!
//! Two input forms are read, one parameter per line (blank lines and `#` comments skipped):
//!
//! - OpenBench: `name, int, start, min, max, c_end, r_end` (what `spar params` prints);
//! - fishtest: `name, start, min, max, c_end, r_end`.
//!
//! Every name must be a registered parameter of the builtin engine, and the range must lie
//! inside the registered one (the engine rejects values outside it).

use std::path::Path;

use data::quote::Quoted;
use engine::params::{self, ParamSpec};

/// One parameter under tuning.
#[derive(Clone, Debug, PartialEq)]
pub struct SpsaParam {
    /// Registered name (`rfp_margin`).
    pub name: String,
    /// Starting value of θ.
    pub start: f64,
    /// Smallest allowed value.
    pub min: f64,
    /// Largest allowed value.
    pub max: f64,
    /// Perturbation size at the end of the run.
    pub c_end: f64,
    /// Learning rate at the end of the run.
    pub r_end: f64,
}

impl SpsaParam {
    /// The registry's entry for a parameter: its default, range and step sizes.
    pub fn from_spec(spec: &ParamSpec) -> SpsaParam {
        SpsaParam {
            name: spec.name.clone(),
            start: spec.default as f64,
            min: spec.min as f64,
            max: spec.max as f64,
            c_end: spec.c_end,
            r_end: spec.r_end,
        }
    }

    /// A registered parameter by name, at its default (`--param rfp_margin`).
    pub fn from_registry(name: &str) -> Result<SpsaParam, String> {
        params::spec(name).map(SpsaParam::from_spec).ok_or_else(|| {
            format!("--param {name}: unknown parameter (`spar params --search` lists them)")
        })
    }
}

/// Parses one input line (already known not to be blank or a comment).
pub fn parse_line(line: &str) -> Result<SpsaParam, String> {
    let p = parse_fields(line)?;
    check(&p)?;
    Ok(p)
}

/// The fields of one line, unchecked.
fn parse_fields(line: &str) -> Result<SpsaParam, String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let (name, numbers) = match fields.len() {
        7 => {
            match fields[1] {
                "int" => {}
                "float" => {
                    return Err(format!(
                        "'{}' is declared float, but the tuned parameters are integers (the builtin engine's, UCI spin options): write int",
                        Quoted(fields[0])
                    ))
                }
                other => {
                    return Err(format!(
                        "second field '{}' should be the type, int (OpenBench form: name, int, start, min, max, c_end, r_end)",
                        Quoted(other)
                    ))
                }
            }
            (fields[0], &fields[2..])
        }
        6 => (fields[0], &fields[1..]),
        n => {
            return Err(format!(
                "expected 'name, int, start, min, max, c_end, r_end' (OpenBench) or 'name, start, min, max, c_end, r_end' (fishtest), found {n} fields"
            ))
        }
    };
    let what = ["start", "min", "max", "c_end", "r_end"];
    let mut v = [0.0; 5];
    for (i, text) in numbers.iter().enumerate() {
        v[i] = text
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| {
                format!(
                    "{} '{}' of '{}' is not a number",
                    what[i],
                    Quoted(text),
                    Quoted(name)
                )
            })?;
    }
    let p = SpsaParam {
        name: name.to_string(),
        start: v[0],
        min: v[1],
        max: v[2],
        c_end: v[3],
        r_end: v[4],
    };
    Ok(p)
}

/// Parses one line without the registry check (an external engine's UCI option: its range
/// is checked against the engine's `uci` answer before the first game).
pub fn parse_line_external(line: &str) -> Result<SpsaParam, String> {
    let p = parse_fields(line)?;
    check_values(&p)?;
    Ok(p)
}

/// Checks a parameter against the registry and itself.
pub fn check(p: &SpsaParam) -> Result<(), String> {
    let spec = params::spec(&p.name).ok_or_else(|| {
        format!(
            "unknown parameter '{}' (`spar params` lists them all)",
            Quoted(&p.name)
        )
    })?;
    if p.min > p.max {
        return Err(format!(
            "'{}': min {} is above max {}",
            p.name, p.min, p.max
        ));
    }
    if p.min < spec.min as f64 || p.max > spec.max as f64 {
        return Err(format!(
            "'{}': range {}..={} goes outside the engine's range {}..={}",
            p.name, p.min, p.max, spec.min, spec.max
        ));
    }
    check_values(p)
}

/// Checks a parameter against itself only (an external engine's option: its range is
/// checked against the engine's `uci` answer later).
pub fn check_values(p: &SpsaParam) -> Result<(), String> {
    if p.min > p.max {
        return Err(format!(
            "'{}': min {} is above max {}",
            Quoted(&p.name),
            p.min,
            p.max
        ));
    }
    if p.start < p.min || p.start > p.max {
        return Err(format!(
            "'{}': start {} is outside {}..={}",
            Quoted(&p.name),
            p.start,
            p.min,
            p.max
        ));
    }
    if p.c_end <= 0.0 || p.r_end <= 0.0 {
        return Err(format!(
            "'{}': c_end and r_end must be positive (got {} and {})",
            Quoted(&p.name),
            p.c_end,
            p.r_end
        ));
    }
    Ok(())
}

/// Parses a whole input text; errors name the line.
pub fn parse_text(text: &str, origin: &str) -> Result<Vec<SpsaParam>, String> {
    parse_text_with(text, origin, parse_line)
}

/// Parses a whole input text with `parse` for each line; errors name the line.
fn parse_text_with(
    text: &str,
    origin: &str,
    parse: fn(&str) -> Result<SpsaParam, String>,
) -> Result<Vec<SpsaParam>, String> {
    let mut out: Vec<SpsaParam> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let p = parse(line).map_err(|e| format!("{origin}:{}: {e}", i + 1))?;
        if out.iter().any(|q| q.name == p.name) {
            return Err(format!(
                "{origin}:{}: '{}' is listed twice",
                i + 1,
                Quoted(&p.name)
            ));
        }
        out.push(p);
    }
    Ok(out)
}

/// Reads a parameter file: of the builtin engine's registered parameters, or (`external`)
/// of an external engine's options, checked later against its `uci` answer.
pub fn load(path: &Path, external: bool) -> Result<Vec<SpsaParam>, String> {
    let text = data::text::read_whole(path).map_err(|e| format!("cannot read --params {e}"))?;
    let origin = path.display().to_string();
    let params = if external {
        parse_text_with(&text, &origin, parse_line_external)?
    } else {
        parse_text(&text, &origin)?
    };
    if params.is_empty() {
        return Err(format!(
            "--params {}: no parameters in the file (lines like 'rfp_margin, int, 75, 20, 200, 6, 0.002'; `spar params --search` prints them)",
            path.display()
        ));
    }
    Ok(params)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openbench_and_fishtest_lines() {
        let text =
            "# search\n\nrfp_margin, int, 75, 20, 200, 6, 0.002\r\nlmr_base,80,0,200,8.5,0.0025\n";
        let ps = parse_text(text, "f").unwrap();
        assert_eq!(ps.len(), 2);
        assert_eq!(
            ps[0],
            SpsaParam {
                name: "rfp_margin".into(),
                start: 75.0,
                min: 20.0,
                max: 200.0,
                c_end: 6.0,
                r_end: 0.002
            }
        );
        assert_eq!(ps[1].name, "lmr_base");
        assert_eq!((ps[1].start, ps[1].c_end, ps[1].r_end), (80.0, 8.5, 0.0025));
    }

    #[test]
    fn bad_lines_name_the_line_and_the_fix() {
        for (text, needle) in [
            ("rfp_margin, int, 75", "f:1: expected 'name, int"),
            (
                "\nno_such, int, 1, 0, 2, 1, 0.002",
                "f:2: unknown parameter 'no_such'",
            ),
            ("rfp_margin, float, 75, 20, 200, 6, 0.002", "declared float"),
            (
                "rfp_margin, bool, 75, 20, 200, 6, 0.002",
                "should be the type",
            ),
            ("rfp_margin, int, x, 20, 200, 6, 0.002", "start 'x'"),
            ("rfp_margin, int, 75, 20, 200, 6, nan", "r_end 'nan'"),
            (
                "rfp_margin, int, 75, 200, 20, 6, 0.002",
                "min 200 is above max 20",
            ),
            (
                "rfp_margin, int, 75, 0, 200, 6, 0.002",
                "outside the engine's range",
            ),
            (
                "rfp_margin, int, 10, 20, 200, 6, 0.002",
                "start 10 is outside",
            ),
            ("rfp_margin, int, 75, 20, 200, 0, 0.002", "must be positive"),
            (
                "rfp_margin, int, 75, 20, 200, 6, 0.002\nrfp_margin, 75, 20, 200, 6, 0.002",
                "f:2: 'rfp_margin' is listed twice",
            ),
        ] {
            let err = parse_text(text, "f").unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn registry_defaults() {
        let p = SpsaParam::from_registry("rfp_margin").unwrap();
        let spec = params::spec("rfp_margin").unwrap();
        assert_eq!(p.start, spec.default as f64);
        assert_eq!(p.c_end, spec.c_end);
        assert!(SpsaParam::from_registry("nope")
            .unwrap_err()
            .contains("--param nope"));
    }
}
