//! The rows of a shard's results file: its complete pairs, each checked against the run
//! and read as the tally counts it, with a fingerprint of its games.

use std::hash::{Hash, Hasher};
use std::path::Path;

use data::results::{parse_results, ResultRow};
use engine::types::GameResult;

use crate::error::{CliError, CliResult};
use crate::play::game::Termination;
use crate::play::tally::GameSummary;

/// The GameSummary of a CSV row, seen from the engine named `first`.
pub(super) fn summary_of(row: &ResultRow, first: &str, path: &Path) -> CliResult<GameSummary> {
    let bad = |what: &str, v: &str| {
        CliError::failure(format!(
            "{}: pair {}: unknown {what} '{v}'",
            path.display(),
            row.pair
        ))
    };
    Ok(GameSummary {
        first_is_white: row.white == first,
        outcome: GameResult::from_pgn(&row.result).ok_or_else(|| bad("result", &row.result))?,
        termination: Termination::from_key(&row.termination)
            .ok_or_else(|| bad("termination", &row.termination))?,
    })
}

pub(super) fn fingerprint(a: &ResultRow, b: &ResultRow) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for r in [a, b] {
        (r.pair, r.game, r.opening, r.seed, &r.white, &r.black).hash(&mut h);
        (
            &r.result,
            &r.termination,
            r.plies,
            r.white_nodes,
            r.black_nodes,
        )
            .hash(&mut h);
    }
    h.finish()
}

/// A pair's two rows and their bytes (start, end) in the text they were read from.
pub type RowPair = ([ResultRow; 2], (u64, u64));

/// The complete pairs of a results file's text (up to its last newline), in file order,
/// each with the bytes of its two rows.
pub fn complete_rows(text: &str, path: &Path) -> CliResult<Vec<RowPair>> {
    let keep = text.rfind('\n').map_or(0, |i| i + 1);
    let rows = parse_results(&text[..keep], path)
        .map_err(|e| CliError::failure(format!("shard record: {e}")))?;
    Ok(pairs_of(rows, &text[..keep]))
}

/// The complete pairs of `rows`, read from `text` (up to its last newline), each with the
/// bytes of its two rows.
pub fn pairs_of(rows: Vec<ResultRow>, text: &str) -> Vec<RowPair> {
    let keep = text.len();
    // Where each line starts: row r is line r + 1 (after the header).
    let mut starts = Vec::with_capacity(rows.len() + 2);
    starts.push(0u64);
    starts.extend(
        text.as_bytes()[..keep]
            .iter()
            .enumerate()
            .filter(|(_, &b)| b == b'\n')
            .map(|(i, _)| i as u64 + 1),
    );
    let mut pairs = Vec::with_capacity(rows.len() / 2);
    let mut it = rows.into_iter().enumerate().peekable();
    while let Some((r, a)) = it.next() {
        if a.game != 0 {
            continue;
        }
        match it.peek() {
            Some((_, b)) if b.game == 1 && b.pair == a.pair => {
                let b = it.next().expect("peeked").1;
                let span = match (starts.get(r + 1), starts.get(r + 3)) {
                    (Some(&x), Some(&y)) => (x, y),
                    _ => (0, 0),
                };
                pairs.push(([a, b], span));
            }
            _ => {}
        }
    }
    pairs
}

/// Checks a recorded pair against the run: shard `shard` of `shards` records only its own
/// pairs (k ≡ shard mod shards), below the run's total, between the run's two engines.
pub(super) fn check_pair(
    row: &ResultRow,
    other: &ResultRow,
    (shard, shards): (u64, u64),
    total: Option<u64>,
    names: &[String; 2],
    path: &Path,
) -> CliResult {
    let foreign = |why: String| {
        CliError::failure(format!(
            "{}: {why}: this is not a record of this run (a file copied in from another run?); \
             move it away and play shard {shard} again (`spar shard RUN_DIR --index {shard}`)",
            path.display()
        ))
    };
    if row.pair % shards != shard {
        return Err(foreign(format!(
            "pair {} is not one of shard {shard}'s pairs ({shard}, {}, … of {shards} shards)",
            row.pair,
            shard + shards
        )));
    }
    if let Some(t) = total.filter(|&t| row.pair >= t) {
        return Err(foreign(format!(
            "pair {} is beyond the run's {t} pairs",
            row.pair
        )));
    }
    if !names[0].is_empty() {
        for r in [row, other] {
            let ok = (r.white == names[0] && r.black == names[1])
                || (r.white == names[1] && r.black == names[0]);
            if !ok {
                return Err(foreign(format!(
                    "pair {} is {} vs {}, not a game between the run's engines {} and {}",
                    r.pair, r.white, r.black, names[0], names[1]
                )));
            }
        }
    }
    Ok(())
}

/// Reads a shard's failure record.
pub(super) fn read_failed(path: &Path) -> Option<(i32, String)> {
    let text =
        crate::files::input::read_optional(path, "a shard's failure record", 1 << 20).ok()??;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((
        v.get("code")?.as_i64()? as i32,
        v.get("message")?.as_str()?.to_string(),
    ))
}
