//! What defines a resumable run, kept next to the file `--resume` continues from
//! (`R.csv.run.json` for `--results R.csv` or `spar tune --csv R.csv`, `FILE.run.json` for
//! `spar datagen --out FILE`), so that a resume with other options (another seed, node
//! limit, engine list, …) is refused instead of mixing two runs in one file.
//!
//! The record is a JSON object: `spar_run` (format version), `command`, `fields` (one
//! value per option that defines the run, compared on resume), and command-specific
//! extras (the byte offset where the run's PGN games start, the match plan as a whole for
//! the reader). It is written atomically before the first game of a new run. Options that
//! do not change the games (`--concurrency`, the number of games, `--quiet`) are not
//! fields. A resume with no record (a run started by an older spar) goes on with a
//! warning and writes one.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::input::{read_optional, SMALL_FILE};
use crate::files::paths::with_suffix;

/// Format version of the record.
const VERSION: u64 = 1;

/// One option that defines a run.
#[derive(Clone, Debug)]
pub struct Field {
    /// Its key in the record (`seed`).
    pub key: String,
    /// The option as the user writes it (`--seed`).
    pub flag: String,
    /// Its value.
    pub value: Value,
}

impl Field {
    /// A field.
    pub fn new(key: &str, flag: &str, value: Value) -> Field {
        Field {
            key: key.to_string(),
            flag: flag.to_string(),
            value,
        }
    }
}

/// The record of the run whose file is `file`.
pub fn path_for(file: &Path) -> PathBuf {
    with_suffix(file, ".run.json")
}

/// A stored record.
#[derive(Clone, Debug, Default)]
pub struct Stored {
    /// The whole object.
    pub object: Map<String, Value>,
}

impl Stored {
    /// An extra value (`pgn_start`).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.object.get(key)
    }
}

/// Reads the record of `file` (`None`: there is none).
pub fn read(file_flag: &str, file: &Path) -> CliResult<Option<Stored>> {
    let path = path_for(file);
    // Bounded, and a regular file only (a FIFO there would block the open forever).
    let Some(text) = read_optional(&path, "--resume: the run record", SMALL_FILE)? else {
        return Ok(None);
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(object)) if object.get("spar_run").is_some() => {
            Ok(Some(Stored { object }))
        }
        _ => Err(CliError::usage(format!(
            "--resume: {} is not the run record spar writes next to the {file_flag} file; \
             delete it to resume without checking the options",
            path.display()
        ))),
    }
}

/// Checks a resume against the stored record: the first field that differs is a usage
/// error naming it. With no record, warns (unless `quiet`) and returns `None`.
pub fn check_resume(
    file_flag: &str,
    file: &Path,
    fields: &[Field],
    quiet: bool,
) -> CliResult<Option<Stored>> {
    let Some(stored) = read(file_flag, file)? else {
        if !quiet {
            eprintln!(
                "spar: warning: --resume: {} has no run record ({}; a run started by an older spar), \
                 so the options cannot be checked against the first run's",
                file.display(),
                path_for(file).display()
            );
        }
        return Ok(None);
    };
    let then = stored.object.get("fields").and_then(Value::as_object);
    for f in fields {
        // A field the record lacks (written by an older spar) is not checked.
        let Some(old) = then.and_then(|t| t.get(&f.key)) else {
            continue;
        };
        if *old != f.value {
            return Err(CliError::usage(format!(
                "--resume: {} differs from the run in {} ({}); resume with the same options or start a new {file_flag} file",
                now_text(f),
                file.display(),
                then_text(f, old)
            )));
        }
    }
    Ok(Some(stored))
}

/// Writes the record of a run (atomically).
pub fn write(
    file_flag: &str,
    file: &Path,
    command: &str,
    fields: &[Field],
    extra: Map<String, Value>,
) -> CliResult {
    let mut object = Map::new();
    object.insert("spar_run".into(), json!(VERSION));
    object.insert("command".into(), json!(command));
    let values: Map<String, Value> = fields
        .iter()
        .map(|f| (f.key.clone(), f.value.clone()))
        .collect();
    object.insert("fields".into(), Value::Object(values));
    object.extend(extra);
    let text = serde_json::to_string_pretty(&Value::Object(object)).expect("json") + "\n";
    let path = path_for(file);
    write_atomically(&path, &text).map_err(|e| {
        CliError::failure(format!(
            "cannot write the run record {} of {file_flag} {}: {e}",
            path.display(),
            file.display()
        ))
    })
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// `--seed 2`, `--pgnout`, `no --book`.
fn now_text(f: &Field) -> String {
    match &f.value {
        Value::Bool(true) => f.flag.clone(),
        Value::Bool(false) | Value::Null => format!("no {}", f.flag),
        v => format!("{} {}", f.flag, text(v)),
    }
}

/// `seed 1`, `with --pgnout`, `without --book`.
fn then_text(f: &Field, old: &Value) -> String {
    match old {
        Value::Bool(true) => format!("with {}", f.flag),
        Value::Bool(false) | Value::Null => format!("without {}", f.flag),
        v => format!("{} {}", f.key, text(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_field_is_named_and_a_missing_record_is_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("R.csv");
        let fields = |seed: u64| vec![Field::new("seed", "--seed", json!(seed))];
        assert!(check_resume("--results", &file, &fields(1), true)
            .unwrap()
            .is_none());
        write("--results", &file, "match", &fields(1), Map::new()).unwrap();
        assert!(check_resume("--results", &file, &fields(1), true)
            .unwrap()
            .is_some());
        let err = check_resume("--results", &file, &fields(2), true).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message
                .starts_with("--resume: --seed 2 differs from the run in ")
                && err.message.ends_with(
                    "R.csv (seed 1); resume with the same options or start a new --results file"
                ),
            "{}",
            err.message
        );
    }
}
