//! The merge of a report cluster run: the shards' statistics checkpoints summed (each
//! counts the first pairs of its shard, and only those: see [`super::checkpoint`]), written
//! as the local run writes them: the terminal report, and `stats.csv`, `stats.json` and
//! `report.html` in `--out`.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::checkpoint::Checkpoint;
use super::games::{self, Seats};
use super::local::write_out;
use crate::cluster::manifest::Manifest;
use crate::cluster::merge::at;
use crate::cluster::merged::Merged;
use crate::cluster::shard_stats;
use crate::error::{CliError, CliResult};
use crate::report::stats::VariantStats;
use crate::report::{self, terminal};

/// The outputs of a report's arguments.
#[derive(Deserialize)]
struct ReportOutputs {
    out: Option<PathBuf>,
}

fn outputs_of(m: &Manifest) -> CliResult<ReportOutputs> {
    serde_json::from_value(m.args.clone())
        .map_err(|e| CliError::usage(format!("{}: {e}", m.cwd.display())))
}

/// Every file a merge of the report run writes: its `--out` files.
pub fn outputs(m: &Manifest) -> CliResult<Vec<(String, PathBuf)>> {
    Ok(match outputs_of(m)?.out {
        Some(dir) => report::FILES
            .iter()
            .map(|f| ("--out".to_string(), at(m, &dir.join(f))))
            .collect(),
        None => Vec::new(),
    })
}

/// The statistics of every shard's checkpoint summed, one per variant, and the pairs they
/// count.
pub fn summed(dir: &Path, m: &Manifest, names: &[&str]) -> CliResult<(Vec<VariantStats>, u64)> {
    let mut sum: Vec<VariantStats> = names
        .iter()
        .map(|n| VariantStats::from_totals(n, None, Some(0)))
        .collect();
    let mut pairs = 0;
    for i in 0..m.shards {
        let path = shard_stats(dir, i);
        let Some(c) = Checkpoint::read(&path)? else {
            continue;
        };
        if c.stats.variants.len() != sum.len()
            || c.stats
                .variants
                .iter()
                .zip(names)
                .any(|(v, n)| v.name != *n)
        {
            return Err(CliError::failure(format!(
                "{}: not the statistics of this run's engines {}: move it away and play shard {i} again",
                path.display(),
                names.join(" and ")
            )));
        }
        for (s, v) in sum.iter_mut().zip(&c.stats.variants) {
            s.merge(v)
                .map_err(|e| CliError::failure(format!("{}: {e}", path.display())))?;
        }
        pairs += c.pairs;
    }
    Ok((sum, pairs))
}

/// Sums the shards' statistics, prints the report and writes the run's --out files.
pub fn merge(dir: &Path, m: &Manifest) -> CliResult<Merged> {
    let out = outputs_of(m)?.out;
    let plan = m.plan.as_ref().ok_or_else(|| {
        CliError::usage(format!(
            "{}: a report manifest without its plan",
            Manifest::path(dir).display()
        ))
    })?;
    let run = plan.resolve()?;
    let seats = Seats::new(&run.variants);
    let (stats, pairs) = summed(dir, m, &seats.names())?;
    games::warn_empty(&stats, &seats.seats);
    let title = seats.title(2 * pairs);
    let lines: Vec<String> = terminal::render(&stats)
        .lines()
        .map(str::to_string)
        .collect();
    if let Some(out) = out {
        write_out(stats, &at(m, &out), &title)?;
    }
    Ok(Merged {
        lines,
        done: pairs,
        complete: m.total == Some(pairs),
        conflicts: Vec::new(),
    })
}
