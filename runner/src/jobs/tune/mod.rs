//! The tune job (`spar tune`, SPSA): its arguments ([`args`]) and checked setup
//! ([`setup`]); its play on this machine ([`local`]) and as a cluster run ([`shards`]), the
//! merge of a cluster run's records ([`merge`]); the verification SPRT that ends it
//! ([`verify`], with its files and verdict in [`verdict`]); and where a tune stands
//! ([`status`], a cluster run's in [`view`]). The SPSA itself (gains, schedule, driver,
//! trajectory) is [`crate::tune`]'s.

pub mod args;
pub mod local;
pub mod merge;
pub mod setup;
pub mod shards;
pub mod status;
pub mod verdict;
pub mod verify;
pub mod view;
