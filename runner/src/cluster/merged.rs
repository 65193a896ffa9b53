//! What a merge of a cluster run's records printed and wrote: whatever the job, the
//! coordinator and `spar merge` read the same few facts of it.

use super::records::Conflict;

/// What a merge printed and wrote.
pub struct Merged {
    /// The summary lines (stdout).
    pub lines: Vec<String>,
    /// Pairs (datagen: games) merged.
    pub done: u64,
    /// Whether every pair (game) of a fixed-size run is there.
    pub complete: bool,
    /// Pairs recorded twice with different games.
    pub conflicts: Vec<Conflict>,
    /// What the merge leaves out and why (an SPRT's pairs after its decision), shown on
    /// stderr: stdout is the local run's summary.
    pub notes: Vec<String>,
}
