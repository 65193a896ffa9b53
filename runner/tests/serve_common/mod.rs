//! What the tests of `spar serve`'s second phase share: a server on a free port, its HTTP
//! requests (by ureq, the client `spar submit` uses; a raw socket where a test needs its
//! bytes as written), and a tiny git repository whose Makefile builds a script "engine" (OpenBench's
//! convention) that runs the spar under test as its UCI engine.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::Value;

pub mod accounts;
pub mod tls;

/// The proxy variables a machine may set; the tests' spar runs without them (their
/// servers are on this machine).
pub const PROXY_VARS: [&str; 8] = [
    "http_proxy",
    "HTTP_PROXY",
    "https_proxy",
    "HTTPS_PROXY",
    "all_proxy",
    "ALL_PROXY",
    "no_proxy",
    "NO_PROXY",
];

/// The spar under test, without the machine's proxy variables.
pub fn spar() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_spar"));
    for v in PROXY_VARS {
        c.env_remove(v);
    }
    c
}

/// The words of a little match (two games at 300 nodes): what tests submit when any run
/// will do.
pub const LITTLE_MATCH: [&str; 8] = [
    "--engine",
    "name=a",
    "--engine",
    "name=b",
    "--each",
    "nodes=300",
    "--games",
    "2",
];

/// A server on a free port, killed (-9) when dropped.
pub struct Server {
    pub child: Child,
    pub addr: String,
    pub log: PathBuf,
}

impl Server {
    pub fn start(data: &Path, log: &Path) -> Server {
        let here = std::env::current_dir().unwrap();
        Server::start_with(data, log, &[], None, &here)
    }

    /// A server with `extra` flags, `SLURM_CONF` set to `conf` (when given), started in
    /// `cwd`.
    pub fn start_with(
        data: &Path,
        log: &Path,
        extra: &[&str],
        conf: Option<&str>,
        cwd: &Path,
    ) -> Server {
        let env: Vec<(&str, &str)> = conf.map(|c| ("SLURM_CONF", c)).into_iter().collect();
        Server::start_env(data, log, extra, &env, cwd)
    }

    /// A server with `extra` flags and the environment variables `env`, started in `cwd`.
    pub fn start_env(
        data: &Path,
        log: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
        cwd: &Path,
    ) -> Server {
        let err = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .unwrap();
        let mut cmd = spar();
        cmd.args(["serve", "--bind", "127.0.0.1:0", "--cores", "2"])
            .args(extra)
            .arg("--data-dir")
            .arg(data)
            .current_dir(cwd)
            .stdout(Stdio::piped())
            .stderr(err);
        cmd.envs(env.iter().copied());
        let mut child = cmd.spawn().expect("spawn spar serve");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        // `http://ADDR/` or, with TLS, `https://ADDR/`.
        let addr = line
            .split("://")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .unwrap_or_else(|| panic!("no URL in {line:?}: {}", read(log)))
            .to_string();
        Server {
            child,
            addr,
            log: log.to_path_buf(),
        }
    }

    /// [`LITTLE_MATCH`] submitted by the API (201 asserted): the run.
    pub fn submit_little_match(&self) -> Value {
        let body = serde_json::json!({ "kind": "match", "words": LITTLE_MATCH });
        let (code, v) = self.json("POST", "/api/runs", Some(&body));
        assert_eq!(code, 201, "{v}");
        v
    }

    /// The server's resident memory, in MiB (from /proc).
    pub fn rss_mib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let kib: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap();
        kib / 1024
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// One request: the status and the body.
    pub fn http(&self, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
        let headers = ["Content-Type: application/json".to_string()];
        let reply = self.request(method, path, &headers, body.unwrap_or(""));
        (reply.code, reply.body)
    }

    /// A form POST as a browser sends it (`application/x-www-form-urlencoded`, each value
    /// encoded): the status and the body.
    pub fn form(&self, path: &str, fields: &[(&str, &str)]) -> (u16, String) {
        let enc = |s: &str| {
            s.bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                        (b as char).to_string()
                    }
                    b' ' => "+".to_string(),
                    _ => format!("%{b:02X}"),
                })
                .collect::<String>()
        };
        let body: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("{}={}", enc(k), enc(v)))
            .collect();
        let body = body.join("&");
        let reply = self.form_body(path, &body);
        (reply.code, reply.body)
    }

    /// A form POST of a body already URL-encoded: the answer.
    pub fn form_body(&self, path: &str, body: &str) -> Reply {
        let headers = ["Content-Type: application/x-www-form-urlencoded".to_string()];
        self.request("POST", path, &headers, body)
    }

    /// One request with `headers` (each `Name: value`) by the tests' HTTP client
    /// ([`client`]): the status, the head, the body.
    pub fn request(&self, method: &str, path: &str, headers: &[String], body: &str) -> Reply {
        send(
            client(),
            &format!("http://{}{path}", self.addr),
            method,
            headers,
            body,
        )
    }

    /// One request written byte for byte on a socket (`Connection: close`), for a path a
    /// client would refuse or might rewrite (`%2F`, `..`, `%00`, `1/.`): the status, the
    /// head, the body.
    pub fn raw_request(&self, method: &str, path: &str, headers: &[String], body: &str) -> Reply {
        let mut s = TcpStream::connect(&self.addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
        let extra: String = headers.iter().map(|h| format!("{h}\r\n")).collect();
        write!(
            s,
            "{method} {path} HTTP/1.1\r\nHost: {}\r\n{extra}Content-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        )
        .unwrap();
        let mut reply = Vec::new();
        s.read_to_end(&mut reply).unwrap();
        let reply = String::from_utf8_lossy(&reply);
        let (head, body) = reply.split_once("\r\n\r\n").unwrap();
        let code = head.split_whitespace().nth(1).unwrap().parse().unwrap();
        Reply {
            code,
            head: head.to_string(),
            body: body.to_string(),
        }
    }

    pub fn json(&self, method: &str, path: &str, body: Option<&Value>) -> (u16, Value) {
        let (code, text) = self.http(method, path, body.map(|b| b.to_string()).as_deref());
        (code, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    pub fn run(&self, id: i64) -> Value {
        let (code, v) = self.json("GET", &format!("/api/runs/{id}"), None);
        assert_eq!(code, 200, "{v}");
        v
    }

    /// Waits until run `id` satisfies `pred` (panics after two minutes).
    pub fn wait(&self, id: i64, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            let v = self.run(id);
            if pred(&v) {
                return v;
            }
            assert!(
                start.elapsed() < Duration::from_secs(240),
                "run {id}: waited too long for {what}: {v}\n{}",
                read(&self.log)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Waits until run `id`'s registered engines are built (each has its commit) or the run
    /// ended without them (its build failed); the run then.
    pub fn built(&self, id: i64) -> Value {
        self.wait(id, "its engines built", |v| {
            let engines = v["engines"].as_array().cloned().unwrap_or_default();
            engines
                .iter()
                .all(|e| !e["sha"].as_str().unwrap_or("").is_empty())
                || matches!(state(v), "failed" | "finished")
        })
    }

    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// An answer of [`Server::request`] (or [`send`], [`Server::raw_request`]).
#[derive(Debug)]
pub struct Reply {
    pub code: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    /// The value of header `name` (any case), when present.
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_string())
        })
    }
}

/// The tests' HTTP client: ureq, as `spar submit` uses, set to show the server as it is:
/// any status an answer (not an error), no redirect followed (a 303 is asserted as such),
/// no proxy from the environment, no connection kept (each request its own, as a test of
/// connection bounds expects), 120 s for an answer.
pub fn client() -> &'static ureq::Agent {
    static CLIENT: OnceLock<ureq::Agent> = OnceLock::new();
    CLIENT.get_or_init(|| {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .max_idle_connections(0)
            .timeout_recv_response(Some(Duration::from_secs(120)))
            .timeout_recv_body(Some(Duration::from_secs(120)))
            .build()
            .new_agent()
    })
}

/// One request of `agent` to `url` with `headers` (each `Name: value`) and `body` (none
/// when empty): the status, the head (`HTTP/1.1 CODE` and a line a header), the body as
/// text (any size).
pub fn send(agent: &ureq::Agent, url: &str, method: &str, headers: &[String], body: &str) -> Reply {
    let mut request = ureq::http::Request::builder().method(method).uri(url);
    for h in headers {
        let (name, value) = h
            .split_once(':')
            .unwrap_or_else(|| panic!("no ':' in {h:?}"));
        request = request.header(name.trim(), value.trim());
    }
    let answer = if body.is_empty() {
        agent.run(request.body(()).unwrap())
    } else {
        agent.run(request.body(body).unwrap())
    };
    let mut answer = answer.unwrap_or_else(|e| panic!("{method} {url}: {e}"));
    let mut head = format!("HTTP/1.1 {}", answer.status().as_u16());
    for (name, value) in answer.headers() {
        head.push_str(&format!(
            "\r\n{name}: {}",
            String::from_utf8_lossy(value.as_bytes())
        ));
    }
    let bytes = answer
        .body_mut()
        .with_config()
        .limit(u64::MAX)
        .read_to_vec()
        .unwrap_or_else(|e| panic!("{method} {url}: its body: {e}"));
    Reply {
        code: answer.status().as_u16(),
        head,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

pub fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_default()
}

/// The state of a run as the API answers it.
pub fn state(v: &Value) -> &str {
    v["state"].as_str().unwrap_or("")
}

/// Runs git in `dir` (panics on failure).
pub fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .expect("git");
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A tiny engine repository in `dir`: its Makefile copies `engine.sh` to `$(EXE)` and
/// appends a line to `builds` (outside the repository: a count of builds); the script
/// answers `bench` with `BENCH nodes 1000 nps` and otherwise execs the spar under test as
/// its UCI engine. Branch `base` has bench 1000; `main` (one commit more, "a faster
/// search") has bench 2000; branch `broken` has a Makefile that fails.
pub fn tiny_engine(dir: &Path, builds: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    git(dir, &["init", "--quiet", "--initial-branch=main"]);
    let makefile = format!(
        "EXE ?= tiny\n$(EXE): engine.sh\n\tcp engine.sh $(EXE)\n\tchmod +x $(EXE)\n\techo built >> {}\n",
        builds.display()
    );
    let script = |bench: u64| {
        format!(
            "#!/bin/sh\nif [ \"$1\" = bench ]; then echo \"{bench} nodes 1000 nps\"; exit 0; fi\nexec {} uci\n",
            env!("CARGO_BIN_EXE_spar")
        )
    };
    std::fs::write(dir.join("Makefile"), &makefile).unwrap();
    std::fs::write(dir.join("engine.sh"), script(1000)).unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "the first engine"]);
    git(dir, &["branch", "base"]);
    std::fs::write(dir.join("engine.sh"), script(2000)).unwrap();
    std::fs::write(dir.join("search.c"), "/* a faster search <b>&</b> */\n").unwrap();
    git(dir, &["add", "."]);
    git(dir, &["commit", "--quiet", "-m", "a faster search"]);
    git(dir, &["checkout", "--quiet", "-b", "broken", "base"]);
    std::fs::write(
        dir.join("Makefile"),
        "all:\n\t@echo 'search.c:1: error: deliberate failure'\n\t@false\n",
    )
    .unwrap();
    git(dir, &["commit", "--quiet", "-am", "a broken build"]);
    git(dir, &["checkout", "--quiet", "main"]);
}
