//! `spar merge RUN_DIR`: the shards' records combined into what the local command writes —
//! the part every kind of job shares: the checks of a merge's outputs before any work, and
//! the writers of merged files. What a kind merges is its
//! [`Job::merge`](crate::job::Job::merge) (a match's in `jobs/matches/merge.rs`, datagen's
//! in `jobs/datagen/merge.rs`, a tune's in `jobs/tune/merge.rs`).

use std::path::{Path, PathBuf};

use data::training::files::{game_ends, Format, GameEnds};

use super::manifest::Manifest;
use crate::cli::OutputArgs;
use crate::error::{CliError, CliResult};
use crate::files::atomic::{write_atomically, write_bytes_atomically};
use crate::files::input::read_bounded;
use crate::files::paths::PathCheck;
use crate::job::Job;

/// Where a path of the run's arguments is, from here.
pub fn at(manifest: &Manifest, p: &Path) -> PathBuf {
    manifest.cwd.join(p)
}

/// The files of a training file of `format` at `path` (made absolute against the run's
/// directory), each named by `flag`, as outputs.
pub fn training_outputs(
    manifest: &Manifest,
    flag: &str,
    format: Format,
    path: &Path,
) -> Vec<(String, PathBuf)> {
    let p = format.paths(path);
    [p.viriformat, p.text, p.index]
        .into_iter()
        .flatten()
        .map(|f| (flag.to_string(), at(manifest, &f)))
        .collect()
}

/// Refuses, before any work, an output option of `spar merge` (`files`: `--pgnout`,
/// `--results`, `--json` given on its command line) that the run in `dir` cannot honour
/// (the job's [`Job::check_merge_options`]); none given is always fine.
pub fn check_options(
    dir: &Path,
    manifest: &Manifest,
    job: &dyn Job,
    files: &OutputArgs,
) -> CliResult {
    if files.pgnout.is_none() && files.results.is_none() && files.json.is_none() {
        return Ok(());
    }
    job.check_merge_options(dir, manifest, files)
}

/// The refusal of `spar merge`'s output options (`files`) for a kind of run that writes
/// only its own files (`writes`: "its own --out").
pub fn refuse_options(
    dir: &Path,
    manifest: &Manifest,
    files: &OutputArgs,
    writes: &str,
) -> CliResult {
    let flag = [
        ("--pgnout", files.pgnout.is_some()),
        ("--results", files.results.is_some()),
        ("--json", files.json.is_some()),
    ]
    .into_iter()
    .find(|(_, on)| *on)
    .map_or("--results", |(f, _)| f);
    let command = &manifest.command;
    Err(CliError::usage(format!(
        "{flag} is not an output of a {command} run ({}'s {command} writes {writes}): leave it out",
        dir.display()
    )))
}

/// Checks, before any work, every file a merge of the run in `dir` writes: none is a file
/// the run owns (manifest, shard records, …) or reads (book, engines, networks), none is
/// another output, and each can be written. A failure is a usage error (exit 2).
pub fn check_outputs(
    dir: &Path,
    manifest: &Manifest,
    job: &dyn Job,
    files: Option<&OutputArgs>,
) -> CliResult {
    let mut check = PathCheck::new();
    check.run_dir(dir);
    inputs_of(manifest, &mut check);
    for (flag, path) in job.outputs(manifest, files)? {
        check.output(flag, path);
    }
    check.check()
}

/// The files a run reads, as inputs of `check`.
pub fn inputs_of(manifest: &Manifest, check: &mut PathCheck) {
    if let Some(b) = &manifest.book {
        check.input("--book", &b.path);
    }
    for e in &manifest.engines {
        check.input(format!("engine '{}'", e.name), &e.file.path);
    }
    for p in &manifest.inputs {
        check.input(p.what.clone(), &p.file.path);
    }
}

/// A shard's PGN or positions file (empty when the shard has written none): a regular file
/// only, never a device or pipe that could be read without end.
pub fn shard_bytes(path: &Path) -> CliResult<Vec<u8>> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Vec::new());
    }
    read_bounded(path, "a shard's record", u64::MAX >> 1).map_err(|e| CliError::failure(e.message))
}

/// Writes a merged output file atomically; a failure names the flag and the file.
pub fn write_out(path: &Path, flag: &str, bytes: &[u8]) -> CliResult {
    write_bytes_atomically(path, bytes)
        .map_err(|e| CliError::failure(format!("cannot write {flag} {}: {e}", path.display())))
}

/// The bytes of each game of one file: (start, end) and lines (text).
fn spans(ends: &[(u64, u64)]) -> Vec<(u64, u64, u64)> {
    let mut prev = (0, 0);
    ends.iter()
        .map(|&(end, count)| {
            let s = (prev.0, end, count - prev.1);
            prev = (end, count);
            s
        })
        .collect()
}

/// Writes the training files of `format` at `out` from `games`: (shard, game of that shard)
/// in output order, read from the shards' files.
pub fn write_training(
    shards: &[PathBuf],
    format: Format,
    out: &Path,
    games: &[(usize, usize)],
) -> CliResult {
    let mut ends: Vec<GameEnds> = Vec::with_capacity(shards.len());
    for s in shards {
        ends.push(game_ends(s, format).map_err(CliError::failure)?);
    }
    let in_paths: Vec<_> = shards.iter().map(|s| format.paths(s)).collect();
    let out_paths = format.paths(out);
    let missing = |s: usize| {
        CliError::failure(format!(
            "{}: fewer games than its record",
            shards[s].display()
        ))
    };
    if let Some(vf_out) = &out_paths.viriformat {
        let mut data = Vec::with_capacity(shards.len());
        for (p, e) in in_paths.iter().zip(&ends) {
            let bytes = shard_bytes(p.viriformat.as_ref().expect("path"))?;
            data.push((bytes, spans(&e.viriformat)));
        }
        let mut out = Vec::new();
        for &(s, g) in games {
            let (bytes, sp) = &data[s];
            let &(a, b, _) = sp.get(g).ok_or_else(|| missing(s))?;
            out.extend_from_slice(&bytes[a as usize..b as usize]);
        }
        write_out(vf_out, "positions", &out)?;
    }
    if let (Some(t_out), Some(i_out)) = (&out_paths.text, &out_paths.index) {
        let mut data = Vec::with_capacity(shards.len());
        for (p, e) in in_paths.iter().zip(&ends) {
            let bytes = shard_bytes(p.text.as_ref().expect("path"))?;
            data.push((bytes, spans(&e.text)));
        }
        let (mut out, mut index) = (Vec::new(), String::new());
        let mut lines = 0;
        for &(s, g) in games {
            let (bytes, sp) = &data[s];
            let &(a, b, n) = sp.get(g).ok_or_else(|| missing(s))?;
            out.extend_from_slice(&bytes[a as usize..b as usize]);
            lines += n;
            index.push_str(&format!("{} {lines}\n", out.len()));
        }
        write_out(t_out, "positions", &out)?;
        write_atomically(i_out, &index)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", i_out.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_the_games_between_ends() {
        assert_eq!(
            spans(&[(10, 3), (25, 7), (25, 7)]),
            [(0, 10, 3), (10, 25, 4), (25, 25, 0)]
        );
    }
}
