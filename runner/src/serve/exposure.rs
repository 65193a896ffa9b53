//! Exposure (issue 32): who may reach the server. A loopback address is the default and
//! needs nothing; any other address needs `--public`, and a public server needs a way to
//! TLS — served here (`--tls-cert`/`--tls-key`, [`super::tls`]) or by a reverse proxy in
//! front (`--behind-proxy`, with a warning) — and an admin account (a server without
//! accounts lets anyone who reaches it do anything; so does a proxy in front, even of a
//! loopback address). Refusals name the flag and the fix.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;

/// Where this section of the documentation is, for the messages.
const SEE: &str = "docs/serve.md, Team setup: exposure";

/// A certificate chain and its private key, PEM files by path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain (`--tls-cert`): the server's certificate first.
    pub cert: PathBuf,
    /// Its private key (`--tls-key`): PKCS#8, PKCS#1 or SEC1.
    pub key: PathBuf,
}

/// How the server is exposed: `--public`, `--tls-cert`/`--tls-key`, `--behind-proxy`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Exposure {
    /// Serving beyond loopback is allowed (`--public`).
    pub public: bool,
    /// TLS served by the server itself.
    pub tls: Option<TlsFiles>,
    /// A reverse proxy in front terminates TLS (`--behind-proxy`).
    pub behind_proxy: bool,
}

impl Exposure {
    /// The exposure of these flags (or config keys); `Err` names what is missing or
    /// contradictory.
    pub fn new(
        public: bool,
        tls_cert: Option<PathBuf>,
        tls_key: Option<PathBuf>,
        behind_proxy: bool,
    ) -> Result<Exposure, String> {
        let tls = match (tls_cert, tls_key) {
            (Some(cert), Some(key)) => Some(TlsFiles { cert, key }),
            (None, None) => None,
            (Some(_), None) => {
                return Err(
                    "--tls-cert needs --tls-key: give both PEM files (the certificate \
                            chain and its private key)"
                        .into(),
                )
            }
            (None, Some(_)) => {
                return Err(
                    "--tls-key needs --tls-cert: give both PEM files (the certificate \
                            chain and its private key)"
                        .into(),
                )
            }
        };
        if tls.is_some() && behind_proxy {
            return Err(
                "--behind-proxy and --tls-cert: choose one (TLS served by this server, \
                        or by a reverse proxy in front of it)"
                    .into(),
            );
        }
        if public && tls.is_none() && !behind_proxy {
            return Err(format!(
                "--public needs TLS: give --tls-cert PATH --tls-key PATH (PEM files), or \
                 --behind-proxy when a reverse proxy in front terminates TLS ({SEE})"
            ));
        }
        Ok(Exposure {
            public,
            tls,
            behind_proxy,
        })
    }

    /// Whether the session cookie gets `Secure`: the browser talks TLS, to this server or
    /// to the proxy in front of it.
    pub fn secure_cookie(&self) -> bool {
        self.tls.is_some() || self.behind_proxy
    }

    /// Checks the address to bind: a non-loopback one needs `--public`.
    pub fn check_bind(&self, bind: &str) -> Result<(), String> {
        let addrs: Vec<SocketAddr> = bind
            .to_socket_addrs()
            .map_err(|e| format!("--bind {bind}: {e} (give HOST:PORT, e.g. 127.0.0.1:8000)"))?
            .collect();
        if addrs.is_empty() {
            return Err(format!("--bind {bind}: no address (give HOST:PORT)"));
        }
        let loopback = addrs.iter().all(|a| a.ip().is_loopback());
        if loopback || self.public {
            return Ok(());
        }
        Err(format!(
            "--bind {bind}: not a loopback address: serving beyond this machine needs \
             --public, with --tls-cert/--tls-key or --behind-proxy and an admin account \
             ({SEE})"
        ))
    }

    /// Checks that a server reached from elsewhere — public, or behind a proxy (which
    /// reaches even a loopback address) — has accounts (`has_admin`: an active admin
    /// exists).
    pub fn check_accounts(&self, has_admin: bool, data_dir: &str) -> Result<(), String> {
        let flag = match (self.public, self.behind_proxy) {
            (true, _) => "--public",
            (false, true) => "--behind-proxy",
            (false, false) => return Ok(()),
        };
        if has_admin {
            return Ok(());
        }
        Err(format!(
            "{flag}: the data directory {data_dir} has no admin account, and a server \
             without accounts lets anyone who reaches it do anything (that mode is for \
             loopback only): run `spar serve --data-dir {data_dir} --add-admin NAME` first"
        ))
    }

    /// The warning printed at start with `--behind-proxy`.
    pub fn proxy_warning(&self, addr: &SocketAddr) -> Option<String> {
        self.behind_proxy.then(|| {
            format!(
                "spar serve: --behind-proxy: this server speaks plain HTTP on {addr}; a \
                 reverse proxy in front of it must terminate TLS, and only the proxy should \
                 reach this address ({SEE})"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tls() -> (Option<PathBuf>, Option<PathBuf>) {
        (Some("c.pem".into()), Some("k.pem".into()))
    }

    #[test]
    fn public_needs_tls_or_a_proxy_and_the_two_tls_files_go_together() {
        let e = Exposure::new(true, None, None, false).unwrap_err();
        assert!(
            e.contains("--tls-cert") && e.contains("--behind-proxy"),
            "{e}"
        );
        let (c, k) = tls();
        let e = Exposure::new(true, c.clone(), None, false).unwrap_err();
        assert!(e.contains("--tls-key"), "{e}");
        let e = Exposure::new(false, None, k.clone(), false).unwrap_err();
        assert!(e.contains("--tls-cert"), "{e}");
        let e = Exposure::new(true, c.clone(), k.clone(), true).unwrap_err();
        assert!(e.contains("choose one"), "{e}");
        let x = Exposure::new(true, c, k, false).unwrap();
        assert!(x.secure_cookie());
        let x = Exposure::new(true, None, None, true).unwrap();
        assert!(x.secure_cookie());
        assert!(!Exposure::default().secure_cookie());
    }

    #[test]
    fn only_loopback_binds_without_public() {
        let local = Exposure::default();
        local.check_bind("127.0.0.1:0").unwrap();
        local.check_bind("[::1]:8000").unwrap();
        local.check_bind("localhost:8000").unwrap();
        for far in ["0.0.0.0:8000", "[::]:8000", "10.1.2.3:80"] {
            let e = local.check_bind(far).unwrap_err();
            assert!(e.contains("--public") && e.contains(far), "{e}");
        }
        assert!(local.check_bind("no port").is_err());
        let public = Exposure::new(true, None, None, true).unwrap();
        public.check_bind("0.0.0.0:8000").unwrap();
    }

    #[test]
    fn a_public_server_needs_an_admin() {
        let public = Exposure::new(true, None, None, true).unwrap();
        let e = public.check_accounts(false, "/srv/spar").unwrap_err();
        assert!(e.contains("--add-admin"), "{e}");
        public.check_accounts(true, "/srv/spar").unwrap();
        Exposure::default().check_accounts(false, "d").unwrap();
        let proxied = Exposure::new(false, None, None, true).unwrap();
        let e = proxied.check_accounts(false, "d").unwrap_err();
        assert!(
            e.starts_with("--behind-proxy") && e.contains("--add-admin"),
            "{e}"
        );
        let tls = Exposure::new(false, Some("c".into()), Some("k".into()), false).unwrap();
        tls.check_accounts(false, "d").unwrap();
        assert!(Exposure::default()
            .proxy_warning(&"127.0.0.1:1".parse().unwrap())
            .is_none());
        assert!(public
            .proxy_warning(&"127.0.0.1:1".parse().unwrap())
            .is_some());
    }
}
