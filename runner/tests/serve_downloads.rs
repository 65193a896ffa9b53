//! Downloads of a run's files as a user of a datagen run meets them (issue 56): a file of
//! 2 GiB streamed with the server's memory flat, and range requests, so that `curl -C -`
//! resumes a download of a positions file.

mod common;
mod serve_common;

use std::io::Read;

use serve_common::{state, Server};

#[test]
fn a_two_gib_file_streams_with_the_memory_flat_and_ranges_resume() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let server = Server::start(&data, &dir.path().join("serve.log"));
    let v = server.submit_little_match();
    let id = v["id"].as_i64().unwrap();
    server.wait(id, "finished", |v| state(v) == "finished");
    // A sparse file of 2 GiB (as a datagen run's positions file is big) and a small one.
    let run_dir = data.join("runs").join(id.to_string());
    let big: u64 = 2 << 30;
    let f = std::fs::File::create(run_dir.join("positions.bin")).unwrap();
    f.set_len(big).unwrap();
    drop(f);
    // ASCII bytes: the test client reads answers as text.
    let small: Vec<u8> = (0..100_000u32).map(|i| (i % 127) as u8).collect();
    std::fs::write(run_dir.join("small.bin"), &small).unwrap();

    // The whole big file: its length announced, every byte read, the server stays small.
    let before = server.rss_mib();
    let url = format!("http://{}/runs/{id}/files/positions.bin", server.addr);
    let answer = serve_common::client().get(&url).call().unwrap();
    assert_eq!(answer.status().as_u16(), 200, "{answer:?}");
    let header = |name: &str| {
        let value = answer.headers().get(name);
        value.and_then(|v| v.to_str().ok()).map(String::from)
    };
    assert_eq!(
        header("content-length"),
        Some(big.to_string()),
        "{answer:?}"
    );
    assert_eq!(
        header("accept-ranges").as_deref(),
        Some("bytes"),
        "{answer:?}"
    );
    // Read as it comes, a MiB at a time.
    let mut s = answer.into_body().into_reader();
    let mut buf = vec![0u8; 1 << 20];
    let mut got: u64 = 0;
    let mut most = before;
    loop {
        let n = s.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        got += n as u64;
        if got % (256 << 20) < n as u64 {
            most = most.max(server.rss_mib());
        }
    }
    assert_eq!(got, big);
    let most = most.max(server.rss_mib());
    println!("2 GiB sent: the server's RSS at most {most} MiB (before: {before} MiB)");
    assert!(
        most < 100,
        "RSS {most} MiB while sending 2 GiB (before: {before} MiB)"
    );

    // Ranges: a middle, an open end, a suffix; beyond the end a 416.
    let get = |range: &str| {
        server.request(
            "GET",
            &format!("/runs/{id}/files/small.bin"),
            &[format!("Range: {range}")],
            "",
        )
    };
    let bytes_of = |r: &serve_common::Reply| r.body.as_bytes().to_vec();
    let r = get("bytes=10-19");
    assert_eq!(r.code, 206, "{r:?}");
    assert_eq!(
        r.header("content-range").as_deref(),
        Some("bytes 10-19/100000")
    );
    assert_eq!(r.header("content-length").as_deref(), Some("10"));
    assert_eq!(bytes_of(&r), small[10..20].to_vec());
    let r = get("bytes=99990-");
    assert_eq!(r.code, 206, "{r:?}");
    assert_eq!(bytes_of(&r), small[99_990..].to_vec());
    let r = get("bytes=-5");
    assert_eq!(r.code, 206, "{r:?}");
    assert_eq!(
        r.header("content-range").as_deref(),
        Some("bytes 99995-99999/100000")
    );
    let r = get("bytes=100000-");
    assert_eq!(r.code, 416, "{r:?}");
    assert_eq!(r.header("content-range").as_deref(), Some("bytes */100000"));
    // The big file's last bytes by a range, as `curl -C -` asks them.
    let r = server.request(
        "GET",
        &format!("/runs/{id}/files/positions.bin"),
        &[format!("Range: bytes={}-", big - 4)],
        "",
    );
    assert_eq!(r.code, 206, "{:?}", r.head);
    assert_eq!(r.body.as_bytes(), &[0, 0, 0, 0]);
}
