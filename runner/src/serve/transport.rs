//! The server's connections: its own accept loop over hyper's HTTP/1 (`axum::serve` sets no
//! timer, so it has no header-read timeout). Each connection is bounded in time and in
//! number:
//!
//! - a client has [`Bounds::header_timeout`] (`--header-timeout`) for its TLS handshake, and
//!   again for each request's line and headers (from the connection's start, and from the
//!   end of the previous answer on a kept-alive connection); past it the connection is
//!   closed (perhaps with an error answer from hyper). A request's body and an answer (a
//!   live stream) are not bounded by it;
//! - a client address holds at most [`Bounds::per_address`] (`--connections-per-address`)
//!   open connections, the handshake's included; one more is closed at once, unanswered,
//!   while other addresses are served. An IPv6 client is counted by its /64 (one host
//!   commonly holds a whole /64).
//!
//! When `stopped` resolves the loop stops accepting, each open connection finishes the
//! request it is serving and closes (live streams end on the state's `closing`), and after
//! [`DRAIN`] the rest are dropped.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv6Addr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::{GracefulShutdown, Watcher};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

/// The header-read (and TLS handshake) timeout without `--header-timeout`.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// The open connections of one client address without `--connections-per-address`.
pub const DEFAULT_PER_ADDRESS: usize = 64;

/// …behind a proxy (`--behind-proxy`), where every client comes from the proxy's address.
pub const BEHIND_PROXY_PER_ADDRESS: usize = 1024;

/// How long, once stopped, the open connections may take to finish.
pub const DRAIN: Duration = Duration::from_secs(10);

/// The bounds of the connections.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The time a client has for its TLS handshake, and for each request's head.
    pub header_timeout: Duration,
    /// The open connections one client address may hold.
    pub per_address: usize,
}

impl Default for Bounds {
    fn default() -> Self {
        Bounds {
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            per_address: DEFAULT_PER_ADDRESS,
        }
    }
}

/// Serves `app` on `listener` (over TLS with `tls`) within `bounds` until `stopped`
/// resolves, then lets the open connections finish (at most [`DRAIN`]).
pub async fn serve(
    listener: TcpListener,
    tls: Option<Arc<ServerConfig>>,
    app: Router,
    bounds: Bounds,
    stopped: impl Future<Output = ()>,
) {
    let acceptor = tls.map(TlsAcceptor::from);
    let open = PerAddress::new(bounds.per_address);
    let graceful = GracefulShutdown::new();
    let mut stopped = std::pin::pin!(stopped);
    loop {
        let (socket, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors and the like: wait, then go on.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut stopped => break,
        };
        // Over the bound: closed at once (the socket dropped), unanswered.
        let Some(slot) = open.take(peer.ip()) else {
            continue;
        };
        let app = app.clone();
        let acceptor = acceptor.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let _slot = slot;
            match acceptor {
                Some(acceptor) => {
                    let shake =
                        tokio::time::timeout(bounds.header_timeout, acceptor.accept(socket));
                    if let Ok(Ok(stream)) = shake.await {
                        connection(stream, app, bounds, watcher).await;
                    }
                }
                None => connection(socket, app, bounds, watcher).await,
            }
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
}

/// Serves the requests of one connection (HTTP/1, kept alive) until it closes.
async fn connection<S>(io: S, app: Router, bounds: Bounds, watcher: Watcher)
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(bounds.header_timeout);
    let conn = builder.serve_connection(TokioIo::new(io), TowerToHyperService::new(app));
    // A connection's error (a reset, a timeout, a bad request line) ends it; nothing to do.
    let _ = watcher.watch(conn).await;
}

/// The open connections of each client address, bounded.
struct PerAddress {
    bound: usize,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

/// One open connection of a client address: counted until dropped.
struct Slot {
    key: IpAddr,
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
}

impl PerAddress {
    fn new(bound: usize) -> PerAddress {
        PerAddress {
            bound,
            open: Arc::default(),
        }
    }

    /// A slot for one more connection of `ip`; `None` when it holds the bound already.
    fn take(&self, ip: IpAddr) -> Option<Slot> {
        let key = client_of(ip);
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let n = open.entry(key).or_insert(0);
        if *n >= self.bound {
            return None;
        }
        *n += 1;
        Some(Slot {
            key,
            open: self.open.clone(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.key) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// The client an address is counted as: an IPv4 address (also when written as IPv6,
/// `::ffff:a.b.c.d`) as it is, an IPv6 address by its /64.
fn client_of(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6(Ipv6Addr::from(u128::from(v6) & !(u64::MAX as u128))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_address_holds_at_most_the_bound_and_a_closed_slot_frees_its_place() {
        let open = PerAddress::new(2);
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let first = open.take(a).unwrap();
        let _second = open.take(a).unwrap();
        assert!(open.take(a).is_none());
        // Another address is counted apart.
        let _other = open.take(b).unwrap();
        drop(first);
        let _again = open.take(a).unwrap();
        assert!(open.take(a).is_none());
    }

    #[test]
    fn the_entry_of_an_address_goes_when_its_last_connection_closes() {
        let open = PerAddress::new(3);
        let a: IpAddr = "192.0.2.7".parse().unwrap();
        let slots: Vec<Slot> = (0..3).map(|_| open.take(a).unwrap()).collect();
        drop(slots);
        assert!(open.open.lock().unwrap().is_empty());
    }

    #[test]
    fn ipv6_clients_are_counted_by_their_64_and_mapped_ipv4_as_ipv4() {
        let ip = |s: &str| s.parse::<IpAddr>().unwrap();
        assert_eq!(
            client_of(ip("2001:db8:1:2:aaaa:bbbb:cccc:dddd")),
            ip("2001:db8:1:2::")
        );
        assert_eq!(client_of(ip("::ffff:10.1.2.3")), ip("10.1.2.3"));
        assert_eq!(client_of(ip("10.1.2.3")), ip("10.1.2.3"));
        let open = PerAddress::new(1);
        let _one = open.take(ip("2001:db8::1")).unwrap();
        assert!(open.take(ip("2001:db8::2")).is_none());
        assert!(open.take(ip("2001:db8:0:1::1")).is_some());
    }
}
