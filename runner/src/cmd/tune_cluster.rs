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
use std::path::Path;

use engine::rng::pair_seed;

use super::tune::{check_engine, setup, tuned_values, verdict_line, verify_argv, Setup, TuneArgs};
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::manifest::{files_in_words, Manifest};
use crate::cluster::merge::Merged;
use crate::cluster::records::{PairRecord, Records};
use crate::cluster::shard::ShardRun;
use crate::cluster::status::Snapshot;
use crate::engines::variant::{Source, Variant};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_atomically;
use crate::files::match_files::{MatchFiles, OpenFiles};
use crate::files::run_record;
use crate::interrupt;
use crate::play::game::PlayedGame;
use crate::play::schedule::PairOutcome;
use crate::progress::Progress;
use crate::stdout;
use crate::tune::crash::Crashes;
use crate::tune::driver::{self, Sink};
use crate::tune::schedule::Tuner;
use crate::tune::selfplay::SelfPlay;
use crate::tune::spsa::Perturbation;
use crate::tune::status::TuneView;
use crate::tune::trajectory::{self, Row};

/// The names of a tune's two sides in its records.
pub const SIDES: [&str; 2] = ["dev", "base"];

/// Dev's wins minus losses in a recorded pair.
fn score_of(p: &PairRecord) -> i64 {
    p.games
        .iter()
        .map(|g| match g.first_result() {
            sprt::PlayerResult::Win => 1,
            sprt::PlayerResult::Draw => 0,
            sprt::PlayerResult::Loss => -1,
        })
        .sum()
}

/// The tune's arguments as the manifest holds them.
fn stored_args(dir: &Path, m: &Manifest) -> CliResult<TuneArgs> {
    serde_json::from_value(m.args.clone()).map_err(|e| {
        CliError::usage(format!(
            "{}: the tune arguments do not read: {e}",
            Manifest::path(dir).display()
        ))
    })
}

/// The engine of a tune as the two sides of its records.
fn sides(variant: &Variant) -> [Variant; 2] {
    let mut dev = variant.clone();
    dev.name = SIDES[0].to_string();
    let mut base = variant.clone();
    base.name = SIDES[1].to_string();
    [dev, base]
}

/// The coordinator of `spar tune --slurm`.
pub fn coordinate(mut args: TuneArgs) -> CliResult {
    let quiet = args.run.quiet;
    let cpus = coordinator::shard_cpus(&mut args.run, &args.slurm)?;
    super::tune::check_paths(&args)?;
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
    super::tune::check_verification(&args, &s)?;
    let cluster = coordinator::prepare(&args.slurm, resume)?;
    s.plan.concurrency = cpus;
    args.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let manifest = if resume {
        coordinator::reattach(&cluster, "tune", &stored)?
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
        let mut m = coordinator::plan_manifest(
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
        coordinator::pin_tables(&mut m, &cluster.dir, &s.plan.adjudication, &s.run.variants)?;
        m
    };
    coordinator::run(&Submission {
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

/// The verification SPRT of a cluster tune: `spar sprt --slurm --run-dir RUN_DIR/verify`
/// with the tune's shards and CPUs, reattached when it was started before; its verdict goes
/// into the tune's run record (with --csv) and status.
fn verify_cluster(
    args: &TuneArgs,
    s: &Setup,
    dir: &Path,
    finals: &[(String, i64)],
    cpus: usize,
) -> CliResult {
    let vdir = verify_dir(dir);
    let json = verify_json(dir);
    let mut argv = verify_argv(args, s, finals);
    argv.extend([
        "--slurm".to_string(),
        "--run-dir".to_string(),
        vdir.to_string_lossy().into_owned(),
        "--shards".to_string(),
        args.slurm
            .shards
            .unwrap_or(crate::cli::SlurmArgs::DEFAULT_SHARDS)
            .to_string(),
        "--cpus-per-shard".to_string(),
        cpus.to_string(),
        "--json".to_string(),
        json.to_string_lossy().into_owned(),
    ]);
    for a in &args.slurm.sbatch_args {
        argv.push(format!("--sbatch-arg={a}"));
    }
    if Manifest::path(&vdir).exists() {
        argv.push("--resume".into());
    }
    if !args.run.quiet {
        eprintln!(
            "\nVerifying: SPRT [{}, {}] of the tuned values against the start values in {} (--no-verify skips it)",
            args.verify.verify_elo0.unwrap_or(0.0),
            args.verify.verify_elo1.unwrap_or(5.0),
            vdir.display()
        );
    }
    stdout::print("\n")?;
    super::tune::run_sprt(&argv)?;
    if let Some(v) = super::tune::read_verdict(&json) {
        stdout::print(&format!("{}\n", verdict_line(&v)))?;
        if let Some(csv) = &args.csv {
            let mut extra = serde_json::Map::new();
            extra.insert("verify".into(), v);
            run_record::write("--csv", csv, "tune", &s.fields, extra)?;
        }
    }
    Ok(())
}

/// The JSON summary of a cluster tune's verification SPRT (beside its run directory).
pub fn verify_json(dir: &Path) -> std::path::PathBuf {
    dir.join("verify.json")
}

/// Where a cluster tune's verification SPRT runs.
pub fn verify_dir(dir: &Path) -> std::path::PathBuf {
    dir.join("verify")
}

/// The trajectory of a cluster tune from its shards' records: the tuner after every
/// complete iteration, and the rows (the start row first).
fn replay(dir: &Path, m: &Manifest, s: &Setup) -> CliResult<(Tuner, Vec<Row>)> {
    let mut records = Records::new(dir, m)?;
    records.refresh()?;
    let mut tuner = s.tuner();
    let mut rows = vec![tuner.start_row()];
    for (&k, p) in records.pairs().0 {
        tuner.record(k, score_of(p));
        rows.extend(tuner.advance());
    }
    Ok((tuner, rows))
}

/// `spar merge` (and the coordinator's epilogue) of a tune: the trajectory CSV and its run
/// record, `--out`, and the final values.
pub fn merge(dir: &Path, m: &Manifest) -> CliResult<Merged> {
    let args = stored_args(dir, m)?;
    let s = setup(&args)?;
    let mut records = Records::new(dir, m)?;
    records.refresh()?;
    let (pairs, conflicts) = records.pairs();
    let conflicts = conflicts.to_vec();
    let done_pairs = pairs.len() as u64;
    let (tuner, rows) = replay(dir, m, &s)?;
    if let Some(csv) = &args.csv {
        let mut text = trajectory::header(&s.names) + "\n";
        for row in &rows {
            text.push_str(&trajectory::format_row(row));
            text.push('\n');
        }
        write_atomically(csv, &text)
            .map_err(|e| CliError::failure(format!("cannot write --csv {}: {e}", csv.display())))?;
        let mut extra = serde_json::Map::new();
        extra.insert("run_dir".into(), dir.to_string_lossy().into_owned().into());
        // A verdict recorded earlier stays.
        if let Some(v) = run_record::read("--csv", csv)
            .ok()
            .flatten()
            .and_then(|r| r.object.get("verify").cloned())
        {
            extra.insert("verify".into(), v);
        }
        run_record::write("--csv", csv, "tune", &s.fields, extra)?;
    }
    let (values, finals) = tuned_values(&s, &rows);
    let head = format!(
        "SPSA: {}/{} iterations, {} games on {} shards ({done_pairs} pairs recorded)",
        tuner.done(),
        s.gains.iterations,
        tuner.games(),
        m.shards
    );
    let mut lines = vec![head];
    lines.extend(values.lines().map(str::to_string));
    if let Some(out) = &args.out {
        write_atomically(out, &crate::tune::report::openbench_lines(&finals))
            .map_err(|e| CliError::failure(format!("cannot write --out {}: {e}", out.display())))?;
        lines.push(String::new());
        lines.push(format!("Wrote {}", out.display()));
    }
    if !conflicts.is_empty() {
        lines.push(format!(
            "{} pairs were recorded twice with different games (the lower shard's record is counted): a time-limited tune is not reproducible",
            conflicts.len()
        ));
    }
    Ok(Merged {
        lines,
        done: done_pairs,
        complete: tuner.done() == s.gains.iterations,
        conflicts,
    })
}

/// What `spar status RUN_DIR` shows of a cluster tune: its trajectory so far (from the
/// shards' records, by the schedule), games/s and ETA from the run's snapshot, the shards'
/// lines and the verification's verdict.
pub fn view(dir: &Path, m: &Manifest, snapshot: &Snapshot) -> CliResult<TuneView> {
    let args = stored_args(dir, m)?;
    let s = setup(&args)?;
    let (_, rows) = replay(dir, m, &s)?;
    let games = 2 * snapshot.pairs.len() as u64;
    let games_per_second = snapshot
        .elapsed
        .filter(|&e| e > 0.0 && games > 0)
        .map(|e| games as f64 / e);
    let mut live = !snapshot.finished();
    let mut extra_lines = vec![format!(
        "{} shards; --delay {}; pairs recorded {}{}",
        m.shards,
        s.schedule.delay,
        snapshot.pairs.len(),
        snapshot.total.map_or(String::new(), |t| format!(" of {t}"))
    )];
    extra_lines.extend(
        snapshot
            .lines()
            .into_iter()
            .filter(|l| l.trim_start().starts_with("shard ") || l.contains("conflict")),
    );
    let vdir = verify_dir(dir);
    if Manifest::path(&vdir).exists() {
        match super::tune::read_verdict(&verify_json(dir)) {
            Some(v) => extra_lines.push(verdict_line(&v)),
            None => {
                // The page stays live while the verification plays.
                let verification = crate::cluster::status::of_run(&vdir);
                live |= verification.as_ref().is_ok_and(|v| !v.finished());
                extra_lines.extend(crate::tune::status::verification_so_far(
                    verification,
                    "its coordinator runs it, or --resume continues it",
                    &vdir,
                ));
            }
        }
    }
    Ok(TuneView {
        title: format!(
            "Run {}: spar tune, {} parameters, {} shards",
            dir.display(),
            s.params.len(),
            m.shards
        ),
        params: s.params,
        rows,
        iterations: s.gains.iterations,
        pairs_per_iteration: s.schedule.pairs_per_iteration,
        games_per_second,
        eta_seconds: if live { snapshot.eta() } else { None },
        extra_lines,
        live,
    })
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
    let mut records = Records::new(dir, &shard.manifest)?;
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
