//! `spar submit --server URL KIND WORDS…`: a run sent to a `spar serve` (its JSON API,
//! `POST /api/runs` under the URL's path prefix, if any); prints the run's URL. A refusal
//! (4xx) exits 2 with the server's message. With `--token` (or `SPAR_TOKEN`) it sends
//! `Authorization: Bearer TOKEN`, which a server with accounts needs. The HTTP is ureq's
//! ([`client`]): TLS over rustls trusting the system's certificates or `--ca PATH`,
//! redirects followed (the token never sent to another server), proxies from the
//! environment.

use std::path::PathBuf;

mod client;

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
    /// The server (`http://HOST:PORT`, or `https://HOST[:PORT]` for one serving TLS), with
    /// its path prefix behind a reverse proxy (`https://HOST/spar/`).
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
    let server = client::ServerUrl::parse(args.server.trim()).map_err(|why| {
        CliError::usage(format!(
            "--server {}: {why}: give http://HOST:PORT or https://HOST[:PORT], with the \
             server's path prefix if it has one (https://HOST/spar/)",
            args.server
        ))
    })?;
    if let (false, Some(ca)) = (server.tls, &args.ca) {
        return Err(CliError::usage(format!(
            "--ca {}: only for an https:// server (--server {})",
            ca.display(),
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
    let answer =
        client::post(&server, args.ca.as_deref(), "/api/runs", &body, token).map_err(|f| {
            let message = format!("--server {}: {}", args.server, f.message);
            if f.usage {
                CliError::usage(message)
            } else {
                CliError::failure(message)
            }
        })?;
    let text = answer.text;
    let reply: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let message = reply["error"].as_str().unwrap_or(text.trim()).to_string();
    match answer.code {
        200..=299 => {
            let id = reply["id"].as_i64().ok_or_else(|| {
                CliError::failure(format!("the server's answer has no run id: {text}"))
            })?;
            stdout::print(&format!("{}/runs/{id}\n", answer.server.base))
        }
        400..=499 => Err(CliError::usage(message)),
        code => Err(CliError::failure(format!(
            "the server failed ({code}): {message}"
        ))),
    }
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
}
