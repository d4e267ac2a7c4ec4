//! How the server's certificate is judged: webpki for the chains it takes, our own checks
//! (`v1.rs`) for what webpki refuses and OpenSSL accepts: a chain that holds an X.509 v1
//! certificate, and a server certificate that is a CA certificate (a self-signed one made by
//! `openssl req -x509`), whose name webpki still checks.
//!
//! Why webpki stays first: it is maintained, reviewed and knows everything a v3 certificate can
//! say (subjectAltName, name constraints, key usages, path length); a v1 certificate says none
//! of that, so the part we do ourselves is only what v1 can carry: issuer names, signatures and
//! validity periods, and a common name.

use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};

use super::error::TlsSetupError;
use super::v1;

/// What is checked of the server's certificate.
#[derive(Debug)]
pub enum Check {
    /// The chain to a trusted root and the host name (respbench's own command line).
    Everything,
    /// The chain to a trusted root, not the host name: the front-ends, as memtier,
    /// redis-benchmark and valkey-benchmark with OpenSSL do, and `--tls-skip-hostname`.
    ChainOnly,
    /// Nothing (`--tls-skip-verify`); the handshake's signatures are still checked.
    Nothing,
}

/// The server certificate verifier of every TLS connection.
#[derive(Debug)]
pub struct Verifier {
    check: Check,
    /// webpki over the trusted roots; `None` when nothing is checked.
    webpki: Option<Arc<WebPkiServerVerifier>>,
    /// The trusted roots as certificates, for chains webpki cannot read.
    roots: Vec<CertificateDer<'static>>,
    provider: Arc<CryptoProvider>,
}

impl Verifier {
    /// A verifier trusting `roots` (the certificates of `--cacert`, or the system's).
    pub fn new(
        check: Check,
        roots: Vec<CertificateDer<'static>>,
        provider: Arc<CryptoProvider>,
    ) -> Result<Verifier, TlsSetupError> {
        let webpki = match check {
            Check::Nothing => None,
            Check::Everything | Check::ChainOnly => {
                let mut store = rustls::RootCertStore::empty();
                // The system store may hold certificates webpki cannot take; --cacert's were
                // checked by the caller.
                let _ = store.add_parsable_certificates(roots.iter().cloned());
                let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(store), Arc::clone(&provider))
                    .build()
                    .map_err(|e| format!("TLS setup: {e}"))?;
                Some(verifier)
            }
        };
        Ok(Verifier { check, webpki, roots, provider })
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(webpki) = &self.webpki else {
            return Ok(ServerCertVerified::assertion());
        };
        let check_name = matches!(self.check, Check::Everything);
        let algs = &self.provider.signature_verification_algorithms;
        let verdict = if v1::is_v1(end_entity) || intermediates.iter().any(v1::is_v1) {
            let name = check_name.then_some(server_name);
            v1::verify_chain(end_entity, intermediates, &self.roots, algs, name, now)
                .map(|()| ServerCertVerified::assertion())
        } else if v1::is_ca(end_entity) {
            // A CA certificate as the server's own, such as a self-signed one from `openssl req
            // -x509` (CA:TRUE by default) given as its own --cacert: webpki refuses a CA as an
            // end entity, OpenSSL (redis-cli, memtier) takes it. Its chain is checked as a v1
            // chain is, its name by webpki (subjectAltName first).
            v1::verify_chain(end_entity, intermediates, &self.roots, algs, None, now)
                .and_then(|()| match check_name {
                    true => rustls::client::verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name),
                    false => Ok(()),
                })
                .map(|()| ServerCertVerified::assertion())
        } else {
            webpki.verify_server_cert(end_entity, intermediates, server_name, ocsp, now)
        };
        // Both check the name last, so a name error means everything else passed.
        match verdict {
            Err(Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !check_name => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algs = &self.provider.signature_verification_algorithms;
        if v1::is_v1(cert) {
            return v1::verify_tls12_signature(message, cert, dss, algs);
        }
        rustls::crypto::verify_tls12_signature(message, cert, dss, algs)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        let algs = &self.provider.signature_verification_algorithms;
        if v1::is_v1(cert) {
            return v1::verify_tls13_signature(message, cert, dss, algs);
        }
        rustls::crypto::verify_tls13_signature(message, cert, dss, algs)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
