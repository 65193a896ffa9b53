//! The tune job (`spar tune`, SPSA): its arguments ([`args`]) and checked setup
//! ([`setup`]); its play on this machine ([`local`]) and as a cluster run ([`shards`]), the
//! merge of a cluster run's records ([`merge`]); the verification SPRT that ends it
//! ([`verify`], with its files and verdict in [`verdict`]); and where a tune stands
//! ([`status`]: the view and its text; [`status_page`] its HTML page; [`status_local`]
//! from a local run's trajectory CSV, [`status_cluster`] from a cluster run's directory).
//! The SPSA itself (gains, schedule, driver, trajectory) is [`crate::tune`]'s.

pub mod args;
pub mod local;
pub mod merge;
pub mod setup;
pub mod shards;
pub mod status;
pub mod status_cluster;
pub mod status_local;
pub mod status_page;
pub mod verdict;
pub mod verify;
