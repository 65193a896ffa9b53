//! The names of the files beside a file: `R.csv` → `R.csv.lock`, `R.csv.run.json`, and the
//! directory a file is made in.

use std::path::{Path, PathBuf};

/// The directory a file is made in (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// `PATH` with `suffix` added to its name (`R.csv` → `R.csv.run.json`).
pub fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut os = path.as_os_str().to_owned();
    os.push(suffix);
    PathBuf::from(os)
}
