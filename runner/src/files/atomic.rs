//! Whole-file writes that are never seen half-done.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Writes a file through a temporary file in the same directory and a rename, so it is
/// never seen half-written.
///
/// Only regular files are replaced that way. A path that names a device or a pipe
/// (`/dev/null`, `/dev/full`, a FIFO) is opened and written in place, so the special file
/// stays what it is and a failed write (`/dev/full`) is an error; a directory is an error.
/// A symbolic link is followed: the file it points to is replaced, the link kept.
pub fn write_atomically(path: &Path, text: &str) -> io::Result<()> {
    write_bytes_atomically(path, text.as_bytes())
}

/// [`write_atomically`] for bytes (a network, a checkpoint, merged training files).
pub fn write_bytes_atomically(path: &Path, text: &[u8]) -> io::Result<()> {
    let target = resolve_link(path)?;
    match std::fs::metadata(&target) {
        Ok(m) if m.is_dir() => {
            return Err(io::Error::other(format!(
                "{} is a directory",
                path.display()
            )))
        }
        Ok(m) if !m.is_file() => return write_in_place(&target, text),
        _ => {}
    }
    let dir = super::names::parent_dir(&target);
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(text)?;
    // A temporary file is created private (0600); the result is an ordinary file.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))?;
    }
    tmp.as_file().sync_all()?;
    tmp.persist(&target).map_err(|e| e.error)?;
    Ok(())
}

/// Where a symbolic link points (the path itself when it is none).
fn resolve_link(path: &Path) -> io::Result<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match path.canonicalize() {
            Ok(p) => Ok(p),
            // A dangling link: write where it points.
            Err(_) => {
                let to = std::fs::read_link(path)?;
                Ok(super::names::parent_dir(path).join(to))
            }
        },
        _ => Ok(path.to_path_buf()),
    }
}

fn write_in_place(path: &Path, text: &[u8]) -> io::Result<()> {
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.write_all(text)?;
    f.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_files_follows_links_and_refuses_directories() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.txt");
        write_atomically(&file, "one").unwrap();
        write_atomically(&file, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "two");
        #[cfg(unix)]
        {
            let link = dir.path().join("l.txt");
            std::os::unix::fs::symlink(&file, &link).unwrap();
            write_atomically(&link, "three").unwrap();
            assert!(std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink());
            assert_eq!(std::fs::read_to_string(&file).unwrap(), "three");
        }
        let err = write_atomically(dir.path(), "x").unwrap_err();
        assert!(err.to_string().contains("is a directory"), "{err}");
        write_atomically(Path::new("/dev/null"), "gone").unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
    }
}
