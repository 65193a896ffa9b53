//! The merge of a match or SPRT run: the pairs it counts, each once (deduplicated by pair
//! index; a pair recorded twice with different games is reported as a conflict and counted
//! once) — a match's every complete pair, an SPRT's pairs in pair order up to the one that
//! decided it, as the local run's ([`Records::counted`]) — the summary in the run's output
//! format, the results CSV and the PGN in pair order, the position dump in game order, the
//! JSON summary. Recorded pairs that are not counted are named in a note (stderr) and the
//! JSON's `not_counted`, and left out of the files.

use std::path::{Path, PathBuf};

use data::results::HEADER;
use serde::Deserialize;

use crate::cli::OutputArgs;
use crate::cluster::manifest::{now_secs, Manifest};
use crate::cluster::merge::{at, shard_bytes, training_outputs, write_out, write_training};
use crate::cluster::merged::Merged;
use crate::cluster::records::{NotCounted, PairRecord, RecordShape, Records};
use crate::error::{CliError, CliResult};
use crate::files::match_files::game_ends as pgn_game_ends;
use crate::files::position_dump::spec_of;
use crate::files::run_record;
use crate::summary::{self, MatchInfo, OutputFormat};

/// The outputs of a match's arguments (the rest of them is ignored here).
#[derive(Deserialize)]
struct MatchOutputs {
    files: OutputArgs,
    output: OutputFormat,
}

/// Every file a merge of the match run writes, with the flag that names it: its outputs
/// (the run's own, or `files` when given) with the run record of its results CSV and the
/// files of its position dump.
pub fn outputs(
    manifest: &Manifest,
    files: Option<&OutputArgs>,
) -> CliResult<Vec<(String, PathBuf)>> {
    let run: MatchOutputs = serde_json::from_value(manifest.args.clone())
        .map_err(|e| CliError::usage(format!("{}: {e}", manifest.cwd.display())))?;
    let mut out = Vec::new();
    if let Some(spec) = spec_of(run.files.dump_positions.as_deref())? {
        out.extend(training_outputs(
            manifest,
            "--dump-positions",
            spec.format,
            &spec.path,
        ));
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

/// Refuses `spar merge --pgnout` for a match planned without it (its shards keep no
/// games); `--results` and `--json` are always honoured.
pub fn check_options(dir: &Path, manifest: &Manifest, files: &OutputArgs) -> CliResult {
    if files.pgnout.is_some() {
        let run: MatchOutputs = serde_json::from_value(manifest.args.clone())
            .map_err(|e| CliError::usage(format!("{}: {e}", Manifest::path(dir).display())))?;
        if run.files.pgnout.is_none() {
            return Err(CliError::usage(format!(
                "--pgnout: {}'s {} was planned without --pgnout, so its shards keep no games: leave it out",
                dir.display(),
                manifest.command
            )));
        }
    }
    Ok(())
}

/// Merges the run in `dir` into the output files its command named (or `files`, when
/// given), and returns the summary.
pub fn merge(dir: &Path, manifest: &Manifest, files: Option<&OutputArgs>) -> CliResult<Merged> {
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
    let mut records = Records::new(dir, manifest, RecordShape::Pairs);
    if files.results.is_some() {
        records = records.keep_text();
    }
    records.refresh()?;
    let conflicts = records.pairs().1.to_vec();
    let pairs: Vec<PairRecord> = records.counted().copied().collect();
    let tally = records.tally().clone();
    let uncounted = records.uncounted();
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
    // Every pair counted is below the total and counted once.
    let complete = manifest.total.is_some_and(|t| records.counted_pairs() >= t);
    let notes: Vec<String> = uncounted.iter().map(|u| u.describe(None)).collect();

    // The files, in pair order. Rows, games and positions are taken from the shard whose
    // record is counted, at the pair's place in that shard.
    let order: Vec<(u64, u32, u32)> = pairs
        .iter()
        .map(|p| (p.pair, p.shard, p.position))
        .collect();
    if let Some(path) = &files.results {
        // The rows as the shards wrote them (the same CSV writer a local run uses).
        let mut out = Vec::with_capacity(order.len() * 160);
        out.extend_from_slice(HEADER.join(",").as_bytes());
        out.push(b'\n');
        for p in &pairs {
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
        let fields =
            super::record::record_fields(plan, files.pgnout.is_some(), dump.as_ref(), &tables);
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
            let p = crate::cluster::shard_pgn(dir, i);
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
                    crate::cluster::shard_pgn(dir, s as u64).display()
                ))
            })?;
            out.extend_from_slice(&text[start..*end as usize]);
        }
        write_out(&at(manifest, path), "--pgnout", &out)?;
    }
    if let Some(spec) = spec_of(files.dump_positions.as_deref())? {
        let shards: Vec<PathBuf> = (0..records.shards.len() as u64)
            .map(|i| crate::cluster::shard_positions(dir, i))
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
        if let Some(u) = &uncounted {
            report["not_counted"] = match u.why {
                NotCounted::Decided { at, .. } => {
                    serde_json::json!({"pairs": u.pairs, "after_decision_at_pair": at})
                }
                NotCounted::Waiting { pair, shard } => {
                    serde_json::json!({"pairs": u.pairs, "waiting_for_pair": pair, "shard": shard})
                }
            };
        }
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
        notes,
    })
}
