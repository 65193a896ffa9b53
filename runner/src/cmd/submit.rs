//! `spar submit --server URL KIND WORDS…`: a run sent to a `spar serve` (its JSON API,
//! `POST /api/runs`); prints the run's URL. A refusal (4xx) exits 2 with the server's
//! message. With `--token` (or `SPAR_TOKEN`) it sends `Authorization: Bearer TOKEN`, which
//! a server with accounts needs. The HTTP is a few lines over a TCP stream: one request, `Connection: close`;
//! to an `https://` server over rustls, trusting the system's certificates or `--ca PATH`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, RootCertStore};

use crate::error::{CliError, CliResult};
use crate::stdout;

/// The server `spar submit` sends to when `--server` is not given.
const DEFAULT_SERVER: &str = "http://127.0.0.1:8000";

/// Send a run to a spar server; prints its URL.
///
///   spar submit --server http://127.0.0.1:8000 sprt --engine name=dev option.rfp_margin=60 \
///       --engine name=base --each nodes=2000 --elo0 0 --elo1 5 --note "rfp 60"
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct SubmitArgs {
    /// The server (`http://HOST:PORT`, or `https://HOST[:PORT]` for one serving TLS).
    #[arg(long, value_name = "URL", default_value = DEFAULT_SERVER)]
    pub server: String,
    /// With an https:// server: trust the certificates of this PEM file (a private CA, or
    /// the server's self-signed certificate) instead of the system's.
    #[arg(long, value_name = "PATH")]
    pub ca: Option<PathBuf>,
    /// An API token of your account (made on the server's /account page), for a server
    /// with accounts; sent as `Authorization: Bearer TOKEN` [default: $SPAR_TOKEN].
    #[arg(long, value_name = "TOKEN")]
    pub token: Option<String>,
    /// The run's priority (the highest present plays).
    #[arg(long, allow_hyphen_values = true)]
    pub priority: Option<i64>,
    /// The run's throughput (its share of the cores among its priority).
    #[arg(long)]
    pub throughput: Option<i64>,
    /// A note.
    #[arg(long)]
    pub note: Option<String>,
    /// The kind: sprt, match, tune, datagen or report.
    pub kind: String,
    /// The words, as after `spar KIND` (submit's own options may follow them too).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub words: Vec<String>,
}

/// `spar submit`'s own options, also taken after the kind and its words.
const OWN: &[&str] = &[
    "--server",
    "--ca",
    "--token",
    "--priority",
    "--throughput",
    "--note",
];

/// `spar submit`'s own options written after KIND (`spar submit sprt … --note x`, as one
/// types them after the words) taken out of the words into `args`; one given both before
/// and after is refused, naming it. The kinds have no option of these names.
fn own_options_after_the_kind(mut args: SubmitArgs) -> CliResult<SubmitArgs> {
    let mut words = Vec::with_capacity(args.words.len());
    let mut rest = std::mem::take(&mut args.words).into_iter();
    while let Some(word) = rest.next() {
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (word.clone(), None),
        };
        if !OWN.contains(&name.as_str()) {
            words.push(word);
            continue;
        }
        let value = match inline.or_else(|| rest.next()) {
            Some(v) => v,
            None => return Err(CliError::usage(format!("{name} needs a value"))),
        };
        let twice = || {
            CliError::usage(format!(
                "{name} is given twice (before and after {}): give it once",
                args.kind
            ))
        };
        let number = |v: &str| {
            v.parse::<i64>()
                .map_err(|_| CliError::usage(format!("{name} {v}: give a whole number")))
        };
        match name.as_str() {
            "--server" if args.server != DEFAULT_SERVER => return Err(twice()),
            "--server" => args.server = value,
            "--ca" if args.ca.is_some() => return Err(twice()),
            "--ca" => args.ca = Some(PathBuf::from(value)),
            "--token" if args.token.is_some() => return Err(twice()),
            "--token" => args.token = Some(value),
            "--priority" if args.priority.is_some() => return Err(twice()),
            "--priority" => args.priority = Some(number(&value)?),
            "--throughput" if args.throughput.is_some() => return Err(twice()),
            "--throughput" => args.throughput = Some(number(&value)?),
            "--note" if args.note.is_some() => return Err(twice()),
            _ => args.note = Some(value),
        }
    }
    args.words = words;
    Ok(args)
}

/// Runs `spar submit`.
pub fn run(args: SubmitArgs) -> CliResult {
    let args = own_options_after_the_kind(args)?;
    let base = args.server.trim_end_matches('/');
    let target = Target::parse(base).ok_or_else(|| {
        CliError::usage(format!(
            "--server {}: give http://HOST:PORT or https://HOST[:PORT]",
            args.server
        ))
    })?;
    let tls = match (&target.name, &args.ca) {
        (Some(_), ca) => Some(client_config(ca.as_deref()).map_err(CliError::usage)?),
        (None, Some(ca)) => {
            return Err(CliError::usage(format!(
                "--ca {}: only for an https:// server (--server {})",
                ca.display(),
                args.server
            )))
        }
        (None, None) => None,
    };
    let body = serde_json::json!({
        "kind": args.kind,
        "words": args.words,
        "priority": args.priority,
        "throughput": args.throughput,
        "note": args.note,
    })
    .to_string();
    let token = args
        .token
        .clone()
        .or_else(|| std::env::var("SPAR_TOKEN").ok())
        .unwrap_or_default();
    let token = token.trim();
    if token.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(CliError::usage(
            "--token: a token has no spaces or control characters: copy it again from /account",
        ));
    }
    let (code, text) = post(&target, tls, "/api/runs", &body, token)
        .map_err(|e| CliError::failure(format!("--server {}: {e}", args.server)))?;
    let reply: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let message = reply["error"].as_str().unwrap_or(text.trim()).to_string();
    match code {
        200..=299 => {
            let id = reply["id"].as_i64().ok_or_else(|| {
                CliError::failure(format!("the server's answer has no run id: {text}"))
            })?;
            stdout::print(&format!("{base}/runs/{id}\n"))
        }
        400..=499 => Err(CliError::usage(message)),
        _ => Err(CliError::failure(format!(
            "the server failed ({code}): {message}"
        ))),
    }
}

/// Where the server is: `HOST:PORT` to connect to, and for `https://` the name its
/// certificate must have.
struct Target {
    addr: String,
    name: Option<String>,
}

impl Target {
    /// `http://HOST:PORT` or `https://HOST[:PORT]` (port 443 by default); `None`: neither.
    fn parse(url: &str) -> Option<Target> {
        let (rest, tls) = match url.strip_prefix("https://") {
            Some(rest) => (rest, true),
            None => (url.strip_prefix("http://")?, false),
        };
        if rest.is_empty() || rest.contains(['/', '?', '#', '@']) {
            return None;
        }
        if !tls {
            return Some(Target {
                addr: rest.to_string(),
                name: None,
            });
        }
        // `[v6]:port`, `[v6]`, `host:port`, `host`.
        let (host, port) = match rest.strip_prefix('[') {
            Some(v6) => {
                let (inside, after) = v6.split_once(']')?;
                (inside, after.strip_prefix(':'))
            }
            None => match rest.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (rest, None),
            },
        };
        let port: u16 = port.map_or(Some(443), |p| p.parse().ok())?;
        if host.is_empty() {
            return None;
        }
        let addr = if host.contains(':') {
            format!("[{host}]:{port}")
        } else {
            format!("{host}:{port}")
        };
        Some(Target {
            addr,
            name: Some(host.to_string()),
        })
    }
}

/// The rustls client: trusting the certificates of `ca` (PEM), else the system's.
fn client_config(ca: Option<&Path>) -> Result<Arc<ClientConfig>, String> {
    let mut roots = RootCertStore::empty();
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
                    .add(cert)
                    .map_err(|e| bad(format!("not a usable certificate: {e}")))?;
            }
        }
        None => {
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        }
    }
    if roots.is_empty() {
        return Err(match ca {
            Some(path) => format!("--ca {}: no certificate in it", path.display()),
            None => "no trusted certificates found on this system: give --ca PATH".into(),
        });
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}

/// One POST of a JSON body, over TLS when `tls` is given: the status code and the body.
fn post(
    target: &Target,
    tls: Option<Arc<ClientConfig>>,
    path: &str,
    body: &str,
    token: &str,
) -> Result<(u16, String), String> {
    let stream = TcpStream::connect(&target.addr).map_err(|e| format!("cannot connect: {e}"))?;
    // A check of a run's words may start engines: give it time.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    let (Some(config), Some(name)) = (tls, &target.name) else {
        return exchange(stream, &target.addr, path, body, token);
    };
    let name = ServerName::try_from(name.clone())
        .map_err(|e| format!("'{name}' is not a server name: {e}"))?;
    let conn = rustls::ClientConnection::new(config, name).map_err(|e| format!("TLS: {e}"))?;
    exchange(
        rustls::StreamOwned::new(conn, stream),
        &target.addr,
        path,
        body,
        token,
    )
    .map_err(|e| {
        if e.contains("certificate") {
            format!("{e} (a private CA or a self-signed certificate: give --ca PATH)")
        } else {
            e
        }
    })
}

/// The request written to `stream`, the answer read: the status code and the body.
fn exchange(
    mut stream: impl Read + Write,
    host: &str,
    path: &str,
    body: &str,
    token: &str,
) -> Result<(u16, String), String> {
    let auth = if token.is_empty() {
        String::new()
    } else {
        format!("Authorization: Bearer {token}\r\n")
    };
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         {auth}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .and_then(|()| stream.flush())
        .map_err(|e| format!("cannot send: {e}"))?;
    let mut reply = Vec::new();
    if let Err(e) = stream.read_to_end(&mut reply) {
        // A TLS peer that closes without its close_notify, once it has answered, is done.
        if reply.is_empty() || e.kind() != std::io::ErrorKind::UnexpectedEof {
            return Err(format!("cannot read the answer: {e}"));
        }
    }
    let text = String::from_utf8_lossy(&reply);
    let (head, body) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| "not an HTTP answer".to_string())?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("not an HTTP answer: {}", head.lines().next().unwrap_or("")))?;
    Ok((code, body.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(line: &str) -> SubmitArgs {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            submit: SubmitArgs,
        }
        let argv = std::iter::once("submit").chain(line.split(' '));
        Cli::try_parse_from(argv).unwrap().submit
    }

    #[test]
    fn submits_own_options_are_taken_after_the_kind_too() {
        let a = own_options_after_the_kind(parsed(
            "--priority 3 match --engine name=a --games 2 --note x --throughput=7",
        ))
        .unwrap();
        assert_eq!(a.words, ["--engine", "name=a", "--games", "2"]);
        assert_eq!((a.priority, a.throughput), (Some(3), Some(7)));
        assert_eq!(a.note.as_deref(), Some("x"));
        let a = own_options_after_the_kind(parsed("match --games 2 --server http://h:1")).unwrap();
        assert_eq!(a.server, "http://h:1");
        let e =
            own_options_after_the_kind(parsed("--note a match --games 2 --note b")).unwrap_err();
        assert!(e.message.contains("--note is given twice"), "{}", e.message);
        let e = own_options_after_the_kind(parsed("match --games 2 --priority high")).unwrap_err();
        assert!(e.message.contains("--priority high"), "{}", e.message);
        let e = own_options_after_the_kind(parsed("match --games 2 --note")).unwrap_err();
        assert!(e.message.contains("--note needs a value"), "{}", e.message);
    }

    #[test]
    fn servers_are_http_host_port_or_https_with_a_name() {
        let t = Target::parse("http://127.0.0.1:8000").unwrap();
        assert_eq!((t.addr.as_str(), t.name), ("127.0.0.1:8000", None));
        let t = Target::parse("https://spar.example.org").unwrap();
        assert_eq!(t.addr, "spar.example.org:443");
        assert_eq!(t.name.as_deref(), Some("spar.example.org"));
        let t = Target::parse("https://localhost:8443").unwrap();
        assert_eq!(t.addr, "localhost:8443");
        let t = Target::parse("https://[::1]:8443").unwrap();
        assert_eq!(
            (t.addr.as_str(), t.name.as_deref()),
            ("[::1]:8443", Some("::1"))
        );
        for bad in [
            "ftp://x:1",
            "http://",
            "https://",
            "https://x:port",
            "http://x:1/api",
            "https://u@x",
            "127.0.0.1:8000",
        ] {
            assert!(Target::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn a_ca_file_must_hold_a_certificate() {
        let dir = tempfile::tempdir().unwrap();
        let e = client_config(Some(&dir.path().join("none.pem"))).unwrap_err();
        assert!(e.contains("--ca") && e.contains("cannot read"), "{e}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "nothing\n").unwrap();
        let e = client_config(Some(&empty)).unwrap_err();
        assert!(e.contains("no certificate"), "{e}");
    }
}
