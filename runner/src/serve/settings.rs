//! The server's settings: built-in defaults, then the TOML config file (`--config FILE`,
//! the same keys as the flags: `bind`, `data-dir`, `cores`, `slurm`, `partition`, `shards`,
//! `cpus-per-shard`, `track-spar`, `net-limit`, `public`, `tls-cert`, `tls-key`,
//! `behind-proxy`, `residual-threshold`, `residual-min-games`, `reference-nps`,
//! `header-timeout`, `connections-per-address`, `min-free`, `allow-files`, a list), then the
//! flags.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::disk::size::{self, SIZE_FORM};
use super::disk::DEFAULT_MIN_FREE;
use super::exposure::Exposure;
use super::transport::{Bounds, BEHIND_PROXY_PER_ADDRESS, DEFAULT_PER_ADDRESS};

/// The address `spar serve` binds without `--bind`.
pub const DEFAULT_BIND: &str = "127.0.0.1:8000";

/// The data directory without `--data-dir`.
pub const DEFAULT_DATA_DIR: &str = "spar-serve";

/// What a config file or the flags may set; `None`: not set there.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Partial {
    pub bind: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub cores: Option<usize>,
    /// Runs play as `--slurm` runs (the Slurm backend).
    pub slurm: Option<bool>,
    pub partition: Option<String>,
    pub shards: Option<u64>,
    pub cpus_per_shard: Option<u64>,
    /// The spar that plays report runs (one with the `track` feature).
    pub track_spar: Option<PathBuf>,
    /// The largest net file an upload may have, in MiB.
    pub net_limit: Option<u64>,
    /// Serving beyond loopback is allowed (needs TLS or a proxy, and an admin).
    pub public: Option<bool>,
    /// The TLS certificate chain (PEM).
    pub tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM).
    pub tls_key: Option<PathBuf>,
    /// A reverse proxy in front terminates TLS.
    pub behind_proxy: Option<bool>,
    /// A shard or machine whose |residual| is above this is flagged.
    pub residual_threshold: Option<f64>,
    /// …when it has played at least this many games.
    pub residual_min_games: Option<u64>,
    /// The bench speed a `--scale-nps` run's clock is meant for.
    pub reference_nps: Option<u64>,
    /// The seconds a client has for its TLS handshake and for each request's head.
    pub header_timeout: Option<u64>,
    /// The open connections one client address may hold.
    pub connections_per_address: Option<usize>,
    /// The free space the data directory keeps (`1G`, `512M`, `0`: off; in the file also
    /// a number of bytes).
    #[serde(default, deserialize_with = "size_word")]
    pub min_free: Option<String>,
    /// The directories whose files runs may read (`--allow-files`, repeated).
    pub allow_files: Option<Vec<PathBuf>>,
}

/// A size in the config file: a word (`"1G"`) or a number of bytes (`0`).
fn size_word<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Word {
        Text(String),
        Bytes(u64),
    }
    Ok(Option::<Word>::deserialize(d)?.map(|w| match w {
        Word::Text(t) => t,
        Word::Bytes(b) => b.to_string(),
    }))
}

/// fishtest's threshold: a residual beyond ±2.7 is flagged.
pub const DEFAULT_THRESHOLD: f64 = 2.7;

/// Games a shard or machine must have played before it can be flagged.
pub const DEFAULT_MIN_GAMES: u64 = 100;

/// When a shard's or machine's residual is flagged (`serve::residuals`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// |residual| above this.
    pub threshold: f64,
    /// With at least this many games.
    pub min_games: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            threshold: DEFAULT_THRESHOLD,
            min_games: DEFAULT_MIN_GAMES,
        }
    }
}

/// The largest net file an upload may have without `--net-limit`: 256 MiB.
pub const DEFAULT_NET_LIMIT: u64 = 256 << 20;

/// The Slurm backend: each run is a `--slurm` run of `shards` array tasks of
/// `cpus_per_shard` CPUs, on `partition` when given; the server's child is its coordinator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlurmSettings {
    pub partition: Option<String>,
    pub shards: u64,
    pub cpus_per_shard: u64,
}

/// The shards of a run without `--shards`.
pub const DEFAULT_SHARDS: u64 = 4;

/// The settings in force.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `HOST:PORT` to listen on (port 0: any free port).
    pub bind: String,
    /// Where the database, the run directories and the archive are.
    pub data_dir: PathBuf,
    /// The cores shared among the runs.
    pub cores: usize,
    /// The Slurm backend, when on.
    pub slurm: Option<SlurmSettings>,
    /// The spar that plays report runs (`--track-spar`; `None`: this one).
    pub track_spar: Option<PathBuf>,
    /// The largest net file an upload may have, in bytes.
    pub net_limit: u64,
    /// Who may reach the server: `--public`, TLS, `--behind-proxy`.
    pub exposure: Exposure,
    /// When a shard's or machine's residual is flagged.
    pub residuals: Limits,
    /// The bench speed a `--scale-nps` run's clock is meant for (`--reference-nps`).
    pub reference_nps: Option<u64>,
    /// The bounds of the connections (`--header-timeout`, `--connections-per-address`).
    pub bounds: Bounds,
    /// The directories whose files runs may read on a server with accounts
    /// (`--allow-files`; empty: the server's directory and its data directory).
    pub allow_files: Vec<PathBuf>,
    /// The free space the data directory keeps, in bytes (`--min-free`; 0: no threshold):
    /// below it new runs are refused (507) and queued runs wait.
    pub min_free: u64,
}

impl Partial {
    /// Reads a config file.
    pub fn read(path: &Path) -> Result<Partial, String> {
        let text = data::text::read_whole(path)
            .map_err(|e| format!("--config {}: cannot read: {e}", path.display()))?;
        toml::from_str(&text).map_err(|e| format!("--config {}: {e}", path.display()))
    }
}

impl Settings {
    /// The defaults, overridden by `file`, overridden by `flags`.
    pub fn resolve(file: Partial, flags: Partial) -> Result<Settings, String> {
        let all_cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = flags.cores.or(file.cores).unwrap_or(all_cores);
        if cores == 0 {
            return Err("--cores must be at least 1".into());
        }
        let slurm_on = flags.slurm.or(file.slurm).unwrap_or(false);
        let partition = flags.partition.or(file.partition);
        let shards = flags.shards.or(file.shards);
        let cpus = flags.cpus_per_shard.or(file.cpus_per_shard);
        if !slurm_on && (partition.is_some() || shards.is_some() || cpus.is_some()) {
            return Err("--partition, --shards and --cpus-per-shard need --slurm".into());
        }
        if shards == Some(0) || cpus == Some(0) {
            return Err("--shards and --cpus-per-shard must be at least 1".into());
        }
        if let Some(p) = &partition {
            let plain = !p.is_empty()
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.,".contains(c));
            if !plain {
                return Err(format!("--partition '{p}': not a partition name"));
            }
        }
        let net_mib = flags.net_limit.or(file.net_limit);
        if net_mib == Some(0) || net_mib.is_some_and(|m| m > 1 << 20) {
            return Err("--net-limit: from 1 to 1048576 (MiB)".into());
        }
        let net_limit = net_mib.map_or(DEFAULT_NET_LIMIT, |m| m << 20);
        let mut residuals = Limits::default();
        if let Some(t) = flags.residual_threshold.or(file.residual_threshold) {
            if !(t.is_finite() && t > 0.0) {
                return Err(format!(
                    "--residual-threshold {t}: a positive number of standard errors (e.g. 2.7)"
                ));
            }
            residuals.threshold = t;
        }
        if let Some(g) = flags.residual_min_games.or(file.residual_min_games) {
            residuals.min_games = g;
        }
        let reference_nps = flags.reference_nps.or(file.reference_nps);
        if reference_nps == Some(0) {
            return Err(
                "--reference-nps 0: the bench speed (nodes per second, e.g. 2500000) a scaled \
                 run's clock is meant for"
                    .into(),
            );
        }
        let slurm = slurm_on.then(|| SlurmSettings {
            partition,
            shards: shards.unwrap_or(DEFAULT_SHARDS),
            cpus_per_shard: cpus.unwrap_or(1),
        });
        let behind_proxy = flags.behind_proxy.or(file.behind_proxy).unwrap_or(false);
        let bounds = bounds(
            flags.header_timeout.or(file.header_timeout),
            flags
                .connections_per_address
                .or(file.connections_per_address),
            behind_proxy,
        )?;
        let exposure = Exposure::new(
            flags.public.or(file.public).unwrap_or(false),
            flags.tls_cert.or(file.tls_cert),
            flags.tls_key.or(file.tls_key),
            behind_proxy,
        )?;
        let min_free = match flags.min_free.or(file.min_free) {
            None => DEFAULT_MIN_FREE,
            Some(text) => size::parse(&text).map_err(|e| {
                format!(
                    "--min-free {e}: give {SIZE_FORM}; the free space the data directory keeps \
                     (below it new runs are refused; default 1G)"
                )
            })?,
        };
        Ok(Settings {
            min_free,
            allow_files: flags.allow_files.or(file.allow_files).unwrap_or_default(),
            exposure,
            slurm,
            net_limit,
            residuals,
            reference_nps,
            bounds,
            track_spar: flags.track_spar.or(file.track_spar),
            bind: flags
                .bind
                .or(file.bind)
                .unwrap_or_else(|| DEFAULT_BIND.into()),
            data_dir: flags
                .data_dir
                .or(file.data_dir)
                .unwrap_or_else(|| DEFAULT_DATA_DIR.into()),
            cores,
        })
    }
}

/// The longest `--header-timeout`: an hour.
pub const MAX_HEADER_TIMEOUT: u64 = 3600;

/// The connections' bounds: `--header-timeout` (seconds) and `--connections-per-address`,
/// each checked, or its default (more connections per address behind a proxy, whose own
/// address every client has).
fn bounds(timeout: Option<u64>, per_address: Option<usize>, proxy: bool) -> Result<Bounds, String> {
    let mut b = Bounds::default();
    if let Some(t) = timeout {
        if t == 0 || t > MAX_HEADER_TIMEOUT {
            return Err(format!(
                "--header-timeout {t}: from 1 to {MAX_HEADER_TIMEOUT} seconds (the time a \
                 client has for its TLS handshake and each request's headers; default 10)"
            ));
        }
        b.header_timeout = std::time::Duration::from_secs(t);
    }
    b.per_address = match per_address {
        Some(0) => {
            return Err(format!(
                "--connections-per-address 0: give at least 1 (the open connections one \
                 client address may hold; default {DEFAULT_PER_ADDRESS})"
            ))
        }
        Some(n) => n,
        None if proxy => BEHIND_PROXY_PER_ADDRESS,
        None => DEFAULT_PER_ADDRESS,
    };
    Ok(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_win_over_the_file_and_the_file_over_the_defaults() {
        let file: Partial = toml::from_str("bind = \"0.0.0.0:9000\"\ncores = 3\n").unwrap();
        let flags = Partial {
            cores: Some(5),
            ..Partial::default()
        };
        let s = Settings::resolve(file, flags).unwrap();
        assert_eq!(s.bind, "0.0.0.0:9000");
        assert_eq!(s.cores, 5);
        assert_eq!(s.data_dir, Path::new(DEFAULT_DATA_DIR));
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.bind, DEFAULT_BIND);
        let file: Partial = toml::from_str("data-dir = \"/srv/spar\"").unwrap();
        assert_eq!(
            Settings::resolve(file, Partial::default())
                .unwrap()
                .data_dir,
            Path::new("/srv/spar")
        );
    }

    #[test]
    fn the_reference_nps_is_read_from_the_file_and_must_be_positive() {
        let file: Partial = toml::from_str("reference-nps = 2500000\n").unwrap();
        let s = Settings::resolve(file, Partial::default()).unwrap();
        assert_eq!(s.reference_nps, Some(2_500_000));
        let none = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(none.reference_nps, None);
        let zero = Partial {
            reference_nps: Some(0),
            ..Partial::default()
        };
        let e = Settings::resolve(Partial::default(), zero).unwrap_err();
        assert!(e.starts_with("--reference-nps 0"), "{e}");
    }

    #[test]
    fn the_slurm_backend_is_set_by_the_file_or_the_flags() {
        let file: Partial =
            toml::from_str("slurm = true\npartition = \"long\"\nshards = 8\n").unwrap();
        let flags = Partial {
            cpus_per_shard: Some(2),
            ..Partial::default()
        };
        let s = Settings::resolve(file, flags).unwrap();
        assert_eq!(
            s.slurm,
            Some(SlurmSettings {
                partition: Some("long".into()),
                shards: 8,
                cpus_per_shard: 2
            })
        );
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.slurm, None);
        let no_slurm = Partial {
            shards: Some(3),
            ..Partial::default()
        };
        assert!(Settings::resolve(Partial::default(), no_slurm).is_err());
        let bad = Partial {
            slurm: Some(true),
            partition: Some("a b".into()),
            ..Partial::default()
        };
        assert!(Settings::resolve(Partial::default(), bad).is_err());
    }

    #[test]
    fn the_track_spar_is_set_by_the_file_or_the_flag() {
        let file: Partial = toml::from_str("track-spar = \"/srv/spar-track\"").unwrap();
        let s = Settings::resolve(file.clone(), Partial::default()).unwrap();
        assert_eq!(s.track_spar.as_deref(), Some(Path::new("/srv/spar-track")));
        let flags = Partial {
            track_spar: Some("t/spar".into()),
            ..Partial::default()
        };
        let s = Settings::resolve(file, flags).unwrap();
        assert_eq!(s.track_spar.as_deref(), Some(Path::new("t/spar")));
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.track_spar, None);
    }

    #[test]
    fn the_net_limit_is_in_mib_and_not_zero() {
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.net_limit, 256 << 20);
        let file: Partial = toml::from_str("net-limit = 2").unwrap();
        assert_eq!(
            Settings::resolve(file, Partial::default())
                .unwrap()
                .net_limit,
            2 << 20
        );
        let zero = Partial {
            net_limit: Some(0),
            ..Partial::default()
        };
        assert!(Settings::resolve(Partial::default(), zero).is_err());
    }

    #[test]
    fn the_exposure_is_set_by_the_file_or_the_flags() {
        let file: Partial = toml::from_str(
            "public = true\ntls-cert = \"/etc/spar/cert.pem\"\ntls-key = \"/etc/spar/key.pem\"\n",
        )
        .unwrap();
        let s = Settings::resolve(file, Partial::default()).unwrap();
        assert!(s.exposure.public && s.exposure.secure_cookie());
        let tls = s.exposure.tls.unwrap();
        assert_eq!(tls.key, Path::new("/etc/spar/key.pem"));
        let file: Partial = toml::from_str("public = true\nbehind-proxy = true\n").unwrap();
        let s = Settings::resolve(file, Partial::default()).unwrap();
        assert!(s.exposure.behind_proxy);
        let public: Partial = toml::from_str("public = true\n").unwrap();
        let e = Settings::resolve(public, Partial::default()).unwrap_err();
        assert!(e.contains("--behind-proxy"), "{e}");
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.exposure, Exposure::default());
    }

    #[test]
    fn the_residual_limits_default_to_fishtests_and_are_checked() {
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.residuals, Limits::default());
        assert_eq!(s.residuals.threshold, 2.7);
        let file: Partial =
            toml::from_str("residual-threshold = 3.5\nresidual-min-games = 40").unwrap();
        let s = Settings::resolve(file, Partial::default()).unwrap();
        assert_eq!((s.residuals.threshold, s.residuals.min_games), (3.5, 40));
        let bad = Partial {
            residual_threshold: Some(-1.0),
            ..Partial::default()
        };
        assert!(Settings::resolve(Partial::default(), bad).is_err());
    }

    #[test]
    fn the_allowed_directories_are_set_by_the_file_or_the_flags() {
        let file: Partial = toml::from_str("allow-files = [\"/srv/books\", \"nets\"]").unwrap();
        let s = Settings::resolve(file.clone(), Partial::default()).unwrap();
        assert_eq!(s.allow_files, [Path::new("/srv/books"), Path::new("nets")]);
        let flags = Partial {
            allow_files: Some(vec!["/data/books".into()]),
            ..Partial::default()
        };
        let s = Settings::resolve(file, flags).unwrap();
        assert_eq!(s.allow_files, [Path::new("/data/books")]);
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert!(s.allow_files.is_empty());
    }

    #[test]
    fn the_min_free_is_a_size_from_the_file_or_the_flag() {
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.min_free, 1 << 30);
        let file: Partial = toml::from_str("min-free = \"512M\"").unwrap();
        let s = Settings::resolve(file.clone(), Partial::default()).unwrap();
        assert_eq!(s.min_free, 512 << 20);
        let file0: Partial = toml::from_str("min-free = 0").unwrap();
        assert_eq!(
            Settings::resolve(file0, Partial::default())
                .unwrap()
                .min_free,
            0
        );
        let flags = Partial {
            min_free: Some("8M".into()),
            ..Partial::default()
        };
        assert_eq!(Settings::resolve(file, flags).unwrap().min_free, 8 << 20);
        for bad in ["12X", "lots", "-1", "1.5"] {
            let flags = Partial {
                min_free: Some(bad.into()),
                ..Partial::default()
            };
            let e = Settings::resolve(Partial::default(), flags).unwrap_err();
            assert!(e.starts_with(&format!("--min-free '{bad}'")), "{e}");
            assert!(e.contains("such as 1G, 512M"), "{e}");
        }
    }

    #[test]
    fn an_unknown_key_or_zero_cores_is_refused() {
        assert!(toml::from_str::<Partial>("port = 3").is_err());
        let zero = Partial {
            cores: Some(0),
            ..Partial::default()
        };
        assert!(Settings::resolve(Partial::default(), zero).is_err());
    }

    #[test]
    fn the_connection_bounds_default_and_are_checked() {
        let s = Settings::resolve(Partial::default(), Partial::default()).unwrap();
        assert_eq!(s.bounds, Bounds::default());
        assert_eq!(s.bounds.header_timeout.as_secs(), 10);
        assert_eq!(s.bounds.per_address, DEFAULT_PER_ADDRESS);
        let file: Partial =
            toml::from_str("header-timeout = 3\nconnections-per-address = 8").unwrap();
        let s = Settings::resolve(file, Partial::default()).unwrap();
        assert_eq!(
            (s.bounds.header_timeout.as_secs(), s.bounds.per_address),
            (3, 8)
        );
        // Behind a proxy every client has the proxy's address: a larger default.
        let proxy = Partial {
            behind_proxy: Some(true),
            ..Partial::default()
        };
        let s = Settings::resolve(Partial::default(), proxy).unwrap();
        assert_eq!(s.bounds.per_address, BEHIND_PROXY_PER_ADDRESS);
        for (timeout, per_address, flag) in [
            (Some(0), None, "--header-timeout 0"),
            (Some(3601), None, "--header-timeout 3601"),
            (None, Some(0), "--connections-per-address 0"),
        ] {
            let bad = Partial {
                header_timeout: timeout,
                connections_per_address: per_address,
                ..Partial::default()
            };
            let e = Settings::resolve(Partial::default(), bad).unwrap_err();
            assert!(e.starts_with(flag), "{e}");
        }
    }
}
