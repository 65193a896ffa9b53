//! The live reader of a datagen run (the job contract's `live_reader`): its complete games
//! and their positions, from the training files (read again when one of them changed) or
//! a cluster run's records and its shards' training files.

use std::path::Path;

use data::training::counter::GameCounter;
use data::training::files::{game_ends, Format};

use crate::job::Job;
use crate::live::{Live, LiveReader, LiveRun, Reading};
use crate::live_files::{ClusterReader, Rereading};

/// The reader of the datagen run whose files are where `run` says.
pub fn reader(kind: &'static dyn Job, run: &LiveRun) -> Box<dyn LiveReader> {
    let format = super::args::format_of_words(&run.words);
    if let Some(rd) = &run.cluster {
        return Box::new(ClusterReader::new(
            rd,
            kind,
            Box::new(move |rd, _, snap, out| {
                out.live.games = snap.games_done;
                out.live.positions = Some(shard_positions(rd, &out.live, format));
            }),
        ));
    }
    let file = run.file.clone();
    let paths = format.paths(&file);
    let files = [paths.viriformat, paths.text, paths.index]
        .into_iter()
        .flatten()
        .collect();
    // Each change of a file reads only what was written since (`GameCounter`).
    let mut counter = GameCounter::new(&file, format);
    Box::new(Rereading::new(files, move || Reading {
        live: local(&file, &mut counter),
        view: None,
    }))
}

/// A local datagen run's numbers: its complete games (those of both files when it writes
/// both) and their positions, counted on by `counter`. A training file is no kind's own
/// file for `spar status`: the lines say the two numbers.
fn local(file: &Path, counter: &mut GameCounter) -> Live {
    let mut out = Live::default();
    if !file.is_file() {
        return out;
    }
    if let Ok(counted) = counter.count() {
        out.games = Some(counted.games);
        out.positions = Some(counted.positions);
    }
    out.lines = vec![
        format!("Games: {}", out.games.unwrap_or(0)),
        format!("Positions: {}", out.positions.unwrap_or(0)),
    ];
    out
}

/// A cluster datagen run's positions: those of each shard's complete games (its records'
/// count) in the shard's training file — the viriformat file's positions, or the text
/// file's lines when it writes only text.
fn shard_positions(rd: &Path, live: &Live, format: Format) -> u64 {
    live.shards
        .iter()
        .filter(|s| s.done > 0)
        .filter_map(|s| {
            let file = crate::cluster::shard_positions(rd, s.index);
            let ends = game_ends(&file, format).ok()?;
            let counted = match format.paths(&file).viriformat {
                Some(_) => ends.viriformat,
                None => ends.text,
            };
            let games = (s.done as usize).min(counted.len());
            games.checked_sub(1).map(|g| counted[g].1)
        })
        .sum()
}
