//! What defines a resumable run, kept next to the file `--resume` continues from
//! (`R.csv.run.json` for `--results R.csv` or `spar tune --csv R.csv`, `FILE.run.json` for
//! `spar datagen --out FILE`), so that a resume with other options (another seed, node
//! limit, engine list, …) or other inputs (a changed engine executable, book, parameter
//! file, network or set of tables) is refused instead of mixing two runs in one file.
//!
//! The record is a JSON object: `spar_run` (format version), `command`, `fields` (one
//! value per option that defines the run, compared on resume), and command-specific
//! extras (the byte offset where the run's PGN games start, the match plan as a whole for
//! the reader). It is written atomically before the first game of a new run. Options that
//! do not change the games (`--concurrency`, the number of games, `--quiet`) are not
//! fields. Inputs are fields too, by the SHA-256 of their bytes ([`Field::input`]); a
//! refusal names the input and the fix. A field the record lacks is of another run unless
//! the value is what runs had before spar recorded it (no file, off, or
//! [`Field::absent_as`]), or the record predates the field ([`Field::since`]); a field
//! older spars wrote under another key or in another form is matched in that form
//! ([`Field::or_older`]). A resume with no record (a run started by an older spar) goes on
//! with a warning and writes one.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::input::{read_optional, SMALL_FILE};
use crate::files::names::with_suffix;

/// Format version of the record: 2 since it pins the `--tb` tables (a record of version 1
/// lacks them, and matches without them).
const VERSION: u64 = 2;

/// One option that defines a run.
#[derive(Clone, Debug)]
pub struct Field {
    /// Its key in the record (`seed`).
    pub key: String,
    /// The option as the user writes it (`--seed`).
    pub flag: String,
    /// Its value.
    pub value: Value,
    /// For an input (a file the run reads, pinned by its bytes): the value as the user
    /// wrote it (paths, not hashes), which a refusal names; `None` for other options.
    pub shown: Option<Value>,
    /// The same option as older spars recorded it: (key, value) pairs, compared when the
    /// record holds that key (a record matches when any form it holds is equal).
    pub older: Vec<(String, Value)>,
    /// What a record without this field (written before spar recorded the option) ran
    /// with: such a record matches this value only. `None`: no file, off or empty (null,
    /// false, an empty list or text).
    pub absent: Option<Value>,
    /// The record version that first holds this field: an older record lacks it (spar did
    /// not pin it then), and matches whatever its value.
    pub since: u64,
}

impl Field {
    /// A field.
    pub fn new(key: &str, flag: &str, value: Value) -> Field {
        Field {
            key: key.to_string(),
            flag: flag.to_string(),
            value,
            shown: None,
            older: Vec::new(),
            absent: None,
            since: 1,
        }
    }

    /// An input of the run: `value` pins it by content, `shown` is how the user wrote it.
    pub fn input(key: &str, flag: &str, value: Value, shown: Value) -> Field {
        Field {
            shown: Some(shown),
            ..Field::new(key, flag, value)
        }
    }

    /// The same field, also matched by a record that holds `key` with `value` (what an
    /// older spar wrote for these inputs).
    pub fn or_older(mut self, key: &str, value: Value) -> Field {
        self.older.push((key.to_string(), value));
        self
    }

    /// The same field, which a record without it (an older spar's, before the option
    /// existed) matches when the value is `value`.
    pub fn absent_as(mut self, value: Value) -> Field {
        self.absent = Some(value);
        self
    }

    /// The same field, first written by record version `version`.
    pub fn since(mut self, version: u64) -> Field {
        self.since = version;
        self
    }

    /// Whether the value is what a run without this option has (no file, off, empty, or
    /// [`Field::absent_as`]): a record that lacks the field (written before spar recorded
    /// it) then matches.
    fn is_default(&self) -> bool {
        if let Some(absent) = &self.absent {
            return *absent == self.value;
        }
        match &self.value {
            Value::Null | Value::Bool(false) => true,
            Value::Array(a) => a.is_empty(),
            Value::String(s) => s.is_empty(),
            _ => false,
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
    let version = stored
        .object
        .get("spar_run")
        .and_then(Value::as_u64)
        .unwrap_or(1);
    let empty = Map::new();
    let then = stored
        .object
        .get("fields")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    for f in fields {
        if f.since > version && !then.contains_key(&f.key) {
            continue;
        }
        if let Some(message) = difference(f, then, file, file_flag) {
            return Err(CliError::usage(format!("--resume: {message}")));
        }
    }
    Ok(Some(stored))
}

/// How field `f` differs from the record's fields `then` (`None`: it does not), with the
/// fix. Every form of the field the record holds is compared (any equal one matches); a
/// record holding none of them matches only a field at its default.
fn difference(
    f: &Field,
    then: &Map<String, Value>,
    file: &Path,
    file_flag: &str,
) -> Option<String> {
    let forms = std::iter::once((&f.key, &f.value)).chain(f.older.iter().map(|(k, v)| (k, v)));
    let mut first: Option<(&Value, &Value)> = None;
    for (key, value) in forms {
        if let Some(old) = then.get(key) {
            if old == value {
                return None;
            }
            first.get_or_insert((old, value));
        }
    }
    let (old, value) = match first {
        Some(pair) => pair,
        None if f.is_default() => return None,
        None => (f.absent.as_ref().unwrap_or(&Value::Null), &f.value),
    };
    let option = || {
        format!(
            "{} differs from the run in {} ({}); resume with the same options or start a new {file_flag} file",
            now_text(f),
            file.display(),
            then_text(f, old)
        )
    };
    let Some(shown) = &f.shown else {
        return Some(option());
    };
    let what = match input_difference(f, shown, old, value) {
        Ok(what) => what,
        Err(()) => return Some(option()),
    };
    let (what, then, now) = what;
    Some(format!(
        "{what} differs from the run's ({then} in {}, {now} now): resume with the run's own inputs, or start a new {file_flag}",
        path_for(file).display()
    ))
}

/// What differs of an input, as (what, the run's, now's): the one word that differs when
/// the record holds the same words otherwise (`--engine cmd=./eng`, `sha256 0a1b…`,
/// `sha256 9f8e…`), else the whole input (`--book`, `none`, `b.epd`). `Err` when the
/// differing word is no file (an option word: the option message says it).
fn input_difference(
    f: &Field,
    shown: &Value,
    old: &Value,
    value: &Value,
) -> Result<(String, String, String), ()> {
    if let (Value::Array(o), Value::Array(v), Value::Array(s)) = (old, value, shown) {
        if o.len() == v.len() && v.len() == s.len() {
            let differ: Vec<usize> = (0..v.len()).filter(|&i| o[i] != v[i]).collect();
            if let [i] = differ[..] {
                if !is_pinned(&o[i]) && !is_pinned(&v[i]) {
                    return Err(());
                }
                return Ok((
                    format!("{} {}", f.flag, text(&s[i])),
                    pinned_text(&o[i]),
                    pinned_text(&v[i]),
                ));
            }
        }
    }
    // A file pinned by its bytes: its path and its hash; compared with an older record's
    // form (a path and checksum): that form.
    let now = match (shown, value) {
        (Value::String(path), Value::String(v)) if is_hash(v) => {
            format!("{path} with {}", pinned_text(value))
        }
        (Value::String(_), Value::String(v)) => v.clone(),
        _ => pinned_text(shown),
    };
    Ok((f.flag.clone(), pinned_text(old), now))
}

/// Whether a recorded word stands for a file by its hash (`params=sha256:…`).
fn is_pinned(v: &Value) -> bool {
    v.as_str().is_some_and(|w| w.contains("sha256:"))
}

/// Whether a recorded text is a hash: `KEY=sha256:HEX`, or 64 hex digits alone (datagen's
/// `--eval-file`).
fn is_hash(text: &str) -> bool {
    text.contains("sha256:") || (text.len() == 64 && text.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// A recorded input for a message: `none`, a path, or `sha256 0a1b2c3d4e5f` for a file
/// recorded by its bytes.
fn pinned_text(v: &Value) -> String {
    match v {
        Value::Null => "none".to_string(),
        Value::String(s) => match s.split_once("sha256:") {
            Some((_, hex)) => format!("sha256 {}", short(hex)),
            // datagen's --eval-file: the hash alone.
            None if is_hash(s) => format!("sha256 {}", short(s)),
            None => s.clone(),
        },
        Value::Array(items) if items.is_empty() => "none".to_string(),
        Value::Array(items) => items.iter().map(pinned_text).collect::<Vec<_>>().join(" "),
        other => other.to_string(),
    }
}

/// The first 12 characters of a hash, for messages.
fn short(hex: &str) -> String {
    hex.chars().take(12).collect()
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

    fn record_with(file: &Path, fields: &[(&str, Value)]) {
        let fields: Vec<Field> = fields
            .iter()
            .map(|(k, v)| Field::new(k, "--x", v.clone()))
            .collect();
        write("--results", file, "match", &fields, Map::new()).unwrap();
    }

    #[test]
    fn an_input_missing_from_the_record_is_refused_unless_at_its_default() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.csv");
        record_with(&file, &[("book", Value::Null), ("seed", json!(1))]);
        let book = Field::input(
            "book by content",
            "--book",
            json!(["file=sha256:0a1b2c3d4e5f67"]),
            json!(["b.epd"]),
        )
        .or_older("book", json!(["b.epd"]));
        let err = check_resume("--csv", &file, &[book], true).unwrap_err();
        assert_eq!(err.code, 2);
        assert_eq!(
            err.message,
            format!(
                "--resume: --book differs from the run's (none in {}, b.epd now): resume with the run's own inputs, or start a new --csv",
                path_for(&file).display()
            )
        );
        // A field only newer spars write: absent at its default, present otherwise.
        let off = Field::new("pgnout", "--pgnout", false.into());
        assert!(check_resume("--csv", &file, &[off], true).is_ok());
        let on = Field::new("pgnout", "--pgnout", true.into());
        let err = check_resume("--csv", &file, &[on], true).unwrap_err();
        assert!(
            err.message.contains("--pgnout differs from the run in"),
            "{}",
            err.message
        );
    }

    #[test]
    fn an_older_form_of_a_field_matches_and_a_changed_file_is_named_by_its_word() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.csv");
        let plain = json!(["name=a", "cmd=./eng"]);
        record_with(&file, &[("engine 1", plain.clone())]);
        let engine = |hash: &str| {
            Field::input(
                "engine 1 by content",
                "--engine",
                json!(["name=a", format!("cmd=sha256:{hash}")]),
                plain.clone(),
            )
            .or_older("engine 1", plain.clone())
        };
        // A record of an older spar: the words as given.
        assert!(check_resume("--results", &file, &[engine("aa")], true).is_ok());
        record_with(
            &file,
            &[("engine 1 by content", json!(["name=a", "cmd=sha256:aa"]))],
        );
        assert!(check_resume("--results", &file, &[engine("aa")], true).is_ok());
        let err = check_resume("--results", &file, &[engine("bb")], true).unwrap_err();
        assert!(
            err.message
                .starts_with("--resume: --engine cmd=./eng differs from the run's (sha256 aa in ")
                && err.message.ends_with(
                    ", sha256 bb now): resume with the run's own inputs, or start a new --results"
                ),
            "{}",
            err.message
        );
    }

    #[test]
    fn hashes_in_messages_are_short_and_never_split_a_character() {
        assert_eq!(
            pinned_text(&json!("params=sha256:é1234567890abcdef")),
            "sha256 é1234567890a"
        );
        assert_eq!(
            pinned_text(&json!("a".repeat(64))),
            format!("sha256 {}", "a".repeat(12))
        );
        assert_eq!(pinned_text(&Value::Null), "none");
        assert_eq!(pinned_text(&json!(["b.epd", "start=2"])), "b.epd start=2");
    }

    #[test]
    fn a_field_newer_than_the_record_is_not_required_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("r.csv");
        let tables =
            |v: &str| Field::input("tb tables", "--tb", json!(v), json!("tb")).since(VERSION + 1);
        record_with(&file, &[("seed", json!(1))]);
        // This record's version predates the field: it matches without it.
        assert!(check_resume("--results", &file, &[tables("tables=sha256:aa")], true).is_ok());
        // Of its own version, a record lacking a pinned input is of another run.
        let now = Field::input("tb tables", "--tb", json!("tables=sha256:aa"), json!("tb"));
        assert!(check_resume("--results", &file, &[now], true).is_err());
    }
}
