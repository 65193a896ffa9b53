//! TLS served by the server itself (`--tls-cert PATH --tls-key PATH`): the PEM files read
//! at start into a rustls configuration (the `ring` provider, TLS 1.2 and 1.3, HTTP/1.1).
//! The handshakes are made by the accept loop (`transport.rs`), each in its connection's
//! task and bounded by `--header-timeout`, so a slow or silent client holds up nobody else.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::{self, ServerConfig};

/// Reads the certificate chain and the private key (PEM) into a server configuration;
/// `Err` names the file and what is wrong with it.
pub fn config(cert: &Path, key: &Path) -> Result<Arc<ServerConfig>, String> {
    let cert_err = |why: String| {
        format!(
            "--tls-cert {}: {why} (give the certificate chain as a PEM file: -----BEGIN \
             CERTIFICATE-----)",
            cert.display()
        )
    };
    let key_err = |why: String| {
        format!(
            "--tls-key {}: {why} (give the certificate's private key as a PEM file: PKCS#8, \
             PKCS#1 or SEC1)",
            key.display()
        )
    };
    let cert_pem = std::fs::read(cert).map_err(|e| cert_err(format!("cannot read it: {e}")))?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<_, _>>()
        .map_err(|e| cert_err(format!("not a PEM certificate: {e}")))?;
    if chain.is_empty() {
        return Err(cert_err("no certificate in it".into()));
    }
    let key_pem = std::fs::read(key).map_err(|e| key_err(format!("cannot read it: {e}")))?;
    let private = PrivateKeyDer::from_pem_slice(&key_pem)
        .map_err(|e| key_err(format!("no private key in it: {e}")))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| {
            format!(
                "--tls-cert {} --tls-key {}: {e} (is the key the certificate's?)",
                cert.display(),
                key.display()
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_or_bad_pem_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let cert = dir.path().join("cert.pem");
        let key = dir.path().join("key.pem");
        let e = config(&cert, &key).unwrap_err();
        assert!(e.contains("--tls-cert") && e.contains("cannot read"), "{e}");
        std::fs::write(&cert, "not a certificate\n").unwrap();
        let e = config(&cert, &key).unwrap_err();
        assert!(e.contains("no certificate"), "{e}");
        std::fs::write(
            &cert,
            "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        )
        .unwrap();
        let e = config(&cert, &key).unwrap_err();
        assert!(e.contains("--tls-key") && e.contains("cannot read"), "{e}");
        std::fs::write(&key, "no key here\n").unwrap();
        let e = config(&cert, &key).unwrap_err();
        assert!(
            e.contains("--tls-key") && e.contains("no private key"),
            "{e}"
        );
    }
}
