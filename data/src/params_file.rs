//! Parameter files for builtin engines (`--engine … params=FILE`): `name, value` lines
//! (OpenBench output) or `name, int, value, min, max, c_end, r_end` lines (OpenBench SPSA
//! input: the value is the start). Blank lines and `#` comments are skipped; a leading BOM
//! is dropped and lines are bounded ([`crate::text::LineReader`]). Inside
//! [`crate::quote::withheld`] an error names the file, the line and what is wrong, never the
//! line's text.
//!
//! ```
//! use engine::params::Params;
//! let mut params = Params::defaults();
//! let spec = &engine::params::specs()[0];
//! let text = format!("\u{feff}# tuned\n{}, {}\n", spec.name, spec.default);
//! data::params_file::parse(text.as_bytes(), "p.txt", &mut params).unwrap();
//! ```

use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::Path;

use engine::params::{ParamError, Params};

use crate::quote::{self, Quoted, MARK};
use crate::text::{LineReader, TextError};

/// Why a parameter file was refused.
#[derive(Debug)]
pub enum ParamsFileError {
    /// The file could not be opened, or is not line-structured UTF-8 text.
    Text(TextError),
    /// A line is wrong: the file, the 1-based line and what is wrong.
    Line {
        /// The file.
        name: String,
        /// 1-based line.
        line: u64,
        /// What is wrong and what is expected.
        reason: String,
    },
}

impl fmt::Display for ParamsFileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamsFileError::Text(e) => write!(f, "cannot read parameter file {e}"),
            ParamsFileError::Line {
                name,
                line: 0,
                reason,
            } => write!(f, "parameter file {name} {reason}"),
            ParamsFileError::Line { name, line, reason } => write!(f, "{name}:{line}: {reason}"),
        }
    }
}

impl std::error::Error for ParamsFileError {}

/// Reads parameter lines from `reader` (called `name` in errors) into `params`.
pub fn parse(reader: impl BufRead, name: &str, params: &mut Params) -> Result<(), ParamsFileError> {
    let mut lines = LineReader::new(reader, name);
    let mut number = 0;
    let mut seen: Vec<(String, u64)> = Vec::new();
    while let Some(line) = lines.next_line().map_err(ParamsFileError::Text)? {
        number += 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |reason: String| ParamsFileError::Line {
            name: name.to_string(),
            line: number,
            reason,
        };
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        let value = match fields.len() {
            2 => fields[1],
            6 | 7 => fields[2],
            n => {
                return Err(bad(format!(
                    "expected 'name, value' or 'name, int, value, min, max, c_end, r_end', found {n} fields"
                )))
            }
        };
        if let Some((_, first)) = seen.iter().find(|(n, _)| n == fields[0]) {
            return Err(bad(format!(
                "{} is set again (first on line {first}); keep one line per parameter",
                Quoted(fields[0])
            )));
        }
        seen.push((fields[0].to_string(), number));
        params
            .set_str(fields[0], value)
            .map_err(|e| bad(quote::unless_withheld(|| e.to_string(), || problem(&e))))?;
    }
    if seen.is_empty() {
        return Err(ParamsFileError::Line {
            name: name.to_string(),
            line: 0,
            reason: "sets no parameter (lines like 'rfp_margin, 80'; `spar params` lists them)"
                .to_string(),
        });
    }
    Ok(())
}

/// A parameter's problem without the line's text (the name when it is spar's own, never
/// the value): the network form of [`ParamError`].
fn problem(e: &ParamError) -> String {
    match e {
        ParamError::Unknown(_) => {
            format!("unknown parameter '{MARK}' (`spar params` lists them all)")
        }
        ParamError::OutOfRange { name, min, max, .. } => {
            format!("parameter '{name}' is out of range: allowed {min}..={max}")
        }
        ParamError::NotANumber { name, .. } => {
            format!("parameter '{name}' needs an integer value")
        }
    }
}

/// Reads a parameter file into `params`; errors name the file and line.
pub fn load(path: &Path, params: &mut Params) -> Result<(), ParamsFileError> {
    let name = path.display().to_string();
    let file = crate::text::open_regular(path).map_err(|e| {
        ParamsFileError::Text(TextError {
            name: name.clone(),
            line: 0,
            kind: crate::text::TextErrorKind::Io(e),
        })
    })?;
    parse(BufReader::new(file), &name, params)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first() -> &'static engine::params::ParamSpec {
        &engine::params::specs()[0]
    }

    #[test]
    fn reads_both_layouts_with_a_bom_and_comments() {
        let s = first();
        let v = if s.default < s.max {
            s.default + 1
        } else {
            s.default - 1
        };
        let text = format!("\u{feff}{}, {v}\r\n\n# c\n", s.name);
        let mut p = Params::defaults();
        parse(text.as_bytes(), "p.txt", &mut p).unwrap();
        assert_eq!(p.get_by_name(&s.name), Some(v));
        // A BOM before an SPSA line too.
        let text = format!(
            "\u{feff}{}, int, {}, {}, {}, 1, 0.002\n",
            s.name, s.default, s.min, s.max
        );
        let mut p = Params::defaults();
        p.set(&s.name, v as i64).unwrap();
        parse(text.as_bytes(), "p.txt", &mut p).unwrap();
        assert_eq!(p.get_by_name(&s.name), Some(s.default));
    }

    #[test]
    fn errors_name_file_and_line() {
        let mut p = Params::defaults();
        let e = parse(&b"# ok\nno_such_param, 3\n"[..], "p.txt", &mut p).unwrap_err();
        assert!(e.to_string().starts_with("p.txt:2: "), "{e}");
        let e = parse(&b"a, b, c\n"[..], "p.txt", &mut p).unwrap_err();
        assert!(e.to_string().contains("found 3 fields"), "{e}");
        let e = parse(&b"x\xff, 1\n"[..], "p.txt", &mut p).unwrap_err();
        assert!(e.to_string().contains("p.txt:1: not UTF-8"), "{e}");
        let e = load(Path::new("/nonexistent/p.txt"), &mut p).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("cannot read parameter file /nonexistent/p.txt"));
    }

    #[test]
    fn errors_for_the_network_name_the_line_never_its_text() {
        let s = first();
        let cases = [
            (
                "SECRET_name, 5\n".to_string(),
                "p.txt:1: unknown parameter '…' (`spar params` lists them all)".to_string(),
            ),
            (
                format!("{}, SECRET\n", s.name),
                format!("p.txt:1: parameter '{}' needs an integer value", s.name),
            ),
            (
                format!("{}, {}\n", s.name, i64::from(s.max) + 1000),
                format!(
                    "p.txt:1: parameter '{}' is out of range: allowed {}..={}",
                    s.name, s.min, s.max
                ),
            ),
        ];
        for (text, net) in cases {
            let mut p = Params::defaults();
            let cli = parse(text.as_bytes(), "p.txt", &mut p)
                .unwrap_err()
                .to_string();
            assert_ne!(cli, net, "the CLI keeps its message");
            let got = crate::quote::withheld(|| {
                parse(text.as_bytes(), "p.txt", &mut p)
                    .unwrap_err()
                    .to_string()
            });
            assert_eq!(got, net);
        }
    }

    #[test]
    fn endless_input_is_refused() {
        let mut p = Params::defaults();
        let e = parse(BufReader::new(std::io::repeat(b'x')), "/dev/zero", &mut p).unwrap_err();
        assert!(e.to_string().contains("line longer than"), "{e}");
    }
}
