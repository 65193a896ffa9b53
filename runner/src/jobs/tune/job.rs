//! The tune as a job of the job contract ([`Job`]): its manifests, shard play, records
//! (results rows of the perturbed pairs), merge (the trajectory) and status.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::status::TuneView;
use crate::cli::OutputArgs;
use crate::cluster::manifest::Manifest;
use crate::cluster::merge::{at, refuse_options};
use crate::cluster::merged::Merged;
use crate::cluster::records::{RecordShape, Records};
use crate::cluster::shard::ShardRun;
use crate::cluster::status;
use crate::error::{CliError, CliResult};
use crate::files::run_record;
use crate::job::{Job, ServedPage, StatusView, Unit};
use crate::jobs::matches::job::{pairs_finished, pairs_progress};

/// `spar tune`.
pub struct TuneJob;

/// The tune job.
pub static TUNE: TuneJob = TuneJob;

/// The outputs of a tune's arguments.
#[derive(Deserialize)]
struct TuneOutputs {
    csv: Option<PathBuf>,
    out: Option<PathBuf>,
}

impl StatusView for TuneView {
    fn lines(&self) -> Vec<String> {
        super::status::lines(self)
    }

    fn page(&self) -> String {
        super::status_page::html(self)
    }
}

impl Job for TuneJob {
    fn command(&self) -> &'static str {
        "tune"
    }

    fn unit(&self) -> Unit {
        Unit::Pairs
    }

    fn check_manifest(&self, m: &Manifest) -> Result<(), String> {
        m.check_pair_plan(false)
    }

    fn records(&self, _m: &Manifest) -> CliResult<RecordShape> {
        Ok(RecordShape::Pairs)
    }

    fn play_shard(&self, shard: &ShardRun) -> CliResult {
        super::shards::run_shard(shard.manifest.args.clone(), shard)
    }

    fn finished(&self, m: &Manifest, records: &Records) -> CliResult<bool> {
        pairs_finished(m, records)
    }

    fn progress_message(&self, m: &Manifest, records: &Records) -> String {
        pairs_progress(m, records)
    }

    fn outputs(
        &self,
        m: &Manifest,
        _files: Option<&OutputArgs>,
    ) -> CliResult<Vec<(String, PathBuf)>> {
        let o: TuneOutputs = serde_json::from_value(m.args.clone())
            .map_err(|e| CliError::usage(format!("{}: {e}", m.cwd.display())))?;
        let mut out = Vec::new();
        if let Some(c) = &o.csv {
            out.push(("--csv".into(), at(m, c)));
            out.push(("--csv record".into(), run_record::path_for(&at(m, c))));
        }
        if let Some(f) = &o.out {
            out.push(("--out".into(), at(m, f)));
        }
        Ok(out)
    }

    fn check_merge_options(&self, dir: &Path, m: &Manifest, files: &OutputArgs) -> CliResult {
        refuse_options(dir, m, files, "its own --csv and --out")
    }

    fn merge(&self, dir: &Path, m: &Manifest, _files: Option<&OutputArgs>) -> CliResult<Merged> {
        super::merge::merge(dir, m)
    }

    fn status(&self, dir: &Path, m: &Manifest) -> CliResult<Box<dyn StatusView>> {
        let snapshot = status::of_run(dir, m, self)?;
        Ok(Box::new(super::status_cluster::view(dir, m, &snapshot)?))
    }

    /// A tune's trajectory CSV (told from a results CSV by its header).
    fn owns_file(&self, path: &Path) -> bool {
        path.is_file() && super::status_local::is_tune(path)
    }

    fn file_inputs(&self, path: &Path) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("trajectory", path.to_path_buf()),
            ("trajectory record", run_record::path_for(path)),
            ("trajectory lock", crate::files::lock::lock_file_for(path)),
        ]
    }

    fn status_of_file(&self, path: &Path) -> CliResult<Box<dyn StatusView>> {
        Ok(Box::new(super::status_local::from_csv(path)?))
    }

    fn served(&self) -> Option<u8> {
        Some(2)
    }

    fn served_outputs(&self, dir: &Path) -> Vec<String> {
        crate::job::files_in(dir, &[("--csv", "tune.csv"), ("--out", "tuned.txt")])
    }

    fn served_primary(&self, dir: &Path, _words: &[String]) -> PathBuf {
        dir.join("tune.csv")
    }

    fn served_page(&self) -> ServedPage {
        ServedPage {
            status_lines: true,
            status_page: true,
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
        super::served_section::served(dir, view)
    }

    fn live_reader(&'static self, run: &crate::live::LiveRun) -> Box<dyn crate::live::LiveReader> {
        super::live::reader(self, run)
    }
}
