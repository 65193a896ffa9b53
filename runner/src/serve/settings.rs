//! The server's settings: built-in defaults, then the TOML config file (`--config FILE`,
//! the same keys as the flags: `bind`, `data-dir`, `cores`), then the flags.

use std::path::{Path, PathBuf};

use serde::Deserialize;

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
}

/// The settings in force.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `HOST:PORT` to listen on (port 0: any free port).
    pub bind: String,
    /// Where the database, the run directories and the archive are.
    pub data_dir: PathBuf,
    /// The cores shared among the runs.
    pub cores: usize,
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
        Ok(Settings {
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
    fn an_unknown_key_or_zero_cores_is_refused() {
        assert!(toml::from_str::<Partial>("port = 3").is_err());
        let zero = Partial {
            cores: Some(0),
            ..Partial::default()
        };
        assert!(Settings::resolve(Partial::default(), zero).is_err());
    }
}
