//! `spar merge RUN_DIR`: the shards' records combined into what the local command writes.
//!
//! A match or SPRT: every complete pair once (deduplicated by pair index; a pair recorded
//! twice with different games is reported as a conflict and counted once), the summary in
//! the run's output format, the results CSV and the PGN in pair order, the position dump in
//! game order, the JSON summary. Datagen: the games 0, 1, 2, … in order (shard k mod N
//! holds game k), up to the first game not yet played, so a finished run's file is byte for
//! byte the file of `spar datagen` run locally with the same seed and game count.

use std::path::{Path, PathBuf};

use data::results::HEADER;
use data::training::files::{game_ends, Format, GameEnds};
use serde::Deserialize;

use super::manifest::{now_secs, Manifest};
use super::merged::Merged;
use super::records::Records;
use crate::cli::OutputArgs;
use crate::error::{CliError, CliResult};
use crate::files::atomic::{write_atomically, write_bytes_atomically};
use crate::files::input::read_bounded;
use crate::files::match_files::game_ends as pgn_game_ends;
use crate::files::paths::PathCheck;
use crate::files::position_dump::spec_of;
use crate::files::run_record;
use crate::play::ordered::Stride;
use crate::summary::{self, MatchInfo, OutputFormat};

/// The outputs of a match's arguments (the rest of them is ignored here).
#[derive(Deserialize)]
struct MatchOutputs {
    files: OutputArgs,
    output: OutputFormat,
}

/// The outputs of datagen's arguments.
#[derive(Deserialize)]
struct DatagenOutputs {
    out: Option<PathBuf>,
    format: Option<String>,
}

/// The outputs of a tune's arguments.
#[derive(Deserialize)]
struct TuneOutputs {
    csv: Option<PathBuf>,
    out: Option<PathBuf>,
}

/// Where a path of the run's arguments is, from here.
fn at(manifest: &Manifest, p: &Path) -> PathBuf {
    manifest.cwd.join(p)
}

/// Every file a merge of the run writes, with the flag that names it: a match's outputs
/// (the run's own, or `files` when given) with the run record of its results CSV and the
/// files of its position dump; datagen's `--out` files.
pub fn outputs(
    manifest: &Manifest,
    files: Option<&OutputArgs>,
) -> CliResult<Vec<(String, PathBuf)>> {
    let bad = |e: String| CliError::usage(format!("{}: {e}", manifest.cwd.display()));
    let mut out: Vec<(String, PathBuf)> = Vec::new();
    let mut training = |flag: &str, format: Format, path: &Path| {
        let p = format.paths(path);
        for f in [p.viriformat, p.text, p.index].into_iter().flatten() {
            out.push((flag.to_string(), at(manifest, &f)));
        }
    };
    if manifest.command == "datagen" {
        let o: DatagenOutputs =
            serde_json::from_value(manifest.args.clone()).map_err(|e| bad(e.to_string()))?;
        let format = Format::parse(o.format.as_deref().unwrap_or("viriformat")).map_err(bad)?;
        if let Some(f) = &o.out {
            training("--out", format, f);
        }
        return Ok(out);
    }
    if manifest.command == "tune" {
        let o: TuneOutputs =
            serde_json::from_value(manifest.args.clone()).map_err(|e| bad(e.to_string()))?;
        if let Some(c) = &o.csv {
            out.push(("--csv".into(), at(manifest, c)));
            out.push((
                "--csv record".into(),
                run_record::path_for(&at(manifest, c)),
            ));
        }
        if let Some(f) = &o.out {
            out.push(("--out".into(), at(manifest, f)));
        }
        return Ok(out);
    }
    let run: MatchOutputs =
        serde_json::from_value(manifest.args.clone()).map_err(|e| bad(e.to_string()))?;
    if let Some(spec) = spec_of(run.files.dump_positions.as_deref())? {
        training("--dump-positions", spec.format, &spec.path);
    }
    let files = files.unwrap_or(&run.files);
    if let Some(r) = &files.results {
        out.push(("--results".into(), at(manifest, r)));
        out.push((
            "--results record".into(),
            run_record::path_for(&at(manifest, r)),
        ));
    }
    if let Some(p) = &files.pgnout {
        out.push(("--pgnout".into(), at(manifest, p)));
    }
    if let Some(j) = &files.json {
        out.push(("--json".into(), at(manifest, j)));
    }
    Ok(out)
}

/// Refuses, before any work, an output option of `spar merge` (`files`: `--pgnout`,
/// `--results`, `--json` given on its command line) that the run in `dir` cannot honour:
/// every one of them for a tune (it writes its `--csv` and `--out`) and for datagen (its
/// `--out`), and `--pgnout` for a match planned without it (its shards keep no games).
pub fn check_options(dir: &Path, manifest: &Manifest, files: &OutputArgs) -> CliResult {
    let given = [
        ("--pgnout", files.pgnout.is_some()),
        ("--results", files.results.is_some()),
        ("--json", files.json.is_some()),
    ];
    let Some(flag) = given.iter().find(|(_, on)| *on).map(|(f, _)| *f) else {
        return Ok(());
    };
    let (shown, command) = (dir.display(), manifest.command.as_str());
    let writes = match command {
        "tune" => Some("its own --csv and --out"),
        "datagen" => Some("its own --out"),
        _ => None,
    };
    if let Some(writes) = writes {
        return Err(CliError::usage(format!(
            "{flag} is not an output of a {command} run ({shown}'s {command} writes {writes}): leave it out"
        )));
    }
    if files.pgnout.is_some() {
        let run: MatchOutputs = serde_json::from_value(manifest.args.clone())
            .map_err(|e| CliError::usage(format!("{}: {e}", Manifest::path(dir).display())))?;
        if run.files.pgnout.is_none() {
            return Err(CliError::usage(format!(
                "--pgnout: {shown}'s {command} was planned without --pgnout, so its shards keep no games: leave it out"
            )));
        }
    }
    Ok(())
}

/// Checks, before any work, every file a merge of the run in `dir` writes: none is a file
/// the run owns (manifest, shard records, …) or reads (book, engines, networks), none is
/// another output, and each can be written. A failure is a usage error (exit 2).
pub fn check_outputs(dir: &Path, manifest: &Manifest, files: Option<&OutputArgs>) -> CliResult {
    let mut check = PathCheck::new();
    check.run_dir(dir);
    inputs_of(manifest, &mut check);
    for (flag, path) in outputs(manifest, files)? {
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

/// Merges the run in `dir` into the output files its command named (or `files`, when
/// given), and returns the summary.
pub fn merge(dir: &Path, manifest: &Manifest, files: Option<&OutputArgs>) -> CliResult<Merged> {
    if manifest.command == "datagen" {
        return merge_datagen(dir, manifest);
    }
    if manifest.command == "tune" {
        return crate::jobs::tune::merge::merge(dir, manifest);
    }
    let outputs: MatchOutputs = serde_json::from_value(manifest.args.clone())
        .map_err(|e| CliError::usage(format!("{}: {e}", Manifest::path(dir).display())))?;
    let files = files.unwrap_or(&outputs.files);
    let plan = manifest.plan.as_ref().ok_or_else(|| {
        CliError::usage(format!(
            "{}: a match manifest without its plan",
            Manifest::path(dir).display()
        ))
    })?;
    let run = plan.resolve()?;
    let mut records = Records::new(dir, manifest)?;
    if files.results.is_some() {
        records = records.keep_text();
    }
    records.refresh()?;
    let (pairs, conflicts) = records.pairs();
    let (pairs, conflicts) = (pairs.clone(), conflicts.to_vec());
    let tally = records.tally().clone();
    let names = [plan.engines[0].name.as_str(), plan.engines[1].name.as_str()];
    let sprt = run.sprt;
    let info = MatchInfo {
        names,
        limits: run.variants[0].limits.describe(),
        book: run.book.describe(),
        sprt: sprt.as_ref(),
    };
    let decision = sprt
        .as_ref()
        .and_then(|s| s.status(&summary::sample(&tally, s)).ok())
        .map(|st| st.decision);
    let mut lines = summary::summary_lines(&tally, &info, outputs.output)?;
    for c in &conflicts {
        lines.push(format!(
            "Conflict: pair {} was recorded by shards {} and {} with different games; counted once, from shard {}",
            c.pair, c.kept, c.other, c.kept
        ));
    }
    let complete = manifest
        .total
        .is_some_and(|t| (0..t).all(|k| pairs.contains_key(&k)));

    // The files, in pair order. Rows, games and positions are taken from the shard whose
    // record is counted, at the pair's place in that shard.
    let order: Vec<(u64, u32, u32)> = pairs
        .values()
        .map(|p| (p.pair, p.shard, p.position))
        .collect();
    if let Some(path) = &files.results {
        // The rows as the shards wrote them (the same CSV writer a local run uses).
        let mut out = Vec::with_capacity(order.len() * 160);
        out.extend_from_slice(HEADER.join(",").as_bytes());
        out.push(b'\n');
        for p in pairs.values() {
            let text = records.shards[p.shard as usize]
                .text
                .as_deref()
                .unwrap_or_default();
            out.extend_from_slice(&text.as_bytes()[p.rows.0 as usize..p.rows.1 as usize]);
        }
        let path = at(manifest, path);
        write_out(&path, "--results", &out)?;
        // The record a local run keeps beside its CSV, so that `spar status` (and a local
        // `--resume`) know the plan: the number of pairs, the SPRT.
        let dump = spec_of(outputs.files.dump_positions.as_deref())?;
        let tables: Vec<(PathBuf, u64)> = manifest
            .tablebases
            .iter()
            .map(|t| (t.path.clone(), t.size))
            .collect();
        let fields = crate::jobs::matches::record::record_fields(
            plan,
            files.pgnout.is_some(),
            dump.as_ref(),
            &tables,
        );
        let mut extra = serde_json::Map::new();
        extra.insert("pgn_start".into(), 0.into());
        extra.insert(
            "plan".into(),
            serde_json::to_value(plan).expect("a plan is json"),
        );
        run_record::write("--results", &path, &manifest.command, &fields, extra)?;
    }
    if let Some(path) = &files.pgnout {
        let mut texts = Vec::with_capacity(records.shards.len());
        for i in 0..records.shards.len() as u64 {
            let p = super::shard_pgn(dir, i);
            let text = shard_bytes(&p)?;
            let ends = pgn_game_ends(&text)
                .ok_or_else(|| CliError::failure(format!("{}: not a spar PGN", p.display())))?;
            texts.push((text, ends));
        }
        let mut out = Vec::new();
        for &(_, s, pos) in &order {
            let (text, ends) = &texts[s as usize];
            let g = 2 * pos as usize;
            let start = if g == 0 { 0 } else { ends[g - 1] as usize };
            let end = ends.get(g + 1).ok_or_else(|| {
                CliError::failure(format!(
                    "{}: fewer games than its results file",
                    super::shard_pgn(dir, s as u64).display()
                ))
            })?;
            out.extend_from_slice(&text[start..*end as usize]);
        }
        write_out(&at(manifest, path), "--pgnout", &out)?;
    }
    if let Some(spec) = spec_of(files.dump_positions.as_deref())? {
        let shards: Vec<PathBuf> = (0..records.shards.len() as u64)
            .map(|i| super::shard_positions(dir, i))
            .collect();
        let games: Vec<(usize, usize)> = order
            .iter()
            .flat_map(|&(_, s, pos)| {
                [
                    (s as usize, 2 * pos as usize),
                    (s as usize, 2 * pos as usize + 1),
                ]
            })
            .collect();
        write_training(&shards, spec.format, &at(manifest, &spec.path), &games)?;
    }
    if let Some(path) = &files.json {
        let elapsed = std::time::Duration::from_secs(now_secs().saturating_sub(manifest.created));
        let mut report = summary::json_summary(
            &tally,
            &info,
            plan.seed,
            decision,
            &manifest.command_line,
            elapsed,
        )?;
        if !conflicts.is_empty() {
            report["conflicts"] = conflicts
                .iter()
                .map(|c| serde_json::json!({"pair": c.pair, "kept": c.kept, "other": c.other}))
                .collect();
        }
        let text = serde_json::to_string_pretty(&report).expect("json") + "\n";
        write_out(&at(manifest, path), "--json", text.as_bytes())?;
    }
    Ok(Merged {
        lines,
        done: order.len() as u64,
        complete,
        conflicts,
    })
}

/// A shard's PGN or positions file (empty when the shard has written none): a regular file
/// only, never a device or pipe that could be read without end.
fn shard_bytes(path: &Path) -> CliResult<Vec<u8>> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(Vec::new());
    }
    read_bounded(path, "a shard's record", u64::MAX >> 1).map_err(|e| CliError::failure(e.message))
}

fn write_out(path: &Path, flag: &str, bytes: &[u8]) -> CliResult {
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
fn write_training(
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

/// Datagen: games 0, 1, … in order, up to the first one not played yet.
fn merge_datagen(dir: &Path, manifest: &Manifest) -> CliResult<Merged> {
    let o: DatagenOutputs = serde_json::from_value(manifest.args.clone())
        .map_err(|e| CliError::usage(format!("{}: {e}", Manifest::path(dir).display())))?;
    let format =
        Format::parse(o.format.as_deref().unwrap_or("viriformat")).map_err(CliError::usage)?;
    let given = o
        .out
        .as_deref()
        .ok_or_else(|| CliError::usage("the datagen manifest names no --out file"))?;
    let out = at(manifest, given);
    let mut records = Records::new(dir, manifest)?;
    records.refresh()?;
    let n = manifest.shards;
    let total = manifest.total.unwrap_or(u64::MAX);
    let mut games = Vec::new();
    for k in 0..total {
        let s = k % n;
        let local = Stride::shard(s, n).local(k).expect("in its stride");
        if local >= records.shards[s as usize].done {
            break;
        }
        games.push((s as usize, local as usize));
    }
    let shards: Vec<PathBuf> = (0..n).map(|i| super::shard_positions(dir, i)).collect();
    write_training(&shards, format, &out, &games)?;
    let paths = format.paths(&out);
    let (mut positions, mut lines) = (0, 0);
    if let Some(p) = &paths.viriformat {
        positions = game_ends(&out, format)
            .map_err(CliError::failure)?
            .viriformat
            .last()
            .map_or(0, |e| e.1);
        let _ = p;
    }
    if paths.text.is_some() {
        lines = game_ends(&out, format)
            .map_err(CliError::failure)?
            .text
            .last()
            .map_or(0, |e| e.1);
    }
    // Named as the run's --out gave them (as the local run's summary does).
    let shown = format.paths(given);
    let files: Vec<String> = [&shown.viriformat, &shown.text]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect();
    let done = games.len() as u64;
    Ok(Merged {
        lines: vec![format!(
            "{done} games, {positions} positions, {lines} text lines in {}",
            files.join(" and ")
        )],
        done,
        complete: manifest.total == Some(done),
        conflicts: Vec::new(),
    })
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
