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

pub mod bisect;
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
    &bisect::job::BISECT,
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

/// The kinds a server runs ([`Job::served`]), in the order it lists them.
pub fn served() -> Vec<&'static dyn Job> {
    let mut kinds: Vec<(u8, &'static dyn Job)> = KINDS
        .iter()
        .filter_map(|k| k.served().map(|place| (place, *k)))
        .collect();
    kinds.sort_by_key(|(place, k)| (*place, k.command()));
    kinds.into_iter().map(|(_, k)| k).collect()
}

/// The kind whose local file `path` is, for `spar status FILE` (the first that owns it).
pub fn owning(path: &Path) -> Option<&'static dyn Job> {
    KINDS.iter().copied().find(|k| k.owns_file(path))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::{Numbers, Unit};

    /// Every kind a server runs answers the server's questions consistently (a new kind
    /// that does not fails here): its files lie in the run's directory, named by flags the
    /// server owns (a user's words that name one are refused); its primary file is one of
    /// them; its page's parts agree.
    #[test]
    fn every_served_kind_answers_the_servers_questions() {
        let dir = Path::new("/srv/runs/7");
        let kinds = served();
        let mut places: Vec<u8> = kinds.iter().filter_map(|k| k.served()).collect();
        places.dedup();
        assert_eq!(places.len(), kinds.len(), "two served kinds share a place");
        for k in kinds {
            let c = k.command();
            let outputs = k.served_outputs(dir);
            assert!(outputs.first().is_some_and(|w| w.starts_with("--")), "{c}");
            for w in &outputs {
                match w.strip_prefix("--") {
                    Some(_) => {
                        let mine = [w.clone(), "x".into()];
                        let e = crate::serve::words::check_owned(c, &mine).unwrap_err();
                        assert!(e.starts_with(&format!("{w} is the server's")), "{c}: {e}");
                    }
                    None => assert!(Path::new(w).starts_with(dir), "{c} {w}"),
                }
            }
            for words in [vec![], vec!["--format".to_string(), "text".into()]] {
                let primary = k.served_primary(dir, &words);
                let shown = primary.to_string_lossy();
                assert!(primary.starts_with(dir) && primary != dir, "{c}");
                assert!(
                    outputs
                        .iter()
                        .any(|w| !w.starts_with("--") && shown.starts_with(w.as_str())),
                    "{c}: its primary file {shown} is none of its outputs {outputs:?}"
                );
            }
            let page = k.served_page();
            if page.training_files {
                assert_eq!(page.numbers, Numbers::Positions, "{c}");
            }
            if page.status_page {
                assert!(page.status_lines, "{c}");
            }
            if page.residuals {
                assert_eq!(k.unit(), Unit::Pairs, "{c}");
            }
        }
    }
}
