//! What a run record compares of the files a run names (`--resume` of a match, a tune,
//! datagen): engine words, books and Syzygy tables by their content, so that a
//! byte-identical copy at another path is the same run and a changed file is not.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::files::run_record::Field;

/// Engine or book words as a resume record compares them: every file a word names stands
/// as `sha256:HEX` of its bytes, so a byte-identical copy at another path is the same run
/// and a changed file at the same path is not. Engine words: the `cmd=` executable
/// (found as the engine launcher finds it: in `dir=` or on `PATH`), `params=FILE` and every
/// `option.NAME=VALUE` whose value is a file (a network, a book an engine reads); with
/// `book`, the book file. `None` when no word names a file (the words are then compared as
/// given).
pub fn words_by_content(words: &[String], book: bool) -> Option<Vec<String>> {
    pinned_words(words, book, false)
}

/// [`words_by_content`] as spar recorded it before executables and option files were
/// pinned (`params=` and `option.EvalFile=` only): what older records hold.
fn words_by_content_before(words: &[String], book: bool) -> Option<Vec<String>> {
    pinned_words(words, book, true)
}

/// The files of `words` by content (`older`: only those older spars pinned).
fn pinned_words(words: &[String], book: bool, older: bool) -> Option<Vec<String>> {
    use crate::cluster::manifest::sha256_file;
    // Regular files only: opening a FIFO would block (the path stands for it instead).
    let by_content = |file: &Path| {
        let regular = std::fs::metadata(file).is_ok_and(|m| m.is_file());
        match regular.then(|| sha256_file(file)) {
            Some(Ok(h)) => format!("sha256:{h}"),
            _ => file.display().to_string(),
        }
    };
    let dir = words.iter().rev().find_map(|w| w.strip_prefix("dir="));
    let mut any = false;
    let out = words
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let file: Option<(&str, PathBuf)> = match w.split_once('=') {
                None if book && i == 0 => Some(("file", PathBuf::from(w))),
                Some(("file", f)) if book => Some(("file", PathBuf::from(f))),
                _ if book => None,
                Some((k @ ("params" | "option.EvalFile"), f))
                    if !engine::nnue::rule::is_embedded(f) =>
                {
                    Some((k, PathBuf::from(f)))
                }
                Some(("cmd", c)) if !older => Some(("cmd", executable(c, dir))),
                Some((k, f)) if !older && k.starts_with("option.") && is_file(f) => {
                    Some((k, PathBuf::from(f)))
                }
                _ => None,
            };
            match file {
                Some((k, f)) => {
                    any = true;
                    format!("{k}={}", by_content(&f))
                }
                None => w.clone(),
            }
        })
        .collect();
    any.then_some(out)
}

/// Whether an option's value names a regular file (as the manifest of a cluster run pins
/// them): numbers and words are no files.
fn is_file(value: &str) -> bool {
    !value.is_empty() && std::fs::metadata(value).is_ok_and(|m| m.is_file())
}

/// The executable a `cmd=` word starts, as the engine launcher finds it: a path with a
/// `/` (relative to `dir=` when given), else the first match on `PATH`; the word itself
/// when nothing is found (the engine will not start, and says so).
fn executable(cmd: &str, dir: Option<&str>) -> PathBuf {
    let path = Path::new(cmd);
    if cmd.contains('/') {
        return match dir {
            Some(d) if path.is_relative() => Path::new(d).join(path),
            _ => path.to_path_buf(),
        };
    }
    crate::plan::which(cmd).unwrap_or_else(|| path.to_path_buf())
}

/// The record field of an engine's words (`key` `engine 1`, `each`): by content when a
/// word names a file (key `KEY by content`), else the words as given (key `KEY`). Records
/// of older spars (which pinned fewer files, under either key) are matched in the form
/// they were written.
pub fn engine_field(key: &str, flag: &str, words: &[String]) -> Field {
    let plain = json!(words);
    let by_content = format!("{key} by content");
    match words_by_content(words, false) {
        Some(w) => {
            let mut f = Field::input(&by_content, flag, json!(w), plain.clone());
            if let Some(before) = words_by_content_before(words, false) {
                f = f.or_older(&by_content, json!(before));
            }
            f.or_older(key, plain)
        }
        None => Field::new(key, flag, plain.clone()).or_older(&by_content, plain),
    }
}

/// The Syzygy table files a run probes, with their sizes: `--tb`'s (`rule`) and the engines'
/// own (`option.SyzygyPath`), as a `--slurm` manifest pins them.
pub fn table_files(
    rule: Option<&crate::play::tablebase::TablebaseRule>,
    variants: &[crate::engines::variant::Variant],
) -> Vec<(PathBuf, u64)> {
    let mut files = rule.map(|t| t.files()).unwrap_or_default();
    for t in variants.iter().filter_map(|v| v.tablebases.as_ref()) {
        files.extend(t.files());
    }
    files
}

/// The record field of the Syzygy tables a run probes (`files`: path and size; `shown`, the
/// option that names them): one `tables=sha256:HEX` of their names and sizes, pinned as a
/// `--slurm` manifest pins them (full sets are terabytes: too big to hash each run), `null`
/// without tables. Records before version 2 lack it.
pub fn tables_field(files: &[(PathBuf, u64)], shown: &str) -> Field {
    use sha2::{Digest, Sha256};
    if files.is_empty() {
        return Field::input("tb tables", "--tb", Value::Null, Value::Null).since(2);
    }
    let mut lines: Vec<String> = files
        .iter()
        .map(|(p, size)| {
            let name = p.file_name().unwrap_or(p.as_os_str()).to_string_lossy();
            format!("{name} {size}\n")
        })
        .collect();
    lines.sort();
    lines.dedup();
    let hex: String = Sha256::digest(lines.concat().as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Field::input(
        "tb tables",
        "--tb",
        json!(format!("tables=sha256:{hex}")),
        json!(format!("{shown} ({} table files)", lines.len())),
    )
    .since(2)
}

/// The record field of a run's `--book` words (`None`: the built-in book): by content
/// (key `book by content`), or `null` (key `book`); a record holding the other key is of
/// another run, unless it holds the same words (a record of an older spar).
pub fn book_field(book: Option<&[String]>) -> Field {
    match book.and_then(|b| words_by_content(b, true)) {
        Some(w) => Field::input("book by content", "--book", json!(w), json!(book))
            .or_older("book", json!(book)),
        None => Field::input("book", "--book", Value::Null, Value::Null)
            .or_older("book by content", Value::Null),
    }
}

#[cfg(test)]
mod tests {
    use super::words_by_content;

    #[test]
    fn files_in_words_stand_by_their_content() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.txt"), dir.path().join("b.txt"));
        std::fs::write(&a, "rfp_margin, 80\n").unwrap();
        std::fs::write(&b, "rfp_margin, 80\n").unwrap();
        let words =
            |f: &std::path::Path| vec!["name=x".to_string(), format!("params={}", f.display())];
        let wa = words_by_content(&words(&a), false).unwrap();
        assert_eq!(wa, words_by_content(&words(&b), false).unwrap());
        assert!(wa[1].starts_with("params=sha256:"), "{wa:?}");
        std::fs::write(&b, "rfp_margin, 81\n").unwrap();
        assert_ne!(wa, words_by_content(&words(&b), false).unwrap());
        let plain = vec![
            "name=x".to_string(),
            "option.EvalFile=<embedded>".to_string(),
        ];
        assert!(words_by_content(&plain, false).is_none());
        let book = vec![a.display().to_string(), "start=2".to_string()];
        let bb = words_by_content(&book, true).unwrap();
        assert!(
            bb[0].starts_with("file=sha256:") && bb[1] == "start=2",
            "{bb:?}"
        );
    }

    #[test]
    fn executables_and_option_files_are_pinned_as_the_launcher_finds_them() {
        let dir = tempfile::tempdir().unwrap();
        let eng = dir.path().join("eng");
        std::fs::write(&eng, "#!/bin/sh\n").unwrap();
        let d = dir.path().display().to_string();
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        // Relative to dir= (where the engine starts), and by absolute path: the same bytes.
        let a =
            super::words_by_content(&words(&["cmd=./eng", &format!("dir={d}")]), false).unwrap();
        let b =
            super::words_by_content(&words(&[&format!("cmd={}", eng.display())]), false).unwrap();
        assert!(
            a[0].starts_with("cmd=sha256:") && a[0] == b[0],
            "{a:?} {b:?}"
        );
        // On PATH: sh is found and pinned.
        let sh = super::words_by_content(&words(&["cmd=sh"]), false).unwrap();
        assert!(sh[0].starts_with("cmd=sha256:"), "{sh:?}");
        // An option naming a file is pinned; a number is not.
        let o = super::words_by_content(
            &words(&[&format!("option.Book={}", eng.display()), "option.Hash=16"]),
            false,
        )
        .unwrap();
        assert!(
            o[0].starts_with("option.Book=sha256:") && o[1] == "option.Hash=16",
            "{o:?}"
        );
        // A FIFO is never opened (it would block): its path stands for it.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("mkfifo runs");
        assert!(made.success());
        let f =
            super::words_by_content(&words(&[&format!("cmd={}", fifo.display())]), false).unwrap();
        assert_eq!(f[0], format!("cmd={}", fifo.display()));
        // Older records pinned params= and EvalFile only.
        assert!(super::words_by_content_before(&words(&["cmd=./eng"]), false).is_none());
    }

    #[test]
    fn engine_and_book_fields_keep_older_records_resumable() {
        let words = vec!["name=a".to_string(), "cmd=/no/such/engine".to_string()];
        let f = super::engine_field("engine 1", "--engine", &words);
        assert_eq!(f.key, "engine 1 by content");
        assert!(f
            .older
            .iter()
            .any(|(k, v)| k == "engine 1" && *v == serde_json::json!(words)));
        let none = super::book_field(None);
        assert_eq!(
            (none.key.as_str(), &none.value),
            ("book", &serde_json::Value::Null)
        );
        assert!(none.older.iter().any(|(k, _)| k == "book by content"));
    }
}
