//! The Slurm backend (`spar serve --slurm`): each run plays as a `--slurm` run — its words,
//! the server's output flags, then `--slurm --run-dir DIR/run --shards N --cpus-per-shard
//! C [--sbatch-arg=--partition=P] [--resume]` — whose coordinator is the server's child.
//! The run directory of the cluster run (`DIR/run`: its manifest, shard records and
//! `jobs.json`) is where its numbers and its shards are read from while it plays
//! (`live.rs`: `cluster::status::of_run`, the view of `spar status DIR/run`).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::settings::SlurmSettings;
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
/// [--resume]`. It resumes (reattaches) when the cluster run has its manifest.
pub fn argv(kind: &str, words: &[String], dir: &Path, s: &SlurmSettings) -> Vec<String> {
    let mut v = vec![kind.to_string()];
    v.extend(command_words(kind, words, dir, s));
    if is_cluster_run(dir) {
        v.push("--resume".into());
    }
    v
}

/// The server's flags of a cluster run: its outputs and where and how it plays.
pub fn flags(dir: &Path, s: &SlurmSettings) -> Vec<String> {
    let mut v = vec![
        "--slurm".to_string(),
        "--run-dir".into(),
        run_dir(dir).to_string_lossy().into_owned(),
        "--shards".into(),
        s.shards.to_string(),
        "--cpus-per-shard".into(),
        s.cpus_per_shard.to_string(),
    ];
    if let Some(p) = &s.partition {
        v.push(format!("--sbatch-arg=--partition={p}"));
    }
    v
}

/// The words after `spar KIND`, the outputs and the cluster flags (no `--resume`): the
/// command line the run's page shows.
pub fn command_words(kind: &str, words: &[String], dir: &Path, s: &SlurmSettings) -> Vec<String> {
    let mut v = words.to_vec();
    v.extend(words::outputs(kind, dir));
    v.extend(flags(dir, s));
    v
}

/// One shard of a cluster run, as the run's page and the machines page show it.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    /// Pairs (datagen: games) done, and its share of a fixed-size run.
    pub done: u64,
    pub share: Option<u64>,
    /// Its Slurm state (`RUNNING`, `PENDING`), when the queue knows it.
    pub state: Option<String>,
    /// Seconds since its last record.
    pub age: Option<f64>,
    pub stalled: bool,
    pub failed: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let v = argv("match", &words, d, &s);
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
        assert_eq!(argv("match", &words, d, &s).last().unwrap(), "--resume");
    }
}
