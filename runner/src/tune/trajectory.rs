//! The SPSA trajectory CSV: one row per finished iteration, appended and flushed as the run
//! goes, and the record `--resume` continues from.
//!
//! Columns: `iteration, games`, then θ of every parameter (the column is named as the
//! parameter), then `c_<name>` for every parameter, then `r_<name>`. Row 0 holds the start
//! values with empty `c`/`r` cells; row `k` holds θ after iteration `k` and the `c_k`, `r_k`
//! it used. Numbers are written in Rust's shortest round-trip form, so a resumed run starts
//! from exactly the θ the interrupted one had.
//!
//! On resume, a last line cut short (no newline: the process died while writing it) is
//! dropped and the file rewritten atomically; any other malformed line is an error.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;

/// One row of the trajectory.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Iterations done (0 for the start row).
    pub iteration: u64,
    /// Games played so far.
    pub games: u64,
    /// θ after the iteration.
    pub theta: Vec<f64>,
    /// `c_k` per parameter (`None` in the start row).
    pub c: Option<Vec<f64>>,
    /// `r_k` per parameter (`None` in the start row).
    pub r: Option<Vec<f64>>,
}

/// The header line for these parameter names.
pub fn header(names: &[String]) -> String {
    let mut cols = vec!["iteration".to_string(), "games".to_string()];
    cols.extend(names.iter().cloned());
    cols.extend(names.iter().map(|n| format!("c_{n}")));
    cols.extend(names.iter().map(|n| format!("r_{n}")));
    cols.join(",")
}

fn join(values: &[f64]) -> String {
    values
        .iter()
        .map(|v| v.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Formats a row (without the newline).
pub fn format_row(row: &Row) -> String {
    let n = row.theta.len();
    let empty = vec![String::new(); n].join(",");
    let cr = |v: &Option<Vec<f64>>| v.as_ref().map_or(empty.clone(), |v| join(v));
    let mut s = format!("{},{},{}", row.iteration, row.games, join(&row.theta));
    if n > 0 {
        s.push(',');
        s.push_str(&cr(&row.c));
        s.push(',');
        s.push_str(&cr(&row.r));
    }
    s
}

/// Parses a data line of a file with `n` parameters.
fn parse_row(line: &str, n: usize) -> Result<Row, String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    if fields.len() != 2 + 3 * n {
        return Err(format!("{} fields, expected {}", fields.len(), 2 + 3 * n));
    }
    let int = |s: &str| {
        s.parse::<u64>()
            .map_err(|_| format!("'{s}' is not a count"))
    };
    let num = |s: &str| {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("'{s}' is not a number"))
    };
    let nums = |range: std::ops::Range<usize>| -> Result<Option<Vec<f64>>, String> {
        if fields[range.clone()].iter().all(|f| f.is_empty()) && n > 0 {
            return Ok(None);
        }
        fields[range]
            .iter()
            .map(|f| num(f))
            .collect::<Result<Vec<_>, _>>()
            .map(Some)
    };
    let theta = fields[2..2 + n]
        .iter()
        .map(|f| num(f))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Row {
        iteration: int(fields[0])?,
        games: int(fields[1])?,
        theta,
        c: nums(2 + n..2 + 2 * n)?,
        r: nums(2 + 2 * n..2 + 3 * n)?,
    })
}

/// A whole trajectory read back: parameter names and rows.
#[derive(Clone, Debug, PartialEq)]
pub struct Contents {
    /// Parameter names, in column order.
    pub names: Vec<String>,
    /// The complete rows.
    pub rows: Vec<Row>,
    /// Whether a torn last line was dropped.
    pub torn: bool,
}

/// Parses the text of a trajectory file.
pub fn parse(text: &str, origin: &str) -> Result<Contents, String> {
    let mut lines: Vec<&str> = text.split('\n').collect();
    // A file ending in a newline splits into a last empty piece; anything else is torn.
    let last = lines.pop().unwrap_or("");
    let torn = !last.trim().is_empty();
    let mut lines = lines.into_iter().enumerate();
    let Some((_, head)) = lines.next() else {
        return Err(format!(
            "{origin}: no header line; not a spar tune trajectory"
        ));
    };
    let cols: Vec<&str> = head
        .trim_end_matches('\r')
        .split(',')
        .map(str::trim)
        .collect();
    if cols.len() < 2 || cols[0] != "iteration" || cols[1] != "games" || cols.len() % 3 != 2 {
        return Err(format!(
            "{origin}: the header is not 'iteration,games,<params>,c_<params>,r_<params>'; not a spar tune trajectory"
        ));
    }
    let n = (cols.len() - 2) / 3;
    let names: Vec<String> = cols[2..2 + n].iter().map(|s| s.to_string()).collect();
    if header(&names) != cols.join(",") {
        return Err(format!(
            "{origin}: the c_/r_ columns do not match the parameter columns; not a spar tune trajectory"
        ));
    }
    let mut rows: Vec<Row> = Vec::new();
    for (i, line) in lines {
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let row = parse_row(line, n).map_err(|e| format!("{origin}:{}: {e}", i + 1))?;
        let expected = rows.last().map_or(0, |r| r.iteration + 1);
        if row.iteration != expected {
            return Err(format!(
                "{origin}:{}: iteration {} follows {}; the file is not one run's trajectory",
                i + 1,
                row.iteration,
                expected as i64 - 1
            ));
        }
        rows.push(row);
    }
    Ok(Contents { names, rows, torn })
}

/// Reads a trajectory file.
pub fn read(path: &Path) -> Result<Contents, String> {
    let text = data::text::read_whole(path).map_err(|e| format!("cannot read {e}"))?;
    parse(&text, &path.display().to_string())
}

/// An open trajectory file, appended to row by row.
#[derive(Debug)]
pub struct Trajectory {
    file: File,
    path: PathBuf,
}

impl Trajectory {
    /// Starts a new trajectory with its header and start row. Refuses to overwrite a file
    /// that has content (that is what `--resume` is for).
    pub fn create(path: &Path, names: &[String], start: &Row) -> Result<Trajectory, String> {
        if std::fs::metadata(path).is_ok_and(|m| m.len() > 0) {
            return Err(format!(
                "--csv {} already exists: add --resume to continue that run, or delete the file",
                path.display()
            ));
        }
        let text = format!("{}\n{}\n", header(names), format_row(start));
        write_atomically(path, &text)
            .map_err(|e| format!("cannot write --csv {}: {e}", path.display()))?;
        Trajectory::append_to(path)
    }

    /// Continues a trajectory: checks it belongs to these parameters, drops a torn last
    /// line, and returns the complete rows.
    pub fn resume(path: &Path, names: &[String]) -> Result<(Trajectory, Vec<Row>), String> {
        let contents = read(path).map_err(|e| format!("--resume: {e}"))?;
        if contents.names != names {
            return Err(format!(
                "--resume: {} tunes [{}], this command tunes [{}]; give the same parameters",
                path.display(),
                contents.names.join(", "),
                names.join(", ")
            ));
        }
        if contents.rows.is_empty() {
            return Err(format!(
                "--resume: {} has no start row; delete it and start again",
                path.display()
            ));
        }
        if contents.torn {
            let mut text = header(names) + "\n";
            for row in &contents.rows {
                text.push_str(&format_row(row));
                text.push('\n');
            }
            write_atomically(path, &text)
                .map_err(|e| format!("cannot rewrite --csv {}: {e}", path.display()))?;
        }
        Ok((Trajectory::append_to(path)?, contents.rows))
    }

    fn append_to(path: &Path) -> Result<Trajectory, String> {
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| format!("cannot open --csv {}: {e}", path.display()))?;
        Ok(Trajectory {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Appends one row as a single write and flushes it.
    pub fn append(&mut self, row: &Row) -> CliResult {
        let line = format_row(row) + "\n";
        self.file
            .write_all(line.as_bytes())
            .and_then(|_| self.file.flush())
            .map_err(|e| {
                CliError::failure(format!("cannot write --csv {}: {e}", self.path.display()))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["rfp_margin".into(), "lmr_base".into()]
    }

    fn start() -> Row {
        Row {
            iteration: 0,
            games: 0,
            theta: vec![75.0, 80.0],
            c: None,
            r: None,
        }
    }

    fn step(k: u64) -> Row {
        Row {
            iteration: k,
            games: 16 * k,
            theta: vec![75.0 + 0.1 / 3.0 * k as f64, 80.0 - 1e-7 * k as f64],
            c: Some(vec![27.809, 13.0]),
            r: Some(vec![0.001095, 0.002]),
        }
    }

    #[test]
    fn rows_round_trip_exactly() {
        let mut text = header(&names()) + "\n";
        for row in [start(), step(1), step(2)] {
            text += &format_row(&row);
            text.push('\n');
        }
        assert!(text.starts_with("iteration,games,rfp_margin,lmr_base,c_rfp_margin,c_lmr_base,r_rfp_margin,r_lmr_base\n0,0,75,80,,,,\n1,16,"));
        let c = parse(&text, "t").unwrap();
        assert_eq!(c.names, names());
        assert_eq!(c.rows, vec![start(), step(1), step(2)]);
        assert!(!c.torn);
        // A half-written last line is reported and not counted.
        let torn = format!("{text}3,48,75.1");
        let c = parse(&torn, "t").unwrap();
        assert!(c.torn);
        assert_eq!(c.rows.len(), 3);
    }

    #[test]
    fn bad_files_are_errors() {
        let good = header(&names()) + "\n" + &format_row(&start()) + "\n";
        for (text, needle) in [
            (String::new(), "no header"),
            ("a,b,c\n".to_string(), "not a spar tune trajectory"),
            ("iteration,games,x,c_y,r_x\n".to_string(), "do not match"),
            (format!("{good}2,0,1,2,,,,\n"), "iteration 2 follows 0"),
            (
                format!("{good}1,16,1,x,1,1,1,1\n"),
                "t:3: 'x' is not a number",
            ),
            (format!("{good}1,16,1\n"), "t:3: 3 fields, expected 8"),
        ] {
            let err = parse(&text, "t").unwrap_err();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
    }

    #[test]
    fn resume_drops_a_torn_line_and_appends() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        let mut t = Trajectory::create(&path, &names(), &start()).unwrap();
        t.append(&step(1)).unwrap();
        drop(t);
        assert!(Trajectory::create(&path, &names(), &start())
            .unwrap_err()
            .contains("--resume"));
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"2,32,75.0").unwrap();
        drop(f);
        let other = vec!["rfp_margin".to_string()];
        assert!(Trajectory::resume(&path, &other)
            .unwrap_err()
            .contains("give the same parameters"));
        let (mut t, rows) = Trajectory::resume(&path, &names()).unwrap();
        assert_eq!(rows, vec![start(), step(1)]);
        t.append(&step(2)).unwrap();
        let c = read(&path).unwrap();
        assert_eq!(c.rows, vec![start(), step(1), step(2)]);
        assert!(!c.torn);
    }
}
