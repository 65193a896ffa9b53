//! The live reader of a report (the job contract's `live_reader`): a local report keeps
//! no file that `spar status` shows (its statistics are its page's section), so it has no
//! live numbers; a cluster report's records give its shards and `spar status`'s lines.

use crate::job::Job;
use crate::live::{LiveReader, LiveRun, Reading};
use crate::live_files::{ClusterReader, Rereading};

/// The reader of the report whose files are where `run` says.
pub fn reader(kind: &'static dyn Job, run: &LiveRun) -> Box<dyn LiveReader> {
    match &run.cluster {
        Some(rd) => Box::new(ClusterReader::new(rd, kind, Box::new(|_, _, _, _| {}))),
        None => Box::new(Rereading::new(Vec::new(), Reading::default)),
    }
}
