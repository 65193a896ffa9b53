//! Reading the files a command is given or owns, as a hostile filesystem may present them:
//! only regular files are read whole (a device such as `/dev/zero` never ends, a FIFO with
//! no writer blocks the open forever, a pipe cannot be read twice), and every whole read is
//! bounded, so a wrong path is one clear error instead of a hang or an allocation abort.

use std::fs::{File, Metadata};
use std::io::Read;
use std::path::Path;

use crate::error::{CliError, CliResult};

/// Records and manifests a run owns (JSON, small): 64 MiB is far beyond any real one.
pub const SMALL_FILE: u64 = 64 << 20;

/// The metadata of `path` when it is a regular file; otherwise a usage error that names
/// `what` (the flag or the file's role) and the fix. Checked before any open, so a FIFO
/// never blocks.
pub fn regular(path: &Path, what: &str) -> CliResult<Metadata> {
    let m = std::fs::metadata(path)
        .map_err(|e| CliError::usage(format!("{what} {}: {e}", path.display())))?;
    if m.is_dir() {
        return Err(CliError::usage(format!(
            "{what} {} is a directory: give a file",
            path.display()
        )));
    }
    if !m.is_file() {
        return Err(CliError::usage(format!(
            "{what} {} is not a regular file (a device, pipe or socket): spar reads it whole, \
             so give a file",
            path.display()
        )));
    }
    Ok(m)
}

/// Opens a regular file for reading (never a device or FIFO), checking its size against
/// `limit` bytes.
pub fn open_regular(path: &Path, what: &str, limit: u64) -> CliResult<File> {
    let m = regular(path, what)?;
    if m.len() > limit {
        return Err(too_big(path, what, limit));
    }
    File::open(path).map_err(|e| CliError::usage(format!("{what} {}: {e}", path.display())))
}

fn too_big(path: &Path, what: &str, limit: u64) -> CliError {
    CliError::usage(format!(
        "{what} {} is larger than {} MiB: this is not the file spar expects there",
        path.display(),
        limit >> 20
    ))
}

/// The bytes of a regular file of at most `limit` bytes (also when it grows while read).
pub fn read_bounded(path: &Path, what: &str, limit: u64) -> CliResult<Vec<u8>> {
    let f = open_regular(path, what, limit)?;
    let mut bytes = Vec::new();
    f.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::usage(format!("{what} {}: {e}", path.display())))?;
    if bytes.len() as u64 > limit {
        return Err(too_big(path, what, limit));
    }
    Ok(bytes)
}

/// [`read_bounded`] as UTF-8 text.
pub fn read_text_bounded(path: &Path, what: &str, limit: u64) -> CliResult<String> {
    String::from_utf8(read_bounded(path, what, limit)?).map_err(|_| {
        CliError::usage(format!(
            "{what} {}: not UTF-8 text: this is not the file spar expects there",
            path.display()
        ))
    })
}

/// A file a run owns, read when it exists: `Ok(None)` when there is none.
pub fn read_optional(path: &Path, what: &str, limit: u64) -> CliResult<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        _ => read_text_bounded(path, what, limit).map(Some),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_before_any_open() {
        let dir = tempfile::tempdir().unwrap();
        let err = read_bounded(Path::new("/dev/zero"), "--data", 1 << 20).unwrap_err();
        assert_eq!(err.code, 2);
        assert!(
            err.message.contains("not a regular file"),
            "{}",
            err.message
        );
        let err = read_bounded(dir.path(), "--data", 1 << 20).unwrap_err();
        assert!(err.message.contains("is a directory"), "{}", err.message);
        #[cfg(unix)]
        {
            let fifo = dir.path().join("fifo");
            let ok = std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                // Would block forever if it were opened: refused from its metadata.
                let err = read_bounded(&fifo, "--results", 1 << 20).unwrap_err();
                assert!(
                    err.message.contains("not a regular file"),
                    "{}",
                    err.message
                );
            }
        }
    }

    #[test]
    fn reads_are_bounded_and_missing_optional_files_are_none() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        std::fs::write(&f, vec![b'x'; 100]).unwrap();
        assert_eq!(read_bounded(&f, "f", 100).unwrap().len(), 100);
        let err = read_bounded(&f, "--json", 99).unwrap_err();
        assert!(err.message.contains("larger than"), "{}", err.message);
        assert!(read_optional(&dir.path().join("none"), "x", 10)
            .unwrap()
            .is_none());
        std::fs::write(&f, [0xff, 0xfe]).unwrap();
        assert!(read_text_bounded(&f, "x", 10)
            .unwrap_err()
            .message
            .contains("not UTF-8"));
    }
}
