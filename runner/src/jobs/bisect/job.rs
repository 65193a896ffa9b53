//! The bisect as a job of the job contract ([`Job`]). A bisect is no cluster run of its
//! own: its run directory holds its plan and steps (`record`), and each step's SPRT is a
//! run of its own (local, or a cluster run with `--slurm`), so the shard and merge methods
//! refuse with that said; what it answers is its status (`spar status RUN_DIR`), what a
//! server runs of it and how it reads it live, and its part in a watched branch.

use std::path::{Path, PathBuf};

use super::record::{self, Answer};
use crate::cli::OutputArgs;
use crate::cluster::manifest::Manifest;
use crate::cluster::merged::Merged;
use crate::cluster::records::{RecordShape, Records};
use crate::cluster::shard::ShardRun;
use crate::error::{CliError, CliResult};
use crate::job::{Job, ServedPage, StatusView, Unit, WatchAsk, WatchRole};

/// `spar bisect`.
pub struct BisectJob;

/// The bisect job.
pub static BISECT: BisectJob = BisectJob;

/// The refusal of a cluster run's method: a bisect's steps are the cluster runs.
fn not_sharded<T>(what: &str) -> CliResult<T> {
    Err(CliError::usage(format!(
        "a bisect is not sharded ({what}): each of its steps is an SPRT run of its own \
         (RUN_DIR/steps/…); run `spar bisect … --run-dir RUN_DIR --resume` to go on, and \
         `spar status RUN_DIR` to see it"
    )))
}

impl Job for BisectJob {
    fn command(&self) -> &'static str {
        "bisect"
    }

    fn unit(&self) -> Unit {
        Unit::Pairs
    }

    fn check_manifest(&self, _m: &Manifest) -> Result<(), String> {
        Err("a bisect has no cluster manifest: its run directory holds bisect.json".into())
    }

    fn records(&self, _m: &Manifest) -> CliResult<RecordShape> {
        not_sharded("no records")
    }

    fn play_shard(&self, _shard: &ShardRun) -> CliResult {
        not_sharded("no shard to play")
    }

    fn finished(&self, _m: &Manifest, _records: &Records) -> CliResult<bool> {
        not_sharded("no records")
    }

    fn progress_message(&self, _m: &Manifest, _records: &Records) -> String {
        "bisect".into()
    }

    fn outputs(
        &self,
        _m: &Manifest,
        _files: Option<&OutputArgs>,
    ) -> CliResult<Vec<(String, PathBuf)>> {
        not_sharded("nothing to merge")
    }

    fn check_merge_options(&self, _dir: &Path, _m: &Manifest, _files: &OutputArgs) -> CliResult {
        not_sharded("nothing to merge")
    }

    fn merge(&self, _dir: &Path, _m: &Manifest, _files: Option<&OutputArgs>) -> CliResult<Merged> {
        not_sharded("nothing to merge")
    }

    fn status(&self, dir: &Path, _m: &Manifest) -> CliResult<Box<dyn StatusView>> {
        self.status_of_file(dir)
    }

    /// A bisect's run directory (it holds `bisect.json`).
    fn owns_file(&self, path: &Path) -> bool {
        path.is_dir() && path.join(record::PLAN).is_file()
    }

    fn file_inputs(&self, path: &Path) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("bisect plan", path.join(record::PLAN)),
            ("bisect steps", path.join(record::STEPS)),
        ]
    }

    fn status_of_file(&self, path: &Path) -> CliResult<Box<dyn StatusView>> {
        match super::status::of_dir(path)? {
            Some(s) => Ok(Box::new(s)),
            None => Err(CliError::usage(format!(
                "{}: no bisect plan here (give the --run-dir of a spar bisect)",
                path.display()
            ))),
        }
    }

    fn served(&self) -> Option<u8> {
        Some(5)
    }

    fn served_outputs(&self, dir: &Path) -> Vec<String> {
        crate::job::files_in(dir, &[("--run-dir", "bisect")])
    }

    /// Its plan: a run with one resumes (`--resume`); the status view reads its directory.
    fn served_primary(&self, dir: &Path, _words: &[String]) -> PathBuf {
        dir.join("bisect").join(record::PLAN)
    }

    fn served_page(&self) -> ServedPage {
        ServedPage {
            status_lines: true,
            resumes: true,
            ..ServedPage::default()
        }
    }

    fn served_section(
        &self,
        _id: i64,
        dir: &Path,
        view: Option<&(dyn std::any::Any + Send + Sync)>,
    ) -> String {
        match view.and_then(|v| v.downcast_ref::<super::status::BisectStatus>()) {
            Some(s) => format!("<h2>Bisect</h2>{}", s.section()),
            None => match super::status::of_dir(&dir.join("bisect")) {
                Ok(Some(s)) => format!("<h2>Bisect</h2>{}", s.section()),
                _ => String::new(),
            },
        }
    }

    fn live_reader(&'static self, run: &crate::live::LiveRun) -> Box<dyn crate::live::LiveReader> {
        // The server names the plan (its primary file); the reader reads the directory.
        let mut run = run.clone();
        if run.file.ends_with(record::PLAN) {
            if let Some(dir) = run.file.parent() {
                run.file = dir.to_path_buf();
            }
        }
        super::live::reader(&run)
    }

    fn watch_role(&self) -> Option<WatchRole> {
        Some(WatchRole::Bisect)
    }

    /// `--repo ENGINE --good BASE --bad TIP --drop -elo0 --known-bad --each … EXTRA…`: the
    /// test that failed is the gate's evidence; the server resolves `--repo ENGINE`.
    fn watch_words(&self, ask: &WatchAsk) -> Vec<String> {
        let mut w: Vec<String> = [
            "--repo", ask.engine, "--good", ask.base, "--bad", ask.tip, "--drop",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        w.push((-ask.bounds[0]).to_string());
        w.push("--known-bad".into());
        if !ask.each.is_empty() {
            w.push("--each".into());
            w.extend(ask.each.iter().cloned());
        }
        w.extend(ask.extra.iter().cloned());
        w
    }

    fn watch_found(&self, dir: &Path, _words: &[String]) -> Option<String> {
        let (plan, _, state) = record::load(&dir.join("bisect")).ok()??;
        match state.next {
            Answer::Found(i) => Some(plan.commits[i].sha.clone()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::bisect::record::tests::{plan, step};
    use crate::jobs::bisect::record::{append_step, Outcome, Role};

    #[test]
    fn a_served_bisect_is_found_by_its_directory_and_answers_the_commit_it_found() {
        let run = tempfile::tempdir().unwrap();
        let dir = run.path().join("bisect");
        std::fs::create_dir_all(&dir).unwrap();
        assert!(!BISECT.owns_file(&dir));
        let p = plan(2, true);
        p.write(&dir).unwrap();
        assert!(BISECT.owns_file(&dir));
        assert!(crate::jobs::owning(&dir).is_some_and(|k| k.command() == "bisect"));
        assert_eq!(BISECT.watch_found(run.path(), &[]), None);
        append_step(&dir, &step(&p, Role::Search, 1, Outcome::Good)).unwrap();
        assert_eq!(
            BISECT.watch_found(run.path(), &[]),
            Some(p.commits[2].sha.clone())
        );
        let lines = BISECT.status_of_file(&dir).unwrap().lines();
        assert!(
            lines.iter().any(|l| l.starts_with("First bad commit: ")),
            "{lines:?}"
        );
        let section = BISECT.served_section(1, run.path(), None);
        assert!(section.starts_with("<h2>Bisect</h2>") && section.contains("First bad commit: "));
        let each = ["nodes=2000".to_string()];
        let ask = WatchAsk {
            engine: "eng",
            base: "a",
            tip: "b",
            each: &each,
            extra: &[],
            bounds: [-3.0, 1.0],
            games: 0,
        };
        assert_eq!(
            BISECT.watch_words(&ask).join(" "),
            "--repo eng --good a --bad b --drop 3 --known-bad --each nodes=2000"
        );
    }
}
