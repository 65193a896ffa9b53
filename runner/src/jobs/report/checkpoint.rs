//! A report shard's statistics checkpoint, `RUN_DIR/shards/I/stats.json`: the `track!`
//! statistics of the shard's first `pairs` pairs, written whole (atomically) after each
//! stretch of pairs, with the results rows of that stretch.
//!
//! `track!` statistics are process-wide sums over every game in flight, so they cannot be
//! cut at a pair: the shard plays its pairs in stretches and takes the statistics only
//! between two stretches, when no game is in flight. The order of the writes makes the
//! records and the statistics agree at every moment:
//!
//! 1. the checkpoint (statistics of pairs `0..P+n`, and the rows of pairs `P..P+n`);
//! 2. those rows, appended to `results.csv` (the record `status`, the coordinator and the
//!    merge count).
//!
//! So the results file never holds a pair the statistics miss. A shard killed between 1
//! and 2 appends the checkpoint's rows when it starts again; one killed within a stretch
//! leaves neither its rows nor its statistics, and plays that stretch again. A results file
//! and a checkpoint that disagree otherwise (a file deleted or copied by hand) restart the
//! shard's share from its first pair. Nothing is counted twice or left out.

use std::path::Path;

use data::results::ResultRow;
use serde::{Deserialize, Serialize};

use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::input::read_optional;
use crate::report::stats::StatsFile;

/// The `format` field of a checkpoint.
pub const FORMAT: &str = "spar-report-shard";

/// The largest checkpoint read (its statistics and one stretch's rows).
const LIMIT: u64 = 256 << 20;

/// What a report shard has counted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Always [`FORMAT`].
    pub format: String,
    /// The shard's pairs counted: the first `pairs` of its stride.
    pub pairs: u64,
    /// The results rows of the last stretch (its pairs are the last ones counted), which
    /// the shard appends to its results file after writing this file.
    pub rows: Vec<ResultRow>,
    /// The statistics of those pairs' games, one variant per engine given.
    pub stats: StatsFile,
}

impl Checkpoint {
    /// The checkpoint of `stats` over `pairs` pairs, the last stretch's rows `rows`.
    pub fn new(pairs: u64, rows: Vec<ResultRow>, stats: StatsFile) -> Checkpoint {
        Checkpoint {
            format: FORMAT.to_string(),
            pairs,
            rows,
            stats,
        }
    }

    /// Reads the checkpoint at `path` (`None`: none yet).
    pub fn read(path: &Path) -> CliResult<Option<Checkpoint>> {
        let Some(text) = read_optional(path, "a report shard's statistics", LIMIT)? else {
            return Ok(None);
        };
        let c: Checkpoint = serde_json::from_str(&text).map_err(|e| {
            CliError::failure(format!(
                "{}: not a report shard's statistics ({e}): move it away and play the shard again",
                path.display()
            ))
        })?;
        if c.format != FORMAT {
            return Err(CliError::failure(format!(
                "{}: not a report shard's statistics (format '{}')",
                path.display(),
                c.format
            )));
        }
        Ok(Some(c))
    }

    /// Writes it to `path` whole (a reader sees the old file or the new one).
    pub fn write(&self, path: &Path) -> CliResult {
        let text = serde_json::to_string(self).expect("a checkpoint is json") + "\n";
        write_atomically(path, &text)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", path.display())))
    }
}
