//! The Slurm backend (`spar serve --slurm`): each run plays as a `--slurm` run — its words,
//! the server's output flags, then `--slurm --run-dir DIR/run --shards N --cpus-per-shard
//! C [--sbatch-arg=--partition=P] [--resume]` — whose coordinator is the server's child;
//! N is the run's fair share of the server's `--shards` ([`shard_shares`]).
//! The run directory of the cluster run (`DIR/run`: its manifest, shard records and
//! `jobs.json`) is where its numbers and its shards are read from while it plays
//! (`live.rs`: `cluster::status::of_run`, the view of `spar status DIR/run`).

use std::path::{Path, PathBuf};

use super::settings::SlurmSettings;
use super::share::{share, Want};
use super::words;

/// The cluster run directory of the run whose files are in `dir`.
pub fn run_dir(dir: &Path) -> PathBuf {
    dir.join("run")
}

/// Whether the run in `dir` is (or was) a cluster run: its manifest is there.
pub fn is_cluster_run(dir: &Path) -> bool {
    run_dir(dir).join("manifest.json").is_file()
}

/// The coordinator's arguments (after the program): `KIND WORDS… OUTPUTS… --slurm
/// --run-dir DIR/run --shards N --cpus-per-shard C [--sbatch-arg=--partition=P]
/// [--sbatch-arg=--exclude=NODE,…] [--resume]`, with `shards` the run's share of the
/// server's shards and `exclude` the nodes an admin excluded (checked names, see
/// `machines::check_name`; one argument, never through a shell). It resumes (reattaches)
/// when the cluster run has its manifest; then its shards are the manifest's.
pub fn argv(
    kind: &dyn crate::job::Job,
    words: &[String],
    dir: &Path,
    s: &SlurmSettings,
    shards: u64,
    exclude: &[String],
) -> Vec<String> {
    let mut v = vec![kind.command().to_string()];
    // A cluster run's clocks are not scaled (refused at submission): the word never plays.
    v.extend(super::nps_scale::strip(words));
    v.extend(words::outputs(kind, dir));
    v.extend(flags(dir, s, shards_of(dir).unwrap_or(shards)));
    v.extend(exclude_flag(exclude));
    if is_cluster_run(dir) {
        v.push("--resume".into());
    }
    v
}

/// The shards of the cluster run in `dir` (its manifest's; `None` before it has one).
pub fn shards_of(dir: &Path) -> Option<u64> {
    crate::cluster::manifest::Manifest::read(&run_dir(dir))
        .ok()
        .map(|m| m.shards)
}

/// The server's flags of a cluster run of `shards` shards: its outputs and where and how
/// it plays.
pub fn flags(dir: &Path, s: &SlurmSettings, shards: u64) -> Vec<String> {
    let mut v = vec![
        "--slurm".to_string(),
        "--run-dir".into(),
        run_dir(dir).to_string_lossy().into_owned(),
        "--shards".into(),
        shards.to_string(),
        "--cpus-per-shard".into(),
        s.cpus_per_shard.to_string(),
    ];
    if let Some(p) = &s.partition {
        v.push(format!("--sbatch-arg=--partition={p}"));
    }
    v
}

/// `--sbatch-arg=--exclude=NODE,…` for the excluded nodes (none: no flag).
pub fn exclude_flag(exclude: &[String]) -> Option<String> {
    (!exclude.is_empty()).then(|| format!("--sbatch-arg=--exclude={}", exclude.join(",")))
}

/// The shards each run of `wants` gets when the server has `total` (its `--shards`): every
/// run of the highest priority present plays (the cluster queues the tasks), each with its
/// fair-ratio share of `total` (in proportion to throughput, as the local backend shares
/// cores), at least one; when there are more such runs than shards, one each.
pub fn shard_shares(total: u64, wants: &[Want]) -> Vec<(i64, usize)> {
    let top = wants.iter().map(|w| w.priority).max();
    let playing = wants.iter().filter(|w| Some(w.priority) == top).count();
    share((total as usize).max(playing), wants)
}

/// One shard of a cluster run, as the run's page and the machines page show it.
pub use crate::live::Shard;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::share::tests::w;

    #[test]
    fn a_cluster_runs_coordinator_gets_the_servers_flags() {
        let s = SlurmSettings {
            partition: Some("debug".into()),
            shards: 3,
            cpus_per_shard: 2,
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let words = vec!["--games".to_string(), "8".into()];
        let v = argv(
            crate::jobs::by_command("match").unwrap(),
            &words,
            d,
            &s,
            3,
            &[],
        );
        let shown = |p: &str| d.join(p).to_string_lossy().into_owned();
        let mut want: Vec<String> = ["match", "--games", "8", "--results"]
            .map(String::from)
            .to_vec();
        want.extend([
            shown("results.csv"),
            "--pgnout".into(),
            shown("games.pgn"),
            "--json".into(),
            shown("summary.json"),
            "--slurm".into(),
            "--run-dir".into(),
            shown("run"),
            "--shards".into(),
            "3".into(),
            "--cpus-per-shard".into(),
            "2".into(),
            "--sbatch-arg=--partition=debug".into(),
        ]);
        assert_eq!(v, want);
        std::fs::create_dir_all(d.join("run")).unwrap();
        std::fs::write(d.join("run/manifest.json"), "{}").unwrap();
        assert_eq!(
            argv(
                crate::jobs::by_command("match").unwrap(),
                &words,
                d,
                &s,
                3,
                &[]
            )
            .last()
            .unwrap(),
            "--resume"
        );
        // Excluded nodes: one more argument before --resume, the nodes joined by commas.
        let ex = vec!["node2".to_string(), "node7".into()];
        let v = argv(
            crate::jobs::by_command("match").unwrap(),
            &words,
            d,
            &s,
            3,
            &ex,
        );
        assert_eq!(
            &v[v.len() - 2..],
            ["--sbatch-arg=--exclude=node2,node7", "--resume"]
        );
        assert_eq!(v[..v.len() - 2], want[..]);
    }

    #[test]
    fn runs_get_their_fair_share_of_the_servers_shards() {
        assert_eq!(shard_shares(8, &[w(1, 0, 100)]), [(1, 8)]);
        assert_eq!(
            shard_shares(8, &[w(1, 0, 100), w(2, 0, 100)]),
            [(1, 4), (2, 4)]
        );
        assert_eq!(
            shard_shares(8, &[w(1, 0, 300), w(2, 0, 100)]),
            [(1, 6), (2, 2)]
        );
        // A lower priority waits.
        assert_eq!(shard_shares(8, &[w(1, -1, 100), w(2, 0, 100)]), [(2, 8)]);
        // More runs than shards: every run of the top priority plays, one shard each.
        assert_eq!(
            shard_shares(2, &[w(1, 0, 100), w(2, 0, 100), w(3, 0, 900), w(4, -1, 1)]),
            [(1, 1), (2, 1), (3, 1)]
        );
        assert!(shard_shares(4, &[]).is_empty());
        for total in 1..12 {
            for n in 1..6 {
                let wants: Vec<Want> = (0..n).map(|i| w(i, 0, 1 + 37 * i * i)).collect();
                let got = shard_shares(total, &wants);
                assert_eq!(got.len(), n as usize);
                assert!(got.iter().all(|g| g.1 >= 1));
                let sum: usize = got.iter().map(|g| g.1).sum();
                assert_eq!(sum, (total as usize).max(n as usize));
            }
        }
    }
}
