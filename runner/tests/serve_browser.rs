//! The browser test of `spar serve` (issue 31, "Done when"): a real browser — Debian's
//! `chromium` and `chromium-driver`, driven through Selenium from PyPI (installed by
//! `.ci/setup`) — opens the index, registers an engine (a tiny git repository made here
//! whose Makefile builds a script "engine" that runs this spar as its UCI engine),
//! submits an SPRT of two option sets of the embedded engine from the form, watches the
//! run page reach its verdict without reloading, finds it by search, and stops and resumes
//! a second run. The steps are `serve_browser.py`. Without a browser or Selenium the test
//! is skipped with a notice, except under `CI=true`, where it fails.

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

#[test]
fn a_browser_registers_an_engine_submits_watches_searches_stops_and_resumes() {
    if let Some(what) = missing() {
        let msg = format!(
            "serve_browser: {what} missing (apt-get install chromium chromium-driver; pip \
             install selenium; .ci/setup does both)"
        );
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}");
        }
        eprintln!("{msg}: skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    tiny_engine(&repo, &tmp.path().join("builds.txt"));
    let server = Server::start(&tmp.path().join("data"), &tmp.path().join("serve.log"));
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/serve_browser.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(server.url())
        .arg(&repo)
        .arg(DRIVER)
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
