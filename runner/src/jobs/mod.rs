//! The jobs: the long-running kinds of run, one room each — a match or SPRT
//! ([`matches`]), an SPSA tune ([`tune`]), training-data generation ([`datagen`]) and the
//! `track!` report ([`report`]) —
//! with everything that plays, records, merges and shows them, on this machine or as the
//! shards of a cluster run. Each implements the job contract ([`crate::job::Job`]);
//! [`KINDS`] lists them. `cmd/` turns the command line into a call of these;
//! [`record_fields`] holds what their run records compare of the files they name.

use std::path::Path;

use crate::cluster::manifest::Manifest;
use crate::error::CliResult;
use crate::job::Job;

pub mod datagen;
pub mod matches;
pub mod record_fields;
pub mod report;
pub mod tune;

/// Every kind of job, one line each. `spar shard`, `merge` and `status` (and a server)
/// find a run's kind here by the command its manifest names.
/// The order is the order in which [`owning`] asks them: the match's results CSV is the
/// catch-all of `spar status FILE`, so it comes after the kinds with files of their own.
pub static KINDS: &[&dyn Job] = &[
    &tune::job::TUNE,
    &matches::job::MATCH,
    &matches::job::SPRT,
    &datagen::job::DATAGEN,
    &report::job::REPORT,
];

/// The kind whose command is `command`.
pub fn by_command(command: &str) -> Option<&'static dyn Job> {
    KINDS.iter().copied().find(|k| k.command() == command)
}

/// The kind of the run whose manifest (read from `dir`) is `m`, with the kind's own checks
/// of it: an unknown command or a failed check is the manifest's usage error.
pub fn of(dir: &Path, m: &Manifest) -> CliResult<&'static dyn Job> {
    let kind = by_command(&m.command)
        .ok_or_else(|| Manifest::invalid(dir, &format!("unknown command '{}'", m.command)))?;
    kind.check_manifest(m)
        .map_err(|why| Manifest::invalid(dir, &why))?;
    Ok(kind)
}

/// Reads the manifest of the run in `dir` and finds its kind ([`of`]).
pub fn read(dir: &Path) -> CliResult<(Manifest, &'static dyn Job)> {
    let m = Manifest::read(dir)?;
    let kind = of(dir, &m)?;
    Ok((m, kind))
}

/// The kind whose local file `path` is, for `spar status FILE` (the first that owns it).
pub fn owning(path: &Path) -> Option<&'static dyn Job> {
    KINDS.iter().copied().find(|k| k.owns_file(path))
}
