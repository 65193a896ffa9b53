//! `spar submit` (and the tests' client, the same ureq) reaching a server the way a team
//! deploys it (issue 54, point 6): under a path prefix behind a reverse proxy
//! (`http://HOST/spar/`), through redirects (307, 308, 301: the POST and its body kept; the
//! token never sent to another server; a loop ends), and through a forward proxy named by
//! `HTTP_PROXY` unless `NO_PROXY` names the host. The proxies and the redirecting listener
//! are small threads of this test, each counting what it was asked.

mod common;
mod serve_common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::thread;

use serve_common::{state, Server, LITTLE_MATCH};

/// What a test listener was asked: each request's first line.
type Seen = Arc<Mutex<Vec<String>>>;

/// A listener on a free loopback port whose every connection is handled by `serve` on a
/// thread of its own: its address and the first lines of the requests it read.
fn listen(serve: impl Fn(TcpStream, &Seen) + Send + Sync + 'static) -> (String, Seen) {
    listen_on(TcpListener::bind("127.0.0.1:0").unwrap(), serve)
}

/// [`listen`] on `listener`.
fn listen_on(
    listener: TcpListener,
    serve: impl Fn(TcpStream, &Seen) + Send + Sync + 'static,
) -> (String, Seen) {
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Seen = Arc::default();
    let (serve, log) = (Arc::new(serve), seen.clone());
    thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let (serve, log) = (serve.clone(), log.clone());
            thread::spawn(move || serve(conn, &log));
        }
    });
    (addr, seen)
}

/// One request's head (its lines, without the blank one) and body (by `Content-Length`),
/// its first line added to `seen`.
fn read_request(r: &mut BufReader<TcpStream>, seen: &Seen) -> Option<(Vec<String>, Vec<u8>)> {
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        if r.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end().to_string();
        if line.is_empty() {
            break;
        }
        head.push(line);
    }
    seen.lock().unwrap().push(head.first()?.clone());
    let length = head.iter().find_map(|h| {
        let (name, value) = h.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    let mut body = vec![0; length.unwrap_or(0)];
    r.read_exact(&mut body).ok()?;
    Some((head, body))
}

/// A reverse proxy that passes the requests under `/spar/` to the server at `to`, the
/// prefix taken off (as `location /spar/ { proxy_pass http://to/; }`), and answers 404 to
/// any other path.
fn reverse_proxy(to: String) -> (String, Seen) {
    listen(move |conn, seen| {
        let mut r = BufReader::new(conn.try_clone().unwrap());
        let mut out = conn;
        while let Some((head, body)) = read_request(&mut r, seen) {
            let mut words = head[0].splitn(3, ' ');
            let (method, path, version) = (words.next(), words.next(), words.next());
            let Some(rest) = path.and_then(|p| p.strip_prefix("/spar/")) else {
                let msg = "{\"error\":\"not under /spar/\"}";
                let _ = write!(
                    out,
                    "HTTP/1.1 404 Not Found\r\nContent-Length: {}\r\n\r\n{msg}",
                    msg.len()
                );
                continue;
            };
            let mut server = TcpStream::connect(&to).unwrap();
            let mut request = format!("{} /{rest} {}\r\n", method.unwrap(), version.unwrap());
            for h in head[1..].iter().filter(|h| {
                let name = h.split(':').next().unwrap_or("").to_ascii_lowercase();
                name != "connection" && name != "host"
            }) {
                request.push_str(&format!("{h}\r\n"));
            }
            request.push_str(&format!("Host: {to}\r\nConnection: close\r\n\r\n"));
            server.write_all(request.as_bytes()).unwrap();
            server.write_all(&body).unwrap();
            // The server closes after its answer: all of it goes back.
            let mut answer = Vec::new();
            let _ = server.read_to_end(&mut answer);
            let _ = out.write_all(&answer);
            let _ = out.flush();
        }
    })
}

/// A listener that answers every request with `code` and `Location: location(ITS ADDRESS)`.
fn redirector(code: u16, location: impl Fn(&str) -> String) -> (String, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let to = location(&listener.local_addr().unwrap().to_string());
    listen_on(listener, move |conn, seen| {
        let mut r = BufReader::new(conn.try_clone().unwrap());
        let mut out = conn;
        while read_request(&mut r, seen).is_some() {
            let _ = write!(
                out,
                "HTTP/1.1 {code} Moved\r\nLocation: {to}\r\nContent-Length: 0\r\n\r\n"
            );
        }
    })
}

/// A forward proxy of the CONNECT method (as ureq asks one, for http:// too): a tunnel to
/// the address asked for.
fn forward_proxy() -> (String, Seen) {
    listen(|conn, seen| {
        let mut r = BufReader::new(conn.try_clone().unwrap());
        let Some((head, _)) = read_request(&mut r, seen) else {
            return;
        };
        let mut out = conn;
        let target = head[0].split(' ').nth(1).unwrap_or("").to_string();
        let Ok(server) = TcpStream::connect(&target) else {
            let _ = write!(out, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n");
            return;
        };
        out.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .unwrap();
        let (mut up, mut down) = (server.try_clone().unwrap(), server);
        // What the client sent past the CONNECT's head is still in the reader's buffer.
        let pump = thread::spawn(move || {
            let _ = std::io::copy(&mut r, &mut up);
            let _ = up.shutdown(std::net::Shutdown::Write);
        });
        let _ = std::io::copy(&mut down, &mut out);
        let _ = out.shutdown(std::net::Shutdown::Both);
        let _ = pump.join();
    })
}

/// `spar submit --server URL [--token T] match LITTLE_MATCH` with no proxy variable but
/// those of `env`.
fn submit(url: &str, token: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut cmd = serve_common::spar();
    cmd.env_remove("SPAR_TOKEN");
    cmd.envs(env.iter().copied());
    cmd.args(["submit", "--server", url]);
    if let Some(t) = token {
        cmd.args(["--token", t]);
    }
    cmd.arg("match").args(LITTLE_MATCH).output().unwrap()
}

fn server(dir: &tempfile::TempDir) -> Server {
    Server::start(&dir.path().join("data"), &dir.path().join("serve.log"))
}

fn seen(s: &Seen) -> Vec<String> {
    s.lock().unwrap().clone()
}

#[test]
fn a_server_under_a_path_prefix_behind_a_reverse_proxy_takes_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let (proxy, asked) = reverse_proxy(server.addr.clone());
    let url = format!("http://{proxy}/spar/");
    let out = common::ok(&submit(&url, None, &[]));
    assert_eq!(out.trim(), format!("http://{proxy}/spar/runs/1"));
    assert_eq!(seen(&asked), ["POST /spar/api/runs HTTP/1.1"]);
    let v = server.wait(1, "finished", |v| state(v) == "finished");
    assert_eq!(v["words"], serde_json::json!(LITTLE_MATCH));
    // The tests' client reaches it there too.
    let at = format!("http://{proxy}/spar/api/runs/1");
    let r = serve_common::send(serve_common::client(), &at, "GET", &[], "");
    assert_eq!(r.code, 200, "{r:?}");
    assert!(r.body.contains("\"finished\""), "{}", r.body);
    // Without its prefix the proxy has no such page: the prefix is never dropped.
    let o = submit(&format!("http://{proxy}"), None, &[]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(common::stderr(&o).contains("not under /spar/"), "{o:?}");
}

#[test]
fn redirects_keep_the_post_and_never_carry_the_token_to_another_server() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let mut id = 0;
    for code in [307, 308, 301] {
        let to = server.addr.clone();
        let (from, asked) = redirector(code, move |_| format!("http://{to}/api/runs"));
        let out = common::ok(&submit(&format!("http://{from}"), None, &[]));
        id += 1;
        assert_eq!(out.trim(), format!("{}/runs/{id}", server.url()), "{code}");
        assert_eq!(seen(&asked), ["POST /api/runs HTTP/1.1"], "{code}");
        assert_eq!(server.run(id)["words"], serde_json::json!(LITTLE_MATCH));
        // With a token: refused, the token kept, the fix named.
        let o = submit(&format!("http://{from}"), Some("a-token"), &[]);
        assert_eq!(o.status.code(), Some(2), "{code}: {o:?}");
        let err = common::stderr(&o);
        assert!(
            err.contains("another server")
                && err.contains(&format!("give --server {}", server.url())),
            "{code}: {err}"
        );
    }
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!((code, v["runs"].as_array().unwrap().len()), (200, 3), "{v}");
    // A redirect to itself ends.
    let (own, asked) = redirector(307, |own| format!("http://{own}/api/runs"));
    let o = submit(&format!("http://{own}"), None, &[]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    assert!(common::stderr(&o).contains("redirects"), "{o:?}");
    assert_eq!(seen(&asked).len(), 11);
}

#[test]
fn http_proxy_is_used_unless_no_proxy_names_the_host() {
    let dir = tempfile::tempdir().unwrap();
    let server = server(&dir);
    let (proxy, asked) = forward_proxy();
    let proxy_url = format!("http://{proxy}");
    let out = common::ok(&submit(&server.url(), None, &[("HTTP_PROXY", &proxy_url)]));
    assert_eq!(out.trim(), format!("{}/runs/1", server.url()));
    assert_eq!(seen(&asked), [format!("CONNECT {} HTTP/1.1", server.addr)]);
    // NO_PROXY names the host: straight to it.
    let env = [
        ("HTTP_PROXY", proxy_url.as_str()),
        ("NO_PROXY", "localhost,127.0.0.1"),
    ];
    common::ok(&submit(&server.url(), None, &env));
    // HTTPS_PROXY is for https:// servers only.
    common::ok(&submit(&server.url(), None, &[("HTTPS_PROXY", &proxy_url)]));
    assert_eq!(seen(&asked).len(), 1, "{:?}", seen(&asked));
    let (code, v) = server.json("GET", "/api/runs", None);
    assert_eq!((code, v["runs"].as_array().unwrap().len()), (200, 3), "{v}");
    // A proxy that is not there: exit 1, naming the variable and the way around it.
    let o = submit(&server.url(), None, &[("http_proxy", "http://127.0.0.1:1")]);
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let err = common::stderr(&o);
    assert!(
        err.contains("cannot connect") && err.contains("http_proxy"),
        "{err}"
    );
    assert!(err.contains("NO_PROXY"), "{err}");
    // A variable spar cannot use: exit 2, named, its value (a password) not shown.
    let o = submit(
        &server.url(),
        None,
        &[("HTTP_PROXY", "socks5://u:s3cret@h:1")],
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    let err = common::stderr(&o);
    assert!(
        err.contains("HTTP_PROXY") && !err.contains("s3cret"),
        "{err}"
    );
}
