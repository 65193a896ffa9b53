//! `spar tune --slurm`: a tune as the shards of one Slurm job array, on the same manifest /
//! shard / STOP / `--resume` / `merge` / `status` contract as a match (runner/src/cluster).
//!
//! A tune's pair `k` is a game pair between *dev* and *base* recorded exactly as a match
//! records one (both rows in the shard's `results.csv`), so the records, the coordinator's
//! watch, resubmission and stop, and the merge's deduplication are the match's. What is the
//! tune's own: before playing a pair, a shard waits until the θ its iteration plays from is
//! known, reading the other shards' records ([`crate::tune::schedule`]); the merge replays
//! the recorded pairs through the same schedule into the trajectory CSV, which is byte for
//! byte what a local run with the same options writes.

use std::collections::BTreeMap;

use engine::rng::pair_seed;

use super::args::TuneArgs;
use super::merge::{replay, score_of, SIDES};
use super::setup::{check_engine, check_paths, setup, tuned_values};
use super::verify::{check_verification, verify_cluster};
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::manifest::files_in_words;
use crate::cluster::records::{RecordShape, Records};
use crate::cluster::setup;
use crate::cluster::shard::ShardRun;
use crate::engines::variant::{Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::match_files::{MatchFiles, OpenFiles};
use crate::interrupt;
use crate::job::Job;
use crate::play::game::PlayedGame;
use crate::play::schedule::PairOutcome;
use crate::progress::Progress;
use crate::tune::crash::Crashes;
use crate::tune::driver::{self, Sink};
use crate::tune::schedule::Tuner;
use crate::tune::selfplay::SelfPlay;
use crate::tune::spsa::Perturbation;
use crate::tune::trajectory::Row;

/// The engine of a tune as the two sides of its records.
fn sides(variant: &Variant) -> [Variant; 2] {
    let mut dev = variant.clone();
    dev.name = SIDES[0].to_string();
    let mut base = variant.clone();
    base.name = SIDES[1].to_string();
    [dev, base]
}

/// The coordinator of `spar tune --slurm`.
pub(super) fn coordinate(mut args: TuneArgs, job: &dyn Job) -> CliResult {
    let quiet = args.run.quiet;
    let cpus = setup::shard_cpus(&mut args.run, &args.slurm)?;
    check_paths(&args)?;
    let resume = args.resume;
    if !resume {
        // The merge writes the trajectory whole; a local run would append to it.
        if let Some(c) = args
            .csv
            .as_ref()
            .filter(|c| std::fs::metadata(c).is_ok_and(|m| m.len() > 0))
        {
            return Err(CliError::usage(format!(
                "--csv {} already holds a trajectory: a --slurm run writes its merged file whole, so give a new file",
                c.display()
            )));
        }
    }
    // Every option, the verification's too, before the run directory is touched.
    let mut s = setup(&args)?;
    check_verification(&args, &s)?;
    let cluster = setup::prepare(&args.slurm, resume)?;
    s.plan.concurrency = cpus;
    args.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let manifest = if resume {
        setup::reattach(&cluster, "tune", &stored)?
    } else {
        let built = matches!(s.run.variants[0].source, Source::Build { .. });
        s.run.build_variants(quiet)?;
        check_engine(&s)?;
        let cwd = std::env::current_dir().unwrap_or_default();
        let mut files = files_in_words("engine", &s.plan.engines[0].words, &cwd);
        if let Some(p) = &args.params {
            files.push(("--params".to_string(), cwd.join(p)));
        }
        let mut plan = s.plan.clone();
        let one = plan.engines[0].clone();
        plan.engines = SIDES
            .iter()
            .map(|n| {
                let mut e = one.clone();
                e.name = n.to_string();
                e
            })
            .collect();
        plan.pairs = Some(s.schedule.total_pairs());
        let variants = sides(&s.run.variants[0]);
        let mut m = setup::plan_manifest(
            &cluster,
            "tune",
            stored,
            Some(plan),
            &variants[..1],
            &[built],
            args.book.book.as_deref(),
            &files,
            Some(s.schedule.total_pairs()),
        )?;
        setup::pin_tables(&mut m, &cluster.dir, &s.plan.adjudication, &s.run.variants)?;
        m
    };
    coordinator::run(&Submission {
        job,
        cluster: &cluster,
        manifest: &manifest,
        quiet,
    })?;
    if args.verify.no_verify {
        return Ok(());
    }
    // The tune is complete (the coordinator fails otherwise): verify its values, as a
    // cluster SPRT of its own in RUN_DIR/verify.
    let (_, rows) = replay(&cluster.dir, &manifest, &s)?;
    let (_, finals) = tuned_values(&s, &rows);
    verify_cluster(&args, &s, &cluster.dir, &finals, cpus)
}

/// A shard's sink: its pairs written to its own results file in its order, the other
/// shards' pairs read from their records.
struct ShardSink {
    files: MatchFiles,
    variants: [Variant; 2],
    book: crate::files::book::OpeningBook,
    seed: u64,
    order: Vec<u64>,
    written: usize,
    pending: BTreeMap<u64, PairOutcome>,
    records: Records,
    crashes: Crashes,
    progress: Progress,
}

impl Sink for ShardSink {
    fn pair(&mut self, pair: u64, games: &[PlayedGame; 2], engines: &Perturbation) -> CliResult {
        self.crashes.check(pair, games, engines, &self.progress)?;
        self.pending.insert(
            pair,
            PairOutcome {
                pair,
                opening: self.book.opening(pair).index,
                seed: pair_seed(self.seed, pair),
                games: games.clone(),
            },
        );
        // The results file holds the shard's pairs in its order: a plain prefix to resume.
        while let Some(next) = self.order.get(self.written) {
            let Some(p) = self.pending.remove(next) else {
                break;
            };
            self.files.write_pair(&p, &self.variants)?;
            self.written += 1;
        }
        Ok(())
    }

    fn rows(&mut self, _rows: &[Row], _tuner: &Tuner) -> CliResult {
        Ok(())
    }

    fn poll(&mut self, from: u64) -> CliResult<Vec<(u64, i64)>> {
        self.records.refresh()?;
        Ok(self
            .records
            .pairs()
            .0
            .range(from..)
            .map(|(&k, p)| (k, score_of(p)))
            .collect())
    }
}

/// Plays shard `shard.index` of a cluster tune: its pairs I, I+N, … in order, each once the
/// θ it plays from is known from every shard's records.
pub fn run_shard(args: serde_json::Value, shard: &ShardRun) -> CliResult {
    let dir = &shard.dir;
    let mut args: TuneArgs = serde_json::from_value(args).map_err(|e| {
        CliError::usage(format!(
            "{}: the tune arguments do not read: {e}",
            dir.display()
        ))
    })?;
    args.run.concurrency = Some(shard.concurrency);
    args.run.quiet = true;
    let mut s = setup(&args)?;
    if let Some(p) = &shard.manifest.plan {
        if p.engines.first().map(|e| &e.words) != Some(&s.plan.engines[0].words)
            || p.seed != s.plan.seed
            || p.pairs != Some(s.schedule.total_pairs())
        {
            return Err(CliError::usage(format!(
                "{}: the tune arguments do not give the manifest's plan (edited by hand?): start a new --run-dir",
                dir.display()
            )));
        }
    }
    shard.use_built(&mut s.run)?;
    let variant = s.run.variants[0].clone();
    let variants = sides(&variant);
    let stride = shard.stride();
    let results = crate::cluster::shard_results(dir, shard.index);
    let files = MatchFiles::open(&OpenFiles {
        pgn: None,
        results: Some(&results),
        dump: None,
        resume: true,
        names: SIDES,
        pgn_start: 0,
        quiet: true,
        stride,
    })
    .map_err(CliError::usage)?;
    let own_done = files.resumed_pairs().len() as u64;
    let total = s.schedule.total_pairs();
    let order: Vec<u64> = (own_done..stride.count_below(total))
        .map(|j| stride.job(j))
        .collect();
    let mut records = Records::new(dir, &shard.manifest, RecordShape::Pairs);
    records.refresh()?;
    let mut tuner = s.tuner();
    for (&k, p) in records.pairs().0 {
        tuner.record(k, score_of(p));
    }
    tuner.advance();
    let abort = interrupt::on_ctrl_c("finishing up");
    shard.watch_stop(abort.clone());
    let selfplay = SelfPlay::new(
        shard.concurrency,
        variant,
        s.plan.adjudication.clone(),
        s.run.book.clone(),
        s.run.stall_timeout,
    )?;
    let crashes = Crashes::new(
        Some(crate::cluster::shard_dir(dir, shard.index).join("crashes.jsonl")),
        &s.plan,
        &s.names,
    );
    let mut sink = ShardSink {
        files,
        variants,
        book: s.run.book.clone(),
        seed: s.plan.seed,
        order: order.clone(),
        written: 0,
        pending: BTreeMap::new(),
        records,
        crashes,
        progress: Progress::new(true, "pairs", None, 0),
    };
    let (_, failure) = driver::run(&selfplay, tuner, &s.names, &order, &mut sink, &abort);
    if let Some(e) = failure {
        return Err(e);
    }
    if abort.load(std::sync::atomic::Ordering::SeqCst) && !shard.stopped() {
        return Err(CliError::interrupted());
    }
    Ok(())
}
