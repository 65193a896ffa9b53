//! Networks (issue 32, point 3): net files uploaded to the server, stored once by their
//! SHA-256 under `DATA/nets/SHA` (written to a temporary file while hashed, then renamed:
//! never half-written), each under a name with who uploaded it; a default net per engine
//! (a registered engine, or spar's embedded one); removal of a net no run used (its file
//! moved to `DATA/archive/nets/`). A run names a net in its engine words ([`words`]).

pub mod multipart;
pub mod words;

use std::io::Write;
use std::path::PathBuf;

use sha2::{Digest, Sha256};

use super::action_log::{record_in, Action, Target};
use super::db::nets::Net;
use super::state::AppState;

/// The engine key of spar's embedded engine (the builtin engine of `--engine` words
/// without `cmd=`, `git=` or `engine=`).
pub const EMBEDDED: &str = "embedded";

/// Why a net action was refused: the HTTP status and the message.
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

impl Refused {
    /// 400: bad input.
    pub fn bad(message: impl Into<String>) -> Refused {
        Refused {
            status: 400,
            message: message.into(),
        }
    }

    fn with(status: u16, message: impl Into<String>) -> Refused {
        Refused {
            status,
            message: message.into(),
        }
    }
}

impl From<String> for Refused {
    fn from(e: String) -> Self {
        Refused::with(500, e)
    }
}

/// The directory of the net files.
pub fn dir(st: &AppState) -> PathBuf {
    st.data_dir.join("nets")
}

/// The file of the net with this sha.
pub fn file_of(st: &AppState, sha: &str) -> PathBuf {
    dir(st).join(sha)
}

/// Checks a net's name: as an engine's (1 to 64 letters, digits, `_`, `-`, `.`).
pub fn check_name(name: &str) -> Result<(), Refused> {
    super::builds::check_name(name)
        .map_err(|_| {
            Refused::bad(format!(
                "net name '{name}': use 1 to 64 letters, digits, '_', '-' or '.', not starting \
                 with '-' or '.'"
            ))
        })
        .map(|_| ())
}

/// Checks what an upload names before its body is read: a free, valid name and a known
/// engine (`embedded`, or a registered engine). The engine's build comes back (`spar` for
/// the embedded engine).
pub fn check_upload(st: &AppState, name: &str, engine: &str) -> Result<String, Refused> {
    check_name(name)?;
    let build = engine_build(st, engine)?;
    if st.store.blocking(|db| db.net(name))?.is_some() {
        return Err(Refused::with(
            409,
            format!("net {name} exists already: choose another name (or remove it first)"),
        ));
    }
    Ok(build)
}

/// The build of an engine a net is for: `spar` for [`EMBEDDED`], else the registered
/// engine's (400 when there is none).
fn engine_build(st: &AppState, engine: &str) -> Result<String, Refused> {
    if engine == EMBEDDED {
        return Ok("spar".into());
    }
    let known = st.store.blocking(|db| db.engine(engine))?;
    match known {
        Some(e) if e.removed.is_none() => Ok(e.build),
        _ => Err(Refused::bad(format!(
            "engine '{engine}': give `{EMBEDDED}` (spar's embedded engine) or a registered \
             engine (see /engines)"
        ))),
    }
}

/// A net file being received: a temporary file in `DATA/nets/tmp/`, its SHA-256 and size
/// so far, and the largest size accepted.
pub struct Incoming {
    tmp: tempfile::NamedTempFile,
    hasher: Sha256,
    size: u64,
    limit: u64,
}

impl Incoming {
    /// A new temporary file for a net of at most `limit` bytes.
    pub fn new(st: &AppState, limit: u64) -> Result<Incoming, Refused> {
        let tmp = dir(st).join("tmp");
        std::fs::create_dir_all(&tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
        let file = tempfile::Builder::new()
            .prefix("upload-")
            .tempfile_in(&tmp)
            .map_err(|e| format!("{}: {e}", tmp.display()))?;
        Ok(Incoming {
            tmp: file,
            hasher: Sha256::new(),
            size: 0,
            limit,
        })
    }

    /// Appends bytes; 413 beyond the limit (the temporary file goes when dropped).
    pub fn write(&mut self, bytes: &[u8]) -> Result<(), Refused> {
        self.size += bytes.len() as u64;
        if self.size > self.limit {
            return Err(too_large(self.limit));
        }
        self.hasher.update(bytes);
        self.tmp
            .write_all(bytes)
            .map_err(|e| Refused::from(format!("cannot write the upload: {e}")))
    }
}

/// The 413 of an upload larger than `limit` bytes.
pub fn too_large(limit: u64) -> Refused {
    Refused::with(
        413,
        format!(
            "the net is larger than {limit} bytes ({} MiB), the server's limit for uploads \
             (spar serve --net-limit MIB)",
            limit >> 20
        ),
    )
}

/// Stores a received net as `name` for `engine`: checked (a net spar's engine can load,
/// for the embedded engine and registered `spar` builds; any file otherwise), renamed to
/// `DATA/nets/SHA` unless that file exists (deduplicated), and its row stored. Nothing is
/// stored when it is refused.
pub fn store(
    st: &AppState,
    incoming: Incoming,
    name: &str,
    engine: &str,
    uploader: Option<&str>,
) -> Result<Net, Refused> {
    let build = check_upload(st, name, engine)?;
    if incoming.size == 0 {
        return Err(Refused::bad(format!("net {name}: the file is empty")));
    }
    let Incoming {
        mut tmp,
        hasher,
        size,
        ..
    } = incoming;
    tmp.flush().map_err(|e| format!("the upload: {e}"))?;
    if build == "spar" {
        let shown = tmp.path().to_string_lossy().into_owned();
        engine::nnue::Network::read_file(tmp.path()).map_err(|e| {
            Refused::bad(format!(
                "net {name}: not a network spar's engine can load: {} (for another engine's \
                 net, give that registered engine)",
                e.replace(&shown, "the file")
            ))
        })?;
    }
    let sha = hex(&hasher.finalize());
    let target = file_of(st, &sha);
    let new_file = !target.exists();
    if new_file {
        tmp.persist(&target)
            .map_err(|e| format!("cannot store {}: {}", target.display(), e.error))?;
    }
    st.store.blocking(|db| {
        let stored = db.insert_net(name, &sha, size as i64, engine, uploader);
        if !matches!(stored, Ok(true)) {
            if new_file {
                let _ = std::fs::remove_file(&target);
            }
            stored?;
            return Err(Refused::with(409, format!("net {name} exists already")));
        }
        let detail = format!("{} ({size} bytes) for engine {engine}", &sha[..12]);
        record_in(db, uploader, Action::NetUpload, Target::Net(name), &detail);
        let _ = db.event(
            None,
            "net",
            &format!(
                "net {name} uploaded by {}: {} ({size} bytes) for engine {engine}",
                uploader.unwrap_or("anyone"),
                &sha[..12]
            ),
        );
        Ok(db.net(name)?.expect("the net was stored"))
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The net `name` (404 when none has that name).
pub fn get(st: &AppState, name: &str) -> Result<Net, Refused> {
    st.store
        .blocking(|db| db.net(name))?
        .ok_or_else(|| Refused::with(404, format!("no net '{name}' is uploaded (see /nets)")))
}

/// Removes the net `name`: refused (409, with the run ids) when any run — of any state,
/// finished and deleted ones too — used it, or while it is an engine's default. Its
/// file, when no other name has it, is moved to `DATA/archive/nets/SHA` (never deleted).
pub fn remove(st: &AppState, name: &str, by: Option<&str>) -> Result<Net, Refused> {
    let net = get(st, name)?;
    st.store.blocking(|db| {
        let runs = db.runs_using_net(&net.name)?;
        if !runs.is_empty() {
            let ids: Vec<String> = runs.iter().map(i64::to_string).collect();
            return Err(Refused::with(
                409,
                format!(
                    "net {name}: run{} {} used it, and a net a run used is never removed (its \
                     results stay reproducible)",
                    if ids.len() == 1 { "" } else { "s" },
                    ids.join(", ")
                ),
            ));
        }
        let defaults: Vec<String> = db
            .default_nets()?
            .into_iter()
            .filter(|(_, n)| n == name)
            .map(|(e, _)| e)
            .collect();
        if !defaults.is_empty() {
            return Err(Refused::with(
                409,
                format!(
                    "net {name} is the default net of engine {}: set another default (or none) \
                     first",
                    defaults.join(", ")
                ),
            ));
        }
        let left = db.delete_net(name, &net.sha)?;
        let mut whereto = String::from("its file stays (another name has it)");
        if left == 0 {
            let archive = st.data_dir.join("archive").join("nets");
            std::fs::create_dir_all(&archive).map_err(|e| format!("{}: {e}", archive.display()))?;
            let target = archive.join(&net.sha);
            std::fs::rename(file_of(st, &net.sha), &target)
                .map_err(|e| format!("cannot move the net's file to {}: {e}", target.display()))?;
            whereto = format!("its file is in {}", target.display());
        }
        record_in(db, by, Action::NetRemove, Target::Net(name), &whereto);
        let _ = db.event(
            None,
            "net",
            &format!(
                "net {name} removed by {}: {whereto}",
                by.unwrap_or("anyone")
            ),
        );
        Ok(net)
    })
}

/// Sets (or, with `None`, clears) the default net of `engine` (a registered engine's name
/// or [`EMBEDDED`]); the caller's rights are the handler's.
pub fn set_default(
    st: &AppState,
    engine: &str,
    net: Option<&str>,
    by: Option<&str>,
) -> Result<Option<Net>, Refused> {
    engine_build(st, engine)?;
    let net = match net.map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) => Some(get(st, n).map_err(|_| {
            Refused::bad(format!("net '{n}': no such net is uploaded (see /nets)"))
        })?),
        None => None,
    };
    st.store.blocking(|db| {
        match &net {
            Some(n) => db.set_default_net(engine, &n.name, by)?,
            None => db.clear_default_net(engine)?,
        }
        let what = net.as_ref().map_or("none".to_string(), |n| n.name.clone());
        let detail = format!("default net: {what}");
        record_in(db, by, Action::NetDefault, Target::Engine(engine), &detail);
        let _ = db.event(
            None,
            "net",
            &format!(
                "the default net of engine {engine} is {what} (set by {})",
                by.unwrap_or("anyone")
            ),
        );
        Ok(net)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_sizes_shown_in_mib() {
        assert!(check_name("nn-2025.v1").is_ok());
        let e = check_name("../x").unwrap_err();
        assert_eq!(e.status, 400);
        assert!(e.message.contains("net name '../x'"), "{}", e.message);
        let e = too_large(256 << 20);
        assert_eq!(e.status, 413);
        assert!(e.message.contains("256 MiB"), "{}", e.message);
        assert_eq!(hex(&[0, 15, 255]), "000fff");
    }
}
