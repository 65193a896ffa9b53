//! The games of a report, on this machine's threads: one stretch of pairs played with
//! `track!` recording on, and the statistics of exactly those games, per variant. The local
//! run plays one stretch (every pair); a shard of a cluster run plays its pairs in
//! stretches, one checkpoint after each ([`super::shards`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use crate::engines::player::{BuiltinPlayer, Player};
use crate::engines::uci::UciPlayer;
use crate::engines::variant::{Source, Variant};
use crate::error::{CliError, CliResult};
use crate::plan::{MatchPlan, Run};
use crate::play::schedule::{self, Control, PairOutcome, Stride};
use crate::report::stats::{StatsFile, VariantStats};
use crate::report::tracked::TrackedPlayer;

/// The two seats of a report's games: two variants, or one variant playing itself (both
/// seats then record into statistics slot 0).
pub(super) struct Seats {
    /// The seats' variants.
    pub seats: [Variant; 2],
    /// The variants given (1 or 2).
    pub n: usize,
}

impl Seats {
    /// The seats of `variants` (one or two).
    pub fn new(variants: &[Variant]) -> Seats {
        let n = variants.len();
        let mut v = variants.to_vec();
        if n == 1 {
            v.push(v[0].clone());
        }
        Seats {
            seats: v.try_into().expect("two seats"),
            n,
        }
    }

    /// One engine plays itself.
    pub fn single(&self) -> bool {
        self.n == 1
    }

    /// The statistics slot of seat `i`.
    pub fn slot(&self, i: usize) -> usize {
        if self.single() {
            0
        } else {
            i
        }
    }

    /// The names of the variants given.
    pub fn names(&self) -> Vec<&str> {
        self.seats
            .iter()
            .take(self.n)
            .map(|v| v.name.as_str())
            .collect()
    }

    /// The report's title: the variants, the games and the limits.
    pub fn title(&self, games: u64) -> String {
        format!(
            "spar report: {} ({} games, {})",
            self.names().join(" vs "),
            games,
            self.seats[0].limits.describe()
        )
    }
}

/// Which pairs a stretch plays: `first..end` of `stride` (counted in the stride's pairs).
pub(super) struct Stretch {
    /// The pairs of this process (all, or a shard's).
    pub stride: Stride,
    /// The first pair of the stride played.
    pub first: u64,
    /// One past the last (`None`: the plan's end).
    pub end: Option<u64>,
}

/// Plays one stretch of pairs and returns the statistics of its games, one per variant
/// given, with the games played. `on_pair` sees each finished pair in pair order;
/// `on_game` each finished game. The `track!` registry is reset first, so nothing recorded
/// before counts.
pub(super) fn play(
    plan: &MatchPlan,
    run: &Run,
    seats: &Seats,
    stretch: &Stretch,
    abort: &AtomicBool,
    on_game: impl FnMut(),
    mut on_pair: impl FnMut(&PairOutcome) -> Control,
) -> CliResult<(Vec<VariantStats>, u64)> {
    let dumps = tempfile::Builder::new()
        .prefix("spar-track-")
        .tempdir()
        .map_err(|e| CliError::failure(format!("cannot make a temporary directory: {e}")))?;
    engine::track::reset();
    let stall = run.stall_timeout;
    let started = AtomicUsize::new(0);
    let dump_dir = dumps.path().to_path_buf();
    let make_player = |i: usize| -> CliResult<Box<dyn Player>> {
        let v = &seats.seats[i];
        match &v.source {
            Source::Builtin => Ok(Box::new(TrackedPlayer::new(
                Box::new(BuiltinPlayer::new(v)?),
                seats.slot(i),
            ))),
            Source::Uci { .. } => {
                let k = started.fetch_add(1, Ordering::SeqCst);
                let mut v = v.clone();
                let path = dump_dir.join(format!("v{}-{k}.json", seats.slot(i)));
                v.options
                    .push(("TrackFile".to_string(), path.to_string_lossy().into_owned()));
                Ok(Box::new(UciPlayer::new(&v, stall).map_err(|e| {
                    CliError::usage(format!("engine '{}': {e}", v.name))
                })?))
            }
            Source::Build { .. } => unreachable!("build variants were turned into UCI engines"),
        }
    };
    let book = &run.book;
    let opening = |k: u64| book.opening(k);
    let mut schedule = plan.schedule(&seats.seats, stretch.first, &opening, &make_player, abort);
    schedule.stride = stretch.stride;
    if stretch.end.is_some() {
        schedule.end_pair = stretch.end;
    }
    let mut games_played = 0u64;
    schedule::run(&schedule, on_game, |pair| {
        games_played += 2;
        on_pair(&pair)
    })?;

    let snapshot = engine::track::snapshot();
    let mut stats = Vec::new();
    for (i, v) in seats.seats.iter().enumerate().take(seats.n) {
        let s = seats.slot(i);
        let vs = match &v.source {
            Source::Builtin => VariantStats::from_totals(&v.name, snapshot.get(&s), None),
            _ => {
                let seats_per_game = if seats.single() { 2 } else { 1 };
                read_dumps(&v.name, &dump_dir, s, games_played * seats_per_game)?
            }
        };
        stats.push(vs);
    }
    Ok((stats, games_played))
}

/// Warns of each variant that recorded no site.
pub(super) fn warn_empty(stats: &[VariantStats], seats: &[Variant]) {
    for (vs, v) in stats.iter().zip(seats) {
        if vs.sites.is_empty() {
            eprintln!(
                "spar: warning: engine '{}' recorded no track! site{}",
                v.name,
                if v.source == Source::Builtin {
                    ""
                } else {
                    " (is it a spar built with the `track` feature? e.g. features=track)"
                }
            );
        }
    }
}

/// Merges the TrackFile dumps of one variant's engine processes.
fn read_dumps(name: &str, dir: &Path, slot: usize, games: u64) -> CliResult<VariantStats> {
    let prefix = format!("v{slot}-");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| CliError::failure(format!("cannot list {}: {e}", dir.display())))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|f| f.to_str())
                .is_some_and(|f| f.starts_with(&prefix) && f.ends_with(".json"))
        })
        .collect();
    paths.sort();
    let mut merged = VariantStats::from_totals(name, None, Some(0));
    for path in paths {
        let file = StatsFile::read(&path)
            .map_err(|e| CliError::failure(format!("engine '{name}': bad TrackFile dump: {e}")))?;
        for v in &file.variants {
            merged
                .merge(v)
                .map_err(|e| CliError::failure(format!("engine '{name}': {e}")))?;
        }
    }
    merged.name = name.to_string();
    merged.games = games;
    Ok(merged)
}
