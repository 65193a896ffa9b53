//! Datagen as a job of the job contract ([`Job`]): its manifests, shard play, records
//! (complete games of the shard's training file), merge and status.

use std::path::{Path, PathBuf};

use crate::cli::OutputArgs;
use crate::cluster::manifest::Manifest;
use crate::cluster::merge::refuse_options;
use crate::cluster::merged::Merged;
use crate::cluster::records::{RecordShape, Records};
use crate::cluster::shard::ShardRun;
use crate::cluster::status;
use crate::error::CliResult;
use crate::job::{Job, Numbers, ServedPage, StatusView, Unit};

/// `spar datagen`.
pub struct DatagenJob;

/// The datagen job.
pub static DATAGEN: DatagenJob = DatagenJob;

impl Job for DatagenJob {
    fn command(&self) -> &'static str {
        "datagen"
    }

    fn unit(&self) -> Unit {
        Unit::Games
    }

    fn check_manifest(&self, m: &Manifest) -> Result<(), String> {
        match m.total {
            Some(_) => Ok(()),
            None => Err("no total for a `datagen` run".to_string()),
        }
    }

    fn records(&self, m: &Manifest) -> CliResult<RecordShape> {
        Ok(RecordShape::Games(super::merge::format_of(m)?))
    }

    fn play_shard(&self, shard: &ShardRun) -> CliResult {
        super::shards::run_shard(shard.manifest.args.clone(), shard)
    }

    fn finished(&self, m: &Manifest, records: &Records) -> CliResult<bool> {
        Ok(m.total.is_some_and(|t| records.games() >= t))
    }

    fn progress_message(&self, m: &Manifest, _records: &Records) -> String {
        format!("{} shards", m.shards)
    }

    fn outputs(
        &self,
        m: &Manifest,
        _files: Option<&OutputArgs>,
    ) -> CliResult<Vec<(String, PathBuf)>> {
        super::merge::outputs(m)
    }

    fn check_merge_options(&self, dir: &Path, m: &Manifest, files: &OutputArgs) -> CliResult {
        refuse_options(dir, m, files, "its own --out")
    }

    fn merge(&self, dir: &Path, m: &Manifest, _files: Option<&OutputArgs>) -> CliResult<Merged> {
        super::merge::merge(dir, m)
    }

    fn status(&self, dir: &Path, m: &Manifest) -> CliResult<Box<dyn StatusView>> {
        Ok(Box::new(status::of_run(dir, m, self)?))
    }

    fn served(&self) -> Option<u8> {
        Some(3)
    }

    fn served_outputs(&self, dir: &Path) -> Vec<String> {
        crate::job::files_in(dir, &[("--out", "positions")])
    }

    /// The viriformat file, or the text file of a run that writes only text.
    fn served_primary(&self, dir: &Path, words: &[String]) -> PathBuf {
        let paths = super::args::format_of_words(words).paths(&dir.join("positions"));
        paths
            .viriformat
            .or(paths.text)
            .unwrap_or_else(|| dir.join("positions"))
    }

    fn served_page(&self) -> ServedPage {
        ServedPage {
            numbers: Numbers::Positions,
            training_files: true,
            resumes: true,
            ..ServedPage::default()
        }
    }

    fn live_reader(&'static self, run: &crate::live::LiveRun) -> Box<dyn crate::live::LiveReader> {
        super::live::reader(self, run)
    }
}
