//! Syzygy tables for builtin engines (`option.SyzygyPath=DIRS`): each path is opened and
//! checked once per process, and every engine, match worker and search thread that names
//! it shares the same [`Tablebases`] through an `Arc`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use engine::tablebase::Tablebases;

/// The tables at `path` (directories separated by `:`), opened and verified on the first
/// call for that path and shared afterwards; the error is one line naming the fault.
pub fn open_shared(path: &str) -> Result<Arc<Tablebases>, String> {
    static OPENED: OnceLock<Mutex<HashMap<String, Arc<Tablebases>>>> = OnceLock::new();
    let mut opened = OPENED
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    if let Some(tb) = opened.get(path) {
        return Ok(Arc::clone(tb));
    }
    let tb = Tablebases::open(path)
        .and_then(|tb| tb.verify().map(|()| tb))
        .map_err(|e| e.to_string())?;
    let tb = Arc::new(tb);
    opened.insert(path.to_string(), Arc::clone(&tb));
    Ok(tb)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_set_per_path_and_errors_are_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().to_str().unwrap().to_string();
        assert!(open_shared(&path).unwrap_err().contains("no Syzygy tables"));
        // A table that appears later is found: errors are not remembered.
        std::fs::write(dir.path().join("KRvK.rtbw"), vec![0x55u8; 80]).unwrap();
        assert!(open_shared(&path)
            .unwrap_err()
            .contains("not a valid Syzygy table"));
        assert!(open_shared("/nonexistent/syzygy")
            .unwrap_err()
            .contains("does not exist"));
    }
}
