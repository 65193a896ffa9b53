//! `spar submit --server URL KIND WORDS…`: a run sent to a `spar serve` (its JSON API,
//! `POST /api/runs`); prints the run's URL. A refusal (4xx) exits 2 with the server's
//! message. With `--token` (or `SPAR_TOKEN`) it sends `Authorization: Bearer TOKEN`, which
//! a server with accounts needs. The HTTP is a few lines over a TCP stream: one request, `Connection: close`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::error::{CliError, CliResult};
use crate::stdout;

/// Send a run to a spar server; prints its URL.
///
///   spar submit --server http://127.0.0.1:8000 sprt --engine name=dev option.rfp_margin=60 \
///       --engine name=base --each nodes=2000 --elo0 0 --elo1 5
#[derive(clap::Args, Debug)]
#[command(verbatim_doc_comment)]
pub struct SubmitArgs {
    /// The server (`http://HOST:PORT`).
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8000")]
    pub server: String,
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
    /// The words, as after `spar KIND`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub words: Vec<String>,
}

/// Runs `spar submit`.
pub fn run(args: SubmitArgs) -> CliResult {
    let base = args.server.trim_end_matches('/');
    let host = base.strip_prefix("http://").ok_or_else(|| {
        CliError::usage(format!("--server {}: give http://HOST:PORT", args.server))
    })?;
    if host.is_empty() || host.contains('/') {
        return Err(CliError::usage(format!(
            "--server {}: give http://HOST:PORT",
            args.server
        )));
    }
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
    let (code, text) = post(host, "/api/runs", &body, token)
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

/// One POST of a JSON body: the status code and the body.
fn post(host: &str, path: &str, body: &str, token: &str) -> Result<(u16, String), String> {
    let mut stream = TcpStream::connect(host).map_err(|e| format!("cannot connect: {e}"))?;
    // A check of a run's words may start engines: give it time.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
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
        .map_err(|e| format!("cannot send: {e}"))?;
    let mut reply = Vec::new();
    stream
        .read_to_end(&mut reply)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
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
