//! The reserve: a file of [`RESERVE`] bytes (`DATA/reserve`) that holds space on the data
//! directory's filesystem for the server's own writes. When a run fills the disk, the
//! database cannot record the run's end ("database or disk is full"); the server then
//! removes the reserve, which frees enough for the record, and makes it again once there is
//! room.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The bytes the reserve holds: room for many records of the database (each is a few
/// pages of 4 KiB, and as many in its journal).
pub const RESERVE: u64 = 4 << 20;

/// The reserve's file name in the data directory.
pub const RESERVE_FILE: &str = "reserve";

/// The reserve file of data directory `data`.
pub fn path(data: &Path) -> PathBuf {
    data.join(RESERVE_FILE)
}

/// Whether the reserve is in place (its file has all its bytes).
pub fn present(data: &Path) -> bool {
    std::fs::metadata(path(data)).is_ok_and(|m| m.is_file() && m.len() == RESERVE)
}

/// Makes the reserve: [`RESERVE`] bytes written (not a sparse file: the blocks are taken)
/// and flushed to the disk. A reserve in place is kept; a partial one (a crash while it was
/// written) is written again; on failure (no room) no partial file is left.
pub fn make(data: &Path) -> Result<(), String> {
    if present(data) {
        return Ok(());
    }
    let file = path(data);
    let written = (|| {
        let mut f = std::fs::File::create(&file)?;
        // Bytes that no filesystem compresses away: the blocks must really be taken.
        let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut chunk = vec![0u8; 64 << 10];
        for _ in 0..RESERVE / chunk.len() as u64 {
            for b in chunk.chunks_exact_mut(8) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                b.copy_from_slice(&state.to_le_bytes());
            }
            f.write_all(&chunk)?;
        }
        f.sync_all()
    })();
    written.map_err(|e| {
        let _ = std::fs::remove_file(&file);
        format!("{}: cannot make the reserve: {e}", file.display())
    })
}

/// Removes the reserve: true when there was one (its space is free now).
pub fn release(data: &Path) -> bool {
    std::fs::remove_file(path(data)).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserve_is_made_once_released_and_made_again() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!present(dir.path()));
        make(dir.path()).unwrap();
        assert!(present(dir.path()));
        let before = std::fs::read(path(dir.path())).unwrap();
        assert_eq!(before.len() as u64, RESERVE);
        assert!(before.iter().any(|&b| b != 0));
        // A reserve in place is kept as it is.
        make(dir.path()).unwrap();
        assert!(present(dir.path()));
        assert!(release(dir.path()));
        assert!(!present(dir.path()) && !release(dir.path()));
        // A partial one is written again.
        std::fs::write(path(dir.path()), b"partial").unwrap();
        assert!(!present(dir.path()));
        make(dir.path()).unwrap();
        assert!(present(dir.path()));
    }
}
