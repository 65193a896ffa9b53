//! The match and the SPRT as jobs of the job contract ([`Job`]): their manifests, shard
//! play, records (results rows, two per pair), merge and status.

use std::path::{Path, PathBuf};

use sprt::Sprt;

use crate::cli::OutputArgs;
use crate::cluster::manifest::Manifest;
use crate::cluster::merged::Merged;
use crate::cluster::records::{NotCounted, RecordShape, Records, Uncounted};
use crate::cluster::shard::ShardRun;
use crate::cluster::status;
use crate::error::CliResult;
use crate::files::run_record;
use crate::job::{Job, ServedPage, StatusView, Unit, WatchAsk, WatchRole};
use crate::summary;

/// `spar match` or (`sprt`) `spar sprt`.
pub struct MatchJob {
    sprt: bool,
}

/// `spar match`: a fixed number of pairs.
pub static MATCH: MatchJob = MatchJob { sprt: false };

/// `spar sprt`: pairs until the SPRT decides (or `--games`).
pub static SPRT: MatchJob = MatchJob { sprt: true };

/// The SPRT of a pair-playing run's plan, if it has one.
pub fn plan_sprt(m: &Manifest) -> CliResult<Option<Sprt>> {
    m.plan
        .as_ref()
        .and_then(|p| p.sprt.as_ref())
        .map(|p| p.sprt())
        .transpose()
}

/// Whether a run that plays pairs is over: every pair counted, or its SPRT decided (in
/// pair order, at the pair where a local run decides).
pub fn pairs_finished(m: &Manifest, records: &Records) -> CliResult<bool> {
    // An SPRT that does not read is an error here, not a run that never ends.
    let sprt = plan_sprt(m)?;
    if m.total.is_some_and(|t| records.counted_pairs() >= t) {
        return Ok(true);
    }
    Ok(sprt.is_some() && records.decided().is_some())
}

/// The live line of a run that plays pairs: its score, Elo and LLR over the pairs counted,
/// and how many recorded pairs wait for a gap to close.
pub fn pairs_progress(m: &Manifest, records: &Records) -> String {
    let sprt = plan_sprt(m).ok().flatten();
    let names = match &m.plan {
        Some(p) if p.engines.len() == 2 => [p.engines[0].name.as_str(), p.engines[1].name.as_str()],
        _ => ["", ""],
    };
    let mut line = summary::status_line(records.tally(), sprt.as_ref(), names);
    if let Some(Uncounted {
        pairs,
        why: NotCounted::Waiting { pair, shard },
    }) = records.uncounted()
    {
        line.push_str(&format!(
            "  (+{pairs} pairs recorded, waiting for pair {pair} of shard {shard})"
        ));
    }
    line
}

impl Job for MatchJob {
    fn command(&self) -> &'static str {
        if self.sprt {
            "sprt"
        } else {
            "match"
        }
    }

    fn unit(&self) -> Unit {
        Unit::Pairs
    }

    fn check_manifest(&self, m: &Manifest) -> Result<(), String> {
        m.check_pair_plan(self.sprt)
    }

    fn records(&self, _m: &Manifest) -> CliResult<RecordShape> {
        Ok(RecordShape::Pairs)
    }

    fn play_shard(&self, shard: &ShardRun) -> CliResult {
        super::shards::run_shard(shard.manifest.args.clone(), self.sprt, shard)
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
        files: Option<&OutputArgs>,
    ) -> CliResult<Vec<(String, PathBuf)>> {
        super::merge::outputs(m, files)
    }

    fn check_merge_options(&self, dir: &Path, m: &Manifest, files: &OutputArgs) -> CliResult {
        super::merge::check_options(dir, m, files)
    }

    fn merge(&self, dir: &Path, m: &Manifest, files: Option<&OutputArgs>) -> CliResult<Merged> {
        super::merge::merge(dir, m, files)
    }

    fn status(&self, dir: &Path, m: &Manifest) -> CliResult<Box<dyn StatusView>> {
        Ok(Box::new(status::of_run(dir, m, self)?))
    }

    /// Any regular file that is no other kind's: a results CSV (of a match or an SPRT).
    fn owns_file(&self, path: &Path) -> bool {
        !self.sprt && path.is_file()
    }

    fn file_inputs(&self, path: &Path) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("results", path.to_path_buf()),
            ("results record", run_record::path_for(path)),
        ]
    }

    fn status_of_file(&self, path: &Path) -> CliResult<Box<dyn StatusView>> {
        Ok(Box::new(crate::cluster::csv_tail::of_csv(path)?))
    }

    fn live_reader(&'static self, run: &crate::live::LiveRun) -> Box<dyn crate::live::LiveReader> {
        super::live::reader(self, run)
    }

    fn served(&self) -> Option<u8> {
        // The SPRT first: the submit form's default.
        Some(if self.sprt { 0 } else { 1 })
    }

    fn served_outputs(&self, dir: &Path) -> Vec<String> {
        crate::job::files_in(
            dir,
            &[
                ("--results", "results.csv"),
                ("--pgnout", "games.pgn"),
                ("--json", "summary.json"),
            ],
        )
    }

    fn served_primary(&self, dir: &Path, _words: &[String]) -> PathBuf {
        dir.join("results.csv")
    }

    fn served_page(&self) -> ServedPage {
        ServedPage {
            status_lines: true,
            status_page: true,
            resumes: true,
            residuals: true,
            ..ServedPage::default()
        }
    }

    fn watch_role(&self) -> Option<WatchRole> {
        Some(if self.sprt {
            WatchRole::CommitTest
        } else {
            WatchRole::AnchorTest
        })
    }

    fn watch_words(&self, ask: &WatchAsk) -> Vec<String> {
        watch_words(self.sprt, ask)
    }
}

/// The words of a watched branch's commit test (an SPRT of the tip against the base at the
/// engine's bounds) or anchor test (a match of `ask.games` games), both sides the
/// registered engine at a commit, named by its short hash.
fn watch_words(sprt: bool, ask: &WatchAsk) -> Vec<String> {
    let side = |sha: &str| {
        vec![
            "--engine".to_string(),
            format!("engine={}", ask.engine),
            format!("rev={sha}"),
            format!("name={}", &sha[..sha.len().min(10)]),
        ]
    };
    let mut words = side(ask.tip);
    words.extend(side(ask.base));
    if !ask.each.is_empty() {
        words.push("--each".into());
        words.extend(ask.each.iter().cloned());
    }
    if sprt {
        words.extend([
            "--elo0".to_string(),
            ask.bounds[0].to_string(),
            "--elo1".to_string(),
            ask.bounds[1].to_string(),
        ]);
    } else {
        words.extend(["--games".to_string(), ask.games.to_string()]);
    }
    words.extend(ask.extra.iter().cloned());
    words
}

#[cfg(test)]
mod watch_tests {
    use super::*;

    #[test]
    fn a_commit_test_is_an_sprt_of_the_tip_against_its_parent_and_parses() {
        let each = ["tc=8+0.08".to_string()];
        let extra = ["--book".to_string(), "b.epd".to_string()];
        let ask = WatchAsk {
            engine: "eng",
            base: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            tip: "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
            each: &each,
            extra: &extra,
            bounds: [-3.0, 1.0],
            games: 200,
        };
        let w = SPRT.watch_words(&ask).join(" ");
        assert_eq!(
            w,
            "--engine engine=eng rev=bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb name=bbbbbbbbbb \
             --engine engine=eng rev=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa name=aaaaaaaaaa \
             --each tc=8+0.08 --elo0 -3 --elo1 1 --book b.epd"
        );
        let m = MATCH.watch_words(&ask).join(" ");
        assert!(
            m.ends_with("--each tc=8+0.08 --games 200 --book b.epd"),
            "{m}"
        );
        assert_eq!(SPRT.watch_role(), Some(WatchRole::CommitTest));
        assert_eq!(MATCH.watch_role(), Some(WatchRole::AnchorTest));
    }
}
