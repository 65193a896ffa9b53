//! The jobs: the long-running kinds of run, one room each — a match or SPRT
//! ([`matches`]), an SPSA tune ([`tune`]) and training-data generation ([`datagen`]) —
//! with everything that plays, records, merges and shows them, on this machine or as the
//! shards of a cluster run. `cmd/` turns the command line into a call of these;
//! [`record_fields`] holds what their run records compare of the files they name.

pub mod datagen;
pub mod matches;
pub mod record_fields;
pub mod tune;
