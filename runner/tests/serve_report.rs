//! `spar serve`'s report runs (`spar report`): one of an external engine (the spar under
//! test as `cmd=… args=uci`, which records through the TrackFile option and needs no track
//! build) submitted with `spar submit`, ending finished with its files downloadable; one
//! re-rendering two saved statistics fixtures (`--from`), whose page shows the summary
//! table with its significance marks and the histograms of `spar report`; builtin engines
//! refused by a server without a track-enabled spar; a `--track-spar` that is no file.

mod common;
mod serve_common;

use serde_json::{json, Value};
use serve_common::*;

const TRACK: bool = cfg!(feature = "track");

fn done(server: &Server, id: i64) -> Value {
    let v = server.wait(id, "the report to end", |v| {
        state(v) != "queued" && state(v) != "running"
    });
    assert_eq!(state(&v), "finished", "{v}\n{}", read(&server.log));
    v
}

#[test]
fn a_report_of_an_external_engine_finishes_with_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let spar = env!("CARGO_BIN_EXE_spar");
    let o = common::run(&[
        "submit",
        "--server",
        &server.url(),
        "report",
        "--engine",
        "name=ext",
        &format!("cmd={spar}"),
        "args=uci",
        "--each",
        "nodes=300",
        "--games",
        "2",
        "--seed",
        "3",
    ]);
    let url = common::ok(&o);
    let id: i64 = url.trim().rsplit('/').next().unwrap().parse().unwrap();
    done(&server, id);
    let dir = data.join("runs").join(id.to_string());
    for name in ["stats.json", "stats.csv", "report.html"] {
        let (code, body) = server.http("GET", &format!("/runs/{id}/files/{name}"), None);
        assert_eq!(code, 200, "{name}: {body}");
        assert_eq!(body, read(&dir.join(name)), "{name}");
    }
    let stats = common::json(&dir.join("stats.json"));
    assert_eq!(stats["format"], "spar-track-stats");
    // Two games, ext in both seats of each.
    assert_eq!(stats["variants"][0]["games"], 4, "{stats}");
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    assert!(page.contains("<h2>Report</h2>"), "{page}");
    assert!(page.contains("id=\"summary\""));
    assert!(page.contains("<pre id=\"report-text\">"));
    // The command line names the server's flags (the run's directory, never a build).
    assert!(page.contains(&format!("--out {} --no-build", dir.display())));
    if !TRACK {
        // A spar without `track` records nothing: the page says why.
        assert!(page.contains("No site recorded anything"), "{page}");
    }
}

#[test]
fn a_report_of_saved_statistics_shows_the_table_and_the_histograms() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let (base, dev) = (tmp.path().join("base.json"), tmp.path().join("dev.json"));
    std::fs::write(&base, common::fixture("base <b>", 30, 0).to_string()).unwrap();
    std::fs::write(&dev, common::fixture("dev", 60, 10).to_string()).unwrap();
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let w = json!(["--from", base, "--from", dev]);
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "report", "words": w})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    done(&server, id);
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);
    // The variants' names, escaped.
    assert!(
        page.contains("base &lt;b&gt;") && !page.contains("base <b>"),
        "{page}"
    );
    let table = page
        .split("<table id=\"summary\">")
        .nth(1)
        .expect("the summary table")
        .split("</table>")
        .next()
        .unwrap();
    // rfp fired 30 and 60 times of 100: means 0.3 and 0.6, a difference of +0.3 marked
    // significant (p < 0.05); rfp/margin's +10 is not; the counts of both sites.
    assert!(table.contains("<th>Δ N/game</th><th>p</th><th>Δ μ</th><th>p</th>"));
    assert!(table.contains(">+0.300*</td>"), "{table}");
    assert!(table.contains(">0.0149</td>"), "{table}");
    assert!(
        table.contains(">+10.00</td>") && table.contains(">0.8149</td>"),
        "{table}"
    );
    for cell in [">100<", ">3<", ">0.300<", ">0.600<", ">110.0<", ">210<"] {
        assert!(table.contains(cell), "{cell}: {table}");
    }
    // One histogram per site, each with both variants' bars.
    let sites: Vec<&str> = page.split("<section id=\"site-").skip(1).collect();
    assert_eq!(sites.len(), 2, "{page}");
    assert!(sites[0].starts_with("rfp\"") && sites[1].starts_with("rfp-margin\""));
    for s in &sites {
        assert_eq!(s.matches("<svg").count(), 1);
        assert!(s.contains("<rect"), "{s}");
    }
    // The terminal report, as `spar report --from` prints it for the same files.
    let text = common::ok(&common::run(&[
        "report",
        "--from",
        base.to_str().unwrap(),
        "--from",
        dev.to_str().unwrap(),
    ]));
    let shown = page
        .split("<pre id=\"report-text\">")
        .nth(1)
        .unwrap()
        .split("</pre>")
        .next()
        .unwrap();
    let unescaped = shown
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&");
    assert_eq!(unescaped, text);
}

#[test]
fn builtin_engines_need_a_track_spar() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let w = json!([
        "--engine",
        "name=dev",
        "option.rfp_margin=40",
        "--engine",
        "name=base",
        "--each",
        "nodes=300",
        "--games",
        "2"
    ]);
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "report", "words": w})),
    );
    if TRACK {
        // This spar records itself: the run is taken.
        assert_eq!(code, 201, "{v}");
    } else {
        assert_eq!(code, 400, "{v}");
        let e = v["error"].as_str().unwrap();
        assert!(e.contains("--track-spar PATH"), "{e}");
        let (_, runs) = server.json("GET", "/api/runs", None);
        assert_eq!(runs["runs"].as_array().unwrap().len(), 0, "nothing stored");
        // The same from the index's form: the message in the page, nothing stored.
        let (_, index) = server.http("GET", "/", None);
        assert!(index.contains("<option>report</option>"), "{index}");
        let body = "kind=report&words=--engine+name%3Ddev+--each+nodes%3D300+--games+2&note=";
        let r = server.form_body("/runs", body);
        assert_eq!(r.code, 400, "{r:?}");
        assert!(r.body.contains("--track-spar PATH"), "{r:?}");
        let (_, runs) = server.json("GET", "/api/runs", None);
        assert_eq!(runs["runs"].as_array().unwrap().len(), 0, "nothing stored");
        // The same server's own flag refused by the words.
        let (code, v) = server.json(
            "POST",
            "/api/runs",
            Some(&json!({"kind": "report", "words": ["--from", "x.json", "--no-build"]})),
        );
        assert_eq!(code, 400, "{v}");
        assert!(v["error"].as_str().unwrap().contains("--no-build"), "{v}");
    }
    // With --track-spar, builtin engines are taken and that spar plays the report runs
    // (here a script that notes its words and runs the spar under test).
    let script = tmp.path().join("track-spar");
    let marker = tmp.path().join("marker");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$@\" >> '{}'\nexec '{}' \"$@\"\n",
            marker.display(),
            env!("CARGO_BIN_EXE_spar")
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    drop(server);
    let server = Server::start_with(
        &data,
        &tmp.path().join("serve2.log"),
        &["--track-spar", script.to_str().unwrap()],
        None,
        tmp.path(),
    );
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "report", "words": w})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let v = server.wait(id, "the report to end", |v| {
        state(v) != "queued" && state(v) != "running"
    });
    let noted = read(&marker);
    assert!(
        noted.starts_with("report --engine name=dev option.rfp_margin=40")
            && noted.contains("--no-build"),
        "{noted}"
    );
    if !TRACK {
        // The script runs a spar without `track`: it says so, and builds nothing.
        assert_eq!(state(&v), "failed", "{v}");
        assert!(
            v["stderr_tail"].as_str().unwrap_or("").contains("track"),
            "{v}"
        );
    }
    // A --track-spar that is no file is refused at start.
    let o = common::run(&[
        "serve",
        "--data-dir",
        tmp.path().join("d2").to_str().unwrap(),
        "--bind",
        "127.0.0.1:0",
        "--track-spar",
        tmp.path().join("nope").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", common::stderr(&o));
    assert!(common::stderr(&o).contains("--track-spar"));
}
