//! What the tests of the two personalities (fastchess_cli.rs, cutechess_cli.rs) share: spar
//! run under a tool's program name, a run's `Finished game` lines, and the check that a
//! refused option is one line on stderr with exit code 2 and nothing on stdout.
#![allow(dead_code)]

use std::process::Output;

use crate::common::{argv, run, stderr, stdout};

/// Runs spar through a symlink named `name` (in a new temporary directory, also the working
/// directory): its `-version` line and the output of `line`.
pub fn through_symlink(name: &str, line: &str) -> (String, Output) {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join(name);
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_spar"), &link).unwrap();
    let version = std::process::Command::new(&link)
        .arg("-version")
        .output()
        .unwrap();
    let out = std::process::Command::new(&link)
        .args(argv(line))
        .current_dir(dir.path())
        .output()
        .unwrap();
    (crate::common::ok(&version), out)
}

/// The `Finished game` lines of a successful run of `line`.
pub fn finished_lines(line: &str) -> Vec<String> {
    let out = crate::common::ok(&run(&argv(line)));
    out.lines()
        .filter(|l| l.starts_with("Finished game"))
        .map(String::from)
        .collect()
}

/// `spar TOOL BASE EXTRA` for every extra: exit code 2, one line on stderr starting with
/// `spar: error: TOOL`, nothing on stdout (no game started).
pub fn all_refused(tool: &str, base: &str, extras: &[&str]) {
    for extra in extras {
        let line = format!("{tool} {base} {extra}");
        let o = run(&argv(&line));
        assert_eq!(o.status.code(), Some(2), "{line}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.lines().count(), 1, "{line}: {err}");
        assert!(
            err.starts_with(&format!("spar: error: {tool}")),
            "{line}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{line}");
    }
}
