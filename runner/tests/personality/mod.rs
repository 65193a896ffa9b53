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

/// The SPRT bounds every command checks alike (issue 33): `spar TOOL BASE -sprt WORDS` for
/// elo0 = elo1, elo0 > elo1, a negative beta and an alpha above 1 is refused before any
/// game (exit code 2, one line naming the key at fault), and valid bounds play.
pub fn sprt_bounds_checked(tool: &str, base: &str) {
    for (words, key) in [
        ("elo0=5 elo1=5", "elo0 (5) must be less than elo1 (5)"),
        ("elo0=5 elo1=0", "elo0 (5) must be less than elo1 (0)"),
        (
            "elo0=0 elo1=5 beta=-0.1",
            "beta (-0.1) must be strictly between 0 and 1",
        ),
        (
            "elo0=0 elo1=5 alpha=1.5",
            "alpha (1.5) must be strictly between 0 and 1",
        ),
        (
            "elo0=0 elo1=5 alpha=0.5 beta=0.5",
            "alpha + beta (0.5 + 0.5)",
        ),
        ("elo0=-x elo1=5", "elo0=-x: '-x' is not a number"),
    ] {
        let line = format!("{tool} {base} -sprt {words}");
        let o = run(&argv(&line));
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{line}: {err}");
        assert_eq!(err.lines().count(), 1, "{line}: {err}");
        assert!(
            err.starts_with(&format!("spar: error: {tool}: -sprt")) && err.contains(key),
            "{line}: {err}"
        );
        assert!(stdout(&o).is_empty(), "{line}");
    }
    // Negative bounds are numbers, not options.
    let line = format!("{tool} {base} -sprt elo0=-10 elo1=-2 alpha=0.1 beta=0.1");
    let out = crate::common::ok(&run(&argv(&line)));
    assert!(out.contains("Finished game 2 "), "{line}: {out}");
}
