//! Machines you can trust (issue 32): each shard's and each machine's score in a run
//! against the run's, as fishtest computes a worker's residual. A run plays pairs, so the
//! unit is the pair: its score is its points over two (0, ¼, ½, ¾, 1); with `m` the run's
//! mean pair score and `σ²` the run's variance of a pair's score (from its pentanomial
//! counts), a group of `n` pairs with mean `m_g` has the residual
//! `(m_g − m) / sqrt(σ² / n)`. The run's variance, not the group's, is the yardstick: a
//! shard that only wins has no variance of its own.
//!
//! A cluster run's shards are read from its run directory (`cluster::records`, the
//! coordinator's own reader: pairs deduplicated, torn rows not counted) and each shard's
//! machine from `shards/I/node`, which `spar shard` writes when it starts
//! (`SLURMD_NODENAME`, else the host name). A local run is one machine, the server's host:
//! its residual is 0 by definition.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;
use sprt::Pentanomial;

use super::live::Live;
pub use super::settings::Limits;
use super::slurm;
use crate::cluster::records::{RecordShape, Records};
use crate::job::Job;

/// One shard's or machine's row of a run's Machines table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Row {
    /// The machine (a shard's: where it played; `?` when it wrote no `node` file).
    pub machine: String,
    /// The shard (`None`: the machine's row, all its shards).
    pub shard: Option<u64>,
    pub games: u64,
    /// Its mean score per game, first engine's view.
    pub score: Option<f64>,
    /// Its residual against the run (`None`: no games, or the run has no variance).
    pub residual: Option<f64>,
    /// |residual| above the threshold with at least the minimum of games.
    pub flagged: bool,
}

/// A run's Machines table: the machines, then the shards (none for a local run).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Machines {
    pub machines: Vec<Row>,
    pub shards: Vec<Row>,
}

impl Machines {
    /// The flagged rows.
    pub fn flagged(&self) -> impl Iterator<Item = &Row> {
        self.machines
            .iter()
            .chain(&self.shards)
            .filter(|r| r.flagged)
    }
}

/// The mean and variance of a pair's score (0..1) over pentanomial counts; `None`: no pairs.
pub fn mean_var(p: &Pentanomial) -> Option<(f64, f64)> {
    let n = p.pairs();
    if n == 0 {
        return None;
    }
    let score = |i: usize| i as f64 / 4.0;
    let mean = (0..5).map(|i| p.0[i] as f64 * score(i)).sum::<f64>() / n as f64;
    let var = (0..5)
        .map(|i| p.0[i] as f64 * (score(i) - mean).powi(2))
        .sum::<f64>()
        / n as f64;
    Some((mean, var))
}

/// The residual of `group` (some of the run's pairs) against `run` (all of them); `None`
/// when the group has no pairs or the run's pairs all scored alike.
pub fn residual(group: &Pentanomial, run: &Pentanomial) -> Option<f64> {
    let (m, var) = mean_var(run)?;
    let (mg, _) = mean_var(group)?;
    if var <= 0.0 {
        return None;
    }
    let r = (mg - m) / (var / group.pairs() as f64).sqrt();
    r.is_finite().then_some(r)
}

/// Judges `groups` (the run's pairs, split) as fishtest's `get_bad_workers` does: the
/// group with the largest |residual| beyond the threshold (with enough games) is flagged
/// and left out of the run, then the rest is judged again, until none stands out. Each
/// group's residual: against the run without the groups flagged before it (a flagged
/// group's, when it was flagged). So an honest majority is not flagged for the difference
/// one bad machine makes.
fn judge(groups: &[&Pentanomial], l: Limits) -> Vec<(Option<f64>, bool)> {
    let mut out: Vec<(Option<f64>, bool)> = vec![(None, false); groups.len()];
    loop {
        let mut run = Pentanomial::default();
        for (g, _) in groups.iter().zip(&out).filter(|(_, o)| !o.1) {
            for b in 0..5 {
                run.0[b] += g.0[b];
            }
        }
        let mut worst: Option<(usize, f64)> = None;
        for (i, g) in groups.iter().enumerate() {
            if out[i].1 {
                continue;
            }
            let r = residual(g, &run);
            out[i].0 = r;
            let Some(r) = r.filter(|r| r.abs() > l.threshold && g.games() >= l.min_games) else {
                continue;
            };
            if worst.is_none_or(|(_, w)| r.abs() > w.abs()) {
                worst = Some((i, r));
            }
        }
        match worst {
            Some((i, _)) => out[i].1 = true,
            None => return out,
        }
    }
}

/// The rows of `groups` (machine, shard, pairs), judged together.
fn rows(groups: Vec<(&str, Option<u64>, &Pentanomial)>, l: Limits) -> Vec<Row> {
    let judged = judge(&groups.iter().map(|g| g.2).collect::<Vec<_>>(), l);
    groups
        .into_iter()
        .zip(judged)
        .map(|((machine, shard, p), (residual, flagged))| Row {
            machine: machine.to_string(),
            shard,
            games: p.games(),
            score: mean_var(p).map(|(m, _)| m),
            residual,
            flagged,
        })
        .collect()
}

/// The rows of a run whose pairs are grouped by shard, each shard on `nodes[shard]`.
pub fn table(
    by_shard: &BTreeMap<u64, Pentanomial>,
    nodes: &BTreeMap<u64, String>,
    l: Limits,
) -> Machines {
    let node = |i: &u64| nodes.get(i).map_or("?", String::as_str);
    let mut by_machine: BTreeMap<&str, Pentanomial> = BTreeMap::new();
    for (i, p) in by_shard {
        let m = by_machine.entry(node(i)).or_default();
        for b in 0..5 {
            m.0[b] += p.0[b];
        }
    }
    Machines {
        machines: rows(by_machine.iter().map(|(n, p)| (*n, None, p)).collect(), l),
        shards: rows(
            by_shard
                .iter()
                .map(|(i, p)| (node(i), Some(*i), p))
                .collect(),
            l,
        ),
    }
}

/// The Machines table of the run whose files are in `dir` (a match or SPRT): a cluster
/// run's from its run directory, a local run's one row from its live numbers (the server's
/// `host`, residual 0). `None`: a kind that does not play such games, or nothing to read.
pub fn of_run(kind: &dyn Job, dir: &Path, live: &Live, host: &str, l: Limits) -> Option<Machines> {
    if !kind.served_page().residuals {
        return None;
    }
    if !slurm::is_cluster_run(dir) {
        let games = live.games?;
        let points = live.wins? as f64 + live.draws? as f64 / 2.0;
        return Some(Machines {
            machines: vec![Row {
                machine: host.to_string(),
                shard: None,
                games,
                score: (games > 0).then(|| points / games as f64),
                residual: (games > 0).then_some(0.0),
                flagged: false,
            }],
            shards: Vec::new(),
        });
    }
    let rd = slurm::run_dir(dir);
    let (m, _) = crate::jobs::read(&rd).ok()?;
    let mut records = Records::new(&rd, &m, RecordShape::Pairs);
    records.refresh().ok()?;
    let mut by_shard: BTreeMap<u64, Pentanomial> =
        (0..m.shards).map(|i| (i, Pentanomial::default())).collect();
    for p in records.pairs().0.values() {
        let g = p.games;
        by_shard
            .entry(u64::from(p.shard))
            .or_default()
            .record(g[0].first_result(), g[1].first_result());
    }
    let nodes = (0..m.shards)
        .filter_map(|i| {
            let text = std::fs::read_to_string(crate::cluster::shard_node(&rd, i)).ok()?;
            let name = text.trim();
            (!name.is_empty()).then(|| (i, name.to_string()))
        })
        .collect();
    Some(table(&by_shard, &nodes, l))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_residual_is_the_groups_mean_against_the_runs_in_standard_errors() {
        // The run: 10 pairs, 2 of each score. Mean ½, variance (2·(¼+1/16)·2)/10 = 0.125.
        let run = Pentanomial::new([2, 2, 2, 2, 2]);
        let (m, v) = mean_var(&run).unwrap();
        assert!((m - 0.5).abs() < 1e-12);
        assert!((v - 0.125).abs() < 1e-12);
        // A group of 4 pairs that scored 1 each: (1 − ½) / sqrt(0.125 / 4) = 0.5 / 0.1767…
        let g = Pentanomial::new([0, 0, 0, 0, 4]);
        let want = 0.5 / (0.125f64 / 4.0).sqrt();
        assert!((residual(&g, &run).unwrap() - want).abs() < 1e-12);
        assert!((want - 2.828_427_124_746_19).abs() < 1e-9);
        // Its mirror is as far below.
        let low = Pentanomial::new([4, 0, 0, 0, 0]);
        assert!((residual(&low, &run).unwrap() + want).abs() < 1e-12);
        // No pairs, or a run without variance: no residual.
        assert_eq!(residual(&Pentanomial::default(), &run), None);
        let flat = Pentanomial::new([0, 0, 3, 0, 0]);
        assert_eq!(residual(&flat, &flat), None);
    }

    #[test]
    fn shards_and_machines_are_flagged_past_the_threshold_with_enough_games() {
        // Four honest shards on machine a, one that wins too much on machine b.
        let mut by_shard = BTreeMap::new();
        for i in 0..4 {
            by_shard.insert(i, Pentanomial::new([5, 10, 20, 10, 5]));
        }
        by_shard.insert(4, Pentanomial::new([0, 0, 10, 20, 20]));
        let nodes: BTreeMap<u64, String> = (0..5)
            .map(|i| (i, if i < 4 { "a" } else { "b" }.to_string()))
            .collect();
        let l = Limits {
            threshold: 2.7,
            min_games: 20,
        };
        let t = table(&by_shard, &nodes, l);
        let flagged: Vec<(&str, Option<u64>)> =
            t.flagged().map(|r| (r.machine.as_str(), r.shard)).collect();
        // Against the whole run the honest majority, as one machine, stands out too
        // (-2.97: 200 pairs of ½ against the run's 0.56); but b is worse, flagged and left
        // out, and then a is the whole run.
        assert_eq!(flagged, [("b", None), ("b", Some(4))]);
        assert_eq!(t.machines[0].residual, Some(0.0));
        assert_eq!(t.shards[4].games, 100);
        assert_eq!(t.shards[4].score, Some(0.8));
        // By hand: the run's pairs [20,40,90,60,40]/250: mean 0.56, variance 0.0814.
        let want = (0.8 - 0.56) / (0.0814f64 / 50.0).sqrt();
        assert!((t.shards[4].residual.unwrap() - want).abs() < 1e-9);
        assert!((want - 5.948_179).abs() < 1e-5);
        // The honest shards, judged again without shard 4: all alike.
        assert_eq!(t.shards[0].residual, Some(0.0));
        assert!(!t.shards[0].flagged);
        // Two bad shards: the worse first, then the other against the honest ones.
        by_shard.insert(3, Pentanomial::new([0, 0, 20, 20, 10]));
        let t = table(&by_shard, &nodes, l);
        let flagged: Vec<Option<u64>> = t
            .shards
            .iter()
            .filter(|r| r.flagged)
            .map(|r| r.shard)
            .collect();
        assert_eq!(flagged, [Some(3), Some(4)]);
        let three = Pentanomial::new([15, 30, 80, 50, 25]);
        let want = residual(&Pentanomial::new([0, 0, 20, 20, 10]), &three).unwrap();
        assert!((t.shards[3].residual.unwrap() - want).abs() < 1e-12);
        // Too few games: not flagged.
        let strict = Limits {
            threshold: 2.7,
            min_games: 1000,
        };
        assert_eq!(table(&by_shard, &nodes, strict).flagged().count(), 0);
    }
}
