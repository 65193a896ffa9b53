//! The live reader of a tune (the job contract's `live_reader`): a local tune's trajectory
//! (`tune.csv`, small: one row per iteration) read again when one of its files changed, a
//! cluster tune's records through the shared cluster reader; each reading carries the
//! [`TuneView`] its numbers come from, for the run page's trajectories.

use std::sync::Arc;

use super::status::TuneView;
use crate::job::{Job, StatusView};
use crate::live::{Live, LiveReader, LiveRun, Reading};
use crate::live_files::{ClusterReader, Rereading};

/// The reader of the tune whose files are where `run` says.
pub fn reader(kind: &'static dyn Job, run: &LiveRun) -> Box<dyn LiveReader> {
    if let Some(rd) = &run.cluster {
        return Box::new(ClusterReader::new(
            rd,
            kind,
            Box::new(|rd, m, snap, out| {
                // The tune's view from the same snapshot of its shards.
                if let Ok(view) = super::status_cluster::view(rd, m, snap) {
                    let shards = std::mem::take(&mut out.live.shards);
                    *out = of_view(view);
                    out.live.shards = shards;
                }
            }),
        ));
    }
    let file = run.file.clone();
    let files = kind
        .file_inputs(&file)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    Box::new(Rereading::new(files, move || {
        if !file.is_file() {
            return Reading::default();
        }
        super::status_local::from_csv(&file)
            .map(of_view)
            .unwrap_or_default()
    }))
}

/// A tune's numbers and lines from its view, with the view.
fn of_view(view: TuneView) -> Reading {
    let live = Live {
        lines: view.lines(),
        iteration: view.rows.last().map(|r| r.iteration),
        games: view.rows.last().map(|r| r.games),
        ..Live::default()
    };
    Reading {
        live,
        view: Some(Arc::new(view)),
    }
}
