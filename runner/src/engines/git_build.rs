//! Build variants: spar built at a git revision and/or with cargo features, then run as a UCI
//! engine (`<binary> uci`).
//!
//! `--engine name=main git=main` builds the `runner` package (binary `spar`) as it is at
//! revision `main`; `--engine name=kg features=kindergarten` builds the working tree with the
//! `kindergarten` feature. Builds happen once, before any game, and are cached.
//!
//! ## Sources
//!
//! * `git=<rev>`: the revision is resolved to its full commit hash
//!   (`git rev-parse --verify <rev>^{commit}`) and its tree is exported with
//!   `git archive <commit> | tar -x` into a temporary directory that is removed after the build.
//!   Unlike `git worktree add`, this leaves no trace in the repository (no `.git/worktrees`
//!   entry to prune) even when spar is killed mid-build. Uncommitted changes are, by
//!   definition, not part of a revision.
//! * no `git=` (features only): the working tree is built in place, uncommitted changes
//!   included. Such builds are not cached by key (the tree changes under us); cargo's own
//!   fingerprints make a rebuild of an unchanged tree a no-op.
//!
//! ## Cache layout (under the repository's `target/`)
//!
//! ```text
//! target/spar-builds/
//!   target/                             shared cargo target dir (dependencies compiled once)
//!   <full commit hash>-<features>/spar  binary of a git= build; reused when asked again
//!   worktree-<features>/spar            latest working-tree build with these features
//! ```
//!
//! `<features>` is the sorted, de-duplicated feature list joined with `+`, or `default`.
//! Binaries are installed by copy + rename, so a running engine is never overwritten.
//!
//! ## The cargo profile
//!
//! Builds use `--release` (fat LTO: the speed users measure). `SPAR_BUILD_PROFILE=NAME`
//! in spar's environment builds with `--profile NAME` instead (the tests and CI set `ci`:
//! the same optimisation without fat LTO, minutes less on a cold cache); such a build is
//! cached under a key ending in `-NAME` (`<commit>-<features>-ci/spar`), never mixed with
//! the release builds.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use super::variant::{Source, Variant};

/// Serialises builds within one process (they share a cargo target dir and its `release/spar`).
static BUILD_LOCK: Mutex<()> = Mutex::new(());

/// Lines of cargo's first error quoted in a build-failure message.
const ERROR_TAIL: usize = 14;

/// The cache directory of build variants for a repository root.
pub fn cache_dir(repo_root: &Path) -> PathBuf {
    repo_root.join("target").join("spar-builds")
}

/// The cache directory of build variants for spar run in `dir`: the one [`ensure_built`]
/// fills, in the git repository around `dir` (`None` outside any repository, where no
/// build can be made).
pub fn cache_dir_for(dir: &Path) -> Option<PathBuf> {
    toplevel(dir).ok().map(|top| cache_dir(&top))
}

/// The features part of a cache key: sorted, de-duplicated, joined with `+` (`default` if none).
pub fn features_key(features: &[String]) -> String {
    let mut f: Vec<String> = features
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .map(|f| {
            f.chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect()
        })
        .collect();
    f.sort();
    f.dedup();
    if f.is_empty() {
        "default".to_string()
    } else {
        f.join("+")
    }
}

/// Turns a build variant into an external UCI variant running the built binary
/// (`cmd=<binary> args=uci`), building it first if needed. Other variants are returned as they are.
pub fn resolve(variant: &Variant, repo_root: &Path, quiet: bool) -> Result<Variant, String> {
    let Source::Build { git, features } = &variant.source else {
        return Ok(variant.clone());
    };
    let binary = ensure_built(git.as_deref(), features, repo_root, quiet)
        .map_err(|e| format!("engine '{}': {e}", variant.name))?;
    let mut v = variant.clone();
    v.source = Source::Uci {
        cmd: binary.to_string_lossy().into_owned(),
        args: vec!["uci".to_string()],
        dir: None,
    };
    Ok(v)
}

/// Builds spar (package `runner`, binary `spar`) at revision `git` (or from the working tree
/// when `None`) with `features`, and returns the path of the cached binary. A `git=` build of a
/// commit + feature set built before is reused without running cargo. `quiet` hides cargo's
/// progress (errors are always reported, with the last lines of cargo's output).
pub fn ensure_built(
    git: Option<&str>,
    features: &[String],
    repo_root: &Path,
    quiet: bool,
) -> Result<PathBuf, String> {
    let _guard = BUILD_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let what = describe(git, features);
    let top = toplevel(repo_root).map_err(|e| format!("cannot build {what}: {e}"))?;
    let cache = cache_dir(&top);
    let profile = build_profile()?;
    let fkey = match &profile {
        Some(p) => format!("{}-{p}", features_key(features)),
        None => features_key(features),
    };
    let features: Vec<String> = {
        let mut f: Vec<String> = features
            .iter()
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect();
        f.sort();
        f.dedup();
        f
    };
    match git {
        Some(rev) => {
            let commit = resolve_commit(&top, rev)?;
            let short = &commit[..commit.len().min(10)];
            let dir = cache.join(format!("{commit}-{fkey}"));
            let binary = dir.join("spar");
            if binary.is_file() {
                if !quiet {
                    eprintln!(
                        "spar: using the cached build of {what} ({short}): {}",
                        binary.display()
                    );
                }
                return Ok(binary);
            }
            if !quiet {
                eprintln!(
                    "spar: building {what} ({short}); cached in {} for next time",
                    dir.display()
                );
            }
            let src = tempfile::Builder::new()
                .prefix("spar-src-")
                .tempdir()
                .map_err(|e| {
                    format!("cannot build {what}: cannot make a temporary directory: {e}")
                })?;
            export_tree(&top, &commit, src.path())
                .map_err(|e| format!("cannot build {what} ({short}): {e}"))?;
            if !src.path().join("Cargo.toml").is_file() {
                return Err(format!(
                    "cannot build {what} ({short}): that revision has no Cargo.toml at the repository root \
                     (is it a spar revision?)"
                ));
            }
            let built = cargo_build(
                src.path(),
                &cache.join("target"),
                &features,
                profile.as_deref(),
                quiet,
            )
            .map_err(|e| format!("building {what} ({short}) failed: {e}"))?;
            install(&built, &dir)
        }
        None => {
            if !quiet {
                eprintln!(
                    "spar: building spar{} from the working tree {} (uncommitted changes included)",
                    if features.is_empty() {
                        String::new()
                    } else {
                        format!(" with features={}", features.join(","))
                    },
                    top.display()
                );
            }
            let built = cargo_build(
                &top,
                &cache.join("target"),
                &features,
                profile.as_deref(),
                quiet,
            )
            .map_err(|e| format!("building {what} from the working tree failed: {e}"))?;
            install(&built, &cache.join(format!("worktree-{fkey}")))
        }
    }
}

/// `git=main features=a,b` style description for messages.
fn describe(git: Option<&str>, features: &[String]) -> String {
    let mut s = match git {
        Some(rev) => format!("git={rev}"),
        None => "the working tree".to_string(),
    };
    let f: Vec<&str> = features
        .iter()
        .map(|f| f.trim())
        .filter(|f| !f.is_empty())
        .collect();
    if !f.is_empty() {
        s.push_str(&format!(" features={}", f.join(",")));
    }
    s
}

/// `git -C dir` with the repository's hooks and fsmonitor off.
fn git_in(dir: &Path) -> Command {
    let mut git = Command::new("git");
    git.args([
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "core.fsmonitor=false",
    ])
    .arg("-C")
    .arg(dir);
    git
}

/// Runs git in `dir` (no hook of the repository runs: `spar serve` builds repositories
/// that users registered); stdout on success, a message (with git's stderr) on failure.
fn git_output(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = git_in(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run git: {e} (is git installed?)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// The top directory of the git repository containing `dir`.
fn toplevel(dir: &Path) -> Result<PathBuf, String> {
    git_output(dir, &["rev-parse", "--show-toplevel"])
        .map(PathBuf::from)
        .map_err(|e| {
            format!(
                "{} is not inside a git repository ({}); run spar from a spar checkout",
                dir.display(),
                e.lines().next().unwrap_or("git failed")
            )
        })
}

/// The full commit hash of a revision.
fn resolve_commit(top: &Path, rev: &str) -> Result<String, String> {
    if rev.is_empty() || rev.starts_with('-') {
        return Err(format!(
            "git={rev}: not a revision name (use a branch, tag or commit hash)"
        ));
    }
    git_output(top, &["rev-parse", "--verify", "--quiet", &format!("{rev}^{{commit}}")])
        .ok()
        .filter(|c| c.len() >= 40 && c.chars().all(|c| c.is_ascii_hexdigit()))
        .ok_or_else(|| {
            format!(
                "git={rev}: unknown revision in {} (use a branch, tag or commit hash; run 'git fetch' if it \
                 exists only on a remote)",
                top.display()
            )
        })
}

/// `git archive <commit> | tar -x -C <dest>`.
fn export_tree(top: &Path, commit: &str, dest: &Path) -> Result<(), String> {
    let mut archive = git_in(top)
        .args(["archive", "--format=tar", commit])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git archive: {e}"))?;
    let tar_in = archive.stdout.take().expect("stdout is piped");
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(Stdio::from(tar_in))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output();
    let git = archive
        .wait_with_output()
        .map_err(|e| format!("git archive failed: {e}"))?;
    if !git.status.success() {
        return Err(format!(
            "git archive {commit} failed: {}",
            String::from_utf8_lossy(&git.stderr).trim()
        ));
    }
    let tar = tar.map_err(|e| format!("cannot run tar: {e} (is tar installed?)"))?;
    if !tar.status.success() {
        return Err(format!(
            "unpacking the source with tar failed: {}",
            String::from_utf8_lossy(&tar.stderr).trim()
        ));
    }
    Ok(())
}

/// `cargo build --release -p runner [--features …] --target-dir <target>` in `src`; returns the
/// path of the built `spar` binary.
/// The cargo profile of builds: `None` for `--release`, else the name that
/// `SPAR_BUILD_PROFILE` gives (letters, digits, `-` and `_`).
pub fn build_profile() -> Result<Option<String>, String> {
    profile_of(std::env::var_os("SPAR_BUILD_PROFILE"))
}

/// The profile a value of `SPAR_BUILD_PROFILE` names ([`build_profile`]).
fn profile_of(value: Option<std::ffi::OsString>) -> Result<Option<String>, String> {
    let Some(v) = value else {
        return Ok(None);
    };
    let v = v.to_string_lossy().into_owned();
    match v.as_str() {
        "" | "release" => Ok(None),
        p if p
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            Ok(Some(p.to_string()))
        }
        _ => Err(format!(
            "SPAR_BUILD_PROFILE={v:?} is not a cargo profile name (letters, digits, - and _; \
             unset it for --release)"
        )),
    }
}

fn cargo_build(
    src: &Path,
    target: &Path,
    features: &[String],
    profile: Option<&str>,
    quiet: bool,
) -> Result<PathBuf, String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(&cargo);
    cmd.current_dir(src).args(["build"]);
    match profile {
        Some(p) => cmd.args(["--profile", p]),
        None => cmd.arg("--release"),
    };
    cmd.args(["-p", "runner", "--bin", "spar"])
        .arg("--manifest-path")
        .arg(src.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("CARGO_BUILD_TARGET_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if !features.is_empty() {
        cmd.arg("--features").arg(features.join(","));
    }
    let mut child = cmd.spawn().map_err(|e| {
        format!(
            "cannot run {}: {e} (is cargo installed?)",
            Path::new(&cargo).display()
        )
    })?;
    let stderr = child.stderr.take().expect("stderr is piped");
    let mut kept: Vec<String> = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if !quiet {
            eprintln!("{line}");
        }
        let t = line.trim_start();
        let progress = [
            "Compiling ",
            "Downloaded ",
            "Downloading ",
            "Updating ",
            "Locking ",
            "Adding ",
            "Blocking ",
        ]
        .iter()
        .any(|p| t.starts_with(p));
        if !progress && kept.len() < 10_000 {
            kept.push(line);
        }
    }
    let status = child.wait().map_err(|e| format!("cargo failed: {e}"))?;
    if !status.success() {
        return Err(format!(
            "cargo build exited with {status}; it said:\n    {}\n  fix the build at that revision, or the \
             features= list (runner's features are in runner/Cargo.toml)",
            error_excerpt(&kept).join("\n    ")
        ));
    }
    let binary = target
        .join(match profile {
            None | Some("bench") => "release",
            Some("dev" | "test") => "debug",
            Some(p) => p,
        })
        .join(format!("spar{}", std::env::consts::EXE_SUFFIX));
    if binary.is_file() {
        Ok(binary)
    } else {
        Err(format!(
            "cargo reported success but {} is missing",
            binary.display()
        ))
    }
}

/// The first error of cargo's output (up to [`ERROR_TAIL`] lines) and its last line.
fn error_excerpt(lines: &[String]) -> Vec<&str> {
    let lines: Vec<&str> = lines
        .iter()
        .map(String::as_str)
        .filter(|l| !l.trim().is_empty())
        .collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("error"))
        .unwrap_or(lines.len().saturating_sub(ERROR_TAIL));
    let end = (start + ERROR_TAIL).min(lines.len());
    let mut out = lines[start..end].to_vec();
    if end < lines.len() {
        if end + 1 < lines.len() {
            out.push("…");
        }
        out.push(lines[lines.len() - 1]);
    }
    out
}

/// Copies the built binary to `<dir>/spar` (copy to a temporary name, then rename).
fn install(built: &Path, dir: &Path) -> Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let dest = dir.join(format!("spar{}", std::env::consts::EXE_SUFFIX));
    let tmp = dir.join(format!(".spar.{}.tmp", std::process::id()));
    std::fs::copy(built, &tmp)
        .map_err(|e| format!("cannot copy {} to {}: {e}", built.display(), tmp.display()))?;
    std::fs::rename(&tmp, &dest).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot install {}: {e}", dest.display())
    })?;
    Ok(dest)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_build_profile_is_release_unless_named() {
        use super::profile_of;
        assert_eq!(profile_of(None), Ok(None));
        assert_eq!(profile_of(Some("".into())), Ok(None));
        assert_eq!(profile_of(Some("release".into())), Ok(None));
        assert_eq!(profile_of(Some("ci".into())), Ok(Some("ci".into())));
        let bad = profile_of(Some("../x".into())).unwrap_err();
        assert!(bad.contains("SPAR_BUILD_PROFILE=\"../x\""), "{bad}");
    }

    use super::*;
    use std::time::{Duration, Instant};

    /// A tiny git repository shaped like spar's (workspace, package `runner`, binary `spar`,
    /// two features) that builds in a second or two.
    struct FakeRepo {
        dir: tempfile::TempDir,
    }

    impl FakeRepo {
        fn new() -> FakeRepo {
            let dir = tempfile::tempdir().unwrap();
            let root = dir.path();
            std::fs::write(
                root.join("Cargo.toml"),
                "[workspace]\nmembers = [\"runner\"]\nresolver = \"2\"\n",
            )
            .unwrap();
            std::fs::write(root.join(".gitignore"), "/target\n").unwrap();
            std::fs::create_dir_all(root.join("runner/src")).unwrap();
            std::fs::write(
                root.join("runner/Cargo.toml"),
                "[package]\nname = \"runner\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n\
                 [[bin]]\nname = \"spar\"\npath = \"src/main.rs\"\n\n\
                 [features]\nkindergarten = []\npext = []\n",
            )
            .unwrap();
            let repo = FakeRepo { dir };
            repo.git(&["init", "-q"]);
            repo.commit_version("v1");
            repo.git(&["tag", "v1"]);
            repo
        }

        fn root(&self) -> &Path {
            self.dir.path()
        }

        fn git(&self, args: &[&str]) {
            let ok = Command::new("git")
                .arg("-C")
                .arg(self.root())
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@example.com",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        }

        fn write_main(&self, body: &str) {
            std::fs::write(self.root().join("runner/src/main.rs"), body).unwrap();
        }

        fn write_version(&self, version: &str) {
            self.write_main(&format!(
                "fn main() {{\n    let mut f = Vec::new();\n    \
                 if cfg!(feature = \"kindergarten\") {{ f.push(\"kindergarten\"); }}\n    \
                 if cfg!(feature = \"pext\") {{ f.push(\"pext\"); }}\n    \
                 println!(\"fake spar {version} features=[{{}}] args={{:?}}\", f.join(\",\"), \
                 std::env::args().skip(1).collect::<Vec<_>>());\n}}\n"
            ));
        }

        fn commit_version(&self, version: &str) {
            self.write_version(version);
            self.git(&["add", "-A"]);
            self.git(&["commit", "-q", "-m", version]);
        }
    }

    fn run(binary: &Path) -> String {
        let out = Command::new(binary).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn f(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn error_excerpts() {
        let lines: Vec<String> = (0..40)
            .map(|i| match i {
                3 => "error[E0308]: first".to_string(),
                39 => "error: could not compile".to_string(),
                i => format!("line {i}"),
            })
            .collect();
        let e = error_excerpt(&lines);
        assert_eq!(e[0], "error[E0308]: first");
        assert_eq!(e.len(), ERROR_TAIL + 2);
        assert_eq!(e[e.len() - 1], "error: could not compile");
        let short: Vec<String> = vec!["warning: x".into(), "error: no such feature".into()];
        assert_eq!(error_excerpt(&short), vec!["error: no such feature"]);
    }

    #[test]
    fn keys() {
        assert_eq!(features_key(&[]), "default");
        assert_eq!(
            features_key(&f(&["pext", "kindergarten", "pext", " "])),
            "kindergarten+pext"
        );
        assert_eq!(features_key(&f(&["engine/pext"])), "engine_pext");
        assert_eq!(
            describe(Some("main"), &f(&["a", "b"])),
            "git=main features=a,b"
        );
        assert_eq!(describe(None, &f(&["a"])), "the working tree features=a");
    }

    #[test]
    fn builds_revisions_and_features_and_caches_them() {
        let repo = FakeRepo::new();
        repo.commit_version("v2");
        let root = repo.root();

        let v1 = ensure_built(Some("v1"), &[], root, true).unwrap();
        assert_eq!(run(&v1), "fake spar v1 features=[] args=[]");
        let commit = git_output(root, &["rev-parse", "v1"]).unwrap();
        assert_eq!(
            v1,
            cache_dir(root)
                .join(format!("{commit}-default"))
                .join("spar")
        );

        let head = ensure_built(Some("HEAD"), &f(&["pext", "kindergarten"]), root, true).unwrap();
        assert_eq!(
            run(&head),
            "fake spar v2 features=[kindergarten,pext] args=[]"
        );
        assert!(head.to_string_lossy().contains("-kindergarten+pext/spar"));

        // Same commit and features (in another order, through another name): the cached binary.
        let modified = std::fs::metadata(&head).unwrap().modified().unwrap();
        let t = Instant::now();
        let again = ensure_built(Some("master"), &f(&["kindergarten", "pext"]), root, true)
            .or_else(|_| ensure_built(Some("main"), &f(&["kindergarten", "pext"]), root, true))
            .unwrap();
        assert_eq!(again, head);
        assert_eq!(
            std::fs::metadata(&again).unwrap().modified().unwrap(),
            modified
        );
        assert!(t.elapsed().as_secs_f64() < 1.0);

        // The source export left nothing in the repository.
        assert!(!root.join(".git/worktrees").exists());

        // No git=: the working tree, uncommitted changes included.
        repo.write_version("v3-dirty");
        let wt = ensure_built(None, &f(&["pext"]), root, true).unwrap();
        assert_eq!(run(&wt), "fake spar v3-dirty features=[pext] args=[]");
        assert_eq!(wt, cache_dir(root).join("worktree-pext").join("spar"));
        repo.write_version("v4-dirty");
        let wt2 = ensure_built(None, &f(&["pext"]), root, true).unwrap();
        assert_eq!(wt2, wt);
        assert_eq!(run(&wt2), "fake spar v4-dirty features=[pext] args=[]");

        // A variant resolves to cmd=<binary> args=uci.
        let words: Vec<String> = f(&["name=old", "git=v1", "nodes=10"]);
        let variant = crate::engines::variant::parse_variant(&words, &[], 0).unwrap();
        let resolved = resolve(&variant, &root.join("runner"), true).unwrap();
        match &resolved.source {
            Source::Uci { cmd, args, dir } => {
                assert_eq!(Path::new(cmd), v1);
                assert_eq!(args, &vec!["uci".to_string()]);
                assert!(dir.is_none());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(resolved.name, "old");
    }

    #[test]
    fn errors_name_the_revision_and_the_fix() {
        let repo = FakeRepo::new();
        let root = repo.root();

        let err = ensure_built(Some("no-such-branch"), &[], root, true).unwrap_err();
        assert!(
            err.contains("git=no-such-branch: unknown revision"),
            "{err}"
        );
        let err = ensure_built(Some("--help"), &[], root, true).unwrap_err();
        assert!(err.contains("not a revision name"), "{err}");

        let plain = tempfile::tempdir().unwrap();
        let err = ensure_built(Some("main"), &[], plain.path(), true).unwrap_err();
        assert!(err.contains("is not inside a git repository"), "{err}");

        let err = ensure_built(Some("v1"), &f(&["nosuchfeature"]), root, true).unwrap_err();
        assert!(
            err.contains("building git=v1 features=nosuchfeature"),
            "{err}"
        );
        assert!(err.contains("nosuchfeature"), "{err}");

        repo.write_main("fn main() { let x: u32 = \"not a number\"; }\n");
        repo.git(&["commit", "-q", "-a", "-m", "broken"]);
        repo.git(&["tag", "broken"]);
        let err = ensure_built(Some("broken"), &[], root, true).unwrap_err();
        assert!(err.contains("building git=broken ("), "{err}");
        assert!(err.contains("mismatched types"), "{err}");
        assert!(err.contains("fix the build"), "{err}");
        // Nothing was cached for the broken commit.
        let commit = git_output(root, &["rev-parse", "broken"]).unwrap();
        assert!(!cache_dir(root).join(format!("{commit}-default")).exists());

        // Builtin and external variants pass through resolve unchanged.
        let words: Vec<String> = f(&["name=x", "nodes=10"]);
        let builtin = crate::engines::variant::parse_variant(&words, &[], 0).unwrap();
        assert_eq!(
            resolve(&builtin, root, true).unwrap().source,
            Source::Builtin
        );
    }

    /// Builds the real spar from this repository's HEAD in release mode (with fat LTO: a minute
    /// or more on a small machine, and it fills `target/spar-builds`), so only on request:
    /// `cargo test --profile ci -p runner -- --ignored real_spar`. Once `spar uci` exists at HEAD,
    /// it also plays a few moves through [`super::super::uci::UciPlayer`].
    #[test]
    #[ignore]
    fn real_spar_builds_and_plays() {
        use crate::engines::player::{MoveRequest, Player};
        use engine::position::{Position, STARTPOS_FEN};
        use engine::search::Limits;

        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let binary = ensure_built(Some("HEAD"), &f(&["kindergarten"]), root, false).unwrap();
        let out = Command::new(&binary).arg("--version").output().unwrap();
        assert!(
            String::from_utf8_lossy(&out.stdout).starts_with("spar "),
            "{out:?}"
        );
        assert_eq!(
            ensure_built(Some("HEAD"), &f(&["kindergarten"]), root, true).unwrap(),
            binary
        );

        let has_uci = Command::new(&binary)
            .args(["uci", "--help"])
            .output()
            .unwrap()
            .status
            .success();
        if !has_uci {
            eprintln!("notice: spar at HEAD has no 'uci' command yet; not playing moves");
            return;
        }
        let words = f(&[
            "name=head",
            "git=HEAD",
            "features=kindergarten",
            "nodes=2000",
        ]);
        let variant = crate::engines::variant::parse_variant(&words, &[], 0).unwrap();
        let variant = resolve(&variant, root, true).unwrap();
        let mut player =
            crate::engines::uci::UciPlayer::new(&variant, Duration::from_secs(10)).unwrap();
        player.new_game(false).unwrap();
        let mut pos = Position::startpos();
        let mut moves = Vec::new();
        let limits = Limits {
            nodes: Some(2000),
            ..Limits::default()
        };
        for _ in 0..6 {
            let reply = player
                .go(&MoveRequest {
                    start_fen: STARTPOS_FEN,
                    moves: &moves,
                    position: &pos,
                    history: &[],
                    limits: &limits,
                })
                .unwrap();
            moves.push(reply.mv);
            pos = pos.play(reply.mv);
        }
        player.shutdown();
    }
}
