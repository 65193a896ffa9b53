//! `spar bisect`: the first bad commit of a first-parent line, found by a noisy binary
//! search whose steps are SPRTs (the search and its error rule: `sprt::bisect`).
//! [`record`] holds what a bisect keeps in its run directory and replays it.

pub mod job;
pub mod live;
pub mod record;
pub mod status;
