//! The merge of a datagen cluster run: the games 0, 1, 2, … in order (shard k mod N holds
//! game k), up to the first game not yet played, so a finished run's file is byte for byte
//! the file of `spar datagen` run locally with the same seed and game count.

use std::path::{Path, PathBuf};

use data::training::files::{game_ends, Format};
use serde::Deserialize;

use crate::cluster::manifest::Manifest;
use crate::cluster::merge::{at, training_outputs, write_training};
use crate::cluster::merged::Merged;
use crate::cluster::records::{RecordShape, Records};
use crate::error::{CliError, CliResult};
use crate::play::ordered::Stride;

/// The outputs of datagen's arguments.
#[derive(Deserialize)]
struct DatagenOutputs {
    out: Option<PathBuf>,
    format: Option<String>,
}

/// The training format of the run's arguments.
pub fn format_of(manifest: &Manifest) -> CliResult<Format> {
    let format = manifest
        .args
        .get("format")
        .and_then(|f| f.as_str())
        .unwrap_or("viriformat");
    Format::parse(format).map_err(CliError::usage)
}

/// Every file a merge of the datagen run writes: its `--out` files.
pub fn outputs(manifest: &Manifest) -> CliResult<Vec<(String, PathBuf)>> {
    let bad = |e: String| CliError::usage(format!("{}: {e}", manifest.cwd.display()));
    let o: DatagenOutputs =
        serde_json::from_value(manifest.args.clone()).map_err(|e| bad(e.to_string()))?;
    let format = Format::parse(o.format.as_deref().unwrap_or("viriformat")).map_err(bad)?;
    Ok(match &o.out {
        Some(f) => training_outputs(manifest, "--out", format, f),
        None => Vec::new(),
    })
}

/// Datagen: games 0, 1, … in order, up to the first one not played yet.
pub fn merge(dir: &Path, manifest: &Manifest) -> CliResult<Merged> {
    let o: DatagenOutputs = serde_json::from_value(manifest.args.clone())
        .map_err(|e| CliError::usage(format!("{}: {e}", Manifest::path(dir).display())))?;
    let format =
        Format::parse(o.format.as_deref().unwrap_or("viriformat")).map_err(CliError::usage)?;
    let given = o
        .out
        .as_deref()
        .ok_or_else(|| CliError::usage("the datagen manifest names no --out file"))?;
    let out = at(manifest, given);
    let mut records = Records::new(dir, manifest, RecordShape::Games(format));
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
    let shards: Vec<PathBuf> = (0..n)
        .map(|i| crate::cluster::shard_positions(dir, i))
        .collect();
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
        notes: Vec::new(),
    })
}
