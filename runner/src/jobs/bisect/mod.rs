//! `spar bisect`: the first bad commit of a first-parent line, found by a noisy binary
//! search whose steps are SPRTs (the search and its error rule: `sprt::bisect`).
//! [`record`] holds what a bisect keeps in its run directory and replays it; [`args`] its
//! command line, [`repo`] the repository and its commits, [`steps`] a step's SPRT,
//! [`answer`] what it prints, [`run`] the driver; [`job`] the kind in the job contract,
//! [`status`] its `spar status` view and [`live`] a server's live reader of it.

pub mod answer;
pub mod args;
pub mod job;
pub mod live;
pub mod record;
pub mod repo;
pub mod run;
pub mod status;
pub mod steps;
