//! Where a local tune stands, from its trajectory CSV (`spar tune --csv`) and the run
//! record beside it: which files are a tune's, the record's session, the [`TuneView`].

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::Value;

use super::status::{verification_so_far, TuneView};
use super::verdict::{verdict_line, verify_files};
use crate::cluster::status::human;
use crate::error::{CliError, CliResult};
use crate::files::run_record;
use crate::tune::spsa_params::SpsaParam;
use crate::tune::trajectory;

/// Whether `path` looks like a tune trajectory: its first line starts `iteration,games`.
pub fn is_trajectory(path: &Path) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::new();
    if file.take(64).read_to_end(&mut head).is_err() {
        return false;
    }
    head.starts_with(b"iteration,games")
}

/// Whether `path` is a tune's trajectory: its header, or an empty file whose run record is
/// a tune's (a tune stopped before it wrote its first line).
pub fn is_tune(path: &Path) -> bool {
    is_trajectory(path)
        || (is_empty(path)
            && run_record::read("--csv", path)
                .ok()
                .flatten()
                .and_then(|r| {
                    r.get("command")
                        .and_then(Value::as_str)
                        .map(|c| c == "tune")
                })
                .unwrap_or(false))
}

/// Whether the file at `path` holds nothing (white space at most).
fn is_empty(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.len() == 0)
}

/// The session extras `spar tune` keeps in the run record: when the current session
/// started (Unix seconds) and the games played before it.
pub const SESSION_KEY: &str = "session";

/// The `session` value of a run record: `{"started": unix seconds, "games": games before}`.
pub fn session_record(games_before: u64) -> Value {
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    serde_json::json!({ "started": started, "games": games_before })
}

/// Parses one `params` entry of a tune's run record: `name start min max c_end r_end`
/// (the name may hold spaces: UCI option names do).
fn parse_record_param(text: &str) -> Option<SpsaParam> {
    let words: Vec<&str> = text.split(' ').collect();
    if words.len() < 6 {
        return None;
    }
    let (name, numbers) = words.split_at(words.len() - 5);
    let n: Vec<f64> = numbers
        .iter()
        .map(|w| w.parse::<f64>().ok().filter(|v| v.is_finite()))
        .collect::<Option<_>>()?;
    Some(SpsaParam {
        name: name.join(" "),
        start: n[0],
        min: n[1],
        max: n[2],
        c_end: n[3],
        r_end: n[4],
    })
}

/// The view of a local tune's `--csv` trajectory and its run record (`CSV.run.json`, for
/// the parameters' ranges and step sizes, the number of iterations and the start of the
/// current session). The run is live while a `spar tune` holds the CSV's lock; games/s is
/// that of the current session (games since it started over the time from its start to
/// the CSV's last write), and the ETA the remaining games at that rate. The verification
/// SPRT's verdict, when the record has one, is one of the extra lines.
pub fn from_csv(path: &Path) -> CliResult<TuneView> {
    // An empty trajectory (no header yet) is a tune at its start: the record names it.
    let contents = if is_empty(path) {
        None
    } else {
        Some(trajectory::read(path).map_err(CliError::usage)?)
    };
    let record_path: PathBuf = run_record::path_for(path);
    let missing = || {
        CliError::usage(format!(
            "{}: its run record {} is missing or not a tune's; spar status needs it for the parameters' ranges and steps (`spar tune --plot {}` draws the trajectory without it)",
            path.display(),
            record_path.display(),
            path.display()
        ))
    };
    let record = run_record::read("--csv", path)
        .map_err(|_| missing())?
        .ok_or_else(missing)?;
    if record.get("command").and_then(Value::as_str) != Some("tune") {
        return Err(missing());
    }
    let fields = record
        .get("fields")
        .and_then(Value::as_object)
        .ok_or_else(missing)?;
    let params: Vec<SpsaParam> = fields
        .get("params")
        .and_then(Value::as_array)
        .ok_or_else(missing)?
        .iter()
        .map(|v| v.as_str().and_then(parse_record_param))
        .collect::<Option<_>>()
        .ok_or_else(missing)?;
    let names: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
    let contents = contents.unwrap_or_else(|| trajectory::Contents {
        names: names.iter().map(|n| n.to_string()).collect(),
        rows: Vec::new(),
        torn: false,
    });
    if names != contents.names {
        return Err(CliError::usage(format!(
            "{}: its run record {} tunes [{}], the CSV [{}]; the two are of different runs",
            path.display(),
            record_path.display(),
            names.join(", "),
            contents.names.join(", ")
        )));
    }
    let count = |key: &str| fields.get(key).and_then(Value::as_u64).ok_or_else(missing);
    let iterations = count("iterations")?;
    let pairs_per_iteration = count("pairs-per-iteration")?;
    let rows = contents.rows;
    let last_games = rows.last().map_or(0, |r| r.games);
    let done = rows.last().map_or(0, |r| r.iteration);
    let written = std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map(|d| d.as_secs_f64());
    let session = record.get(SESSION_KEY);
    let started = session
        .and_then(|s| s.get("started"))
        .and_then(Value::as_f64);
    let games_before = session.and_then(|s| s.get("games")).and_then(Value::as_u64);
    let games_per_second = match (started, games_before, written) {
        (Some(s), Some(g), Some(w)) if w > s && last_games > g => {
            Some((last_games - g) as f64 / (w - s))
        }
        _ => None,
    };
    // Live while the tune plays its iterations or, after them, its verification.
    let live =
        crate::files::lock::is_held(path) && (done < iterations || record.get("verify").is_none());
    let remaining = 2 * pairs_per_iteration * iterations.saturating_sub(done);
    let eta_seconds = games_per_second
        .filter(|_| live)
        .map(|r| remaining as f64 / r);
    let mut extra_lines = Vec::new();
    if let Some(w) = written.filter(|_| !rows.is_empty()) {
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(w, |d| d.as_secs_f64());
        extra_lines.push(format!("Last row written {} ago", human(now - w)));
    }
    // The verification SPRT's verdict, once the run has one; before that, how far it got.
    if let Some(v) = record.get("verify") {
        extra_lines.push(verdict_line(v));
    } else {
        let results = verify_files(path).results;
        if results.is_file() {
            let state = if crate::files::lock::is_held(&results) {
                "running"
            } else {
                "stopped: the same command with --resume continues it"
            };
            let snapshot = crate::cluster::csv_tail::of_csv(&results);
            extra_lines.extend(verification_so_far(snapshot, state, &results));
        }
    }
    if done < iterations && !live {
        extra_lines.push(format!(
            "Not running (no spar tune holds {}): continue it with the same command and --resume",
            path.display()
        ));
    }
    Ok(TuneView {
        title: format!("Tune {}", path.display()),
        params,
        rows,
        iterations,
        pairs_per_iteration,
        games_per_second,
        eta_seconds,
        extra_lines,
        live,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::tune::status::short;

    #[test]
    fn record_params_with_spaces_in_names() {
        let p = parse_record_param("Move Overhead 10 0 100 5 0.002").unwrap();
        assert_eq!(p.name, "Move Overhead");
        assert_eq!(
            (p.start, p.min, p.max, p.c_end, p.r_end),
            (10.0, 0.0, 100.0, 5.0, 0.002)
        );
        assert!(parse_record_param("x 1 2 3").is_none());
        assert!(parse_record_param("x 1 2 3 y 5").is_none());
        assert_eq!(short(75.0), "75");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(-0.001), "0");
    }
}
