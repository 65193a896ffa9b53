//! `RUN_DIR/manifest.json`: the immutable plan of a cluster run, written once by the
//! coordinator before anything is submitted and read by every shard, `merge` and `status`.
//!
//! It holds the schema version, the spar version and the sha256 of the spar binary, the
//! command (`match`, `sprt`, `datagen`) with all its arguments, the checked [`MatchPlan`]
//! (engines, limits, adjudication, seed, games or SPRT bounds), every external engine's
//! command with its sha256 (`git=`/`features=` builds copied into `RUN_DIR/engines/`), the
//! book with its sha256, every other file an engine word, engine option or argument names
//! (a network, a `params=` file, datagen's `--eval-file`) with its sha256, the number of
//! shards and the output files the merge writes, and the `--tb` table files by name and
//! size (full Syzygy sets are terabytes: too big to hash on every shard). A shard whose
//! binary, engines, book or any of those files differ refuses to run, naming what differs.
//!
//! A manifest is read as untrusted input: bounded in size, and every field a reader sizes
//! or divides by checked ([`Manifest::validate`]).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::input::{read_text_bounded, SMALL_FILE};
use crate::plan::MatchPlan;

/// The manifest's format version.
pub const SCHEMA: u64 = 1;

/// The most shards a run may have (`--shards`).
pub const MAX_SHARDS: u64 = 100_000;

/// The most pairs (datagen: games) a run may have: far beyond any real run, small enough
/// that counts and byte offsets never overflow.
pub const MAX_TOTAL: u64 = 1 << 40;

/// The manifest's file name in the run directory.
pub const FILE: &str = crate::files::run_dir::MANIFEST;

/// A file the run depends on, with its content hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashedFile {
    /// Absolute path.
    pub path: PathBuf,
    /// sha256 of its content, lowercase hex.
    pub sha256: String,
}

impl HashedFile {
    /// Hashes `path` (made absolute against `cwd`).
    pub fn of(path: &Path, cwd: &Path, what: &str) -> CliResult<HashedFile> {
        let path = cwd.join(path);
        let sha256 = sha256_file(&path)
            .map_err(|e| CliError::usage(format!("{what} {}: {e}", path.display())))?;
        Ok(HashedFile { path, sha256 })
    }
}

/// A file an engine word, engine option or argument names, pinned by its hash.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedFile {
    /// What names it (`engine 'dev' option.EvalFile`, `--eval-file`).
    pub what: String,
    /// The file and its hash.
    pub file: HashedFile,
}

/// The files named by engine words (`params=FILE`, and `option.NAME=VALUE` whose value is
/// an existing regular file: a network, a book, any file an external engine's option
/// takes), as (what names it, path). Values that are no file (numbers, words, directories)
/// are not files.
pub fn files_in_words(engine: &str, words: &[String], cwd: &Path) -> Vec<(String, PathBuf)> {
    let mut files = Vec::new();
    for w in words {
        let (what, value) = if let Some(v) = w.strip_prefix("params=") {
            ("params=".to_string(), v)
        } else if let Some((name, v)) = w.strip_prefix("option.").and_then(|o| o.split_once('=')) {
            (format!("option.{name}"), v)
        } else {
            continue;
        };
        if value.is_empty() {
            continue;
        }
        let path = cwd.join(value);
        if std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
            files.push((format!("{engine} {what}"), path));
        }
    }
    files
}

/// A file the run depends on, pinned by path and size instead of a hash: a Syzygy table
/// (`--tb`), where full sets are terabytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizedFile {
    /// Absolute path.
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
}

impl SizedFile {
    /// The files (paths made absolute against `cwd`) with their sizes.
    pub fn list(files: Vec<(PathBuf, u64)>, cwd: &Path) -> Vec<SizedFile> {
        files
            .into_iter()
            .map(|(path, size)| SizedFile {
                path: cwd.join(path),
                size,
            })
            .collect()
    }
}

/// An external engine of the run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineFile {
    /// The engine's seat (0 or 1).
    pub seat: usize,
    /// Its name.
    pub name: String,
    /// The executable and its hash.
    pub file: HashedFile,
    /// Built from `git=`/`features=` by the coordinator and copied into the run directory:
    /// shards run this file over UCI instead of building.
    pub built: bool,
}

/// A cluster run's plan.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`SCHEMA`].
    pub schema: u64,
    /// The spar version that wrote it.
    pub spar_version: String,
    /// The spar binary the shards run.
    pub binary: HashedFile,
    /// `match`, `sprt` or `datagen`.
    pub command: String,
    /// The command's arguments (its clap struct as JSON; paths relative to `cwd`).
    pub args: serde_json::Value,
    /// The directory the command was run in: shards and merges resolve paths against it.
    pub cwd: PathBuf,
    /// The coordinator's command line (for the JSON summary).
    pub command_line: Vec<String>,
    /// The checked plan of a match, SPRT or report (`None` for datagen).
    pub plan: Option<MatchPlan>,
    /// External engines (with `cmd=` or built), with hashes.
    pub engines: Vec<EngineFile>,
    /// The `--book` file, with its hash.
    pub book: Option<HashedFile>,
    /// Every other file the run reads (networks, parameter files), with its hash.
    #[serde(default)]
    pub inputs: Vec<PinnedFile>,
    /// The `--tb` table files, by path and size (absent without `--tb`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tablebases: Vec<SizedFile>,
    /// Number of shards: shard I plays pairs (datagen: games) I, I+N, …
    pub shards: u64,
    /// CPUs per array task.
    pub cpus_per_shard: usize,
    /// Pairs (datagen: games) in all; `None`: until the SPRT decides.
    pub total: Option<u64>,
    /// Seconds since the Unix epoch when the run was planned.
    pub created: u64,
}

impl Manifest {
    /// The manifest's path in `dir`.
    pub fn path(dir: &Path) -> PathBuf {
        dir.join(FILE)
    }

    /// Reads `dir/manifest.json`: a missing file, bad JSON or another schema or spar
    /// version is a usage error naming it.
    pub fn read(dir: &Path) -> CliResult<Manifest> {
        let path = Manifest::path(dir);
        if !path.exists() {
            return Err(CliError::usage(format!(
                "{}: no such file (give the --run-dir of a cluster run, which holds its manifest.json)",
                path.display()
            )));
        }
        let text = read_text_bounded(&path, "the run manifest", SMALL_FILE)?;
        let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            CliError::usage(format!("{}: not a spar run manifest: {e}", path.display()))
        })?;
        let version = value.get("spar_version").and_then(|v| v.as_str());
        let schema = value.get("schema").and_then(|v| v.as_u64());
        if schema != Some(SCHEMA) || version != Some(env!("CARGO_PKG_VERSION")) {
            return Err(CliError::usage(format!(
                "{} was written by spar {} (manifest schema {}); this is spar {} (schema {SCHEMA}): \
                 use the same spar version for the whole run, or start a new --run-dir",
                path.display(),
                version.unwrap_or("?"),
                schema.map_or("?".to_string(), |s| s.to_string()),
                env!("CARGO_PKG_VERSION")
            )));
        }
        let m: Manifest = serde_json::from_value(value).map_err(|e| {
            CliError::usage(format!("{}: not a spar run manifest: {e}", path.display()))
        })?;
        m.validate().map_err(|why| Manifest::invalid(dir, &why))?;
        Ok(m)
    }

    /// The usage error of a manifest in `dir` that is not valid: `why` says what is wrong.
    pub fn invalid(dir: &Path, why: &str) -> CliError {
        CliError::usage(format!(
            "{}: not a valid run manifest: {why} (it was changed by hand or damaged: \
             restore it, or start a new --run-dir)",
            Manifest::path(dir).display()
        ))
    }

    /// Checks the fields that readers size, index or divide by, whatever the job: the
    /// number of shards, CPUs per shard, the total's range and the engines' seats. The
    /// job's own checks (a plan where it needs one, a total where it needs one) are its
    /// [`Job::check_manifest`](crate::job::Job::check_manifest).
    pub fn validate(&self) -> Result<(), String> {
        if self.shards == 0 || self.shards > MAX_SHARDS {
            return Err(format!("shards {} (1 to {MAX_SHARDS})", self.shards));
        }
        if self.cpus_per_shard == 0 || self.cpus_per_shard > 1 << 16 {
            return Err(format!("cpus_per_shard {}", self.cpus_per_shard));
        }
        if let Some(t) = self.total {
            if t == 0 || t > MAX_TOTAL {
                return Err(format!("total {t}"));
            }
        }
        for e in &self.engines {
            if e.seat > 1 {
                return Err(format!("engine seat {}", e.seat));
            }
        }
        Ok(())
    }

    /// The check of a run that plays pairs of games between two engines (match, SPRT,
    /// tune, report): its plan with two engines of different names; a total, or SPRT
    /// bounds where `sprt` (an SPRT may run until it decides).
    pub fn check_pair_plan(&self, sprt: bool) -> Result<(), String> {
        if self.total.is_none() && !sprt {
            return Err(format!("no total for a `{}` run", self.command));
        }
        let plan = self
            .plan
            .as_ref()
            .ok_or_else(|| format!("a `{}` run without its plan", self.command))?;
        if plan.engines.len() != 2 {
            return Err(format!("{} engines (a match has two)", plan.engines.len()));
        }
        if plan.engines[0].name == plan.engines[1].name {
            return Err("two engines of the same name".to_string());
        }
        if sprt && plan.sprt.is_none() {
            return Err(format!("an {} run without its bounds", self.command));
        }
        if self.total.is_none() && plan.sprt.is_none() {
            return Err("no total and no SPRT".to_string());
        }
        Ok(())
    }

    /// Pins the `--tb` table files (by path, made absolute against the run's `cwd`, and
    /// size) and writes the manifest again into `dir`; nothing to do without tables.
    pub fn pin_tablebases(&mut self, dir: &Path, files: Vec<(PathBuf, u64)>) -> CliResult {
        if files.is_empty() {
            return Ok(());
        }
        self.tablebases = SizedFile::list(files, &self.cwd);
        self.write(dir)
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn write(&self, dir: &Path) -> CliResult {
        let path = Manifest::path(dir);
        let text = serde_json::to_string_pretty(self).expect("manifest is json") + "\n";
        write_atomically(&path, &text)
            .map_err(|e| CliError::usage(format!("cannot write {}: {e}", path.display())))
    }

    /// Checks that this process runs what the manifest says: the same spar binary, external
    /// engines and book (by sha256) and the same `--tb` tables (by name and size). The
    /// first difference is a one-line usage error.
    pub fn verify(&self, dir: &Path) -> CliResult {
        let manifest = Manifest::path(dir);
        let exe = std::env::current_exe()
            .map_err(|e| CliError::failure(format!("cannot find the spar binary: {e}")))?;
        let mine = sha256_file(&exe)
            .map_err(|e| CliError::failure(format!("cannot read {}: {e}", exe.display())))?;
        if mine != self.binary.sha256 {
            return Err(CliError::usage(format!(
                "{}: this spar binary ({}, sha256 {}) is not the one the run was planned with \
                 ({}, sha256 {}): run every shard with the same spar build",
                manifest.display(),
                exe.display(),
                short(&mine),
                self.binary.path.display(),
                short(&self.binary.sha256)
            )));
        }
        for e in &self.engines {
            check_file(&manifest, &format!("engine '{}'", e.name), &e.file)?;
        }
        if let Some(b) = &self.book {
            check_file(&manifest, "--book", b)?;
        }
        for p in &self.inputs {
            check_file(&manifest, &p.what, &p.file)?;
        }
        for t in &self.tablebases {
            check_sized(&manifest, t)?;
        }
        Ok(())
    }
}

/// A `--tb` table file's presence and size against the manifest's.
fn check_sized(manifest: &Path, f: &SizedFile) -> CliResult {
    let meta = std::fs::metadata(&f.path).map_err(|e| {
        CliError::usage(format!(
            "{}: --tb table {} cannot be read here: {e} (every node needs the same tables, at the \
             same path)",
            manifest.display(),
            f.path.display()
        ))
    })?;
    if !meta.is_file() || meta.len() != f.size {
        return Err(CliError::usage(format!(
            "{}: --tb table {} is {} bytes here, {} in the manifest: give every node the same \
             tables or start a new --run-dir",
            manifest.display(),
            f.path.display(),
            meta.len(),
            f.size
        )));
    }
    Ok(())
}

/// A file's hash against the manifest's.
fn check_file(manifest: &Path, what: &str, f: &HashedFile) -> CliResult {
    let now = sha256_file(&f.path).map_err(|e| {
        CliError::usage(format!(
            "{}: {what} {} cannot be read here: {e} (the run directory and engines must be on a \
             filesystem every node shares)",
            manifest.display(),
            f.path.display()
        ))
    })?;
    if now != f.sha256 {
        return Err(CliError::usage(format!(
            "{}: {what} {} changed since the run was planned (sha256 {} now, {} in the manifest): \
             restore it or start a new --run-dir",
            manifest.display(),
            f.path.display(),
            short(&now),
            short(&f.sha256)
        )));
    }
    Ok(())
}

/// The first 12 hex digits of a hash, for messages.
fn short(hex: &str) -> &str {
    &hex[..hex.len().min(12)]
}

/// The sha256 of a file's content, lowercase hex.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut f = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

/// Seconds since the Unix epoch.
pub fn now_secs() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn sha256_matches_the_standard_vector() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("abc");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(
            sha256_file(&f).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    /// A valid datagen manifest in `dir` (for the tests of other rooms too).
    pub(crate) fn manifest(dir: &Path) -> Manifest {
        let exe = std::env::current_exe().unwrap();
        Manifest {
            schema: SCHEMA,
            spar_version: env!("CARGO_PKG_VERSION").to_string(),
            binary: HashedFile::of(&exe, dir, "spar").unwrap(),
            command: "datagen".into(),
            args: serde_json::json!({}),
            cwd: dir.to_path_buf(),
            command_line: vec!["spar".into()],
            plan: None,
            engines: Vec::new(),
            book: None,
            inputs: Vec::new(),
            tablebases: Vec::new(),
            shards: 4,
            cpus_per_shard: 1,
            total: Some(10),
            created: 0,
        }
    }

    #[test]
    fn a_manifest_round_trips_and_changed_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let engine = dir.path().join("engine.sh");
        std::fs::write(&engine, "#!/bin/sh\n").unwrap();
        let mut m = manifest(dir.path());
        m.engines.push(EngineFile {
            seat: 0,
            name: "sf".into(),
            file: HashedFile::of(&engine, dir.path(), "engine").unwrap(),
            built: false,
        });
        m.write(dir.path()).unwrap();
        let back = Manifest::read(dir.path()).unwrap();
        assert_eq!(back, m);
        back.verify(dir.path()).unwrap();
        std::fs::write(&engine, "#!/bin/sh\necho changed\n").unwrap();
        let err = back.verify(dir.path()).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(err.message.contains("engine 'sf'"), "{}", err.message);
        assert!(err.message.contains("changed since"), "{}", err.message);
    }

    #[test]
    fn absurd_fields_and_changed_inputs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for (field, value, why) in [
            ("shards", serde_json::json!(0), "shards 0"),
            (
                "shards",
                serde_json::json!(u64::MAX),
                "shards 18446744073709551615",
            ),
            ("cpus_per_shard", serde_json::json!(0), "cpus_per_shard 0"),
            ("total", serde_json::json!(0), "total 0"),
        ] {
            let mut v = serde_json::to_value(manifest(dir.path())).unwrap();
            v[field] = value;
            std::fs::write(Manifest::path(dir.path()), v.to_string()).unwrap();
            let err = Manifest::read(dir.path()).unwrap_err();
            assert_eq!(err.code, 2);
            assert!(err.message.contains(why), "{field}: {}", err.message);
        }
        let net = dir.path().join("a.nnue");
        std::fs::write(&net, "net one").unwrap();
        let words = ["nodes=5".to_string(), "option.EvalFile=a.nnue".to_string()];
        let named = files_in_words("engine 'dev'", &words, dir.path());
        assert_eq!(
            named,
            [("engine 'dev' option.EvalFile".to_string(), net.clone())]
        );
        let mut m = manifest(dir.path());
        m.inputs.push(PinnedFile {
            what: named[0].0.clone(),
            file: HashedFile::of(&net, dir.path(), "x").unwrap(),
        });
        m.verify(dir.path()).unwrap();
        std::fs::write(&net, "net two").unwrap();
        let err = m.verify(dir.path()).unwrap_err();
        assert!(
            err.message.contains("engine 'dev' option.EvalFile")
                && err.message.contains("changed since"),
            "{}",
            err.message
        );
    }

    mod fuzz {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(200))]

            /// Any field of a valid manifest set to any JSON value (numbers at the limits,
            /// strings, nulls, arrays, objects), or its text cut or a byte flipped: read and
            /// checked without a panic or an allocation abort; what passes is sane.
            #[test]
            fn damaged_manifests_are_errors_not_panics(
                field in 0usize..16,
                value in prop_oneof![
                    any::<u64>().prop_map(serde_json::Value::from),
                    any::<i64>().prop_map(serde_json::Value::from),
                    any::<f64>().prop_map(|f| serde_json::json!(f)),
                    ".{0,12}".prop_map(serde_json::Value::from),
                    Just(serde_json::Value::Null),
                    Just(serde_json::json!([])),
                    Just(serde_json::json!({"x": 1})),
                ],
                cut in 0usize..4096,
                flip in 0usize..4096,
            ) {
                let dir = tempfile::tempdir().unwrap();
                let mut v = serde_json::to_value(manifest(dir.path())).unwrap();
                let keys: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
                let key = &keys[field % keys.len()];
                v[key] = value;
                let text = v.to_string();
                let mut flipped = text.clone().into_bytes();
                let i = flip % flipped.len();
                flipped[i] ^= 0x55;
                for bytes in [
                    text.clone().into_bytes(),
                    text.as_bytes()[..cut.min(text.len())].to_vec(),
                    flipped,
                ] {
                    std::fs::write(Manifest::path(dir.path()), &bytes).unwrap();
                    if let Ok(m) = Manifest::read(dir.path()) {
                        prop_assert!(m.shards >= 1 && m.shards <= MAX_SHARDS);
                        prop_assert!(m.total.is_none_or(|t| (1..=MAX_TOTAL).contains(&t)));
                        let _ = m.verify(dir.path());
                        if let Ok(kind) = crate::jobs::of(dir.path(), &m) {
                            let _ = kind.records(&m).and_then(|shape| {
                                crate::cluster::records::Records::new(dir.path(), &m, shape)
                                    .refresh()
                            });
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn tablebase_files_are_checked_by_name_and_size() {
        let dir = tempfile::tempdir().unwrap();
        let table = dir.path().join("KRvK.rtbw");
        std::fs::write(&table, vec![0u8; 100]).unwrap();
        let mut m = manifest(dir.path());
        m.tablebases = SizedFile::list(vec![(table.clone(), 100)], dir.path());
        m.write(dir.path()).unwrap();
        let back = Manifest::read(dir.path()).unwrap();
        assert_eq!(back, m);
        back.verify(dir.path()).unwrap();
        // Same size, other content: not hashed, so accepted.
        std::fs::write(&table, vec![1u8; 100]).unwrap();
        back.verify(dir.path()).unwrap();
        std::fs::write(&table, vec![0u8; 99]).unwrap();
        let err = back.verify(dir.path()).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message.contains("KRvK.rtbw") && err.message.contains("99 bytes here, 100"),
            "{}",
            err.message
        );
        assert!(!err.message.contains('\n'), "one line: {}", err.message);
        std::fs::remove_file(&table).unwrap();
        let err = back.verify(dir.path()).unwrap_err();
        assert!(
            err.message.contains("--tb table") && err.message.contains("KRvK.rtbw"),
            "{}",
            err.message
        );
        // Without --tb the manifest has no such field.
        let plain = serde_json::to_value(manifest(dir.path())).unwrap();
        assert!(plain.get("tablebases").is_none());
    }

    #[test]
    fn another_version_or_binary_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = manifest(dir.path());
        m.spar_version = "0.0.0-old".into();
        m.write(dir.path()).unwrap();
        let err = Manifest::read(dir.path()).unwrap_err();
        assert!(err.message.contains("spar 0.0.0-old"), "{}", err.message);
        let mut m = manifest(dir.path());
        m.binary.sha256 = "0".repeat(64);
        let err = m.verify(dir.path()).unwrap_err();
        assert!(err.message.contains("not the one"), "{}", err.message);
        let err = Manifest::read(&dir.path().join("none")).unwrap_err();
        assert!(err.message.contains("--run-dir"), "{}", err.message);
    }
}
