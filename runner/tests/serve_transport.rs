//! `spar serve` at the transport level (issue 53): the security headers on every answer of
//! every route (the routes read from router.rs, so a new one is not forgotten), anonymous
//! and signed-in, `Cache-Control: no-store` on the page that shows a new API token; a
//! connection that trickles its headers (or sends nothing) closed after `--header-timeout`
//! while others are served; and the connections of one client address bounded by
//! `--connections-per-address` while another address is served; over TLS, a client that
//! never starts its handshake and one that trickles its head after it closed alike.

mod serve_common;

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

use serve_common::accounts::{api, server_with_admin, Session};
use serve_common::tls::{certificates, client};
use serve_common::{Reply, Server};

/// The longest any wait of these tests may take: generous, the machine may be loaded.
const PATIENCE: Duration = Duration::from_secs(90);

/// Every route of router.rs, with its parameters filled in (run 1, the name `a`).
fn routes() -> Vec<String> {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/serve/router.rs"))
        .unwrap();
    let routes: Vec<String> = src
        .split(".route(")
        .skip(1)
        .map(|r| r.trim_start().trim_start_matches('"'))
        .map(|r| r.split('"').next().unwrap().to_string())
        .map(|r| {
            r.replace("{id}", "1")
                .replace("{name}", "a")
                .replace("/runs/1/files/a", "/runs/1/files/results.pgn")
        })
        .collect();
    assert!(routes.len() > 40, "{routes:?}");
    routes
}

/// A request's answer, read up to the end of its head only (a live stream never ends):
/// `None` when the connection is closed before a head arrives.
fn head(addr: &str, method: &str, path: &str, headers: &[String]) -> Option<Reply> {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{extra}Content-Length: 0\r\nConnection: \
         close\r\n\r\n"
    );
    s.write_all(request.as_bytes()).ok()?;
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    while !bytes.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) => return None,
            Ok(n) => bytes.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return None,
            Err(e) => panic!("{method} {path}: no answer: {e}"),
        }
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let code = head.split_whitespace().nth(1)?.parse().ok()?;
    Some(Reply {
        code,
        head: head.to_string(),
        body: body.to_string(),
    })
}

/// Checks the security headers of `r`, the answer to `what` on `path`.
fn assert_secure(r: &Reply, path: &str, what: &str) {
    let h = |name: &str| r.header(name).unwrap_or_default();
    assert_eq!(h("x-content-type-options"), "nosniff", "{what}: {r:?}");
    assert_eq!(h("referrer-policy"), "same-origin", "{what}: {r:?}");
    assert_eq!(h("cache-control"), "no-store", "{what}: {r:?}");
    let csp = h("content-security-policy");
    for part in [
        "default-src 'self'",
        "base-uri 'none'",
        "form-action 'self'",
    ] {
        assert!(csp.contains(part), "{what}: {part} missing: {r:?}");
    }
    // The run page frames its status page: this server may, no other.
    let (ancestors, frames) = if path.ends_with("/status.html") {
        ("frame-ancestors 'self'", "SAMEORIGIN")
    } else {
        ("frame-ancestors 'none'", "DENY")
    };
    assert!(csp.contains(ancestors), "{what}: {r:?}");
    assert_eq!(h("x-frame-options"), frames, "{what}: {r:?}");
}

#[test]
fn every_answer_of_every_route_carries_the_security_headers() {
    let dir = tempfile::tempdir().unwrap();
    let server = server_with_admin(dir.path());
    let admin = Session::new(&server, "root");
    let token = admin.token(&server);
    // Something for the run routes to show: run 1 (a name in a route is `a`, which need
    // not exist: a 404 carries the headers too).
    let words = r#"["--engine","name=a","--engine","name=b","--each","nodes=300","--games","2"]"#;
    let (code, v) = api(
        &server,
        "POST",
        "/api/runs",
        &token,
        &format!(r#"{{"kind":"match","words":{words}}}"#),
    );
    assert_eq!(code, 201, "{v}");
    let callers = [
        ("anonymous", vec![]),
        (
            "session",
            vec![format!("Cookie: spar_session={}", admin.cookie)],
        ),
        ("token", vec![format!("Authorization: Bearer {token}")]),
    ];
    let mut pages = 0;
    for route in routes() {
        for (who, headers) in &callers {
            let what = format!("{who} GET {route}");
            let r = head(&server.addr, "GET", &route, headers)
                .unwrap_or_else(|| panic!("{what}: closed without an answer"));
            assert_secure(&r, &route, &what);
            pages += usize::from(r.code == 200);
        }
    }
    assert!(pages > 40, "only {pages} answers were 200");
    // State-changing requests, refused and accepted, and a route that does not exist.
    let cookie = format!("Cookie: spar_session={}", admin.cookie);
    let csrf = format!("X-CSRF-Token: {}", admin.csrf);
    let bearer = format!("Authorization: Bearer {token}");
    let others: [(&str, &str, Vec<String>); 6] = [
        ("POST", "/runs/1/note", vec![]),
        ("POST", "/api/runs/1/stop", vec![]),
        ("POST", "/runs/1/note", vec![cookie.clone()]),
        ("POST", "/runs/1/note", vec![cookie.clone(), csrf]),
        ("POST", "/api/runs/1/note", vec![bearer]),
        ("GET", "/no/such/page", vec![cookie.clone()]),
    ];
    for (method, path, headers) in others {
        let what = format!("{method} {path} {headers:?}");
        let r = head(&server.addr, method, path, &headers)
            .unwrap_or_else(|| panic!("{what}: closed without an answer"));
        assert_secure(&r, path, &what);
    }
    // The page that shows a new API token once, and the account page after it.
    let r = admin.post(&server, "/account/tokens", "label=ci");
    assert_eq!(r.code, 200, "{r:?}");
    assert!(r.body.contains("<pre id=\"token\">"), "{}", r.body);
    assert_secure(&r, "/account/tokens", "the new token's page");
    let r = head(&server.addr, "GET", "/account", &[cookie]).unwrap();
    assert_eq!(r.code, 200, "{r:?}");
    assert_secure(&r, "/account", "the account page");
}

/// Whether the connection `s` was closed by the server (an end, a reset, or an error
/// answer followed by the end); `false` while it is still open after `wait`.
fn closed_within(s: &mut TcpStream, wait: Duration) -> bool {
    s.set_read_timeout(Some(wait)).unwrap();
    closed(s)
}

/// Whether `s` ends (see [`closed_within`]) before its read timeout.
fn closed(s: &mut impl Read) -> bool {
    let mut buf = [0u8; 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// A server with `extra` flags in `dir`, without accounts.
fn server(dir: &Path, extra: &[&str]) -> Server {
    let here = std::env::current_dir().unwrap();
    Server::start_with(
        &dir.join("data"),
        &dir.join("serve.log"),
        extra,
        None,
        &here,
    )
}

#[test]
fn a_connection_that_trickles_its_headers_or_sends_nothing_is_closed_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(dir.path(), &["--header-timeout", "2"]);
    let addr = server.addr.clone();
    // One byte a second: its head would take two minutes.
    let slow = std::thread::spawn(move || {
        let start = Instant::now();
        let mut s = TcpStream::connect(&addr).unwrap();
        let head = format!(
            "GET / HTTP/1.1\r\nHost: {addr}\r\nX-Slow: {}\r\n\r\n",
            "a".repeat(120)
        );
        for byte in head.bytes() {
            if s.write_all(&[byte]).is_err() || closed_within(&mut s, Duration::from_secs(1)) {
                return Some(start.elapsed());
            }
            if start.elapsed() > PATIENCE {
                break;
            }
        }
        None
    });
    let silent_start = Instant::now();
    let mut silent = TcpStream::connect(&server.addr).unwrap();
    // Meanwhile a normal request is answered.
    let r = head(&server.addr, "GET", "/", &[]).expect("an answer");
    assert_eq!(r.code, 200, "{r:?}");
    assert!(
        closed_within(&mut silent, PATIENCE),
        "a connection that sent nothing is still open after {PATIENCE:?}"
    );
    let silent_for = silent_start.elapsed();
    assert!(
        silent_for >= Duration::from_millis(1500),
        "closed after {silent_for:?}"
    );
    let slow_for = slow
        .join()
        .unwrap()
        .unwrap_or_else(|| panic!("a trickling connection is still open after {PATIENCE:?}"));
    assert!(
        slow_for >= Duration::from_millis(1500),
        "closed after {slow_for:?}"
    );
    // The server still serves.
    let r = head(&server.addr, "GET", "/api/runs", &[]).expect("an answer");
    assert_eq!(r.code, 200, "{r:?}");
}

/// A connection to `to` from the loopback address `from` (127.0.0.2: another client).
fn connect_from(from: &str, to: &str) -> TcpStream {
    let to: SocketAddr = to.parse().unwrap();
    let from: SocketAddr = format!("{from}:0").parse().unwrap();
    let s = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    s.bind(&from.into()).unwrap();
    s.connect(&to.into()).unwrap();
    s.into()
}

/// A GET of `/` on `s`: its status, or `None` when the server closes it unanswered.
fn get_on(s: &mut TcpStream, host: &str) -> Option<u16> {
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    let request = format!("GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).ok()?;
    let mut reply = Vec::new();
    match s.read_to_end(&mut reply) {
        Ok(_) => {}
        Err(e) if e.kind() == ErrorKind::ConnectionReset => {}
        Err(e) => panic!("GET /: no answer and not closed: {e}"),
    }
    let text = String::from_utf8_lossy(&reply);
    text.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn one_address_holds_at_most_its_bound_of_connections_while_others_are_served() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(
        dir.path(),
        &["--connections-per-address", "4", "--header-timeout", "600"],
    );
    // Four idle connections: the bound. The server accepts in order, so each is counted
    // before the next.
    let held: Vec<TcpStream> = (0..4)
        .map(|_| TcpStream::connect(&server.addr).unwrap())
        .collect();
    let mut extra = TcpStream::connect(&server.addr).unwrap();
    assert_eq!(
        get_on(&mut extra, &server.addr),
        None,
        "a fifth connection from one address was served"
    );
    // Another client address is served meanwhile.
    let mut other = connect_from("127.0.0.2", &server.addr);
    assert_eq!(get_on(&mut other, &server.addr), Some(200));
    // Once the four close, the address is served again (the server notices each close on
    // its own time: ask until it answers).
    drop(held);
    let start = Instant::now();
    loop {
        let mut s = TcpStream::connect(&server.addr).unwrap();
        if let Some(code) = get_on(&mut s, &server.addr) {
            assert_eq!(code, 200);
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "still refused {PATIENCE:?} after the others closed"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn over_tls_a_silent_client_and_a_trickling_one_are_closed_after_the_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let ca = certificates(dir.path());
    let (cert, key) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    let server = server(
        dir.path(),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--header-timeout",
            "2",
        ],
    );
    // A client that never starts its handshake.
    let start = Instant::now();
    let mut silent = TcpStream::connect(&server.addr).unwrap();
    // One that makes its handshake, then sends its head a byte a second.
    let tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    let mut slow = client(tcp, &ca);
    while slow.conn.is_handshaking() {
        slow.conn.complete_io(&mut slow.sock).unwrap();
    }
    let shaken = Instant::now();
    // Meanwhile an HTTPS request is answered, with the headers.
    let tcp = TcpStream::connect(&server.addr).unwrap();
    tcp.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut normal = client(tcp, &ca);
    normal
        .write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut reply = Vec::new();
    let _ = normal.read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
    assert!(reply.contains("frame-ancestors 'none'"), "{reply}");
    let head = format!(
        "GET / HTTP/1.1\r\nHost: localhost\r\nX-Slow: {}\r\n\r\n",
        "a".repeat(120)
    );
    let mut trickled = None;
    for byte in head.bytes() {
        if slow.write_all(&[byte]).is_err() || closed(&mut slow) {
            trickled = Some(shaken.elapsed());
            break;
        }
        assert!(
            shaken.elapsed() < PATIENCE,
            "a trickling TLS client is still served"
        );
    }
    let trickled = trickled.expect("a trickling TLS client sent its whole head");
    assert!(
        trickled >= Duration::from_millis(1500),
        "closed after {trickled:?}"
    );
    assert!(
        closed_within(&mut silent, PATIENCE),
        "a client that never started its handshake is still connected"
    );
    assert!(start.elapsed() >= Duration::from_millis(1500));
}
