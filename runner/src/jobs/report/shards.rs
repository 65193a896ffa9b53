//! A report as a cluster run (`--slurm`): its coordinator, which checks everything, builds
//! the variants once and writes the manifest before [`coordinator::run`] takes over, and
//! the play of one shard (`spar shard`): pairs I, I+N, … in stretches, the statistics
//! checkpointed after each ([`super::checkpoint`] says why and in which order).

use std::io::Write;
use std::path::Path;
use std::sync::atomic::Ordering;

use data::results::{parse_results, ResultRow, HEADER};

use super::args::{check_paths, plan, ReportArgs};
use super::checkpoint::Checkpoint;
use super::games::{self, Seats, Stretch};
use super::local::{can_record, run_track_build};
use crate::cli::SlurmArgs;
use crate::cluster::coordinator::{self, Submission};
use crate::cluster::setup;
use crate::cluster::shard::ShardRun;
use crate::cluster::{shard_results, shard_stats};
use crate::error::{CliError, CliResult};
use crate::files::atomic::write_bytes_atomically;
use crate::files::input::read_optional;
use crate::files::kill_point;
use crate::files::match_files::result_row;
use crate::interrupt;
use crate::job::Job;
use crate::play::schedule::{Control, PairOutcome, Stride};
use crate::report::stats::{StatsFile, VariantStats};

/// Pairs a shard plays between two checkpoints, per game played at once: the statistics
/// are taken when no game is in flight, so a stretch ends with its slowest pair.
const STRETCH_PER_WORKER: u64 = 4;

/// The coordinator of `spar report --slurm`: shard I plays pairs I, I+N, …; the merge sums
/// the shards' statistics into --out.
pub(super) fn coordinate(mut args: ReportArgs, job: &dyn Job) -> CliResult {
    if !args.from.is_empty() {
        return Err(CliError::usage(
            "--from reads saved statistics and plays nothing: leave out --slurm (and the cluster options)",
        ));
    }
    let quiet = args.run.quiet;
    let cpus = setup::shard_cpus(&mut args.run, &args.slurm)?;
    check_paths(&args, args.slurm.run_dir.as_ref())?;
    let (mut plan, mut run) = plan(&args)?;
    // The shards run the coordinator's binary: a spar without `track` hands the whole
    // command to the track-enabled build, whose manifest then names that build.
    if !can_record(&run.variants, args.no_build)? {
        return run_track_build(quiet);
    }
    let cluster = setup::prepare(&args.slurm, args.resume)?;
    plan.concurrency = cpus;
    let resume = args.resume;
    args.resume = false;
    let stored = serde_json::to_value(&args).expect("arguments are json");
    let manifest =
        setup::match_manifest(&cluster, "report", stored, resume, &plan, &mut run, quiet)?;
    coordinator::run(&Submission {
        job,
        cluster: &cluster,
        manifest: &manifest,
        quiet,
    })
}

/// Plays shard `shard.index` of a report run: its pairs from the first one its checkpoint
/// does not count, in stretches, each followed by a checkpoint and then its results rows;
/// until its share is played or `RUN_DIR/STOP`.
pub fn run_shard(args: serde_json::Value, shard: &ShardRun) -> CliResult {
    let mut args: ReportArgs = serde_json::from_value(args).map_err(|e| {
        CliError::usage(format!(
            "{}: the report arguments do not read: {e}",
            shard.dir.display()
        ))
    })?;
    args.run.concurrency = Some(shard.concurrency);
    args.run.quiet = true;
    args.slurm = SlurmArgs::default();
    let (plan, mut run) = plan(&args)?;
    if let Some(p) = &shard.manifest.plan {
        let mut mine = plan.clone();
        mine.concurrency = p.concurrency;
        if &mine != p {
            return Err(CliError::usage(format!(
                "{}: the report arguments do not give the manifest's plan (edited by hand?): start a new --run-dir",
                shard.dir.display()
            )));
        }
    }
    shard.use_built(&mut run)?;
    // This is the manifest's binary: a builtin engine that cannot record is refused.
    can_record(&run.variants, true)?;
    let seats = Seats::new(&run.variants);
    let stride = shard.stride();
    let share = stride.count_below(plan.pairs.unwrap_or(0));
    let (dir, i) = (&shard.dir, shard.index);
    let (results, stats_file) = (shard_results(dir, i), shard_stats(dir, i));
    let (mut done, mut counted) = resume(&results, &stats_file, stride, &seats.names())?;

    let abort = interrupt::on_ctrl_c("finishing up");
    shard.watch_stop(abort.clone());
    let stretch = STRETCH_PER_WORKER * shard.concurrency.max(1) as u64;
    while done < share && !abort.load(Ordering::SeqCst) {
        let end = (done + stretch).min(share);
        let names = [&seats.seats[0].name, &seats.seats[1].name];
        let mut rows: Vec<ResultRow> = Vec::new();
        let (stats, _) = games::play(
            &plan,
            &run,
            &seats,
            &Stretch {
                stride,
                first: done,
                end: Some(end),
            },
            &abort,
            || {},
            |pair| {
                rows.extend(pair_rows(pair, names));
                Control::Continue
            },
        )?;
        if rows.len() as u64 != 2 * (end - done) {
            // Interrupted within the stretch: neither its rows nor its statistics count;
            // it is played again.
            break;
        }
        for (c, s) in counted.iter_mut().zip(&stats) {
            c.merge(s).map_err(CliError::failure)?;
        }
        Checkpoint::new(end, rows.clone(), StatsFile::new(counted.clone())).write(&stats_file)?;
        kill_point::record_written();
        append_rows(&results, &rows)?;
        done = end;
    }
    if abort.load(Ordering::SeqCst) && !shard.stopped() && done < share {
        eprintln!(
            "Interrupted: {done} pairs counted; {}",
            ShardRun::how_to_continue(Some(shard))
        );
        return Err(CliError::interrupted());
    }
    Ok(())
}

/// The two results rows of a pair (game 0: the first seat as White).
fn pair_rows(pair: &PairOutcome, names: [&String; 2]) -> [ResultRow; 2] {
    [
        result_row(pair, 0, &pair.games[0], names[0], names[1]),
        result_row(pair, 1, &pair.games[1], names[1], names[0]),
    ]
}

/// Rows as the results file holds them (no header).
fn csv_text(rows: &[ResultRow]) -> Vec<u8> {
    let mut csv = csv::WriterBuilder::new()
        .has_headers(false)
        .terminator(csv::Terminator::Any(b'\n'))
        .from_writer(Vec::with_capacity(160 * rows.len()));
    for r in rows {
        csv.serialize(r).expect("a results row serialises");
    }
    csv.into_inner().expect("an in-memory writer")
}

/// Appends `rows` to the results file, one write per row (each row a record of
/// [`kill_point`]).
fn append_rows(path: &Path, rows: &[ResultRow]) -> CliResult {
    let failed = |e: std::io::Error| CliError::failure(format!("writing {}: {e}", path.display()));
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .map_err(failed)?;
    for r in rows {
        file.write_all(&csv_text(std::slice::from_ref(r)))
            .map_err(failed)?;
        file.flush().map_err(failed)?;
        kill_point::record_written();
    }
    Ok(())
}

/// Where shard play continues: the pairs its checkpoint counts (with their statistics), the
/// results file made to hold exactly their rows. Rows the checkpoint does not count (a
/// torn row, a pair played after it) are cut; the checkpoint's last stretch is appended
/// where the file lacks it; a results file and a checkpoint that disagree otherwise
/// restart the shard's share (both files emptied), said on stderr.
fn resume(
    results: &Path,
    stats_file: &Path,
    stride: Stride,
    names: &[&str],
) -> CliResult<(u64, Vec<VariantStats>)> {
    let empty: Vec<VariantStats> = names
        .iter()
        .map(|n| VariantStats::from_totals(n, None, Some(0)))
        .collect();
    let checkpoint = Checkpoint::read(stats_file)?;
    let text = read_optional(results, "a shard's results", 1 << 30)?.unwrap_or_default();
    let keep = text.rfind('\n').map_or(0, |i| i + 1);
    let rows = if keep == 0 {
        Vec::new()
    } else {
        parse_results(&text[..keep], results)
            .map_err(|e| CliError::failure(format!("shard record: {e}")))?
    };
    // The leading complete pairs of the stride, in order.
    let mut leading = 0u64;
    while let [a, b] = rows
        .get(2 * leading as usize..2 * leading as usize + 2)
        .unwrap_or_default()
    {
        let k = stride.job(leading);
        if a.pair != k || b.pair != k || a.game != 0 || b.game != 1 {
            break;
        }
        leading += 1;
    }
    let (done, stats, target) = match &checkpoint {
        None => (0, empty.clone(), Vec::new()),
        Some(c) => {
            let tail = c.rows.len() as u64 / 2;
            let from = c.pairs.saturating_sub(tail);
            let names_agree = c.stats.variants.len() == empty.len()
                && c.stats
                    .variants
                    .iter()
                    .zip(&empty)
                    .all(|(a, b)| a.name == b.name);
            if leading < from || !names_agree || c.rows.len() % 2 != 0 {
                eprintln!(
                    "spar: {} and {} disagree (a file removed or replaced?): this shard plays its pairs again from the first",
                    results.display(),
                    stats_file.display()
                );
                (0, empty.clone(), Vec::new())
            } else {
                let have = leading.min(c.pairs);
                let mut target: Vec<ResultRow> = rows[..2 * have as usize].to_vec();
                target.extend_from_slice(&c.rows[2 * (have - from) as usize..]);
                (c.pairs, c.stats.variants.clone(), target)
            }
        }
    };
    if text.len() != keep || rows != target || text.is_empty() {
        let mut bytes = format!("{}\n", HEADER.join(",")).into_bytes();
        bytes.extend(csv_text(&target));
        write_bytes_atomically(results, &bytes)
            .map_err(|e| CliError::failure(format!("cannot write {}: {e}", results.display())))?;
    }
    if done == 0 && checkpoint.is_some() {
        let _ = std::fs::remove_file(stats_file);
    }
    Ok((done, stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pair: u64, game: u8) -> ResultRow {
        ResultRow {
            pair,
            game,
            opening: pair * 10,
            seed: pair + 1,
            white: "dev".into(),
            black: "dev".into(),
            result: "1-0".into(),
            termination: "checkmate".into(),
            plies: 40 + pair as u32,
            white_nodes: 100,
            black_nodes: 200,
            duration_ms: 5,
        }
    }

    fn rows(pairs: &[u64]) -> Vec<ResultRow> {
        pairs.iter().flat_map(|&k| [row(k, 0), row(k, 1)]).collect()
    }

    fn file_of(rows: &[ResultRow]) -> Vec<u8> {
        let mut bytes = format!("{}\n", HEADER.join(",")).into_bytes();
        bytes.extend(csv_text(rows));
        bytes
    }

    fn stats(games: u64) -> StatsFile {
        let mut v = VariantStats::from_totals("dev", None, Some(games));
        v.name = "dev".into();
        StatsFile::new(vec![v])
    }

    /// Shard 1 of 3 (pairs 1, 4, 7, …): `results` and the checkpoint (pairs, its rows) as
    /// found; returns the pairs it continues from, its games and the results file after.
    fn resumed(
        results: Option<&[u8]>,
        checkpoint: Option<(u64, &[u64])>,
    ) -> (u64, u64, Vec<u8>, bool) {
        let dir = tempfile::tempdir().unwrap();
        let (r, s) = (
            dir.path().join("results.csv"),
            dir.path().join("stats.json"),
        );
        if let Some(bytes) = results {
            std::fs::write(&r, bytes).unwrap();
        }
        if let Some((pairs, last)) = checkpoint {
            Checkpoint::new(pairs, rows(last), stats(2 * pairs))
                .write(&s)
                .unwrap();
        }
        let (done, counted) = resume(&r, &s, Stride::shard(1, 3), &["dev"]).unwrap();
        (
            done,
            counted[0].games,
            std::fs::read(&r).unwrap(),
            s.exists(),
        )
    }

    #[test]
    fn a_new_shard_starts_with_an_empty_record() {
        let (done, games, file, _) = resumed(None, None);
        assert_eq!((done, games), (0, 0));
        assert_eq!(file, file_of(&[]));
    }

    #[test]
    fn the_rows_of_a_checkpoint_that_were_not_appended_are_appended() {
        // Killed after the checkpoint of pairs 1 and 4 (stretch: pair 4), before its rows.
        let (done, games, file, _) = resumed(Some(&file_of(&rows(&[1]))), Some((2, &[4])));
        assert_eq!((done, games), (2, 4));
        assert_eq!(file, file_of(&rows(&[1, 4])));
        // …or after the first of them.
        let mut some = rows(&[1]);
        some.push(row(4, 0));
        let (done, _, file, _) = resumed(Some(&file_of(&some)), Some((2, &[4])));
        assert_eq!(done, 2);
        assert_eq!(file, file_of(&rows(&[1, 4])));
    }

    #[test]
    fn rows_the_checkpoint_does_not_count_are_cut_and_played_again() {
        // A row beyond the checkpoint and a torn line: cut, so pair 7 is played again.
        let mut bytes = file_of(&rows(&[1, 4, 7]));
        bytes.extend_from_slice(b"10,0,100,11,dev");
        let (done, games, file, _) = resumed(Some(&bytes), Some((2, &[1, 4])));
        assert_eq!((done, games), (2, 4));
        assert_eq!(file, file_of(&rows(&[1, 4])));
        // Nothing counted yet: every row goes.
        let (done, _, file, _) = resumed(Some(&file_of(&rows(&[1]))), None);
        assert_eq!(done, 0);
        assert_eq!(file, file_of(&[]));
    }

    #[test]
    fn a_record_and_a_checkpoint_that_disagree_restart_the_share() {
        // The checkpoint counts pairs 1, 4 and 7 but the results file lost pair 1: neither
        // can be trusted, the share starts again from nothing.
        let (done, games, file, kept) = resumed(Some(&file_of(&rows(&[4]))), Some((3, &[7])));
        assert_eq!((done, games), (0, 0));
        assert_eq!(file, file_of(&[]));
        assert!(!kept, "the checkpoint is removed");
        // A row of a pair that is not the shard's is cut; the checkpoint's own rows stay.
        let (done, _, file, _) = resumed(Some(&file_of(&rows(&[2]))), Some((1, &[1])));
        assert_eq!(done, 1);
        assert_eq!(file, file_of(&rows(&[1])));
    }
}
