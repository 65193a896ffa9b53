//! `spar serve`'s tune page: a tiny node-limited tune (two parameters of the embedded
//! engine, six iterations, a four-game verification) played by the server; its page shows
//! each parameter's trajectory as inline SVG in units of c_end and in absolute units, the
//! verdicts, the averaged values and the verification's verdict — the same numbers as
//! `spar status tune.csv` and the tune's own files.

mod common;
mod serve_common;

use serde_json::json;
use serve_common::*;

#[test]
fn a_tunes_page_shows_its_trajectories_verdicts_and_verification() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let server = Server::start(&data, &tmp.path().join("serve.log"));
    let w: Vec<&str> = "--param rfp_margin --param lmr_base --each nodes=300 --iterations 6 \
                        --pairs-per-iteration 2 --seed 3 --verify-games 4"
        .split_whitespace()
        .collect();
    let (code, v) = server.json(
        "POST",
        "/api/runs",
        Some(&json!({"kind": "tune", "words": w})),
    );
    assert_eq!(code, 201, "{v}");
    let id = v["id"].as_i64().unwrap();
    let v = server.wait(id, "the tune to finish", |v| {
        state(v) != "queued" && state(v) != "running"
    });
    assert_eq!(state(&v), "finished", "{v}\n{}", read(&server.log));
    let dir = data.join("runs").join(id.to_string());
    let (code, page) = server.http("GET", &format!("/runs/{id}"), None);
    assert_eq!(code, 200);

    // The trajectory: the CSV's rows (iteration 0 the start), read here on their own.
    let csv = read(&dir.join("tune.csv"));
    let rows: Vec<Vec<f64>> = csv
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .map(|x| x.parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 7, "{csv}");
    let last = rows.last().unwrap();

    // One chart in units of c_end with a line of every row per parameter, one chart per
    // parameter in absolute units.
    let c_end = page
        .split("<svg id=\"c-end\"")
        .nth(1)
        .expect("the c_end chart");
    let c_end = c_end.split("</svg>").next().unwrap();
    for name in ["rfp_margin", "lmr_base"] {
        let line = c_end
            .split(&format!("<polyline data-param=\"{name}\" points=\""))
            .nth(1)
            .unwrap_or_else(|| panic!("no line of {name}: {c_end}"));
        let points = line.split('"').next().unwrap();
        assert_eq!(points.split(' ').count(), rows.len(), "{points}");
        assert!(page.contains(&format!("<title>{name}: θ (left), (θ − start) / c_end")));
    }
    assert_eq!(page.matches("<svg").count(), 3);

    // The table: the cells `spar status tune.csv` prints, and the last row's θ.
    let status = common::ok(&common::run(&[
        "status",
        dir.join("tune.csv").to_str().unwrap(),
    ]));
    for (i, name) in ["rfp_margin", "lmr_base"].iter().enumerate() {
        let line = status
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name} in {status}"));
        let t: Vec<&str> = line.split_whitespace().collect();
        let row = page
            .split(&format!("<tr data-param=\"{name}\">"))
            .nth(1)
            .unwrap()
            .split("</tr>")
            .next()
            .unwrap();
        let cell = |c: &str| {
            row.split(&format!("data-c=\"{c}\""))
                .nth(1)
                .and_then(|r| r.split('>').nth(1))
                .and_then(|r| r.split('<').next())
                .unwrap_or_else(|| panic!("no {c} in {row}"))
                .to_string()
        };
        assert_eq!(cell("current"), format!("{:.2}", last[2 + i]));
        assert_eq!(cell("current"), t[2]);
        // Δ in units of the last row's c (c_end at the end): (θ − 75) / c.
        assert_eq!(
            cell("delta"),
            format!("{:+.2}", (last[2 + i] - 75.0) / last[4 + i])
        );
        assert_eq!(cell("delta"), t[5]);
        assert_eq!(cell("average"), t[6]);
        assert_eq!(cell("z"), t[10]);
        assert_eq!(cell("verdict"), t[11..].join(" "));
    }

    // The verification's verdict, as the run's files and `spar status` say it.
    let verify = common::json(&dir.join("tune.csv.verify.json"));
    let games = verify["games"].as_u64().unwrap();
    let verdict = status
        .lines()
        .find(|l| l.starts_with("Verification SPRT"))
        .expect("the verification line");
    assert!(
        verdict.ends_with(&format!("after {games} games")),
        "{verdict}"
    );
    assert!(
        page.contains(&format!("<p id=\"verification\">{verdict}</p>")),
        "{page}"
    );
    // The averaged values the tune wrote.
    let tuned = read(&dir.join("tuned.txt"));
    assert!(tuned.contains("rfp_margin, "));
    assert!(page.contains(&format!("<pre id=\"tuned\">{tuned}</pre>")));
}
