//! Where a tune's verification SPRT keeps its results and verdict (beside a local run's
//! trajectory, or in a cluster run's directory), and the line a verdict prints.

use std::path::{Path, PathBuf};

/// The files of the verification SPRT of a local run whose trajectory is `csv`.
pub(crate) struct VerifyFiles {
    /// Its results CSV (resumable).
    pub results: PathBuf,
    /// Its JSON summary (holds the verdict).
    pub json: PathBuf,
}

/// `CSV.verify.csv` and `CSV.verify.json`.
pub(crate) fn verify_files(csv: &Path) -> VerifyFiles {
    let with = |suffix: &str| {
        let mut name = csv.file_name().unwrap_or_default().to_os_string();
        name.push(suffix);
        csv.with_file_name(name)
    };
    VerifyFiles {
        results: with(".verify.csv"),
        json: with(".verify.json"),
    }
}

/// The verdict in a verification's JSON summary: the summary object, or `None` when the
/// file cannot be read.
pub(crate) fn read_verdict(json: &Path) -> Option<serde_json::Value> {
    let text = std::fs::read_to_string(json).ok()?;
    serde_json::from_str(&text).ok()
}

/// The one line a verdict prints.
pub(crate) fn verdict_line(v: &serde_json::Value) -> String {
    let decision = v
        .get("decision")
        .and_then(|d| d.as_str())
        .unwrap_or("continue");
    let what = match decision {
        "H1" => "passed (H1: the tuned values are better)",
        "H0" => "failed (H0: the tuned values are not better; keep the start values)",
        _ => "undecided (no verdict within --verify-games)",
    };
    let games = v
        .get("games")
        .and_then(|g| g.as_u64())
        .map_or(String::new(), |g| format!(" after {g} games"));
    format!("Verification SPRT tuned vs start: {what}{games}")
}

/// The JSON summary of a cluster tune's verification SPRT (beside its run directory).
pub fn verify_json(dir: &Path) -> std::path::PathBuf {
    dir.join("verify.json")
}

/// Where a cluster tune's verification SPRT runs.
pub fn verify_dir(dir: &Path) -> std::path::PathBuf {
    dir.join("verify")
}
