//! Why tablebases could not be opened or probed.

use std::fmt;
use std::path::PathBuf;

/// An error opening or probing Syzygy tablebases. Every variant names the path at fault and
/// its message says how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TbError {
    /// The path list was empty (no directory given).
    EmptyPath,
    /// A directory of the path list does not exist.
    NoSuchDirectory {
        /// The directory as given.
        path: PathBuf,
    },
    /// An entry of the path list is a file, not a directory.
    NotADirectory {
        /// The entry as given.
        path: PathBuf,
    },
    /// A file named like a table (`KRvK.rtbw`) is not a regular file: a directory, or a
    /// FIFO, device or socket, whose open could block for ever. Checked before any open.
    NotAFile {
        /// The entry.
        path: PathBuf,
    },
    /// None of the directories holds a `*.rtbw` or `*.rtbz` file.
    NoTables {
        /// The whole colon-separated path list.
        path: String,
    },
    /// A directory or table file could not be read or mapped.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's message.
        message: String,
    },
    /// A table file is truncated, damaged or not a Syzygy table at all.
    Corrupt {
        /// The table file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for TbError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TbError::EmptyPath => write!(
                f,
                "no tablebase directory given: set the Syzygy path to one or more directories \
                 separated by ':'"
            ),
            TbError::NoSuchDirectory { path } => write!(
                f,
                "tablebase directory {} does not exist: fix the Syzygy path (directories \
                 separated by ':')",
                path.display()
            ),
            TbError::NotADirectory { path } => write!(
                f,
                "tablebase path {} is a file, not a directory: give the directory that holds \
                 the *.rtbw / *.rtbz files",
                path.display()
            ),
            TbError::NotAFile { path } => write!(
                f,
                "tablebase file {} is not a regular file (a directory, pipe, device or \
                 socket): remove it or replace it with the table file",
                path.display()
            ),
            TbError::NoTables { path } => write!(
                f,
                "no Syzygy tables (*.rtbw / *.rtbz) found in {path:?}: download them \
                 (see docs/tablebases.md) or fix the Syzygy path"
            ),
            TbError::Io { path, message } => write!(
                f,
                "cannot read {}: {message}: check that the file exists and is readable",
                path.display()
            ),
            TbError::Corrupt { path, reason } => write!(
                f,
                "{} is not a valid Syzygy table ({reason}): download the file again",
                path.display()
            ),
        }
    }
}

impl std::error::Error for TbError {}

/// A damaged-table finding without the path (the table adds it): what was wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Corrupt(pub(super) &'static str);

impl Corrupt {
    /// The full error for the table file at `path`.
    pub(super) fn at(self, path: &std::path::Path) -> TbError {
        TbError::Corrupt {
            path: path.to_path_buf(),
            reason: self.0.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_the_path_and_the_fix() {
        let e = TbError::NoSuchDirectory {
            path: "/no/such".into(),
        };
        let text = e.to_string();
        assert!(text.contains("/no/such") && text.contains("fix the Syzygy path"));
        let e = Corrupt("bad magic").at(std::path::Path::new("/t/KRvK.rtbw"));
        let text = e.to_string();
        assert!(text.contains("/t/KRvK.rtbw") && text.contains("bad magic"));
        assert!(text.contains("download the file again"));
    }
}
