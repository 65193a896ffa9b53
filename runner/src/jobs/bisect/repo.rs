//! The bisected repository: the git directory read (a path as given, or a mirror of a URL
//! in the builds' cache), good and bad resolved, and the commits between them along bad's
//! first-parent line with their subjects and the bench their messages state.

use std::path::{Path, PathBuf};

use super::record::Commit;
use crate::engines::repo_build::{git, is_url, resolve_as};
use crate::error::{CliError, CliResult};

/// Who reports on stderr.
pub const WHO: &str = "spar bisect";

/// The mirror of a URL in the builds' cache (a dot name: the server lists `SHA/` builds).
pub const MIRROR: &str = ".mirror.git";

/// The git directory of `repo`: a path that git reads (a work tree or a bare repository),
/// or the mirror of a URL under `builds`, cloned when missing (fetched by [`commits`]).
pub fn source(repo: &str, builds: &Path) -> CliResult<PathBuf> {
    if is_url(repo) {
        let mirror = builds.join(MIRROR);
        if !mirror.join("HEAD").is_file() {
            let _ = std::fs::remove_dir_all(&mirror);
            std::fs::create_dir_all(builds)
                .map_err(|e| CliError::usage(format!("--builds {}: {e}", builds.display())))?;
            let out = std::process::Command::new("git")
                .args(crate::engines::repo_build::NO_HOOKS)
                .args(["clone", "--quiet", "--mirror", "--", repo])
                .arg(&mirror)
                .stdin(std::process::Stdio::null())
                .env("GIT_TERMINAL_PROMPT", "0")
                .output()
                .map_err(|e| CliError::failure(format!("cannot run git: {e}")))?;
            if !out.status.success() {
                let _ = std::fs::remove_dir_all(&mirror);
                return Err(CliError::usage(format!(
                    "--repo {repo}: cannot clone it: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )));
            }
        }
        return Ok(mirror);
    }
    let path =
        std::path::absolute(repo).map_err(|e| CliError::usage(format!("--repo {repo}: {e}")))?;
    if !path.is_dir() {
        return Err(CliError::usage(format!(
            "--repo {repo}: no such directory (give a git repository's path or a URL)"
        )));
    }
    git(&path, &["rev-parse", "--git-dir"]).map_err(|e| {
        CliError::usage(format!(
            "--repo {repo}: not a git repository ({}): give a work tree, a bare repository or a URL",
            e.lines().next().unwrap_or("git refused it")
        ))
    })?;
    Ok(path)
}

/// The commits from `good` to `bad` along bad's first-parent line, good first: `good` must
/// be an ancestor of `bad` on that line, and not `bad` itself. A mirror is fetched first.
pub fn commits(
    name: &str,
    source: &Path,
    mirrored: bool,
    good: &str,
    bad: &str,
) -> CliResult<Vec<Commit>> {
    let resolve = |flag: &str, rev: &str, fetch: bool| {
        resolve_as(WHO, name, source, rev, fetch)
            .map_err(|m| CliError::usage(format!("{flag} {rev}: {m}")))
    };
    let g = resolve("--good", good, mirrored)?;
    let b = resolve("--bad", bad, false)?;
    if g == b {
        return Err(CliError::usage(format!(
            "--good {good} and --bad {bad} are the same commit ({}): nothing to bisect",
            &g[..12]
        )));
    }
    if git(source, &["merge-base", "--is-ancestor", &g, &b]).is_err() {
        return Err(CliError::usage(format!(
            "--good {good} ({}) is not an ancestor of --bad {bad} ({}): give a good commit \
             that bad descends from",
            &g[..12],
            &b[..12]
        )));
    }
    let log = git(
        source,
        &[
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H%x00%P%x00%B%x1e",
            &format!("{g}..{b}"),
        ],
    )
    .map_err(|e| CliError::failure(format!("git log {}..{}: {e}", &g[..12], &b[..12])))?;
    let mut list = vec![commit_of(source, &g)?];
    let mut parent = g.clone();
    for entry in log.split('\x1e').filter(|e| !e.trim().is_empty()) {
        let mut parts = entry.trim_start_matches('\n').splitn(3, '\0');
        let sha = parts.next().unwrap_or_default().to_string();
        let first_parent = parts
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .next()
            .unwrap_or_default();
        if first_parent != parent {
            return Err(CliError::usage(format!(
                "--good {good} ({}) is not on the first-parent line of --bad {bad}: it was \
                 merged in from a side branch; give a commit of the line (e.g. the merge's \
                 first parent)",
                &g[..12]
            )));
        }
        let message = parts.next().unwrap_or_default();
        list.push(Commit {
            subject: subject_of(message),
            bench: bench_of_message(message),
            sha: sha.clone(),
        });
        parent = sha;
    }
    Ok(list)
}

/// One commit, read alone.
fn commit_of(source: &Path, sha: &str) -> CliResult<Commit> {
    let message = git(source, &["log", "-1", "--format=%B", sha])
        .map_err(|e| CliError::failure(format!("git log {sha}: {e}")))?;
    Ok(Commit {
        sha: sha.to_string(),
        subject: subject_of(&message),
        bench: bench_of_message(&message),
    })
}

/// A message's first line.
fn subject_of(message: &str) -> String {
    message
        .lines()
        .next()
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// The bench a commit message states: the number after the last `Bench:` (any case; `:`
/// or `=` or spaces between), OpenBench's convention.
pub fn bench_of_message(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    lower.rmatch_indices("bench").find_map(|(i, _)| {
        let rest = lower[i + 5..].trim_start_matches([' ', '\t', ':', '=']);
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        (digits.len() < 20 && !digits.is_empty() && rest.len() < lower.len() - i - 5)
            .then(|| digits.parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bench_of_a_message_is_openbenchs() {
        assert_eq!(
            bench_of_message("Faster search\n\nBench: 4012345\n"),
            Some(4012345)
        );
        assert_eq!(bench_of_message("x\nbench 77"), Some(77));
        assert_eq!(bench_of_message("x\nBENCH=5\nbench: 6"), Some(6));
        assert_eq!(bench_of_message("a benchmark of nothing"), None);
        assert_eq!(bench_of_message("bench:"), None);
        assert_eq!(bench_of_message("Bench:12"), Some(12));
    }

    fn git_in(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn the_line_from_good_to_bad_and_its_refusals() {
        let d = tempfile::tempdir().unwrap();
        let r = d.path();
        git_in(r, &["init", "--quiet", "--initial-branch=main"]);
        for (i, msg) in ["root", "two\n\nBench: 22", "three"].iter().enumerate() {
            std::fs::write(r.join("f"), i.to_string()).unwrap();
            git_in(r, &["add", "f"]);
            git_in(r, &["commit", "--quiet", "-m", msg]);
        }
        git_in(r, &["tag", "v0", "HEAD~2"]);
        let src = source(r.to_str().unwrap(), &r.join("b")).unwrap();
        let c = commits("e", &src, false, "v0", "main").unwrap();
        let subjects: Vec<&str> = c.iter().map(|c| c.subject.as_str()).collect();
        assert_eq!(subjects, ["root", "two", "three"]);
        assert_eq!(c[1].bench, Some(22));
        let e = commits("e", &src, false, "main", "v0")
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not an ancestor of --bad v0"), "{e}");
        let e = commits("e", &src, false, "main", "main")
            .unwrap_err()
            .to_string();
        assert!(e.contains("the same commit"), "{e}");
        let e = commits("e", &src, false, "nope", "main")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--good nope") && e.contains("unknown revision"),
            "{e}"
        );
        let e = source(d.path().join("b").to_str().unwrap(), r)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no such directory"), "{e}");
        let plain = tempfile::tempdir().unwrap();
        let e = source(plain.path().to_str().unwrap(), r)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a git repository"), "{e}");
    }
}
