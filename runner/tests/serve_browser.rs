//! The browser test of `spar serve` (issue 31, "Done when"): a real browser — Debian's
//! `chromium` and `chromium-driver`, driven through Selenium from PyPI (installed by
//! `.ci/setup`) — opens the index, registers an engine (a tiny git repository made here
//! whose Makefile builds a script "engine" that runs this spar as its UCI engine),
//! submits an SPRT of two option sets of the embedded engine from the form, watches the
//! run page reach its verdict without reloading, finds it by search, and stops and resumes
//! a second run. The steps are `serve_browser.py`. A second test (issue 32, "Done when";
//! its steps are `serve_browser_approvals.py`), on a server with accounts: two people sign
//! up, the admin accepts one as a user and one as an approver, the user submits a run that
//! waits, the approver approves it, it plays, and the actions log page shows each step.
//! Without a browser or Selenium the tests are skipped with a notice, except under
//! `CI=true`, where they fail.

mod serve_common;

use std::path::Path;
use std::process::Command;

use serve_common::*;

const CHROMIUM: &str = "/usr/bin/chromium";
const DRIVER: &str = "/usr/bin/chromedriver";

/// What is missing to run the browser test, if anything.
fn missing() -> Option<String> {
    let mut m = Vec::new();
    for p in [CHROMIUM, DRIVER] {
        if !Path::new(p).is_file() {
            m.push(p.to_string());
        }
    }
    let selenium = Command::new("python3")
        .args(["-c", "import selenium"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !selenium {
        m.push("python3's selenium".into());
    }
    (!m.is_empty()).then(|| m.join(", "))
}

/// Whether the browser tests can run: `false` (with a notice) when something is missing;
/// under `CI=true` a missing piece fails the test instead.
fn can_run() -> bool {
    let Some(what) = missing() else {
        return true;
    };
    let msg = format!(
        "serve_browser: {what} missing (apt-get install chromium chromium-driver; pip \
         install selenium; .ci/setup does both)"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{msg}");
    }
    eprintln!("{msg}: skipped");
    false
}

/// Runs the Selenium script `tests/NAME` with `args`; asserts that every step passed.
fn run_script(server: &Server, name: &str, args: &[&std::ffi::OsStr]) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name);
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .env("SE_OFFLINE", "true")
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "the browser test failed:\n{stdout}\n{stderr}\nthe server's log:\n{}",
        read(&server.log)
    );
    assert!(stdout.contains("all steps passed"), "{stdout}");
}

#[test]
fn a_browser_registers_an_engine_submits_watches_searches_stops_and_resumes() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    tiny_engine(&repo, &tmp.path().join("builds.txt"));
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    let url = server.url();
    let args = [url.as_ref(), repo.as_os_str(), DRIVER.as_ref()];
    run_script(&server, "serve_browser.py", &args);
}

#[test]
fn a_browser_signs_up_is_accepted_submits_a_waiting_run_that_an_approver_approves() {
    if !can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let server = accounts::server_with_admin(tmp.path());
    let url = server.url();
    let args = [url.as_ref(), DRIVER.as_ref(), accounts::PASSWORD.as_ref()];
    run_script(&server, "serve_browser_approvals.py", &args);
}
