//! The report as a job of the job contract ([`Job`]): its manifests, shard play, records
//! (results rows, two per pair, as a match's; its statistics in each shard's checkpoint),
//! merge and status.

use std::path::{Path, PathBuf};

use crate::cli::OutputArgs;
use crate::cluster::manifest::Manifest;
use crate::cluster::merge::refuse_options;
use crate::cluster::merged::Merged;
use crate::cluster::records::{RecordShape, Records};
use crate::cluster::shard::ShardRun;
use crate::cluster::status;
use crate::error::CliResult;
use crate::job::{Job, ServedPage, StatusView, Unit};

/// `spar report`.
pub struct ReportJob;

/// The report job.
pub static REPORT: ReportJob = ReportJob;

impl Job for ReportJob {
    fn command(&self) -> &'static str {
        "report"
    }

    fn unit(&self) -> Unit {
        Unit::Pairs
    }

    fn check_manifest(&self, m: &Manifest) -> Result<(), String> {
        if m.total.is_none() {
            return Err("no total for a `report` run".to_string());
        }
        let plan = m
            .plan
            .as_ref()
            .ok_or_else(|| "a `report` run without its plan".to_string())?;
        match plan.engines.len() {
            1 => Ok(()),
            2 if plan.engines[0].name != plan.engines[1].name => Ok(()),
            2 => Err("two engines of the same name".to_string()),
            n => Err(format!("{n} engines (a report has one or two)")),
        }
    }

    fn records(&self, _m: &Manifest) -> CliResult<RecordShape> {
        Ok(RecordShape::Pairs)
    }

    fn play_shard(&self, shard: &ShardRun) -> CliResult {
        super::shards::run_shard(shard.manifest.args.clone(), shard)
    }

    /// Every pair recorded: a shard appends a stretch's rows only after the checkpoint
    /// that counts their statistics, so the records never run ahead of the statistics.
    fn finished(&self, m: &Manifest, records: &Records) -> CliResult<bool> {
        let (pairs, _) = records.pairs();
        Ok(m.total.is_some_and(|t| pairs.len() as u64 >= t))
    }

    fn progress_message(&self, _m: &Manifest, records: &Records) -> String {
        format!("{} pairs recorded", records.pairs().0.len())
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
        Some(4)
    }

    /// Its directory, and no build: the server says which spar plays it.
    fn served_outputs(&self, dir: &Path) -> Vec<String> {
        vec![
            "--out".into(),
            dir.to_string_lossy().into_owned(),
            "--no-build".into(),
        ]
    }

    fn served_primary(&self, dir: &Path, _words: &[String]) -> PathBuf {
        dir.join("stats.json")
    }

    /// A local report plays all its games again: nothing to resume from.
    fn served_page(&self) -> ServedPage {
        ServedPage {
            tracked: true,
            ..ServedPage::default()
        }
    }

    fn served_section(
        &self,
        id: i64,
        dir: &Path,
        _view: Option<&(dyn std::any::Any + Send + Sync)>,
    ) -> String {
        super::served_section::served(id, dir)
    }

    fn live_reader(&'static self, run: &crate::live::LiveRun) -> Box<dyn crate::live::LiveReader> {
        super::live::reader(self, run)
    }
}
