//! What the tests of a server that speaks TLS share: a certificate authority and a
//! certificate of `localhost` signed by it, and clients (a raw TLS stream, and ureq) that
//! trust only that authority.

use std::net::TcpStream;
use std::path::Path;
use std::sync::Arc;

/// A certificate authority and a certificate of `localhost` and 127.0.0.1 signed by it,
/// written as PEM files in `dir` (`cert.pem`, `key.pem`, `ca.pem`, and `other-key.pem`, a
/// key that is not the certificate's): the authority's DER.
pub fn certificates(dir: &Path) -> Vec<u8> {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let ca = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let cert = rcgen::CertificateParams::new(names)
        .unwrap()
        .signed_by(&key, &ca, &ca_key)
        .unwrap();
    std::fs::write(dir.join("cert.pem"), cert.pem()).unwrap();
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).unwrap();
    std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
    let other = rcgen::KeyPair::generate().unwrap();
    std::fs::write(dir.join("other-key.pem"), other.serialize_pem()).unwrap();
    ca.der().to_vec()
}

/// A TLS client on `tcp` for `localhost`, trusting only `ca` (its handshake is made on the
/// first read or write).
pub fn client(
    tcp: TcpStream,
    ca: &[u8],
) -> rustls::StreamOwned<rustls::ClientConnection, TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.to_vec().into()).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = "localhost".try_into().unwrap();
    let conn = rustls::ClientConnection::new(Arc::new(config), name).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

/// The tests' HTTP client ([`super::client`]'s settings) over TLS, trusting only `ca`.
pub fn agent(ca: &[u8]) -> ureq::Agent {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let roots =
        ureq::tls::RootCerts::new_with_certs(&[ureq::tls::Certificate::from_der(ca).to_owned()]);
    let tls = ureq::tls::TlsConfig::builder()
        .unversioned_rustls_crypto_provider(provider)
        .root_certs(roots)
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .max_idle_connections(0)
        .timeout_recv_response(Some(std::time::Duration::from_secs(30)))
        .tls_config(tls)
        .build()
        .new_agent()
}
