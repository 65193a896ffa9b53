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

/// The statistics of the checkpoints of the `shards` shards of the run in `dir` summed, one
/// per variant (`names`), and the pairs they count.
pub fn summed(dir: &Path, shards: u64, names: &[&str]) -> CliResult<(Vec<VariantStats>, u64)> {
    let mut sum: Vec<VariantStats> = names
        .iter()
        .map(|n| VariantStats::from_totals(n, None, Some(0)))
        .collect();
    let mut pairs = 0;
    for i in 0..shards {
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
    let (stats, pairs) = summed(dir, m.shards, &seats.names())?;
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
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use engine::track::{Accumulator, GameSums};

    use super::*;
    use crate::report::stats::{SiteStats, StatsFile};

    /// A small deterministic generator of site values.
    fn values(seed: u64, n: usize) -> Vec<i64> {
        let mut x = seed;
        (0..n)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((x >> 33) % 4001) as i64 - 2000
            })
            .collect()
    }

    /// The statistics of `games` (each a list of (site, values)) of one variant, recorded
    /// at once, as `spar report` builds them from the registry.
    fn recorded(name: &str, games: &[Vec<(&str, Vec<i64>)>]) -> VariantStats {
        let mut sites: BTreeMap<&str, (Accumulator, GameSums)> = BTreeMap::new();
        for game in games {
            for (site, xs) in game {
                let (acc, per_game) = sites.entry(site).or_default();
                xs.iter().for_each(|&x| acc.add(x));
                per_game.add_game(xs.len() as u64, xs.iter().map(|&x| x as i128).sum());
            }
        }
        VariantStats {
            name: name.to_string(),
            games: games.len() as u64,
            sites: sites
                .iter()
                .map(|(s, (acc, g))| {
                    SiteStats::from_accumulator(
                        s.to_string(),
                        format!("f.rs:{}", s.len()),
                        acc,
                        Some(g),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn the_sum_of_the_shards_statistics_is_the_statistics_of_all_their_games() {
        // Twelve games of two variants; shard I of 3 played games I, I+3, …; shard 1 has
        // counted nothing yet and left no checkpoint (it is skipped).
        let game = |v: u64, g: u64| -> Vec<(&'static str, Vec<i64>)> {
            let mut sites = vec![("eval", values(100 * v + g, 20 + g as usize))];
            if g.is_multiple_of(2) {
                sites.push((
                    "rfp",
                    values(7 + g, 5).iter().map(|x| (x & 1).abs()).collect(),
                ));
            }
            if g == 9 {
                sites.push(("rare", vec![i64::MAX / 4, -3]));
            }
            sites
        };
        let dir = tempfile::tempdir().unwrap();
        let played: Vec<u64> = (0..12).filter(|g| g % 3 != 1).collect();
        for shard in [0u64, 2] {
            let games: Vec<u64> = played.iter().copied().filter(|g| g % 3 == shard).collect();
            let stats: Vec<VariantStats> = ["dev", "base"]
                .iter()
                .enumerate()
                .map(|(v, n)| {
                    recorded(
                        n,
                        &games.iter().map(|&g| game(v as u64, g)).collect::<Vec<_>>(),
                    )
                })
                .collect();
            let path = shard_stats(dir.path(), shard);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            Checkpoint::new(games.len() as u64 / 2, Vec::new(), StatsFile::new(stats))
                .write(&path)
                .unwrap();
        }
        let (sum, pairs) = summed(dir.path(), 3, &["dev", "base"]).unwrap();
        assert_eq!(pairs, 4);
        for (v, name) in ["dev", "base"].iter().enumerate() {
            let all: Vec<_> = played.iter().map(|&g| game(v as u64, g)).collect();
            let once = recorded(name, &all);
            assert_eq!(sum[v].games, once.games);
            assert_eq!(sum[v].sites.len(), once.sites.len(), "{name}");
            for (a, b) in sum[v].sites.iter().zip(&once.sites) {
                assert_eq!(a.site, b.site);
                assert_eq!(a.count, b.count, "{}", a.site);
                assert_eq!(a.exact, b.exact, "{}", a.site);
                assert_eq!(a.buckets, b.buckets, "{}", a.site);
                assert_eq!((a.min, a.max), (b.min, b.max), "{}", a.site);
                assert_eq!(a.per_game, b.per_game, "{}", a.site);
            }
            // The whole file, means and deviations included.
            assert_eq!(
                StatsFile::new(vec![sum[v].clone()]).to_json(),
                StatsFile::new(vec![once]).to_json()
            );
        }
        // A checkpoint of other engines is refused, naming the file.
        let err = summed(dir.path(), 3, &["dev", "other"]).unwrap_err();
        assert!(err.message.contains("stats.json"), "{}", err.message);
    }
}
