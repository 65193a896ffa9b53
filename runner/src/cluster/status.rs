//! `spar status RUN_DIR | RESULTS.csv`: where a run stands, at any time (also while shards
//! run and after the coordinator died): games, W-L-D, Elo, the LLR and its bounds, an ETA,
//! and one line per shard (pairs done, age of its last record, flagged when stalled or
//! failed). The same picture for a local run's results CSV.

use std::path::Path;
use std::time::{Duration, SystemTime};

use sprt::{format, Decision, Sample, Sprt};

use super::coordinator::JobsFile;
use super::manifest::Manifest;
use super::records::{NotCounted, Records, Uncounted};
use super::slurm;
use crate::error::CliResult;
use crate::job::{Job, Unit};
use crate::play::ordered::Stride;
use crate::play::tally::{GameSummary, Tally};
use crate::summary;

/// One shard's line.
#[derive(Clone, Debug)]
pub struct ShardLine {
    /// Its index.
    pub index: u64,
    /// Pairs (datagen: games) done.
    pub done: u64,
    /// Its share of a fixed-size run.
    pub share: Option<u64>,
    /// Seconds since its last record.
    pub age: Option<f64>,
    /// Its Slurm state (`RUNNING`, `PENDING`), when the queue knows it.
    pub state: Option<String>,
    /// No record for much longer than its pairs take.
    pub stalled: bool,
    /// Its failure message.
    pub failed: Option<String>,
    /// The pair it paused before, at an SPRT's horizon (ahead of the count): not stalled.
    pub paused: Option<u64>,
}

/// Everything `status` shows.
pub struct Snapshot {
    /// What the run is (`spar sprt dev vs base`).
    pub title: String,
    /// The pairs counted, in pair order (matches), for the totals and the charts: every
    /// complete pair of a match; an SPRT's in pair order up to its decision, as a local run
    /// counts them.
    pub pairs: Vec<[GameSummary; 2]>,
    /// Recorded pairs that are not counted (an SPRT's after a gap or its decision).
    pub uncounted: Option<Uncounted>,
    /// Datagen: games done.
    pub games_done: Option<u64>,
    /// Pairs (datagen: games) in all, if fixed.
    pub total: Option<u64>,
    /// The SPRT.
    pub sprt: Option<Sprt>,
    /// Seconds the run has been going.
    pub elapsed: Option<f64>,
    /// Per shard (empty for a local CSV).
    pub shards: Vec<ShardLine>,
    /// Pairs recorded twice with different games.
    pub conflicts: usize,
    /// Whether a spar plays it now (a local CSV: whether one holds its lock); `None` where
    /// unknown (a cluster run, whose shards the queue runs). A run known to be stopped
    /// shows the play it has left instead of an ETA.
    pub running: Option<bool>,
}

impl Snapshot {
    /// The totals.
    pub fn tally(&self) -> Tally {
        let mut t = Tally::default();
        for p in &self.pairs {
            t.add_pair(*p);
        }
        t
    }

    /// The SPRT's decision so far, with its totals `tally` ([`Snapshot::tally`]'s, or those
    /// a reader keeps as it counts the pairs).
    pub fn decision_of(&self, tally: &Tally) -> Option<Decision> {
        self.sprt.as_ref().and_then(|s| {
            s.status(&summary::sample(tally, s))
                .ok()
                .map(|st| st.decision)
        })
    }

    /// Whether the run is over (all played, or decided).
    pub fn finished(&self) -> bool {
        self.finished_of(&self.tally())
    }

    /// [`Snapshot::finished`] with the totals given.
    pub fn finished_of(&self, tally: &Tally) -> bool {
        if let Some(g) = self.games_done {
            return self.total.is_some_and(|t| g >= t);
        }
        self.total.is_some_and(|t| self.pairs.len() as u64 >= t)
            || self
                .decision_of(tally)
                .is_some_and(|d| d != Decision::Continue)
    }

    /// The text report.
    pub fn lines(&self) -> Vec<String> {
        self.lines_of(&self.tally())
    }

    /// [`Snapshot::lines`] with the totals given (computed once for all the lines).
    pub fn lines_of(&self, tally: &Tally) -> Vec<String> {
        let mut lines = vec![self.title.clone()];
        if let Some(g) = self.games_done {
            let total = self.total.map_or(String::new(), |t| format!(" of {t}"));
            lines.push(format!("Games: {g}{total}"));
        } else {
            let g = &tally.games;
            let total = self
                .total
                .map_or(" (until the SPRT decides)".to_string(), |t| {
                    format!(" of {}", 2 * t)
                });
            lines.push(format!(
                "Games: {}{total}, {} pairs; W-L-D {}-{}-{}",
                g.games(),
                tally.pairs.pairs(),
                g.wins,
                g.losses,
                g.draws
            ));
            let sample = match &self.sprt {
                Some(s) => summary::sample(tally, s),
                None => Sample::Pentanomial(tally.pairs),
            };
            if g.games() > 0 {
                let e = sample.estimate();
                // Say which counts the error bar comes from: the cutechess-style line of a
                // match summary uses games (trinomial), so the two can differ.
                let counts = match sample {
                    Sample::Trinomial(_) => "from games",
                    Sample::Pentanomial(_) => "from pairs",
                };
                // Without decisive games (or with one pair) there is no spread to
                // measure: say so instead of printing NaN.
                let nelo = if e.nelo.is_nan() || e.nelo_error.is_nan() {
                    "n/a".to_string()
                } else {
                    format!(
                        "{} ± {}",
                        two_decimals(e.nelo),
                        format::number(e.nelo_error, 2)
                    )
                };
                let los = if e.los.is_nan() {
                    "n/a".to_string()
                } else {
                    format!("{:.1} %", 100.0 * e.los)
                };
                lines.push(format!(
                    "Elo ({counts}): {} ± {}, nElo: {nelo}, LOS {los}",
                    two_decimals(e.elo),
                    format::number(e.elo_error, 2),
                ));
                lines.push(format::fastchess_ptnml(&tally.pairs));
            }
            if let Some(s) = &self.sprt {
                if let Ok(st) = s.status(&sample) {
                    let verdict = match st.decision {
                        Decision::H1 => " - H1 accepted",
                        Decision::H0 => " - H0 accepted",
                        Decision::Continue => "",
                    };
                    lines.push(format!(
                        "LLR: {:.2} ({:.1} %) ({:.2}, {:.2}) [{:.2}, {:.2}]{verdict}",
                        st.llr,
                        100.0 * s.fraction(st.llr),
                        st.lower_bound,
                        st.upper_bound,
                        s.elo0(),
                        s.elo1()
                    ));
                }
            }
        }
        if let Some(u) = &self.uncounted {
            let state = match u.why {
                NotCounted::Waiting { shard, .. } => self
                    .shards
                    .iter()
                    .find(|s| s.index == shard)
                    .and_then(|s| s.state.as_deref()),
                NotCounted::Decided { .. } => None,
            };
            lines.push(u.describe(state));
        }
        if let Some(eta) = self.eta_of(tally) {
            if self.running == Some(false) {
                lines.push(format!(
                    "Not running: about {} of play left at its rate so far",
                    human(eta)
                ));
            } else {
                lines.push(format!("ETA: {}", human(eta)));
            }
        } else if self.finished_of(tally) {
            lines.push("Finished".to_string());
        }
        if self.conflicts > 0 {
            lines.push(format!(
                "Conflicts: {} pairs recorded twice with different games (spar merge lists them)",
                self.conflicts
            ));
        }
        for s in &self.shards {
            lines.push(shard_text(s, self.games_done.is_some()));
        }
        lines
    }

    /// Seconds to the end at the rate so far (fixed size: the rest; SPRT: the forecast).
    pub fn eta(&self) -> Option<f64> {
        self.eta_of(&self.tally())
    }

    /// [`Snapshot::eta`] with the totals given.
    pub fn eta_of(&self, tally: &Tally) -> Option<f64> {
        if self.finished_of(tally) {
            return None;
        }
        let elapsed = self.elapsed?;
        let (done, rest) = if let Some(g) = self.games_done {
            (g as f64, self.total? as f64 - g as f64)
        } else {
            let games = 2.0 * self.pairs.len() as f64;
            let rest = match (self.total, &self.sprt) {
                (Some(t), _) => 2.0 * t as f64 - games,
                (None, Some(s)) => s.forecast(&summary::sample(tally, s)).ok()?.expected_games,
                _ => return None,
            };
            (games, rest)
        };
        (done > 0.0 && rest.is_finite()).then(|| rest.max(0.0) * elapsed / done)
    }
}

/// `x` with two decimals, as [`format::number`], but never `-0.00` (an estimate that
/// rounds to zero reads `0.00`).
fn two_decimals(x: f64) -> String {
    let text = format::number(x, 2);
    if text == "-0.00" {
        "0.00".to_string()
    } else {
        text
    }
}

fn shard_text(s: &ShardLine, games: bool) -> String {
    let unit = if games { "games" } else { "pairs" };
    let done = match s.share {
        Some(t) => format!("{}/{t} {unit}", s.done),
        None => format!("{} {unit}", s.done),
    };
    let age = s.age.map_or("no record yet".to_string(), |a| {
        format!("last record {} ago", human(a))
    });
    let mut line = format!("shard {:>3}: {done}, {age}", s.index);
    if let Some(st) = &s.state {
        line.push_str(&format!(", {st}"));
    }
    if let Some(k) = s.paused {
        line.push_str(&format!(", {}", paused_text(k)));
    }
    if s.stalled {
        line.push_str(", STALLED");
    }
    if let Some(f) = &s.failed {
        line.push_str(&format!(", FAILED: {f}"));
    }
    line
}

/// What a shard paused at the horizon before pair `k` is (`status`, its page).
pub fn paused_text(k: u64) -> String {
    format!("paused at pair {k} (ahead of the count)")
}

/// `1h02m`, `4m05s`, `12s`.
pub fn human(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

fn age(t: SystemTime) -> f64 {
    SystemTime::now()
        .duration_since(t)
        .unwrap_or(Duration::ZERO)
        .as_secs_f64()
}

/// A shard counts as stalled when it has had no record for this long…
const STALL_MIN: f64 = 120.0;
/// …and for this many times its mean time per record.
const STALL_FACTOR: f64 = 5.0;

/// The snapshot of a cluster run.
pub fn of_run(dir: &Path, m: &Manifest, job: &dyn Job) -> CliResult<Snapshot> {
    let mut records = Records::new(dir, m, job.records(m)?);
    of_records(dir, m, job, &mut records)
}

/// The snapshot of a cluster run whose records, `records`, a reader keeps: they are
/// refreshed (the bytes appended since their last refresh) and read.
pub fn of_records(
    dir: &Path,
    m: &Manifest,
    job: &dyn Job,
    records: &mut Records,
) -> CliResult<Snapshot> {
    records.refresh()?;
    let elapsed = (super::manifest::now_secs().saturating_sub(m.created)) as f64;
    let jobs = JobsFile::read(dir);
    let live = if slurm::check_tools().is_ok() && !jobs.jobs.is_empty() {
        slurm::live_tasks(&jobs.jobs).unwrap_or_default()
    } else {
        Default::default()
    };
    let games = job.unit() == Unit::Games;
    let mut shards = Vec::new();
    for (i, r) in records.shards.iter().enumerate() {
        let share = m
            .total
            .map(|t| Stride::shard(i as u64, m.shards).count_below(t));
        let complete = share.is_some_and(|s| r.done >= s);
        let a = r.modified.map(age);
        let per_record = if r.done > 0 {
            elapsed / r.done as f64
        } else {
            elapsed
        };
        let quiet_for = a.unwrap_or(elapsed);
        let paused = r
            .failed
            .is_none()
            .then(|| super::horizon::read_paused(dir, i as u64))
            .flatten();
        shards.push(ShardLine {
            index: i as u64,
            done: r.done,
            share,
            age: a,
            state: live.get(&(i as u64)).cloned(),
            stalled: !complete
                && r.failed.is_none()
                && paused.is_none()
                && quiet_for > STALL_MIN
                && quiet_for > STALL_FACTOR * per_record,
            failed: r.failed.as_ref().map(|f| f.1.clone()),
            paused,
        });
    }
    let conflicts = records.pairs().1.len();
    let names = match &m.plan {
        Some(p) if p.engines.len() == 2 => {
            Some([p.engines[0].name.clone(), p.engines[1].name.clone()])
        }
        _ => None,
    };
    let sprt = m
        .plan
        .as_ref()
        .and_then(|p| p.sprt.as_ref())
        .map(|s| s.sprt())
        .transpose()?;
    let title = match &names {
        None => format!(
            "Run {}: spar {}, {} shards",
            dir.display(),
            m.command,
            m.shards
        ),
        Some(names) => format!(
            "Run {}: spar {} {} vs {}, {} shards",
            dir.display(),
            m.command,
            names[0],
            names[1],
            m.shards
        ),
    };
    Ok(Snapshot {
        title,
        pairs: records.counted().map(|p| p.games).collect(),
        uncounted: records.uncounted(),
        games_done: games.then(|| records.games()),
        total: m.total,
        sprt,
        elapsed: Some(elapsed),
        shards,
        conflicts,
        running: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::play::game::Termination;
    use engine::types::GameResult;

    #[test]
    fn durations_read_as_people_say_them() {
        assert_eq!(human(12.4), "12s");
        assert_eq!(human(245.0), "4m05s");
        assert_eq!(human(3720.0), "1h02m");
    }

    fn game(first_is_white: bool, outcome: GameResult) -> GameSummary {
        GameSummary {
            first_is_white,
            outcome,
            termination: Termination::Checkmate,
        }
    }

    fn local(pairs: Vec<[GameSummary; 2]>, running: Option<bool>) -> Snapshot {
        Snapshot {
            title: "Results r.csv: a vs b".into(),
            pairs,
            uncounted: None,
            games_done: None,
            total: Some(10),
            sprt: None,
            elapsed: Some(40.0),
            shards: Vec::new(),
            conflicts: 0,
            running,
        }
    }

    #[test]
    fn a_stopped_run_shows_the_play_it_has_left_not_an_eta() {
        let pair = [
            game(true, GameResult::WhiteWins),
            game(false, GameResult::Draw),
        ];
        let pairs = vec![pair, pair];
        // 2 of 10 pairs in 40 s: 8 pairs, 160 s, to go.
        let live = local(pairs.clone(), Some(true)).lines();
        assert!(live.contains(&"ETA: 2m40s".to_string()), "{live:?}");
        let unknown = local(pairs.clone(), None).lines();
        assert!(unknown.contains(&"ETA: 2m40s".to_string()), "{unknown:?}");
        let stopped = local(pairs, Some(false)).lines();
        assert!(!stopped.iter().any(|l| l.contains("ETA")), "{stopped:?}");
        assert!(
            stopped.contains(&"Not running: about 2m40s of play left at its rate so far".into()),
            "{stopped:?}"
        );
    }

    #[test]
    fn no_spread_to_measure_reads_n_a_not_nan() {
        let draws = [game(true, GameResult::Draw), game(false, GameResult::Draw)];
        let lines = local(vec![draws], Some(true)).lines();
        let elo = lines
            .iter()
            .find(|l| l.starts_with("Elo"))
            .expect("an Elo line");
        assert_eq!(elo, "Elo (from pairs): 0.00 ± 0.00, nElo: n/a, LOS n/a");
        let text = lines.join("\n");
        assert!(!text.to_lowercase().contains("nan"), "{text}");
    }

    #[test]
    fn shard_lines_flag_stalls_and_failures() {
        let s = ShardLine {
            index: 2,
            done: 5,
            share: Some(10),
            age: Some(300.0),
            state: Some("RUNNING".into()),
            stalled: true,
            failed: None,
            paused: None,
        };
        let t = shard_text(&s, false);
        assert_eq!(
            t,
            "shard   2: 5/10 pairs, last record 5m00s ago, RUNNING, STALLED"
        );
        let p = ShardLine {
            share: None,
            state: None,
            stalled: false,
            paused: Some(41),
            ..s
        };
        assert_eq!(
            shard_text(&p, false),
            "shard   2: 5 pairs, last record 5m00s ago, paused at pair 41 (ahead of the count)"
        );
    }
}
