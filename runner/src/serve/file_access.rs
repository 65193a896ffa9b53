//! What a run submitted to the server may read (issue 53): the files its words name, checked
//! before anything reads them.
//!
//! Every word that names a file or directory to read or run — `--book` (and its `file=`),
//! `--tb`, tune's `--params`, datagen's `--eval-file`, report's `--from`, and the engine
//! words `cmd=`, `dir=`, `params=`, `option.SyzygyPath=` (a `:` list), every other
//! `option.NAME=` and `args=` value that is a path (it has a `/`, or it exists) — is
//! resolved from the server's directory (and from each `dir=`), symbolic links and `..`
//! followed ([`resolve`]), and refused when it leads:
//!
//! - under `/proc`, `/etc`, `/sys` or `/dev` ([`NEVER`]), on every server;
//! - to one of the server's own files at the top of its data directory (the database, its
//!   lock), on every server;
//! - on a server with accounts, outside the directories the admin allowed (`spar serve
//!   --allow-files DIR`, repeatable; by default the server's start directory and its data
//!   directory). A server without accounts (one person, on loopback) lets its one user
//!   name any other file, as their shell would.
//!
//! The words checked are the sender's, before the server expands `engine=NAME` and
//! `net=NAME` into the builds and nets it keeps itself.
//!
//! [`scrub`] is the second layer of "no file's bytes in a message to the network": the
//! first is [`data::quote::withheld`], inside which the check of the words runs.

use std::path::{Component, Path, PathBuf};

use crate::engines::variant::split_args;
use crate::files::engine_files;

/// The directories no run reads from, whatever the admin allowed: the server's system files
/// (its environment and memory in `/proc`, its accounts in `/etc`, devices).
pub const NEVER: &[&str] = &["/proc", "/etc", "/sys", "/dev"];

/// The flags whose value words are files (or, for `--tb`, `:` lists of directories).
pub const FILE_FLAGS: &[&str] = &[
    "--book",
    "--tb",
    "--params",
    "--eval-file",
    "--from",
    "--inspect",
    "--plot",
];

/// The engine words whose value is a path.
const PATH_KEYS: &[&str] = &["cmd", "dir", "params", "file"];

/// The most bytes of each named file [`scrub`] reads.
const SCRUB_LIMIT: u64 = 64 << 20;

/// Where the runs of a server may read: checked by [`FileAccess::check`].
#[derive(Clone, Debug)]
pub struct FileAccess {
    /// The allowed directories, canonical.
    allowed: Vec<PathBuf>,
    /// The data directory, canonical: its top-level files are the server's own.
    data_dir: PathBuf,
    /// Where relative paths start (the server's directory, `AppState::cwd`).
    cwd: PathBuf,
}

/// One path that a run's words name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// The word that names it, as a message shows it (`--book`, `cmd=`, `option.EvalFile=`).
    pub word: String,
    /// The path as given (relative ones are resolved from the server's directory).
    pub path: PathBuf,
}

impl Named {
    /// The word and the path as the sender wrote them: `--book b.epd`, `cmd=./eng`.
    pub fn shown(&self) -> String {
        if self.word.ends_with('=') {
            format!("{}{}", self.word, self.path.display())
        } else {
            format!("{} {}", self.word, self.path.display())
        }
    }
}

impl FileAccess {
    /// The access of a server started in `cwd` with data in `data_dir`, allowing `allow`
    /// (`--allow-files`; none: `cwd` and `data_dir`). An allowed directory that does not
    /// exist, is no directory or lies under [`NEVER`] is refused (the message names the
    /// flag and the fix).
    pub fn new(allow: &[PathBuf], cwd: &Path, data_dir: &Path) -> Result<FileAccess, String> {
        let canonical = |p: &Path| {
            std::fs::canonicalize(cwd.join(p)).map_err(|e| {
                format!(
                    "--allow-files {}: {e} (give an existing directory)",
                    p.display()
                )
            })
        };
        let data_dir = std::fs::canonicalize(data_dir)
            .map_err(|e| format!("--data-dir {}: {e}", data_dir.display()))?;
        let mut allowed = Vec::new();
        if allow.is_empty() {
            allowed.push(canonical(cwd)?);
            allowed.push(data_dir.clone());
        }
        for dir in allow {
            let at = canonical(dir)?;
            if !at.is_dir() {
                return Err(format!(
                    "--allow-files {}: not a directory (give the directory whose files runs may read)",
                    dir.display()
                ));
            }
            if let Some(root) = never_root(&at) {
                return Err(format!(
                    "--allow-files {}: runs never read under {root} (give another directory)",
                    dir.display()
                ));
            }
            allowed.push(at);
        }
        Ok(FileAccess {
            allowed,
            data_dir,
            cwd: cwd.to_path_buf(),
        })
    }

    /// Refuses words that name a file a run may not read (see the module's list); `accounts`:
    /// whether the server has accounts (then only the allowed directories are readable).
    /// The message names the word and the path as given, never where a link leads.
    pub fn check(&self, words: &[String], accounts: bool) -> Result<(), String> {
        for n in named(words, &self.cwd) {
            let given = self.cwd.join(&n.path);
            let resolved = resolve(&given);
            let shown = n.shown();
            if never_root(&normalize(&given)).is_some() || never_root(&resolved).is_some() {
                return Err(format!(
                    "{shown}: a run never reads under {} (the server's system files): name \
                     another file",
                    NEVER.join(", ")
                ));
            }
            if resolved.parent() == Some(self.data_dir.as_path()) && !resolved.is_dir() {
                return Err(format!(
                    "{shown}: one of the server's own files (its database, its lock): name \
                     another file"
                ));
            }
            if accounts && !self.allowed.iter().any(|a| resolved.starts_with(a)) {
                let dirs: Vec<String> = self
                    .allowed
                    .iter()
                    .map(|a| a.display().to_string())
                    .collect();
                return Err(format!(
                    "{shown}: outside the directories that runs on this server may read ({}): \
                     use a file there, or ask an admin to allow its directory (spar serve \
                     --allow-files DIR)",
                    dirs.join(", ")
                ));
            }
        }
        Ok(())
    }
}

/// Every path `words` name (see the module's list), in order; relative values of engine
/// words are named once as given and once from each `dir=` of the words. `cwd` is where
/// relative paths start (to tell whether a value names an existing file).
pub fn named(words: &[String], cwd: &Path) -> Vec<Named> {
    let dirs: Vec<PathBuf> = words
        .iter()
        .filter_map(|w| key_value(w))
        .filter(|(k, _)| *k == "dir")
        .map(|(_, v)| cwd.join(v))
        .collect();
    let mut out = Vec::new();
    let mut flag: Option<&str> = None;
    for w in words {
        let value = match w.strip_prefix("--") {
            Some(rest) => {
                let (name, value) = rest
                    .split_once('=')
                    .map_or((rest, None), |(n, v)| (n, Some(v)));
                flag = Some(&w[..name.len() + 2]);
                match value {
                    Some(v) => v,
                    None => continue,
                }
            }
            None => w.as_str(),
        };
        match key_value(value) {
            Some((key, v)) => engine_word(key, v, cwd, &dirs, &mut out),
            None => {
                let Some(f) = flag.filter(|f| FILE_FLAGS.contains(f)) else {
                    continue;
                };
                if f == "--tb" {
                    out.extend(list(value).map(|d| named_as(f, d)));
                } else {
                    out.push(named_as(f, value));
                }
            }
        }
    }
    out
}

/// `key=value` split, for a key of letters, digits, `.`, `_` or `-` (so that a path with an
/// `=` in it is not taken for one).
fn key_value(w: &str) -> Option<(&str, &str)> {
    let (k, v) = w.split_once('=')?;
    let plain = !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    plain.then_some((k, v))
}

/// The paths of one `key=value` engine (or book) word.
fn engine_word(key: &str, value: &str, cwd: &Path, dirs: &[PathBuf], out: &mut Vec<Named>) {
    let word = format!("{key}=");
    let with_dirs = |p: &str, out: &mut Vec<Named>| {
        out.push(named_as(&word, p));
        if Path::new(p).is_relative() {
            out.extend(
                dirs.iter()
                    .map(|d| named_as(&word, &d.join(p).to_string_lossy())),
            );
        }
    };
    if key == "cmd" && !value.contains('/') {
        // A bare name: the binary PATH finds.
        if let Some(found) = engine_files::binary(value, None) {
            out.push(named_as(&word, &found.to_string_lossy()));
        }
    } else if PATH_KEYS.contains(&key) {
        if !value.trim().is_empty() {
            with_dirs(value, out);
        }
    } else if let Some(option) = key.strip_prefix("option.") {
        if option.eq_ignore_ascii_case("SyzygyPath") {
            for d in list(value).filter(|d| *d != "<empty>") {
                with_dirs(d, out);
            }
        } else if is_path(value, cwd, dirs) {
            with_dirs(value, out);
        }
    } else if key == "args" {
        for arg in split_args(value).unwrap_or_default() {
            // `--net=FILE` as well as `FILE`.
            let v = arg.split_once('=').map_or(arg.as_str(), |(_, v)| v);
            if is_path(v, cwd, dirs) {
                with_dirs(v, out);
            }
        }
    }
}

/// A `:` list of directories (`--tb`, `SyzygyPath`), empty parts left out.
fn list(value: &str) -> impl Iterator<Item = &str> {
    value.split(':').filter(|d| !d.trim().is_empty())
}

fn named_as(word: &str, path: &str) -> Named {
    Named {
        word: word.to_string(),
        path: PathBuf::from(path),
    }
}

/// Whether an option's or argument's value names a file: it has a `/`, or it exists from
/// the server's directory or an engine's `dir=`.
fn is_path(value: &str, cwd: &Path, dirs: &[PathBuf]) -> bool {
    let v = value.trim();
    !v.is_empty()
        && (v.contains('/') || cwd.join(v).exists() || dirs.iter().any(|d| d.join(v).exists()))
}

/// Where `path` (absolute) leads: canonical when it exists; else its deepest existing
/// ancestor, canonical, with the rest of the path appended (`..` taken lexically), so a
/// file that does not exist yet is judged by the directory it would be made in.
pub fn resolve(path: &Path) -> PathBuf {
    if let Ok(p) = std::fs::canonicalize(path) {
        return p;
    }
    let path = normalize(path);
    let mut base = path.as_path();
    let mut rest = Vec::new();
    while let Some(parent) = base.parent() {
        if let Some(name) = base.file_name() {
            rest.push(name.to_os_string());
        }
        base = parent;
        if let Ok(p) = std::fs::canonicalize(base) {
            return rest.iter().rev().fold(p, |acc, n| acc.join(n));
        }
    }
    path
}

/// `path` with `.` dropped and `..` taken lexically.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The [`NEVER`] directory `path` (absolute) is under.
fn never_root(path: &Path) -> Option<&'static str> {
    NEVER.iter().copied().find(|r| path.starts_with(r))
}

/// `message` with every run of its bytes that one of the regular files `words` name also
/// holds removed ([`data::quote::scrub`]; the first [`SCRUB_LIMIT`] bytes of each file):
/// the second layer under [`data::quote::withheld`], for a message of the check of a run's
/// words. Files under [`NEVER`] are never opened.
pub fn scrub(message: &str, words: &[String], cwd: &Path) -> String {
    let mut out = message.to_string();
    let mut seen: Vec<PathBuf> = Vec::new();
    for n in named(words, cwd) {
        let at = resolve(&cwd.join(&n.path));
        if seen.contains(&at) || never_root(&at).is_some() || !at.is_file() {
            continue;
        }
        if let Ok(file) = std::fs::File::open(&at) {
            out = data::quote::scrub(&out, std::io::BufReader::new(file), SCRUB_LIMIT);
        }
        seen.push(at);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    fn paths(words: &str, cwd: &Path) -> Vec<String> {
        named(&w(words), cwd)
            .into_iter()
            .map(|n| n.shown())
            .collect()
    }

    /// A server's directory `srv` (allowed), its data directory `srv/data`, and a directory
    /// `out` beside it that is not allowed.
    struct Dirs {
        _tmp: tempfile::TempDir,
        srv: PathBuf,
        out: PathBuf,
    }

    fn dirs() -> Dirs {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        let srv = root.join("srv");
        let out = root.join("out");
        std::fs::create_dir_all(srv.join("data")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        Dirs {
            _tmp: tmp,
            srv,
            out,
        }
    }

    fn access(d: &Dirs, allow: &[PathBuf]) -> FileAccess {
        FileAccess::new(allow, &d.srv, &d.srv.join("data")).unwrap()
    }

    #[test]
    fn every_word_that_names_a_file_is_found() {
        let d = dirs();
        std::fs::write(d.srv.join("net.bin"), "n").unwrap();
        let found = paths(
            "--engine cmd=./eng dir=e params=p.txt option.EvalFile=net.bin option.Hash=16 \
             option.SyzygyPath=/t1:/t2 args=--book=/b.bin --each tc=40/60+0.6 nodes=5 \
             --book=o.epd order=random --tb /tb:rel pieces=5 --params s.txt --eval-file n.nnue \
             --from x.json --games 8 --book file=f.epd --engine name=a/b engine=dev net=x",
            &d.srv,
        );
        let e = d.srv.join("e").display().to_string();
        assert_eq!(
            found,
            [
                "cmd=./eng".to_string(),
                format!("cmd={e}/./eng"),
                "dir=e".into(),
                format!("dir={e}/e"),
                "params=p.txt".into(),
                format!("params={e}/p.txt"),
                "option.EvalFile=net.bin".into(),
                format!("option.EvalFile={e}/net.bin"),
                "option.SyzygyPath=/t1".into(),
                "option.SyzygyPath=/t2".into(),
                "args=/b.bin".into(),
                "--book o.epd".into(),
                "--tb /tb".into(),
                "--tb rel".into(),
                "--params s.txt".into(),
                "--eval-file n.nnue".into(),
                "--from x.json".into(),
                "file=f.epd".into(),
                format!("file={e}/f.epd"),
            ]
        );
        // A bare command is the binary PATH finds.
        let sh = paths("--engine cmd=sh", &d.srv);
        assert_eq!(sh.len(), 1);
        assert!(sh[0].starts_with("cmd=/"), "{sh:?}");
    }

    #[test]
    fn system_directories_are_refused_on_every_server() {
        let d = dirs();
        let a = access(&d, &[]);
        for words in [
            "--book /proc/self/environ",
            "--book /etc/passwd",
            "--engine cmd=/dev/zero",
            "--engine params=/sys/kernel/x",
            "--book /tmp/../etc/passwd",
            "--engine option.EvalFile=/etc/hostname",
            "--tb data:/etc",
        ] {
            for accounts in [true, false] {
                let e = a.check(&w(words), accounts).unwrap_err();
                assert!(
                    e.contains("never reads under /proc, /etc, /sys, /dev"),
                    "{e}"
                );
            }
        }
        // Relative paths that climb there too.
        let up = "../".repeat(d.srv.components().count());
        let e = a
            .check(&w(&format!("--book {up}etc/passwd")), false)
            .unwrap_err();
        assert!(e.contains("never reads"), "{e}");
    }

    #[test]
    fn a_link_is_judged_by_where_it_leads() {
        let d = dirs();
        std::os::unix::fs::symlink("/etc/passwd", d.srv.join("passwd.epd")).unwrap();
        std::fs::write(d.out.join("secret.epd"), "SECRET").unwrap();
        std::os::unix::fs::symlink(d.out.join("secret.epd"), d.srv.join("out.epd")).unwrap();
        std::os::unix::fs::symlink(&d.out, d.srv.join("outdir")).unwrap();
        let a = access(&d, &[]);
        let e = a.check(&w("--book passwd.epd"), false).unwrap_err();
        assert!(e.starts_with("--book passwd.epd: a run never reads"), "{e}");
        assert!(
            !e.contains("/etc/passwd"),
            "the link's target is not shown: {e}"
        );
        for words in [
            "--book out.epd",
            "--book outdir/secret.epd",
            "--book outdir/new.epd",
        ] {
            let e = a.check(&w(words), true).unwrap_err();
            assert!(e.contains("outside the directories"), "{words}: {e}");
            // Without accounts the one user reads where they like.
            a.check(&w(words), false).unwrap();
        }
    }

    #[test]
    fn with_accounts_only_the_allowed_directories_are_read() {
        let d = dirs();
        std::fs::write(d.out.join("b.epd"), "x").unwrap();
        std::fs::write(d.srv.join("b.epd"), "x").unwrap();
        let out_book = format!("--book {}", d.out.join("b.epd").display());
        let by_default = access(&d, &[]);
        assert_eq!(by_default.allowed, [d.srv.clone(), d.srv.join("data")]);
        by_default.check(&w("--book b.epd"), true).unwrap();
        by_default
            .check(&w("--book data/runs/1/games.pgn"), true)
            .unwrap();
        by_default.check(&w("--book not-yet.epd"), true).unwrap();
        let e = by_default.check(&w(&out_book), true).unwrap_err();
        assert!(
            e.starts_with(&format!("{out_book}: outside the directories")),
            "{e}"
        );
        assert!(e.contains("--allow-files DIR"), "{e}");
        by_default.check(&w(&out_book), false).unwrap();
        // --allow-files replaces the defaults.
        let only_out = access(&d, std::slice::from_ref(&d.out));
        only_out.check(&w(&out_book), true).unwrap();
        assert!(only_out.check(&w("--book b.epd"), true).is_err());
        assert!(only_out
            .check(
                &w(&format!("--engine cmd={}/../srv/b.epd", d.out.display())),
                true
            )
            .is_err());
    }

    #[test]
    fn the_servers_own_files_are_refused() {
        let d = dirs();
        std::fs::write(d.srv.join("data/spar.db"), "db").unwrap();
        let a = access(&d, &[]);
        for accounts in [true, false] {
            let e = a.check(&w("--book data/spar.db"), accounts).unwrap_err();
            assert!(e.contains("the server's own files"), "{e}");
        }
    }

    #[test]
    fn an_allowed_directory_must_exist_and_not_be_a_system_one() {
        let d = dirs();
        let data = d.srv.join("data");
        let e = FileAccess::new(&[d.srv.join("nope")], &d.srv, &data).unwrap_err();
        assert!(e.starts_with("--allow-files "), "{e}");
        let e = FileAccess::new(&["/etc".into()], &d.srv, &data).unwrap_err();
        assert!(e.contains("never read under /etc"), "{e}");
        std::fs::write(d.srv.join("f"), "x").unwrap();
        let e = FileAccess::new(&["f".into()], &d.srv, &data).unwrap_err();
        assert!(e.contains("not a directory"), "{e}");
        // Relative to the server's directory.
        let a = FileAccess::new(&["data".into()], &d.srv, &data).unwrap();
        assert_eq!(a.allowed, [data]);
    }

    #[test]
    fn scrub_removes_what_the_named_files_hold() {
        let d = dirs();
        std::fs::write(d.srv.join("b.epd"), "ok line\nSECRET-abcdef-123 w - -\n").unwrap();
        let words = w("--book b.epd");
        let m = "--book b.epd:2: bad FEN placement: 'SECRET-abcdef-123' (fix it)";
        assert_eq!(
            scrub(m, &words, &d.srv),
            "--book b.epd:2: bad FEN placement: '…' (fix it)"
        );
        assert_eq!(scrub(m, &w("--games 8"), &d.srv), m);
    }
}
