//! The datagen job (`spar datagen`): training positions from self-play of the builtin
//! engine. Its arguments ([`args`]), plan ([`plan`]) and run record ([`record`]); its games
//! on this machine ([`generate`]) and as a cluster run ([`shards`]); the merge of a
//! cluster run's files is [`crate::cluster::merge`]'s.
//!
//! Game k depends only on (seed, k) and the options: its opening comes from a generator
//! seeded with H(seed, k), each game starts with an emptied hash table and histories, and
//! one thread searches each move to a node limit. Games are played by the shared game
//! loop ([`crate::play::game`]) with datagen's adjudication, run by the shared ordered
//! runner ([`crate::play::ordered`]) and written in index order, so the files are the same
//! at any concurrency, and `--resume` continues with the next index.

pub mod args;
pub mod generate;
pub mod plan;
pub mod record;
pub mod shards;
