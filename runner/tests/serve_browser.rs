//! The browser test of `spar serve` (issue 31, "Done when"): a real browser — Debian's
//! `chromium` and `chromium-driver`, driven through Selenium from PyPI (installed by
//! `.ci/setup`) — opens the index, registers **spar's own repository** (the git checkout
//! this test runs in) as an engine built by the `git=` builder, submits from the form's
//! engine fields an SPRT of two option sets of that engine at HEAD (the net against
//! `option.Eval=hce`) at a node limit, watches the run page reach H1 without reloading,
//! finds it by search, and stops and resumes a second run (of a tiny git engine made here,
//! whose Makefile builds a script "engine" that runs this spar as its UCI engine, at two
//! revisions: its page shows the commits and the diff). The steps are `serve_browser.py`.
//! The server builds HEAD — the committed code, not the working tree's changes — with
//! `cargo build --profile ci` (`SPAR_BUILD_PROFILE=ci`: optimised like release, without fat
//! LTO) in `target/spar-builds/` of the checkout (cached by commit: a second run of the test
//! at the same HEAD builds nothing; the cache is kept between runs of the same clone). When
//! the working tree is HEAD, this test's own spar is that build: it is put in the cache first
//! ([`reuse_this_spar`]), so a fresh clone's CI does not compile spar a second time; the
//! server's builder then resolves, benches and installs it as any build. A second test (issue 32, "Done when";
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

/// spar's own repository for the test: the top of the git checkout this test runs in, its
/// HEAD commit, and the bench HEAD must print when the working tree is HEAD (this test's
/// spar's bench; `None` when tracked files differ from HEAD, whose bench may then differ).
/// Outside a git checkout: `None` with a notice, or a failure under `CI=true`.
fn spar_repo() -> Option<(String, String, Option<u64>)> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let (Some(top), Some(head)) = (
        git(&["rev-parse", "--show-toplevel"]),
        git(&["rev-parse", "--verify", "HEAD^{commit}"]),
    ) else {
        let msg = format!("serve_browser: {dir} is not in a git checkout with a commit");
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{msg}");
        }
        eprintln!("{msg}: skipped");
        return None;
    };
    let clean =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| s.is_empty());
    let bench = clean.then(|| {
        let out = Command::new(env!("CARGO_BIN_EXE_spar"))
            .arg("bench")
            .output()
            .expect("spar bench");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .rev()
            .find_map(|l| l.strip_suffix(" nps"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("spar bench printed no N nodes line:\n{text}"))
    });
    if bench.is_none() {
        eprintln!(
            "serve_browser: the working tree differs from HEAD: the server builds HEAD \
             ({head}), the committed code; its bench is not checked"
        );
    }
    Some((top, head, bench))
}

/// When the working tree is HEAD, this test's spar *is* HEAD built with the `ci` profile:
/// it is put in the build cache of the checkout at `top` as that build
/// (`target/spar-builds/HEAD-default-ci/spar`, what `SPAR_BUILD_PROFILE=ci` builds), so the
/// server's builder finds it instead of compiling spar again on a fresh clone (minutes on
/// two cores). A build already there is kept. The builder still benches it and installs it
/// in the server's own cache, as for any build.
fn reuse_this_spar(top: &Path, head: &str) {
    let dir = top
        .join("target")
        .join("spar-builds")
        .join(format!("{head}-default-ci"));
    if dir.join("spar").is_file() {
        return;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let stage = dir.join(".spar.tmp");
    std::fs::copy(env!("CARGO_BIN_EXE_spar"), &stage).unwrap();
    std::fs::rename(&stage, dir.join("spar")).unwrap();
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
fn a_browser_registers_spar_itself_submits_watches_searches_stops_and_resumes() {
    if !can_run() {
        return;
    }
    let Some((spar, head, bench)) = spar_repo() else {
        return;
    };
    if bench.is_some() {
        reuse_this_spar(Path::new(&spar), &head);
    }
    let tmp = tempfile::tempdir().unwrap();
    let repo = tmp.path().join("tiny");
    tiny_engine(&repo, &tmp.path().join("builds.txt"));
    // The server builds spar with the tests' `ci` profile (no fat LTO: minutes less on a
    // fresh clone's cold cache), cached apart from release builds.
    let here = std::env::current_dir().unwrap();
    let server = Server::start_env(
        &tmp.path().join("data"),
        &tmp.path().join("serve.log"),
        &[],
        &[("SPAR_BUILD_PROFILE", "ci")],
        &here,
    );
    let url = server.url();
    let bench = bench.map(|b| b.to_string()).unwrap_or_default();
    let args = [
        url.as_ref(),
        repo.as_os_str(),
        DRIVER.as_ref(),
        spar.as_ref(),
        head.as_ref(),
        bench.as_ref(),
    ];
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
