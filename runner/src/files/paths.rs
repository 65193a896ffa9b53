//! The files a command names, checked before any work: no output may be another input or
//! output of the same command (by file identity, or by path for files not yet made), and
//! every output must be writable where it is (its directory exists and takes new files, the
//! path is not a directory).
//!
//! Inputs are every file the command or its engines read or run: books, data, `params=`
//! files, engine binaries (`cmd=`, and the cache of the engines spar builds), every file an
//! engine option or argument names, and the table files of `--tb` and `SyzygyPath`.
//!
//! Every command lists its inputs and outputs — derived ones too (`FILE.txt`, `FILE.idx`,
//! the `.run.json` record of a resumable run) — in one [`PathCheck`] and calls
//! [`PathCheck::check`]; a failure is a usage error (exit 2) naming both flags, e.g.
//! `--json R.csv is also the --results file: give them different names`.

use std::fs::{File, Metadata};
use std::path::{Component, Path, PathBuf};

use crate::error::{CliError, CliResult};
use crate::files::engine_files;
use crate::files::names::parent_dir;
use crate::files::run_dir::owned_file;

/// A file a command reads or writes, with the flag that names it.
#[derive(Clone, Debug)]
struct Named {
    flag: String,
    path: PathBuf,
    output: bool,
    /// Read back by `--resume`: must be a regular file.
    record: bool,
    /// An input spar reads itself: must be a regular file (others, such as an engine's
    /// binary or the files it is handed, are only never to be overwritten).
    read: bool,
}

/// The inputs and outputs of one command.
#[derive(Clone, Debug, Default)]
pub struct PathCheck {
    files: Vec<Named>,
    /// Cluster run directories the command reads: every file they own is an input.
    run_dirs: Vec<PathBuf>,
    /// The cache of the engines spar builds (`git=`, `features=`): every file in it is an
    /// input.
    build_cache: Option<PathBuf>,
}

impl PathCheck {
    /// An empty list.
    pub fn new() -> PathCheck {
        PathCheck::default()
    }

    /// A file the command reads (`--book`, `params=`, `--data`, …).
    pub fn input(&mut self, flag: impl Into<String>, path: impl AsRef<Path>) -> &mut Self {
        self.push(flag.into(), path.as_ref(), false, false);
        self.mark_read()
    }

    /// A file the command or its engines run or read but spar does not read here (an
    /// engine's binary, a network or table it is handed): no output may be it.
    pub fn kept(&mut self, flag: impl Into<String>, path: impl AsRef<Path>) -> &mut Self {
        self.push(flag.into(), path.as_ref(), false, false)
    }

    /// A file the command writes (appends to, or replaces).
    pub fn output(&mut self, flag: impl Into<String>, path: impl AsRef<Path>) -> &mut Self {
        self.push(flag.into(), path.as_ref(), true, false)
    }

    fn mark_read(&mut self) -> &mut Self {
        if let Some(last) = self.files.last_mut() {
            last.read = true;
        }
        self
    }

    /// A file the command appends to and reads back to resume (`--results`, a tune
    /// `--csv`, datagen's `--out`): it must be a regular file, never a device or a pipe,
    /// which could be read without end.
    pub fn record(&mut self, flag: impl Into<String>, path: impl AsRef<Path>) -> &mut Self {
        self.push(flag.into(), path.as_ref(), true, true)
    }

    fn push(&mut self, flag: String, path: &Path, output: bool, record: bool) -> &mut Self {
        self.files.push(Named {
            flag,
            path: path.to_path_buf(),
            output,
            record,
            read: false,
        });
        self
    }

    /// A cluster run directory the command reads or writes: no output may be one of the
    /// files it owns (its manifest, jobs, STOP and lock files, every shard's records, its
    /// built engines and logs), whether they exist yet or not.
    pub fn run_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        let dir = dir.as_ref();
        self.run_dirs
            .push(dir.canonicalize().unwrap_or_else(|_| where_made(dir)));
        self
    }

    /// The lock file of an output the command locks ([`crate::files::lock::lock_output`]):
    /// an output too, so that no other input or output of the command is that file (the
    /// lock would overwrite it). None for a special file, which gets no lock.
    pub fn locked(&mut self, flag: &str, path: impl AsRef<Path>) -> &mut Self {
        let path = path.as_ref();
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            return self;
        }
        self.output(
            format!("{flag} lock"),
            crate::files::lock::lock_file_for(path),
        )
    }

    /// Every file of every engine (`--engine` words over the `--each` words; the `--each`
    /// words alone when no engine is given): see [`PathCheck::engine`].
    pub fn engines(&mut self, engines: &[Vec<String>], each: &[String]) -> &mut Self {
        if engines.is_empty() {
            return self.engine(&[], each);
        }
        for words in engines {
            self.engine(words, each);
        }
        self
    }

    /// Every file one engine's words name ([`engine_files::of`]): the `params=` file it
    /// reads, the binary `cmd=` runs, the files its options and arguments name, the table
    /// files of its `SyzygyPath`, and the build cache of a `git=` / `features=` engine.
    pub fn engine(&mut self, words: &[String], each: &[String]) -> &mut Self {
        let files = engine_files::of(words, each);
        for (flag, path) in files.read {
            self.input(flag, path);
        }
        for (flag, path) in files.kept {
            self.kept(flag, path);
        }
        if files.built {
            self.builds();
        }
        self
    }

    /// The command may build engines (`git=`, `features=`, or the `track` build of `spar
    /// report`): no output may be in the cache where they are kept, of the git repository
    /// spar runs in.
    pub fn builds(&mut self) -> &mut Self {
        if self.build_cache.is_none() {
            self.build_cache = std::env::current_dir()
                .ok()
                .and_then(|d| crate::engines::git_build::cache_dir_for(&d))
                .map(|c| c.canonicalize().unwrap_or_else(|_| where_made(&c)));
        }
        self
    }

    /// The table files (`*.rtbw`, `*.rtbz`) of `--tb DIRS [KEY=VALUE…]` (directories
    /// separated by `:`): no output may be one of them.
    pub fn tb_words(&mut self, words: Option<&[String]>) -> &mut Self {
        let dirs = words.and_then(|w| w.first()).map_or("", String::as_str);
        for file in engine_files::table_files(dirs, None) {
            self.kept("--tb", file);
        }
        self
    }

    /// The book file of `--book FILE [KEY=VALUE…]`.
    pub fn book_words(&mut self, words: Option<&[String]>) -> &mut Self {
        if let Some(file) = words.and_then(|w| w.first()) {
            self.input("--book", file);
        }
        self
    }

    /// All three checks: [`PathCheck::inputs`], [`PathCheck::collisions`], then
    /// [`PathCheck::writable`].
    pub fn check(&self) -> CliResult {
        self.inputs()?;
        self.collisions()?;
        self.writable()
    }

    /// Every input that exists is a regular file: a FIFO with no writer would block its
    /// open forever, a device like `/dev/zero` never ends, a pipe cannot be read twice (the
    /// format guess, then the parse), and a directory is no file. A missing input is left
    /// to its reader, whose message names it.
    pub fn inputs(&self) -> CliResult {
        for f in self.files.iter().filter(|f| f.read) {
            if std::fs::metadata(&f.path).is_ok() {
                crate::files::input::regular(&f.path, &f.flag)?;
            }
        }
        Ok(())
    }

    /// No output is the same file as another input or output, or a file a run directory
    /// owns.
    pub fn collisions(&self) -> CliResult {
        for f in self.files.iter().filter(|f| f.output) {
            let at = resolved(&f.path);
            if let Some(cache) = self.build_cache.as_ref().filter(|c| at.starts_with(c)) {
                return Err(CliError::usage(format!(
                    "{} {} is in {}, where spar keeps the engines it builds (--engine git= or \
                     features=): give a path outside it",
                    f.flag,
                    f.path.display(),
                    cache.display()
                )));
            }
            for dir in &self.run_dirs {
                if let Some(what) = at.strip_prefix(dir).ok().and_then(owned_file) {
                    return Err(CliError::usage(format!(
                        "{} {} is {what} of the run in {}: give a path outside the run's own files",
                        f.flag,
                        f.path.display(),
                        dir.display()
                    )));
                }
            }
        }
        let ids: Vec<Identity> = self.files.iter().map(|f| identity(&f.path)).collect();
        for j in 0..self.files.len() {
            for i in 0..j {
                let (a, b) = (&self.files[i], &self.files[j]);
                if !(a.output || b.output) || !same(&ids[i], &ids[j]) {
                    continue;
                }
                // Name the output first (the one that would destroy the other).
                let (first, second) = if b.output { (b, a) } else { (a, b) };
                let msg = if first.flag == second.flag {
                    format!(
                        "{} {} is given twice: give each {} a different name",
                        first.flag,
                        first.path.display(),
                        first.flag
                    )
                } else {
                    format!(
                        "{} {} is also the {} file: give them different names",
                        first.flag,
                        first.path.display(),
                        second.flag
                    )
                };
                return Err(CliError::usage(msg));
            }
        }
        Ok(())
    }

    /// Every output can be written: not a directory, in a directory that exists and takes
    /// new files. Special files (devices, pipes) are written in place and only need to be
    /// there.
    pub fn writable(&self) -> CliResult {
        for f in self.files.iter().filter(|f| f.output) {
            if f.record {
                if let Ok(m) = std::fs::metadata(&f.path) {
                    if !m.is_file() && !m.is_dir() {
                        return Err(CliError::usage(format!(
                            "{} {} is not a regular file: spar reads it back to resume; give a file",
                            f.flag,
                            f.path.display()
                        )));
                    }
                }
            }
            check_output(&f.flag, &f.path)?;
        }
        Ok(())
    }
}

/// How a path is compared: the file itself when it exists, else where it would be made.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    /// An existing regular file: (device, inode).
    File(u64, u64),
    /// A device, pipe or socket: may well be named twice (`/dev/null`), never a collision.
    Special,
    /// A file not made yet: its canonical directory and name.
    Path(PathBuf),
}

fn same(a: &Identity, b: &Identity) -> bool {
    !matches!(a, Identity::Special) && a == b
}

fn identity(path: &Path) -> Identity {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() || m.is_dir() => file_id(&m),
        Ok(_) => Identity::Special,
        Err(_) => Identity::Path(where_made(path)),
    }
}

#[cfg(unix)]
fn file_id(m: &Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    Identity::File(m.dev(), m.ino())
}

#[cfg(not(unix))]
fn file_id(_m: &Metadata) -> Identity {
    Identity::Special
}

/// The canonical directory of a path plus its file name (the directory made absolute and
/// cleaned by hand when it does not exist).
fn where_made(path: &Path) -> PathBuf {
    let parent = parent_dir(path);
    let dir = parent.canonicalize().unwrap_or_else(|_| {
        let abs = std::env::current_dir().unwrap_or_default().join(parent);
        let mut clean = PathBuf::new();
        for c in abs.components() {
            match c {
                Component::CurDir => {}
                Component::ParentDir => {
                    clean.pop();
                }
                other => clean.push(other),
            }
        }
        clean
    });
    match path.file_name() {
        Some(name) => dir.join(name),
        None => dir,
    }
}

/// Where a path leads: the file itself (links resolved) when it exists, else where it would
/// be made.
fn resolved(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| where_made(path))
}

fn check_output(flag: &str, path: &Path) -> CliResult {
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => {
            return Err(CliError::usage(format!(
                "{flag} {shown} is a directory: give a file name"
            )))
        }
        // Devices and pipes are written in place.
        Ok(m) if !m.is_file() => return Ok(()),
        _ => {}
    }
    let dir = parent_dir(path);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            return Err(CliError::usage(format!(
                "{flag} {shown}: {} is not a directory: give a path in an existing directory",
                dir.display()
            )))
        }
        Err(_) => {
            return Err(CliError::usage(format!(
            "{flag} {shown}: the directory {} does not exist: create it first or give another path",
            dir.display()
        )))
        }
    }
    // Files are replaced through a temporary file next to them, and appended files are
    // rewritten that way on --resume: the directory must take new files.
    if let Err(e) = tempfile::Builder::new()
        .prefix(".spar-check")
        .tempfile_in(dir)
    {
        return Err(CliError::usage(format!(
            "{flag} {shown}: cannot create files in {}: {e} (give a writable directory)",
            dir.display()
        )));
    }
    if path.exists() {
        if let Err(e) = File::options().append(true).open(path) {
            return Err(CliError::usage(format!(
                "{flag} {shown}: cannot write it: {e} (give a writable file)"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_file_by_identity_or_by_where_it_would_be_made() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.csv");
        std::fs::write(&a, "x").unwrap();
        let other = dir.path().join("sub/../a.csv");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let mut c = PathCheck::new();
        c.input("--book", &a).output("--json", &other);
        let err = c.collisions().unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message.contains("--json") && err.message.contains("is also the --book file"),
            "{}",
            err.message
        );
        let new = dir.path().join("new.txt");
        let mut c = PathCheck::new();
        c.output("--results", &new)
            .output("--pgnout", dir.path().join("sub/../new.txt"));
        assert!(c.collisions().is_err());
        let mut c = PathCheck::new();
        c.input("--data", &a).input("--data", &a);
        assert!(c.collisions().is_ok(), "inputs may repeat");
        let mut c = PathCheck::new();
        c.output("--json", "/dev/null")
            .output("--pgnout", "/dev/null");
        assert!(c.check().is_ok(), "devices are not collisions");
    }

    #[test]
    fn engine_files_are_inputs_never_overwritten_nor_read_here() {
        let dir = tempfile::tempdir().unwrap();
        let eng = dir.path().join("eng");
        std::fs::write(&eng, "binary").unwrap();
        let words = vec![format!("cmd={}", eng.display())];
        let mut c = PathCheck::new();
        c.engine(&words, &[]).output("--out", &eng);
        let err = c.check().unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message
                .ends_with("is also the --engine cmd= file: give them different names"),
            "{}",
            err.message
        );
        // A file an engine is handed is not read by spar: a directory there is no error
        // of the check (the engine's own start or option says what is wrong).
        let mut c = PathCheck::new();
        c.kept("--engine option.X=", dir.path())
            .output("--out", dir.path().join("o"));
        assert!(c.check().is_ok());
        // The build cache: no output inside it.
        let mut c = PathCheck::new();
        c.output("--json", dir.path().join("cache/x.json"));
        c.build_cache = Some(where_made(&dir.path().join("cache/.")));
        let err = c.collisions().unwrap_err();
        assert!(
            err.message
                .contains("where spar keeps the engines it builds"),
            "{}",
            err.message
        );
    }

    #[test]
    fn outputs_must_be_writable_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut c = PathCheck::new();
        c.output("--json", dir.path());
        assert!(c.check().unwrap_err().message.contains("is a directory"));
        let mut c = PathCheck::new();
        c.output("--out", dir.path().join("no/such/x"));
        assert!(c.check().unwrap_err().message.contains("does not exist"));
        let mut c = PathCheck::new();
        c.output("--out", dir.path().join("fine.txt"));
        assert!(c.check().is_ok());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
