//! `spar merge` of a cluster tune (and its coordinator's epilogue): the pairs of every
//! shard replayed through the schedule into the trajectory CSV, byte for byte what a local
//! run with the same options writes, with its run record, `--out` and the final values.

use std::path::Path;

use super::args::TuneArgs;
use super::setup::{setup, tuned_values, Setup};
use crate::cluster::manifest::Manifest;
use crate::cluster::merged::Merged;
use crate::cluster::records::{PairRecord, RecordShape, Records};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::run_record;
use crate::tune::schedule::Tuner;
use crate::tune::trajectory::{self, Row};

/// The names of a tune's two sides in its records.
pub const SIDES: [&str; 2] = ["dev", "base"];

/// Dev's wins minus losses in a recorded pair.
pub(super) fn score_of(p: &PairRecord) -> i64 {
    p.games
        .iter()
        .map(|g| match g.first_result() {
            sprt::PlayerResult::Win => 1,
            sprt::PlayerResult::Draw => 0,
            sprt::PlayerResult::Loss => -1,
        })
        .sum()
}

/// The tune's arguments as the manifest holds them.
pub(super) fn stored_args(dir: &Path, m: &Manifest) -> CliResult<TuneArgs> {
    serde_json::from_value(m.args.clone()).map_err(|e| {
        CliError::usage(format!(
            "{}: the tune arguments do not read: {e}",
            Manifest::path(dir).display()
        ))
    })
}

/// The trajectory of a cluster tune from its shards' records: the tuner after every
/// complete iteration, and the rows (the start row first).
pub(super) fn replay(dir: &Path, m: &Manifest, s: &Setup) -> CliResult<(Tuner, Vec<Row>)> {
    let mut records = Records::new(dir, m, RecordShape::Pairs);
    records.refresh()?;
    let mut tuner = s.tuner();
    let mut rows = vec![tuner.start_row()];
    for (&k, p) in records.pairs().0 {
        tuner.record(k, score_of(p));
        rows.extend(tuner.advance());
    }
    Ok((tuner, rows))
}

/// `spar merge` (and the coordinator's epilogue) of a tune: the trajectory CSV and its run
/// record, `--out`, and the final values.
pub fn merge(dir: &Path, m: &Manifest) -> CliResult<Merged> {
    let args = stored_args(dir, m)?;
    let s = setup(&args)?;
    let mut records = Records::new(dir, m, RecordShape::Pairs);
    records.refresh()?;
    let (pairs, conflicts) = records.pairs();
    let conflicts = conflicts.to_vec();
    let done_pairs = pairs.len() as u64;
    let (tuner, rows) = replay(dir, m, &s)?;
    if let Some(csv) = &args.csv {
        let mut text = trajectory::header(&s.names) + "\n";
        for row in &rows {
            text.push_str(&trajectory::format_row(row));
            text.push('\n');
        }
        write_atomically(csv, &text)
            .map_err(|e| CliError::failure(format!("cannot write --csv {}: {e}", csv.display())))?;
        let mut extra = serde_json::Map::new();
        extra.insert("run_dir".into(), dir.to_string_lossy().into_owned().into());
        // A verdict recorded earlier stays.
        if let Some(v) = run_record::read("--csv", csv)
            .ok()
            .flatten()
            .and_then(|r| r.object.get("verify").cloned())
        {
            extra.insert("verify".into(), v);
        }
        run_record::write("--csv", csv, "tune", &s.fields, extra)?;
    }
    let (values, finals) = tuned_values(&s, &rows);
    let head = format!(
        "SPSA: {}/{} iterations, {} games on {} shards ({done_pairs} pairs recorded)",
        tuner.done(),
        s.gains.iterations,
        tuner.games(),
        m.shards
    );
    let mut lines = vec![head];
    lines.extend(values.lines().map(str::to_string));
    if let Some(out) = &args.out {
        write_atomically(out, &crate::tune::report::openbench_lines(&finals))
            .map_err(|e| CliError::failure(format!("cannot write --out {}: {e}", out.display())))?;
        lines.push(String::new());
        lines.push(format!("Wrote {}", out.display()));
    }
    if !conflicts.is_empty() {
        lines.push(format!(
            "{} pairs were recorded twice with different games (the lower shard's record is counted): a time-limited tune is not reproducible",
            conflicts.len()
        ));
    }
    Ok(Merged {
        lines,
        done: done_pairs,
        complete: tuner.done() == s.gains.iterations,
        conflicts,
        notes: Vec::new(),
    })
}
