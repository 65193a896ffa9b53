//! `spar submit`'s HTTP: one POST of a run to a server's JSON API by ureq (blocking, on
//! rustls with the crypto of `ring`). The server's URL may have a path prefix (a server
//! behind a reverse proxy at `https://host/spar/`); a redirect of the POST (301, 302, 307,
//! 308) is followed with the same method and body, and the token never goes to another
//! server; `HTTPS_PROXY`/`HTTP_PROXY`/`ALL_PROXY` and `NO_PROXY` are honoured.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::{self, RootCertStore};
use ureq::http::{Request, Uri};
use ureq::tls::{Certificate, RootCerts, TlsConfig};
use ureq::{Agent, Proxy, ProxyProtocol};

/// Redirects followed at most.
const MAX_REDIRECTS: usize = 10;
/// How long a server may take to answer: a check of a run's words may start engines.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);
/// How long connecting (to the server, or to the proxy) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// A server's URL as given to `--server`: `http(s)://HOST[:PORT][/PREFIX]`, the prefix kept.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerUrl {
    /// The URL without a trailing `/`: what the API's paths are appended to.
    pub base: String,
    /// `https://`.
    pub tls: bool,
}

impl ServerUrl {
    /// `http://HOST[:PORT][/PREFIX][/]` or `https://…`; `Err`: why not (no scheme of
    /// these, no host, a bad port, a user name, a query or a fragment).
    pub fn parse(url: &str) -> Result<ServerUrl, &'static str> {
        if url.contains(['#', '?']) {
            return Err("no query or fragment");
        }
        let uri: Uri = url.parse().map_err(|_| "not a URL")?;
        let tls = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            _ => return Err("not http:// or https://"),
        };
        let authority = uri.authority().ok_or("no host")?;
        if authority.as_str().contains('@') {
            return Err("no user name in it (give a token with --token)");
        }
        if authority.host().is_empty() || authority.host() == "[]" {
            return Err("no host");
        }
        let has_port = authority
            .as_str()
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.contains(']'));
        if has_port && authority.port_u16().is_none() {
            return Err("a bad port");
        }
        let path = uri.path().trim_end_matches('/');
        Ok(ServerUrl {
            base: format!(
                "{}://{}{path}",
                uri.scheme_str().unwrap_or("http"),
                authority
            ),
            tls,
        })
    }

    /// The URL of the API path `path` (`/api/runs`) under this server's prefix.
    pub fn join(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

/// A server's answer: the status, the body, and the URL (the `--server` base) that gave
/// it, after any redirect.
#[derive(Debug)]
pub struct Answer {
    /// The HTTP status.
    pub code: u16,
    /// The body, as text.
    pub text: String,
    /// The server that answered.
    pub server: ServerUrl,
}

/// Why the POST failed: a message, and whether the fix is the user's input (exit 2).
#[derive(Debug)]
pub struct Failure {
    /// What went wrong, and the fix.
    pub message: String,
    /// The user must change the command (a redirect to another server with a token, a bad
    /// proxy variable): a usage error.
    pub usage: bool,
}

impl Failure {
    fn runtime(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            usage: false,
        }
    }
    fn usage(message: impl Into<String>) -> Failure {
        Failure {
            message: message.into(),
            usage: true,
        }
    }
}

/// POSTs the JSON `body` to `path` of `server`, with `Authorization: Bearer TOKEN` when a
/// token is given, following redirects; `ca`: the PEM file of the certificates to trust
/// for https:// instead of the system's.
pub fn post(
    server: &ServerUrl,
    ca: Option<&Path>,
    path: &str,
    body: &str,
    token: &str,
) -> Result<Answer, Failure> {
    let mut server = server.clone();
    let mut url = server.join(path);
    let mut roots: Option<Arc<Vec<Certificate<'static>>>> = None;
    for _ in 0..=MAX_REDIRECTS {
        let uri: Uri = url
            .parse()
            .map_err(|e| Failure::runtime(format!("{url}: not a URL: {e}")))?;
        let (proxy, via) = proxy_for(&uri).map_err(Failure::usage)?;
        // TLS to an https:// server, or to an https:// proxy: the same certificates.
        let https_proxy = proxy
            .as_ref()
            .is_some_and(|p| p.protocol() == ProxyProtocol::Https);
        if (uri.scheme_str() == Some("https") || https_proxy) && roots.is_none() {
            roots = Some(Arc::new(trusted(ca).map_err(Failure::usage)?));
        }
        let agent = agent(roots.clone(), proxy);
        let mut request = Request::post(&uri).header("Content-Type", "application/json");
        if !token.is_empty() {
            request = request.header("Authorization", format!("Bearer {token}"));
        }
        let request = request
            .body(body)
            .map_err(|e| Failure::runtime(format!("a bad request: {e}")))?;
        let mut answer = agent
            .run(request)
            .map_err(|e| Failure::runtime(describe(e, via)))?;
        let code = answer.status().as_u16();
        let location = answer
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok());
        if (300..400).contains(&code) && !matches!(code, 301 | 302 | 307 | 308) {
            return Err(Failure::runtime(format!(
                "the server answered {code}{}, which is no answer to a run: give the \
                 server's own URL",
                location.map(|l| format!(" (to {l})")).unwrap_or_default()
            )));
        }
        if !matches!(code, 301 | 302 | 307 | 308) {
            let bytes = answer
                .body_mut()
                .with_config()
                .limit(16 << 20)
                .read_to_vec()
                .map_err(|e| {
                    Failure::runtime(format!("cannot read the answer: {}", describe(e, via)))
                })?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            return Ok(Answer { code, text, server });
        }
        let location = location.ok_or_else(|| {
            Failure::runtime(format!(
                "the server answered {code} (a redirect) with no Location"
            ))
        })?;
        let next = resolve(&uri, location).ok_or_else(|| {
            Failure::runtime(format!("a redirect ({code}) to {location}: not a URL"))
        })?;
        let next_server = next
            .strip_suffix(path)
            .and_then(|b| ServerUrl::parse(b).ok())
            .unwrap_or_else(|| server.clone());
        if !token.is_empty() && (origin(&next).is_none() || origin(&url) != origin(&next)) {
            return Err(Failure::usage(format!(
                "the server redirects ({code}) to {next}, another server: your token is not \
                 sent there; if you trust it, give --server {}",
                next_server.base
            )));
        }
        server = next_server;
        url = next;
    }
    Err(Failure::runtime(format!(
        "more than {MAX_REDIRECTS} redirects (the last to {url}): a loop? give the server's own URL"
    )))
}

/// The agent of one request: no redirect followed (`post` follows them itself), any status
/// an answer, the timeouts, TLS trusting `roots` (none when `None`), through `proxy` when
/// given.
fn agent(roots: Option<Arc<Vec<Certificate<'static>>>>, proxy: Option<Proxy>) -> Agent {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    // No TLS needed: no certificate trusted (never ureq's default, which this build lacks).
    let roots = roots.unwrap_or_default();
    let tls = TlsConfig::builder()
        .unversioned_rustls_crypto_provider(provider)
        .root_certs(RootCerts::Specific(roots));
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(proxy)
        .timeout_connect(Some(CONNECT_TIMEOUT))
        .timeout_recv_response(Some(ANSWER_TIMEOUT))
        .timeout_recv_body(Some(ANSWER_TIMEOUT))
        .user_agent(concat!("spar/", env!("CARGO_PKG_VERSION")))
        .tls_config(tls.build())
        .build()
        .new_agent()
}

/// The certificates to trust: those of the PEM file `ca`, else the system's.
pub fn trusted(ca: Option<&Path>) -> Result<Vec<Certificate<'static>>, String> {
    let mut roots = RootCertStore::empty();
    let mut certs = Vec::new();
    match ca {
        Some(path) => {
            let bad = |why: String| {
                format!(
                    "--ca {}: {why} (give the PEM certificate of the server's CA, or its \
                     self-signed certificate)",
                    path.display()
                )
            };
            let pem = std::fs::read(path).map_err(|e| bad(format!("cannot read it: {e}")))?;
            for cert in CertificateDer::pem_slice_iter(&pem) {
                let cert = cert.map_err(|e| bad(format!("not a PEM certificate: {e}")))?;
                roots
                    .add(cert.clone())
                    .map_err(|e| bad(format!("not a usable certificate: {e}")))?;
                certs.push(Certificate::from_der(&cert).to_owned());
            }
        }
        None => {
            for cert in rustls_native_certs::load_native_certs().certs {
                if roots.add(cert.clone()).is_ok() {
                    certs.push(Certificate::from_der(&cert).to_owned());
                }
            }
        }
    }
    if certs.is_empty() {
        return Err(match ca {
            Some(path) => format!("--ca {}: no certificate in it", path.display()),
            None => "no trusted certificates found on this system: give --ca PATH".into(),
        });
    }
    Ok(certs)
}

/// The proxy for `uri` from the environment, and the variable that named it: for an
/// https:// server `https_proxy`/`HTTPS_PROXY`, for an http:// one `http_proxy`/
/// `HTTP_PROXY`, else `all_proxy`/`ALL_PROXY`; none when `no_proxy`/`NO_PROXY` names the
/// host. `Err`: a variable that is not an http(s):// proxy URL (its value is not shown: it
/// may hold a password).
fn proxy_for(uri: &Uri) -> Result<(Option<Proxy>, Option<&'static str>), String> {
    let names: [&'static str; 4] = if uri.scheme_str() == Some("https") {
        ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
    } else {
        ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
    };
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let Some((name, value)) = names.iter().find_map(|&n| var(n).map(|v| (n, v))) else {
        return Ok((None, None));
    };
    let no_proxy = var("no_proxy")
        .or_else(|| var("NO_PROXY"))
        .unwrap_or_default();
    if bypasses(&no_proxy, uri.host().unwrap_or("")) {
        return Ok((None, None));
    }
    let value = value.trim();
    let scheme_ok =
        !value.contains("://") || value.starts_with("http://") || value.starts_with("https://");
    let proxy = Proxy::new(value)
        .ok()
        .filter(|_| scheme_ok)
        .ok_or_else(|| {
            format!(
                "{name} is not a proxy URL spar can use: give http://[USER:PASSWORD@]HOST:PORT \
             (or https://…), or unset it"
            )
        })?;
    Ok((Some(proxy), Some(name)))
}

/// Whether `no_proxy` (comma- or space-separated host names, domains and addresses; `*`
/// for every host) names `host` or a domain it is in.
pub fn bypasses(no_proxy: &str, host: &str) -> bool {
    let bare = |h: &str| {
        h.trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase()
    };
    let host = bare(host);
    no_proxy
        .split([',', ' ', '\t'])
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .any(|entry| {
            if entry == "*" {
                return true;
            }
            let entry = bare(entry.trim_start_matches('*').trim_start_matches('.'));
            !entry.is_empty() && (host == entry || host.ends_with(&format!(".{entry}")))
        })
}

/// `location` (absolute, `//host…`, `/path` or relative) against the URL `base`.
fn resolve(base: &Uri, location: &str) -> Option<String> {
    let scheme = base.scheme_str()?;
    let authority = base.authority()?;
    let url =
        if let Some((scheme, _)) = location.split_once("://").filter(|(s, _)| !s.contains('/')) {
            if !scheme.eq_ignore_ascii_case("http") && !scheme.eq_ignore_ascii_case("https") {
                return None;
            }
            location.to_string()
        } else if let Some(rest) = location.strip_prefix("//") {
            format!("{scheme}://{rest}")
        } else if location.starts_with('/') {
            format!("{scheme}://{authority}{location}")
        } else {
            let dir = base.path().rsplit_once('/').map_or("", |(d, _)| d);
            format!("{scheme}://{authority}{dir}/{location}")
        };
    let parsed: Uri = url.parse().ok()?;
    parsed.authority()?;
    Some(url)
}

/// The scheme, host and port of a URL: where a token may be sent.
fn origin(url: &str) -> Option<(String, String, u16)> {
    let uri: Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let port = uri
        .port_u16()
        .unwrap_or(if scheme == "https" { 443 } else { 80 });
    Some((scheme, uri.host()?.to_ascii_lowercase(), port))
}

/// One line for a failed request: a refused connection, an unknown host, a timeout, a
/// certificate not trusted (with the `--ca` fix); `via`: the proxy's variable, when one
/// was used.
fn describe(error: ureq::Error, via: Option<&str>) -> String {
    use std::io::ErrorKind;
    let text = match &error {
        ureq::Error::Io(e)
            if matches!(
                e.kind(),
                ErrorKind::ConnectionRefused
                    | ErrorKind::ConnectionReset
                    | ErrorKind::ConnectionAborted
                    | ErrorKind::AddrNotAvailable
                    | ErrorKind::NetworkUnreachable
                    | ErrorKind::HostUnreachable
            ) =>
        {
            format!("cannot connect: {e}")
        }
        // (ureq reports a name that does not resolve as the resolver's own error.)
        ureq::Error::Io(e) if e.to_string().contains("lookup address") => {
            format!("cannot connect: {e} (check the host name)")
        }
        ureq::Error::Io(e) => e.to_string(),
        ureq::Error::HostNotFound => "cannot connect: host not found".to_string(),
        ureq::Error::ConnectionFailed => "cannot connect".to_string(),
        ureq::Error::Timeout(t) => format!("no answer in time ({t})"),
        ureq::Error::Rustls(e) => format!("TLS: {e}"),
        ureq::Error::ConnectProxyFailed(e) => format!("the proxy refused: {e}"),
        e => e.to_string(),
    };
    let text = match via {
        Some(name) => {
            format!("{text} (through the proxy of {name}; set NO_PROXY=HOST to go direct)")
        }
        None => text,
    };
    if text.contains("certificate") {
        format!("{text} (a private CA or a self-signed certificate: give --ca PATH)")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_are_http_or_https_with_a_host_and_maybe_a_prefix() {
        let s = ServerUrl::parse("http://127.0.0.1:8000").unwrap();
        assert_eq!((s.base.as_str(), s.tls), ("http://127.0.0.1:8000", false));
        assert_eq!(s.join("/api/runs"), "http://127.0.0.1:8000/api/runs");
        let s = ServerUrl::parse("https://spar.example.org/spar/").unwrap();
        assert_eq!(
            (s.base.as_str(), s.tls),
            ("https://spar.example.org/spar", true)
        );
        assert_eq!(
            s.join("/api/runs"),
            "https://spar.example.org/spar/api/runs"
        );
        let s = ServerUrl::parse("https://[::1]:8443/").unwrap();
        assert_eq!(s.base, "https://[::1]:8443");
        assert_eq!(ServerUrl::parse("http://h").unwrap().base, "http://h");
        for bad in [
            "ftp://x:1",
            "http://",
            "https://",
            "https://x:port",
            "http://x:1/api?x=1",
            "http://x:1/#top",
            "https://u@x",
            "127.0.0.1:8000",
        ] {
            assert!(ServerUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn redirects_resolve_against_the_request() {
        let at: Uri = "http://a:1/spar/api/runs".parse().unwrap();
        let r = |l: &str| resolve(&at, l).unwrap();
        assert_eq!(r("https://b/x/api/runs"), "https://b/x/api/runs");
        assert_eq!(r("//b:2/api/runs"), "http://b:2/api/runs");
        assert_eq!(r("/other/api/runs"), "http://a:1/other/api/runs");
        assert_eq!(r("runs2"), "http://a:1/spar/api/runs2");
        assert!(resolve(&at, "http://").is_none());
        assert!(resolve(&at, "ftp://b/api/runs").is_none());
        assert_eq!(origin("http://A:80/x"), origin("http://a/y"));
        assert_ne!(origin("http://a:1/x"), origin("http://a:2/x"));
        assert_ne!(origin("http://a/x"), origin("https://a/x"));
    }

    #[test]
    fn no_proxy_names_hosts_domains_and_addresses() {
        assert!(bypasses("localhost,127.0.0.1", "127.0.0.1"));
        assert!(bypasses("example.org", "spar.example.org"));
        assert!(bypasses(".example.org", "spar.example.org"));
        assert!(bypasses("*.example.org", "spar.Example.org"));
        assert!(bypasses("*", "anything"));
        assert!(bypasses("::1", "[::1]"));
        assert!(!bypasses("example.org", "badexample.org"));
        assert!(!bypasses("", "localhost"));
        assert!(!bypasses("10.0.0.1", "127.0.0.1"));
    }

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let e = trusted(Some(&dir.path().join("none.pem"))).unwrap_err();
        assert!(e.contains("--ca") && e.contains("cannot read"), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing\n").unwrap();
        let e = trusted(Some(&empty)).unwrap_err();
        assert!(e.contains("no certificate"), "{e}");
    }
}
