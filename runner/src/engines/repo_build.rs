//! An engine repository's builds, for the server's registered engines and `spar bisect`:
//! names and revisions checked, revisions resolved to commits (`git rev-parse`), builds made
//! in a temporary checkout (never in the repository itself) and cached by commit under a
//! cache directory (the server's `DATA/builds/ENGINE/`, a bisect's `--builds`) as `SHA/`,
//! with the bench the build printed. Every command is an argument vector; nothing goes
//! through a shell.
//!
//! Two ways to build: `make` (OpenBench's convention: `make -j EXE=NAME` in a checkout of
//! the commit, then `./NAME bench`, whose last `N nodes` is the signature) and `spar`
//! (spar's own engine through the `git=` builder, `engines/git_build.rs`, then `spar
//! bench`; the child runs it as `cmd=… args=uci`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One build at a time (they share the cores with the runs; two runs naming the same
/// commit build it once).
static BUILDS: Mutex<()> = Mutex::new(());

/// How long a build (`make`, cargo) and a bench may take.
const BUILD_LIMIT: Duration = Duration::from_secs(1800);
const BENCH_LIMIT: Duration = Duration::from_secs(600);

/// Lines of a failed build's or bench's output in its message.
const TAIL: usize = 20;

/// The ways to build an engine.
pub const BUILDS_KINDS: &[&str] = &["make", "spar"];

/// Checks an engine name: letters, digits, `_`, `-`, `.`, not starting with `-` or `.`, at
/// most 64 characters (it names a directory and the `EXE=` of `make`).
pub fn check_name(name: &str) -> Result<(), String> {
    crate::serve::names::is_plain(name, 64, &['-', '.'])
        .then_some(())
        .ok_or_else(|| {
            format!(
                "engine name '{name}': use 1 to 64 letters, digits, '_', '-' or '.', not \
                 starting with '-' or '.'"
            )
        })
}

/// Checks a revision name (branch, tag or sha) before git sees it: no leading `-` (an
/// option to git), no whitespace or control character, at most 200 bytes.
pub fn check_rev(rev: &str) -> Result<(), String> {
    if rev.is_empty()
        || rev.len() > 200
        || rev.starts_with('-')
        || rev.chars().any(|c| c.is_whitespace() || c.is_control())
    {
        Err(format!(
            "revision '{rev}': not a revision name (a branch, tag or commit sha; no leading \
             '-', no whitespace)"
        ))
    } else {
        Ok(())
    }
}

/// Whether a repository is given as a URL (mirrored by the server) rather than a path.
pub fn is_url(repo: &str) -> bool {
    ["https://", "http://", "ssh://", "git://", "file://"]
        .iter()
        .any(|p| repo.starts_with(p))
}

/// The options every git command of the server starts with: no hook of a repository runs
/// (a registered repository is its registrant's: its `.git/hooks` and its config are
/// theirs), nor an fsmonitor command of its config (defence in depth: the commands the
/// server runs start neither).
pub const NO_HOOKS: &[&str] = &[
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
];

/// Runs git with `args` in `dir` (hooks off: [`NO_HOOKS`]); stdout on success, git's
/// stderr as the message.
pub fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .args(NO_HOOKS)
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e} (is git installed?)"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// Resolves `rev` in the git directory `source` to its full commit sha (the server's:
/// [`resolve_as`] `spar serve`).
pub fn resolve(engine: &str, source: &Path, rev: &str, mirrored: bool) -> Result<String, String> {
    resolve_as(SERVER, engine, source, rev, mirrored)
}

/// Resolves `rev` in the git directory `source` to its full commit sha; a mirror is fetched
/// first (a failed fetch is reported on stderr as `who` says, and the refs known are used).
pub fn resolve_as(
    who: &str,
    engine: &str,
    source: &Path,
    rev: &str,
    mirrored: bool,
) -> Result<String, String> {
    check_rev(rev)?;
    if mirrored {
        // A mirror follows its URL: fetch what is new (a failure leaves the refs known).
        if let Err(e) = git(source, &["fetch", "--quiet", "--prune", "origin"]) {
            eprintln!("{who}: engine {engine}: git fetch failed: {e}");
        }
    }
    git(
        source,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .ok()
    .map(|s| s.trim().to_string())
    .filter(|s| s.len() >= 40 && s.chars().all(|c| c.is_ascii_hexdigit()))
    .ok_or_else(|| {
        format!(
            "engine {engine}: unknown revision '{rev}' (a branch, tag or sha of its repository)"
        )
    })
}

/// A build in the cache: the binary and the bench it printed.
#[derive(Clone, Debug)]
pub struct Built {
    /// The cached binary.
    pub binary: PathBuf,
    /// The bench signature its build printed.
    pub bench: u64,
}

/// The server's cache of `engine`'s builds in its data directory, `DATA/builds/ENGINE/`
/// (one `SHA/` per build).
pub fn cache_of(data: &Path, engine: &str) -> PathBuf {
    data.join("builds").join(engine)
}

/// Who reports on stderr for the server's builds.
const SERVER: &str = "spar serve";

/// Where builds are cached, and who reports an install on stderr.
#[derive(Clone, Copy, Debug)]
pub struct Cache<'a> {
    /// The directory holding one `SHA/` directory per build (the binary and its `bench`).
    pub dir: &'a Path,
    /// Where the temporary checkouts are made.
    pub tmp: &'a Path,
    /// The name an install is reported under on stderr (`spar serve`, `spar bisect`);
    /// empty: not reported.
    pub who: &'a str,
}

/// The binary's file name in the cache.
pub fn exe_name(engine: &str, build: &str) -> String {
    if build == "spar" {
        "spar".into()
    } else {
        engine.into()
    }
}

/// What a build tells the event log: its kind (`build-start`, `build`, `build-cached`,
/// `build-failure`) and the message.
pub type BuildLog<'a> = &'a dyn Fn(&str, &str);

/// The server's build of `engine` at commit `sha`, cached under `DATA/builds/ENGINE/`
/// ([`ensure_in`]).
pub fn ensure(
    data: &Path,
    engine: &str,
    build: &str,
    source: &Path,
    sha: &str,
    log: BuildLog,
) -> Result<Built, String> {
    let dir = cache_of(data, engine);
    let tmp = data.join("tmp");
    let cache = Cache {
        dir: &dir,
        tmp: &tmp,
        who: SERVER,
    };
    ensure_in(cache, engine, build, source, sha, log)
}

/// The build of `engine` (built by `build` from git directory `source`) at commit `sha`:
/// from `cache`, or built now in a temporary checkout and cached. Each step goes to
/// `log`: started, built (bench and seconds), taken from the cache, failed (its message,
/// with the last lines of the output).
pub fn ensure_in(
    cache: Cache,
    engine: &str,
    build: &str,
    source: &Path,
    sha: &str,
    log: BuildLog,
) -> Result<Built, String> {
    let _one = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = cache.dir.join(sha);
    let exe = exe_name(engine, build);
    let short = &sha[..12.min(sha.len())];
    if let Some(bench) = cached_bench(&dir) {
        if dir.join(&exe).is_file() {
            log(
                "build-cached",
                &format!("engine {engine} at {short}: from the cache (bench {bench})"),
            );
            return Ok(Built {
                binary: dir.join(&exe),
                bench,
            });
        }
    }
    log(
        "build-start",
        &format!("engine {engine} at {short}: building ({build})"),
    );
    let start = Instant::now();
    let made = make_and_bench(cache, engine, build, source, sha, &exe);
    match &made {
        Ok(b) => log(
            "build",
            &format!(
                "engine {engine} at {short}: built in {:.1} s, bench {}",
                start.elapsed().as_secs_f64(),
                b.bench
            ),
        ),
        Err(e) => log(
            "build-failure",
            &format!(
                "engine {engine} at {short}: failed after {:.1} s: {e}",
                start.elapsed().as_secs_f64()
            ),
        ),
    }
    made
}

/// The work-tree clone a `spar` build of a mirrored (bare) repository builds in:
/// `DATA/repos/NAME.work` beside `DATA/repos/NAME.git`, sharing its objects (`git clone
/// --shared`: what a later fetch brings is seen at once), with the git= builder's cargo
/// cache under its `target/spar-builds/`. A repository with a work tree is itself.
fn work_tree_of(engine: &str, source: &Path) -> Result<PathBuf, String> {
    let bare = git(source, &["rev-parse", "--is-bare-repository"])?;
    if bare.trim() != "true" {
        return Ok(source.to_path_buf());
    }
    let work = source.with_extension("work");
    if !work.join(".git").exists() {
        let _ = std::fs::remove_dir_all(&work);
        clone_shared(engine, source, &work)?;
    }
    Ok(work)
}

/// Builds and benches `engine` at `sha` and installs it in `cache`.
fn make_and_bench(
    cache: Cache,
    engine: &str,
    build: &str,
    source: &Path,
    sha: &str,
    exe: &str,
) -> Result<Built, String> {
    let short = &sha[..12.min(sha.len())];
    let (tmp, dir) = (cache.tmp, &cache.dir.join(sha));
    std::fs::create_dir_all(tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    let work = tempfile::Builder::new()
        .prefix(&format!("build-{engine}-"))
        .tempdir_in(tmp)
        .map_err(|e| format!("{}: {e}", tmp.display()))?;
    let built = match build {
        "spar" => {
            let top = work_tree_of(engine, source)?;
            crate::engines::git_build::ensure_built(Some(sha), &[], &top, true)
                .map_err(|e| format!("engine {engine} at {short}: the build failed: {e}"))?
        }
        _ => make(engine, source, sha, work.path())?,
    };
    let (bench_ok, out) = bounded(
        Command::new(&built).arg("bench").current_dir(
            built
                .parent()
                .map_or_else(|| work.path().to_path_buf(), Path::to_path_buf),
        ),
        &work.path().join("bench.log"),
        BENCH_LIMIT,
    )?;
    let bench = bench_of(&out).filter(|_| bench_ok).ok_or_else(|| {
        format!(
            "engine {engine} at {short}: `{exe} bench` printed no `N nodes` line{}:\n{}",
            if bench_ok { "" } else { " (it failed)" },
            tail(&out)
        )
    })?;
    // Install: the binary and its bench into a staging directory, renamed into place.
    let parent = dir.parent().expect("the cache has a parent");
    std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    let stage = tempfile::Builder::new()
        .prefix(&format!(".{sha}-"))
        .tempdir_in(parent)
        .map_err(|e| format!("{}: {e}", parent.display()))?;
    std::fs::copy(&built, stage.path().join(exe))
        .map_err(|e| format!("cannot copy {}: {e}", built.display()))?;
    std::fs::write(stage.path().join("bench"), format!("{bench}\n"))
        .map_err(|e| format!("{}: {e}", stage.path().display()))?;
    let _ = std::fs::remove_dir_all(dir); // a half-made one (no bench file)
    let stage = stage.keep();
    std::fs::rename(&stage, dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !cache.who.is_empty() {
        eprintln!(
            "{}: engine {engine} built at {short}: bench {bench}",
            cache.who
        );
    }
    Ok(Built {
        binary: dir.join(exe),
        bench,
    })
}

/// The bench a cached build printed.
pub fn cached_bench(dir: &Path) -> Option<u64> {
    std::fs::read_to_string(dir.join("bench"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `git clone --shared` of the commit into `work/src`, then `make -j EXE=ENGINE` there;
/// the binary made.
fn make(engine: &str, source: &Path, sha: &str, work: &Path) -> Result<PathBuf, String> {
    let src = work.join("src");
    let short = &sha[..12.min(sha.len())];
    clone_shared(engine, source, &src)?;
    git(&src, &["checkout", "--quiet", "--detach", sha])
        .map_err(|e| format!("engine {engine}: cannot check out {short}: {e}"))?;
    let (ok, out) = bounded(
        Command::new("make")
            .arg("-j")
            .arg(format!("EXE={engine}"))
            .current_dir(&src),
        &work.join("make.log"),
        BUILD_LIMIT,
    )?;
    let binary = src.join(engine);
    if !ok || !binary.is_file() {
        return Err(format!(
            "engine {engine} at {short}: the build failed ({}); the last lines of its output:\n{}",
            if ok {
                format!("make made no ./{engine}")
            } else {
                format!("make -j EXE={engine}")
            },
            tail(&out)
        ));
    }
    Ok(binary)
}

/// Runs `cmd` with its output (stdout and stderr) in the file `log`, killed after `limit`;
/// whether it exited 0, and the output.
fn bounded(cmd: &mut Command, log: &Path, limit: Duration) -> Result<(bool, String), String> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let err = file
        .try_clone()
        .map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let until = Instant::now() + limit;
    let status = loop {
        if let Some(s) = child.try_wait().map_err(|e| e.to_string())? {
            break Some(s);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut text = String::new();
    if let Ok(f) = std::fs::File::open(log) {
        let _ = f.take(4 << 20).read_to_string(&mut text);
    }
    if status.is_none() {
        text.push_str(&format!("\n(killed after {} s)", limit.as_secs()));
    }
    Ok((status.is_some_and(|s| s.success()), text))
}

/// The last lines of some output.
fn tail(out: &str) -> String {
    let lines: Vec<&str> = out.lines().collect();
    lines[lines.len().saturating_sub(TAIL)..].join("\n")
}

/// The bench signature in a bench's output: the number before `nodes` on the last line
/// that has one (OpenBench reads `N nodes M nps`).
pub fn bench_of(out: &str) -> Option<u64> {
    out.lines().rev().find_map(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words
            .windows(2)
            .rev()
            .find(|w| w[1].trim_end_matches([',', ':']) == "nodes")
            .and_then(|w| w[0].parse().ok())
    })
}

/// A work tree of `source` at `into` sharing its objects (`git clone --shared
/// --no-checkout`: no hooks, never a prompt), for engine `engine`.
fn clone_shared(engine: &str, source: &Path, into: &Path) -> Result<(), String> {
    let out = Command::new("git")
        .args(NO_HOOKS)
        .args(["clone", "--quiet", "--shared", "--no-checkout", "--"])
        .arg(source)
        .arg(into)
        .stdin(Stdio::null())
        .env("GIT_TERMINAL_PROMPT", "0")
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "engine {engine}: cannot clone {}: {}",
            source.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_revisions_are_checked_before_git_sees_them() {
        assert!(check_name("stash-36.1_x").is_ok());
        for bad in ["", "-x", ".x", "a b", "a/b", "a;b", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_rev("main").is_ok() && check_rev("v1.0^").is_ok());
        for bad in ["", "-h", "--upload-pack=x", "a b", "a\nb", "a\0"] {
            assert!(check_rev(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_bench_is_the_last_node_count() {
        assert_eq!(bench_of("info\n1234 nodes 99 nps\n"), Some(1234));
        assert_eq!(
            bench_of("Nodes searched\n5 nodes\n77 nodes 1 nps\nbye"),
            Some(77)
        );
        assert_eq!(bench_of("Bench: 4001 nodes, 10 nps"), Some(4001));
        assert_eq!(bench_of("no count"), None);
    }

    #[test]
    fn urls_are_told_from_paths() {
        assert!(is_url("https://github.com/a/b"));
        assert!(!is_url("/srv/repo") && !is_url("repo"));
    }
}
