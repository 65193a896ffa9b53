//! A run's words: the kinds the server runs, the flags it owns (a run's files and how it
//! is played are the server's), the files it names in the run directory, and the child's
//! argument vector. Nothing here goes through a shell.

use std::path::{Path, PathBuf};

use crate::job::Job;
use crate::jobs;

/// The commands of the kinds the server runs (`jobs::served`), in the order it lists them.
pub fn kinds() -> Vec<&'static str> {
    jobs::served().iter().map(|k| k.command()).collect()
}

/// The flags the server owns: the run's files, its resumption, its cores and where it
/// plays; and the words that make a command something other than a run.
pub const OWNED: &[&str] = &[
    "--results",
    "--pgnout",
    "--json",
    "--dump-positions",
    "--csv",
    "--out",
    "--resume",
    "--concurrency",
    "--slurm",
    "--run-dir",
    "--shards",
    "--cpus-per-shard",
    "--sbatch-arg",
    "--plan-only",
    "--game-lines",
    "--plot",
    "--svg",
    "--probe",
    "--probe-games",
    "--inspect",
    "--no-build",
    // A registered repository's build (`--repo NAME` expanded: serve/repo_words.rs).
    "--name",
    "--build",
    "--builds",
];

/// Whether the server owns `flag`: one of [`OWNED`], or one that names a served kind's
/// files (`Job::served_outputs`; a new kind's own output flag is the server's at once).
pub fn is_owned(flag: &str) -> bool {
    OWNED.contains(&flag)
        || jobs::served().iter().any(|k| {
            k.served_outputs(Path::new(""))
                .iter()
                .any(|w| w.starts_with("--") && w == flag)
        })
}

/// Refuses a word list that is not a run's: an unknown kind, or any flag the server owns
/// (named in the message).
pub fn check_owned(kind: &str, words: &[String]) -> Result<(), String> {
    if !kinds().contains(&kind) {
        return Err(format!(
            "unknown kind '{kind}': the server runs {}",
            kinds().join(", ")
        ));
    }
    let owned: Vec<&str> = words
        .iter()
        .filter_map(|w| {
            let flag = w.split('=').next().unwrap_or(w);
            is_owned(flag).then_some(flag)
        })
        .collect();
    if owned.is_empty() {
        Ok(())
    } else {
        let mut names = owned.clone();
        names.dedup();
        Err(format!(
            "{} {} the server's: it names a run's files, resumes it and gives it its cores \
             (leave {} out)",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" },
            if names.len() == 1 { "it" } else { "them" },
        ))
    }
}

/// The output flags of a run of `kind` whose files are in `dir`, as words.
pub fn outputs(kind: &dyn Job, dir: &Path) -> Vec<String> {
    kind.served_outputs(dir)
}

/// The file a run of `kind` keeps its progress in (what `--resume` continues from and the
/// status view reads).
pub fn primary(kind: &dyn Job, dir: &Path, words: &[String]) -> PathBuf {
    kind.served_primary(dir, words)
}

/// Whether a run has progress to resume from (a report has none: a local report plays
/// all its games again).
pub fn has_progress(kind: &dyn Job, dir: &Path, words: &[String]) -> bool {
    kind.served_page().resumes
        && std::fs::metadata(primary(kind, dir, words)).is_ok_and(|m| m.len() > 0)
}

/// The child's arguments (after the program): `KIND WORDS… OUTPUTS… --concurrency N
/// [--resume]` (without the server's `--scale-nps`).
pub fn argv(
    kind: &dyn Job,
    words: &[String],
    dir: &Path,
    cores: usize,
    resume: bool,
) -> Vec<String> {
    let mut v = vec![kind.command().to_string()];
    v.extend(super::nps_scale::strip(words));
    v.extend(outputs(kind, dir));
    v.push("--concurrency".into());
    v.push(cores.to_string());
    if resume {
        v.push("--resume".into());
    }
    v
}

/// The command line a user types for the same run (shown on its page): `spar KIND WORDS…
/// OUTPUTS…` (without the server's `--scale-nps`), each word quoted for a POSIX shell where it needs it.
pub fn command_line(kind: &dyn Job, words: &[String], dir: &Path) -> String {
    let mut v = vec!["spar".to_string(), kind.command().to_string()];
    v.extend(super::nps_scale::strip(words));
    v.extend(outputs(kind, dir));
    v.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" ")
}

/// The command that replays a run from a shell: `cd CWD && COMMAND` (`command` as
/// [`command_line`] writes it; the run's relative paths are read from `cwd`).
pub fn replay(cwd: &str, command: &str) -> String {
    format!("cd {} && {command}", quote(cwd))
}

/// One word for a POSIX shell: as it is when it is plain (`name=a` stays unquoted), else
/// as the `shell-words` crate quotes it, which the form's splitter reads back.
fn quote(w: &str) -> String {
    let plain = !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_=./:+,@%".contains(c));
    if plain {
        w.to_string()
    } else {
        shell_words::quote(w).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(command: &str) -> &'static dyn Job {
        jobs::by_command(command).unwrap()
    }

    fn w(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn owned_flags_are_refused_by_name() {
        assert!(check_owned("match", &w("--engine name=a --engine name=b --games 8")).is_ok());
        let e = check_owned("match", &w("--games 8 --results x.csv --concurrency=4")).unwrap_err();
        assert!(
            e.starts_with("--results, --concurrency are the server's"),
            "{e}"
        );
        let e = check_owned("sprt", &w("--slurm")).unwrap_err();
        assert!(e.starts_with("--slurm is the server's"), "{e}");
        // A value that looks like a flag's name only as a whole word counts.
        assert!(check_owned("match", &w("--engine name=--results-x")).is_ok());
        let e = check_owned("texel", &[]).unwrap_err();
        assert!(e.contains("unknown kind 'texel'"), "{e}");
    }

    #[test]
    fn the_server_lists_its_kinds_sprt_first() {
        assert_eq!(
            kinds(),
            ["sprt", "match", "tune", "datagen", "report", "bisect"]
        );
    }

    #[test]
    fn the_child_gets_the_words_then_the_servers_flags() {
        let dir = Path::new("/d/runs/7");
        let v = argv(k("match"), &w("--games 8"), dir, 3, true);
        assert_eq!(
            v,
            w(
                "match --games 8 --results /d/runs/7/results.csv --pgnout /d/runs/7/games.pgn \
               --json /d/runs/7/summary.json --concurrency 3 --resume"
            )
        );
        assert_eq!(
            argv(k("datagen"), &[], dir, 1, false)[1..3],
            w("--out /d/runs/7/positions")
        );
        assert_eq!(
            primary(k("datagen"), dir, &w("--format text")),
            dir.join("positions")
        );
        assert_eq!(primary(k("tune"), dir, &[]), dir.join("tune.csv"));
    }

    #[test]
    fn the_command_line_quotes_what_a_shell_would_split() {
        let line = command_line(k("match"), &w("--engine name=a"), Path::new("/r"));
        assert!(line.starts_with("spar match --engine name=a --results /r/results.csv"));
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
    }
}
