//! `spar serve`: the team server ([`crate::serve`]). Here its flags, and the check of a
//! run's words that the server is handed: the words parsed by the same clap arguments as
//! `spar sprt`/`match`/`tune`/`datagen` (which live here, in `cmd/`, that nothing imports)
//! and checked as the command checks them before its first game.

use std::path::{Path, PathBuf};

use clap::Parser;

use crate::error::{CliError, CliResult};
use crate::serve::settings::{Partial, Settings};

/// Run the team server: queue, watch and search runs (docs/serve.md).
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on [default: 127.0.0.1:8000; port 0: any free port].
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<String>,
    /// Where the database, the run directories and the archive live [default: ./spar-serve].
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// Cores shared among the runs [default: all].
    #[arg(long, value_name = "N")]
    pub cores: Option<usize>,
    /// Play each run as a `--slurm` run (the Slurm backend; docs/serve.md).
    #[arg(long)]
    pub slurm: bool,
    /// With --slurm: the partition of the runs' job arrays.
    #[arg(long, value_name = "P")]
    pub partition: Option<String>,
    /// With --slurm: the array tasks of each run [default: 4].
    #[arg(long, value_name = "N")]
    pub shards: Option<u64>,
    /// With --slurm: the CPUs of each array task [default: 1].
    #[arg(long, value_name = "C")]
    pub cpus_per_shard: Option<u64>,
    /// The spar that plays report runs: one built with `cargo build --release --features
    /// track` [default: this spar when it has the feature; else builtin engines are refused
    /// in report runs].
    #[arg(long, value_name = "PATH")]
    pub track_spar: Option<PathBuf>,
    /// The largest net file an upload may have, in MiB (a larger one is a 413) [default:
    /// 256].
    #[arg(long, value_name = "MIB")]
    pub net_limit: Option<u64>,
    /// Allow a --bind address beyond loopback: needs --tls-cert/--tls-key or
    /// --behind-proxy, and an admin account (docs/serve.md, Team setup: exposure).
    #[arg(long)]
    pub public: bool,
    /// Serve HTTPS with this certificate chain (PEM; with --tls-key).
    #[arg(long, value_name = "PATH")]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert (PEM: PKCS#8, PKCS#1 or SEC1).
    #[arg(long, value_name = "PATH")]
    pub tls_key: Option<PathBuf>,
    /// A reverse proxy in front terminates TLS: serve plain HTTP, with a warning, and give
    /// the session cookie `Secure`.
    #[arg(long)]
    pub behind_proxy: bool,
    /// Flag a shard or machine of a run whose score's residual against the run's is beyond
    /// this many standard errors [default: 2.7, as fishtest].
    #[arg(long, value_name = "X")]
    pub residual_threshold: Option<f64>,
    /// …once it has played at least this many games [default: 100].
    #[arg(long, value_name = "N")]
    pub residual_min_games: Option<u64>,
    /// The bench speed (nodes per second) a time-controlled run's clock is meant for: a run
    /// submitted with `--scale-nps` plays its tc=/st=/movetime= times REFERENCE / this
    /// host's bench nps (OpenBench's NPS scaling).
    #[arg(long, value_name = "NPS")]
    pub reference_nps: Option<u64>,
    /// The seconds a client has for its TLS handshake and for each request's line and
    /// headers; past them its connection is closed [default: 10].
    #[arg(long, value_name = "SECONDS")]
    pub header_timeout: Option<u64>,
    /// The open connections one client address (an IPv6 client: its /64) may hold; one
    /// more is closed at once [default: 64; with --behind-proxy 1024].
    #[arg(long, value_name = "N")]
    pub connections_per_address: Option<usize>,
    /// The free space the data directory keeps: below it new runs are refused (507) and
    /// queued runs wait, and the index says so; a size such as 1G, 512M, 8MiB, 0 (off)
    /// [default: 1G].
    #[arg(long, value_name = "SIZE")]
    pub min_free: Option<String>,
    /// On a server with accounts, a directory whose files runs may read (`--book`, `cmd=`,
    /// `params=`, option files, tables); repeat for more [default: the directory the server
    /// starts in, and the data directory]. /proc, /etc, /sys and /dev never (docs/serve.md).
    #[arg(long, value_name = "DIR")]
    pub allow_files: Vec<PathBuf>,
    /// A TOML file with the same keys (`bind`, `data-dir`, `cores`, `slurm`, `partition`,
    /// `shards`, `cpus-per-shard`, `track-spar`, `net-limit`, `public`, `tls-cert`, `tls-key`,
    /// `behind-proxy`, `residual-threshold`, `residual-min-games`, `reference-nps`,
    /// `header-timeout`, `connections-per-address`, `min-free`, `allow-files` (a list)); flags
    /// win.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Make an admin account NAME in the data directory (the password from standard input,
    /// asked for without echo on a terminal), then exit without serving.
    #[arg(long, value_name = "NAME")]
    pub add_admin: Option<String>,
}

/// Runs `spar serve`.
pub fn run(args: ServeArgs) -> CliResult {
    let file = match &args.config {
        Some(path) => Partial::read(path).map_err(CliError::usage)?,
        None => Partial::default(),
    };
    let flags = Partial {
        bind: args.bind,
        data_dir: args.data_dir,
        cores: args.cores,
        slurm: args.slurm.then_some(true),
        partition: args.partition,
        shards: args.shards,
        cpus_per_shard: args.cpus_per_shard,
        track_spar: args.track_spar,
        net_limit: args.net_limit,
        public: args.public.then_some(true),
        tls_cert: args.tls_cert,
        tls_key: args.tls_key,
        behind_proxy: args.behind_proxy.then_some(true),
        residual_threshold: args.residual_threshold,
        residual_min_games: args.residual_min_games,
        reference_nps: args.reference_nps,
        header_timeout: args.header_timeout,
        connections_per_address: args.connections_per_address,
        min_free: args.min_free,
        allow_files: (!args.allow_files.is_empty()).then_some(args.allow_files),
    };
    let settings = Settings::resolve(file, flags).map_err(CliError::usage)?;
    if let Some(name) = &args.add_admin {
        return add_admin(&settings.data_dir, name);
    }
    // Report runs with builtin engines need a spar with the `track` feature to play them.
    let check: crate::serve::state::CheckWords =
        if engine::track::ENABLED || settings.track_spar.is_some() {
            check_words
        } else {
            check_words_untracked
        };
    crate::serve::run(settings, check)
}

/// `--add-admin NAME`: the password from standard input (without echo on a terminal, asked
/// twice), the admin stored, one line printed.
fn add_admin(data_dir: &Path, name: &str) -> CliResult {
    use std::io::IsTerminal;
    crate::serve::accounts::check_name(name)
        .map_err(|e| CliError::usage(format!("--add-admin {e}")))?;
    let password = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(format!("password for {name}: "))
            .map_err(|e| CliError::usage(format!("--add-admin {name}: no password: {e}")))?;
        let again = rpassword::prompt_password("the same password again: ")
            .map_err(|e| CliError::usage(format!("--add-admin {name}: no password: {e}")))?;
        if first != again {
            return Err(CliError::usage(format!(
                "--add-admin {name}: the two passwords differ: run it again"
            )));
        }
        first
    } else {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| CliError::usage(format!("--add-admin {name}: no password: {e}")))?;
        line.trim_end_matches(['\n', '\r']).to_string()
    };
    crate::serve::accounts::add_admin(data_dir, name, &password).map_err(CliError::usage)?;
    crate::stdout::print(&format!(
        "spar serve: admin {name} added to {}\n",
        data_dir.join("spar.db").display()
    ))
}

/// The commands the server runs, parsed as `spar` parses them.
#[derive(Parser, Debug)]
#[command(name = "spar")]
enum RunWords {
    Match(super::matches::MatchArgs),
    Sprt(super::matches::MatchArgs),
    Tune(super::tune::TuneArgs),
    Datagen(super::datagen::DatagenArgs),
    Report(super::report::ReportArgs),
    Bisect(super::bisect::BisectArgs),
}

/// Checks `spar KIND WORDS…` with the server's output flags pointing into `scratch`, as the
/// command does before its first game (clap, then the plan: engines, limits, bounds,
/// books, files); plays nothing. Report runs are played by a spar with the `track`
/// feature.
pub fn check_words(kind: &str, words: &[String], scratch: &Path) -> Result<(), String> {
    check(kind, words, scratch, true)
}

/// [`check_words`] for a server without a spar with the `track` feature: report runs with
/// builtin engines are refused (they would record nothing).
pub fn check_words_untracked(kind: &str, words: &[String], scratch: &Path) -> Result<(), String> {
    check(kind, words, scratch, false)
}

/// The message goes to the network: it names files, lines and what is expected, never the
/// files' bytes. The parsers' quotes are withheld ([`data::quote::withheld`]); then every
/// run of bytes that the files the words name hold is removed as well
/// ([`crate::serve::file_access::scrub`]).
fn check(kind: &str, words: &[String], scratch: &Path, track: bool) -> Result<(), String> {
    data::quote::withheld(|| check_quoting(kind, words, scratch, track)).map_err(|message| {
        let cwd = std::env::current_dir().unwrap_or_default();
        crate::serve::file_access::scrub(&message, words, &cwd)
    })
}

/// The check itself, its messages as the command line's.
fn check_quoting(kind: &str, words: &[String], scratch: &Path, track: bool) -> Result<(), String> {
    let argv = ["spar".to_string(), kind.to_string()]
        .into_iter()
        .chain(words.iter().cloned())
        .chain(crate::jobs::by_command(kind).map_or_else(Vec::new, |k| k.served_outputs(scratch)));
    let parsed = RunWords::try_parse_from(argv).map_err(|e| {
        let text = e.to_string();
        let first = text.lines().next().unwrap_or_default();
        first.trim_start_matches("error: ").to_string()
    })?;
    let checked = match parsed {
        RunWords::Match(a) => crate::jobs::matches::args::check(&a, false),
        RunWords::Sprt(a) => crate::jobs::matches::args::check(&a, true),
        RunWords::Tune(a) => crate::jobs::tune::setup::setup(&a).map(|_| ()),
        RunWords::Datagen(a) => crate::jobs::datagen::plan::plan(&a).map(|_| ()),
        RunWords::Report(a) => crate::jobs::report::check(&a, track),
        RunWords::Bisect(a) => a.check().map(|_| ()),
    };
    checked.map_err(|e| e.message)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(kind: &str, words: &str) -> Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let words: Vec<String> = words.split_whitespace().map(String::from).collect();
        check_words(kind, &words, dir.path())
    }

    #[test]
    fn serve_words_that_spar_accepts_pass() {
        check(
            "match",
            "--engine name=a --engine name=b --each nodes=400 --games 8",
        )
        .unwrap();
        check(
            "sprt",
            "--engine name=a --engine name=b --each nodes=400 --elo0 0 --elo1 5",
        )
        .unwrap();
        check("datagen", "--games 4 --nodes 500").unwrap();
    }

    #[test]
    fn serve_words_that_spar_refuses_are_refused_with_its_message() {
        let e = check("match", "--engine name=a --engine name=b --frobnicate").unwrap_err();
        assert!(e.contains("--frobnicate"), "{e}");
        let e = check(
            "match",
            "--engine name=a bogus=1 --engine name=b --each nodes=400",
        )
        .unwrap_err();
        assert!(e.contains("bogus"), "{e}");
        let e = check(
            "sprt",
            "--engine name=a --engine name=b --each nodes=400 --elo0 5 --elo1 0",
        )
        .unwrap_err();
        assert!(!e.is_empty());
        let e = check("datagen", "--nodes 500").unwrap_err();
        assert!(e.contains("--games"), "{e}");
    }

    #[test]
    fn the_servers_check_names_a_bad_line_never_its_text() {
        let dir = tempfile::tempdir().unwrap();
        let book = dir.path().join("bad.epd");
        std::fs::write(
            &book,
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1\nSECRET-9e1d/8 x - -\n",
        )
        .unwrap();
        let words = format!(
            "--engine name=a --engine name=b --each nodes=400 --games 8 --book {}",
            book.display()
        );
        let e = check("match", &words).unwrap_err();
        assert!(e.contains("bad.epd:2: bad FEN placement: expected"), "{e}");
        assert!(!e.contains("SECRET"), "{e}");
        // The command's own check, outside the server's, still quotes the line.
        let w: Vec<String> = words.split_whitespace().map(String::from).collect();
        let cli = check_quoting("match", &w, dir.path(), true).unwrap_err();
        assert!(cli.contains("SECRET-9e1d/8 x - -"), "{cli}");
    }

    #[test]
    fn every_flag_that_names_a_file_is_checked_by_the_server_or_is_its_own() {
        use crate::serve::file_access::FILE_FLAGS;
        use crate::serve::words::OWNED;
        use clap::CommandFactory;
        let cmd = RunWords::command();
        let mut seen = 0;
        for kind in cmd.get_subcommands() {
            for arg in kind.get_arguments() {
                let Some(long) = arg.get_long() else {
                    continue;
                };
                let names = arg.get_value_names().unwrap_or_default();
                if names
                    .iter()
                    .any(|n| ["FILE", "DIR", "CSV", "PATH"].iter().any(|f| n.contains(f)))
                {
                    let flag = format!("--{long}");
                    seen += 1;
                    // `--repo` names a registered engine on a server (serve/repo_words.rs).
                    let named = flag == crate::serve::repo_words::REPO;
                    assert!(
                        FILE_FLAGS.contains(&flag.as_str())
                            || OWNED.contains(&flag.as_str())
                            || named,
                        "spar {} {flag} names a file: add it to file_access::FILE_FLAGS",
                        kind.get_name()
                    );
                }
            }
        }
        assert!(seen > 10, "{seen}");
    }

    #[test]
    fn report_words_need_a_track_spar_for_builtin_engines_only() {
        let dir = tempfile::tempdir().unwrap();
        let w = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
        let builtin = w(
            "--engine name=dev option.rfp_margin=40 --engine name=base --each nodes=300 --games 2",
        );
        check_words("report", &builtin, dir.path()).unwrap();
        let e = check_words_untracked("report", &builtin, dir.path()).unwrap_err();
        assert!(e.contains("--track-spar PATH") && e.contains("cmd="), "{e}");
        let spar = std::env::current_exe().unwrap();
        let external = w(&format!(
            "--engine name=ext cmd={} args=uci --each nodes=300 --games 2",
            spar.display()
        ));
        // The check does not start the engine: any executable does.
        check_words_untracked("report", &external, dir.path()).unwrap();
        let e = check_words("report", &w("--games 3 --engine name=a"), dir.path()).unwrap_err();
        assert!(!e.is_empty());
    }
}
