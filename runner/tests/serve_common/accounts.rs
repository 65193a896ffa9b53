//! What the tests of a server with accounts share: `--add-admin` from a pipe, sign-in (the
//! session's cookie token), the CSRF token its pages carry, sign-up and acceptance, API
//! tokens, and requests with a cookie or a bearer token.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use super::{Reply, Server};

/// The password every account of these tests has.
pub const PASSWORD: &str = "s3cret-pass";

/// `spar serve --data-dir DATA --add-admin NAME` with `stdin` piped in.
pub fn add_admin(data: &Path, name: &str, stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_spar"))
        .args(["serve", "--add-admin", name, "--data-dir"])
        .arg(data)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
    child.wait_with_output().unwrap()
}

/// A server whose data directory (`dir/data`) has the admin `root`.
pub fn server_with_admin(dir: &Path) -> Server {
    let data = dir.join("data");
    let o = add_admin(&data, "root", &format!("{PASSWORD}\n"));
    assert!(o.status.success(), "{o:?}");
    Server::start(&data, &dir.join("serve.log"))
}

/// A URL-encoded form POST, with a session's cookie when given.
pub fn form(s: &Server, path: &str, cookie: Option<&str>, body: &str) -> Reply {
    let mut headers = vec!["Content-Type: application/x-www-form-urlencoded".to_string()];
    if let Some(c) = cookie {
        headers.push(format!("Cookie: spar_session={c}"));
    }
    s.request("POST", path, &headers, body)
}

/// A GET, with a session's cookie when given.
pub fn get(s: &Server, path: &str, cookie: Option<&str>) -> Reply {
    let headers: Vec<String> = cookie
        .map(|c| format!("Cookie: spar_session={c}"))
        .into_iter()
        .collect();
    s.request("GET", path, &headers, "")
}

/// A JSON request with an API token: the status and the answer.
pub fn api(s: &Server, method: &str, path: &str, token: &str, body: &str) -> (u16, Value) {
    let headers = [
        format!("Authorization: Bearer {token}"),
        "Content-Type: application/json".to_string(),
    ];
    let r = s.request(method, path, &headers, body);
    (r.code, serde_json::from_str(&r.body).unwrap_or(Value::Null))
}

/// Signs in with the test password: the session token of the cookie set.
pub fn login(s: &Server, name: &str) -> String {
    login_with(s, name, PASSWORD)
}

/// Signs in with `password`: the session token of the cookie set (checked: `HttpOnly`,
/// `SameSite=Strict`, `Path=/`, 64 hex digits).
pub fn login_with(s: &Server, name: &str, password: &str) -> String {
    let r = form(
        s,
        "/login",
        None,
        &format!("name={name}&password={password}"),
    );
    assert_eq!(r.code, 303, "{r:?}");
    let cookie = r.header("set-cookie").unwrap();
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.contains(attr), "{cookie}");
    }
    let token = cookie
        .strip_prefix("spar_session=")
        .and_then(|c| c.split(';').next())
        .unwrap();
    assert_eq!(token.len(), 64, "{cookie}");
    token.to_string()
}

/// The CSRF token that the pages of a session carry in their forms.
pub fn csrf(s: &Server, cookie: &str) -> String {
    let page = get(s, "/", Some(cookie)).body;
    let at = page
        .find("name=\"csrf\" value=\"")
        .unwrap_or_else(|| panic!("no CSRF field: {page}"));
    page[at + 19..at + 19 + 64].to_string()
}

/// A signed-in session: its cookie token and its CSRF token.
pub struct Session {
    pub cookie: String,
    pub csrf: String,
}

impl Session {
    /// Signs `name` in.
    pub fn new(s: &Server, name: &str) -> Session {
        let cookie = login(s, name);
        let csrf = csrf(s, &cookie);
        Session { cookie, csrf }
    }

    /// A form POST of this session (its CSRF token added to `body`).
    pub fn post(&self, s: &Server, path: &str, body: &str) -> Reply {
        let body = if body.is_empty() {
            format!("csrf={}", self.csrf)
        } else {
            format!("{body}&csrf={}", self.csrf)
        };
        form(s, path, Some(&self.cookie), &body)
    }

    /// A URL-encoded form request of this session with any method (its CSRF token added
    /// to `body`).
    pub fn post_with(&self, s: &Server, method: &str, path: &str, body: &str) -> Reply {
        let headers = [
            "Content-Type: application/x-www-form-urlencoded".to_string(),
            format!("Cookie: spar_session={}", self.cookie),
        ];
        s.request(
            method,
            path,
            &headers,
            &format!("{body}&csrf={}", self.csrf),
        )
    }

    /// A new API token of this session's account.
    pub fn token(&self, s: &Server) -> String {
        let r = self.post(s, "/account/tokens", "label=test");
        assert_eq!(r.code, 200, "{r:?}");
        let at = r.body.find("<pre id=\"token\">").unwrap() + 16;
        r.body[at..at + 64].to_string()
    }
}

/// Signs `name` up and has the admin `root` accept it with `role`.
pub fn accepted(s: &Server, admin: &Session, name: &str, role: &str) {
    let r = form(
        s,
        "/signup",
        None,
        &format!("name={name}&password={PASSWORD}"),
    );
    assert_eq!(r.code, 200, "{r:?}");
    let r = admin.post(s, &format!("/users/{name}/accept"), &format!("role={role}"));
    assert_eq!(r.code, 303, "{r:?}");
}
