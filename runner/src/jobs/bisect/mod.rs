//! `spar bisect`: the first bad commit of a first-parent line, found by a noisy binary
//! search whose steps are SPRTs (the search and its error rule: `sprt::bisect`).
//! [`record`] holds what a bisect keeps in its run directory and replays it; [`args`] its
//! command line, [`repo`] the repository and its commits, [`steps`] a step's SPRT,
//! [`answer`] what it prints, [`run`] the driver.

pub mod answer;
pub mod args;
pub mod record;
pub mod repo;
pub mod run;
pub mod steps;
