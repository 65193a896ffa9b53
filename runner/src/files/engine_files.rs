//! The files an engine's words name, as the engine will find them: the binary `cmd=` runs
//! (a path, relative to `dir=` when it has one, or a name looked up on `PATH`), the
//! `params=` file, every `option.NAME=VALUE` and `args=` word that names an existing file
//! (an `EvalFile`, an opening book, …), and every table file of an `option.SyzygyPath=`
//! (or `--tb`) directory list. [`crate::files::paths::PathCheck`] makes sure that no output
//! is one of them.

use std::path::{Path, PathBuf};

use crate::engines::variant::split_args;

/// The files of one engine's words (its `--engine` words over the `--each` words).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct EngineFiles {
    /// Files spar itself reads (`params=`): with the flag that names them.
    pub read: Vec<(String, PathBuf)>,
    /// Files the engine runs or is handed (`cmd=`, option and `args=` files, tables).
    pub kept: Vec<(String, PathBuf)>,
    /// Whether the engine is built by spar (`git=`, `features=`) into its build cache.
    pub built: bool,
}

/// The files named by `words` over `each` (an engine's own words win, as in
/// [`crate::engines::variant::parse_variant`]). Words that are not `key=value` are left to
/// that parser, whose message names them.
pub fn of(words: &[String], each: &[String]) -> EngineFiles {
    let kv = merged(each, words);
    let get = |key: &str| kv.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
    let dir = get("dir").map(Path::new);
    let mut files = EngineFiles {
        built: get("git").is_some() || get("features").is_some(),
        ..EngineFiles::default()
    };
    if let Some(p) = get("params") {
        files
            .read
            .push(("--engine params=".into(), PathBuf::from(p)));
    }
    if let Some(binary) = get("cmd").and_then(|c| binary(c, dir)) {
        files.kept.push(("--engine cmd=".into(), binary));
    }
    for word in get("args")
        .and_then(|a| split_args(a).ok())
        .unwrap_or_default()
    {
        // `--net=FILE` as well as `FILE`.
        let value = word.split_once('=').map_or(word.as_str(), |(_, v)| v);
        for p in existing(value, dir) {
            files.kept.push(("--engine args=".into(), p));
        }
    }
    for (key, value) in &kv {
        let Some(name) = key.strip_prefix("option.") else {
            continue;
        };
        let flag = format!("--engine option.{name}=");
        let paths = if name.eq_ignore_ascii_case("SyzygyPath") {
            table_files(value, dir)
        } else {
            existing(value, dir)
        };
        files
            .kept
            .extend(paths.into_iter().map(|p| (flag.clone(), p)));
    }
    files
}

/// `each` then `words` as `(key, value)` pairs, one per key: a later word replaces an
/// earlier one's value.
fn merged(each: &[String], words: &[String]) -> Vec<(String, String)> {
    let mut kv: Vec<(String, String)> = Vec::new();
    for (k, v) in each.iter().chain(words).filter_map(|w| w.split_once('=')) {
        match kv.iter_mut().find(|(key, _)| key == k) {
            Some(slot) => slot.1 = v.to_string(),
            None => kv.push((k.to_string(), v.to_string())),
        }
    }
    kv
}

/// The binary `cmd=` starts: a path (relative to `dir=` when given, as the engine player
/// resolves it), or a bare name looked up on `PATH` as the operating system does. `None`
/// when a bare name is on no `PATH` directory (the start fails, with its own message).
pub fn binary(cmd: &str, dir: Option<&Path>) -> Option<PathBuf> {
    let path = Path::new(cmd);
    if cmd.contains('/') {
        return Some(match dir {
            Some(d) if path.is_relative() => d.join(path),
            _ => path.to_path_buf(),
        });
    }
    let search = std::env::var_os("PATH")?;
    std::env::split_paths(&search)
        .map(|d| d.join(cmd))
        .find(|p| is_executable(p))
}

#[cfg(unix)]
fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(not(unix))]
fn is_executable(p: &Path) -> bool {
    p.is_file()
}

/// Where a value may name a file: as given (from spar's directory) and, when relative,
/// from the engine's `dir=`; those that exist and are no directory.
fn existing(value: &str, dir: Option<&Path>) -> Vec<PathBuf> {
    if value.trim().is_empty() {
        return Vec::new();
    }
    candidates(value, dir)
        .into_iter()
        .filter(|p| std::fs::metadata(p).is_ok_and(|m| !m.is_dir()))
        .collect()
}

/// `value` and, when it is relative, `dir/value`.
fn candidates(value: &str, dir: Option<&Path>) -> Vec<PathBuf> {
    let path = PathBuf::from(value);
    match dir {
        Some(d) if path.is_relative() => vec![d.join(&path), path],
        _ => vec![path],
    }
}

/// Every table file (`*.rtbw`, `*.rtbz`) in the directories of a Syzygy path list
/// (separated by `:`), as the tables are found; missing or unreadable directories give none
/// (the tables' own check names them).
pub fn table_files(dirs: &str, dir: Option<&Path>) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for d in dirs.split(':').filter(|d| !d.trim().is_empty()) {
        for at in candidates(d, dir) {
            let Ok(entries) = std::fs::read_dir(&at) else {
                continue;
            };
            files.extend(
                entries
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "rtbw" || x == "rtbz")),
            );
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(line: &str) -> Vec<String> {
        line.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn every_file_an_engine_is_handed_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().display();
        std::fs::write(dir.path().join("net.nnue"), "n").unwrap();
        std::fs::write(dir.path().join("KRvK.rtbw"), "t").unwrap();
        std::fs::write(dir.path().join("KRvK.rtbz"), "t").unwrap();
        std::fs::write(dir.path().join("README"), "r").unwrap();
        std::fs::write(dir.path().join("book.bin"), "b").unwrap();
        let files = of(
            &w(&format!(
                "cmd=./eng option.EvalFile={d}/net.nnue option.Hash=16 \
                 option.SyzygyPath={d}:/no/such args=--book=book.bin"
            )),
            &w(&format!("dir={d} nodes=5")),
        );
        let mut kept: Vec<String> = files
            .kept
            .iter()
            .map(|(f, p)| format!("{f} {}", p.strip_prefix(dir.path()).unwrap().display()))
            .collect();
        kept.sort();
        assert_eq!(
            kept,
            [
                "--engine args= book.bin",
                "--engine cmd= eng",
                "--engine option.EvalFile= net.nnue",
                "--engine option.SyzygyPath= KRvK.rtbw",
                "--engine option.SyzygyPath= KRvK.rtbz",
            ]
        );
        assert!(files.read.is_empty() && !files.built);
    }

    #[test]
    fn engine_words_win_over_each_and_builds_are_seen() {
        let files = of(&w("params=p.txt features=pext"), &w("params=q.txt"));
        assert_eq!(
            files.read,
            [("--engine params=".to_string(), PathBuf::from("p.txt"))]
        );
        assert!(files.built);
        assert!(of(&w("git=HEAD~1"), &[]).built);
    }

    #[test]
    fn a_bare_command_is_looked_up_on_path() {
        // `sh` is on every PATH a test runs with; a name on none is no file.
        let sh = binary("sh", None).expect("sh on PATH");
        assert!(sh.is_absolute() || sh.components().count() > 1);
        assert_eq!(binary("no-such-engine-anywhere", None), None);
        assert_eq!(
            binary("e/x", Some(Path::new("/opt"))),
            Some(PathBuf::from("/opt/e/x"))
        );
        assert_eq!(
            binary("/usr/bin/e", Some(Path::new("/opt"))),
            Some("/usr/bin/e".into())
        );
    }
}
