//! X.509 v1 certificates, which webpki refuses outright (UnsupportedCertVersion) and OpenSSL
//! accepts: test setups (memtier's own test certificates among them) still make them with
//! `openssl x509 -req` and no extensions. A v1 certificate carries no extensions, so what is
//! left to check is small enough to do here: the chain by issuer name to a trusted root, every
//! signature with the crypto provider's algorithms, every validity period, and the host name
//! against the subject's common name (OpenSSL's rule when there is no subjectAltName).

use std::sync::Arc;

use super::error::TlsSetupError;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::{CertificateDer, ServerName, SubjectPublicKeyInfoDer, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, Error, OtherError, PeerMisbehaved};
use x509_parser::asn1_rs::{Any, FromDer};
use x509_parser::certificate::X509Certificate;
use x509_parser::x509::X509Version;

/// Longest chain of intermediates followed, as webpki's bound on path length.
const MAX_INTERMEDIATES: usize = 6;

/// Whether `cert` is an X.509 v1 certificate (one that does not parse is left to webpki,
/// which says why).
pub fn is_v1(cert: &CertificateDer<'_>) -> bool {
    X509Certificate::from_der(cert).is_ok_and(|(_, c)| c.tbs_certificate.version == X509Version::V1)
}

/// Whether a certificate says it is a CA (basicConstraints CA:TRUE): what `openssl req -x509`
/// makes by default, and what a self-signed server certificate made that way is.
pub fn is_ca(cert: &CertificateDer<'_>) -> bool {
    X509Certificate::from_der(cert).is_ok_and(|(_, c)| c.is_ca())
}

/// The subject of the first v1 certificate among `chain`, for the note that one was accepted.
pub fn first_v1_subject(chain: &[CertificateDer<'_>]) -> Option<String> {
    chain.iter().find_map(|der| {
        let (_, cert) = X509Certificate::from_der(der).ok()?;
        (cert.tbs_certificate.version == X509Version::V1).then(|| cert.subject().to_string())
    })
}

/// A failure of the chain that rustls has no variant for, said in words.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ChainError(pub String);

fn other(message: String) -> Error {
    Error::InvalidCertificate(CertificateError::Other(OtherError(Arc::new(ChainError(message)))))
}

/// Verifies a chain holding a v1 certificate: `end_entity` through `intermediates` to one of
/// `roots`, each signature and validity period, and, when `name` is given, the host name.
/// The errors are rustls's own where it has one (UnknownIssuer, BadSignature, ExpiredContext,
/// NotValidForNameContext), so they read as webpki's would.
pub fn verify_chain(
    end_entity: &CertificateDer<'_>,
    intermediates: &[CertificateDer<'_>],
    roots: &[CertificateDer<'static>],
    algs: &WebPkiSupportedAlgorithms,
    name: Option<&ServerName<'_>>,
    now: UnixTime,
) -> Result<(), Error> {
    let leaf = parse(end_entity)?;
    let intermediates: Vec<X509Certificate<'_>> = intermediates.iter().map(|c| parse(c)).collect::<Result<_, _>>()?;
    // A root that does not parse cannot be an issuer here (webpki passes it over too).
    let roots: Vec<X509Certificate<'_>> = roots.iter().filter_map(|r| parse(r).ok()).collect();
    let mut chain = vec![&leaf];
    'up: loop {
        let cert = chain[chain.len() - 1];
        let mut forged = false;
        for root in roots.iter().filter(|r| r.subject().as_raw() == cert.issuer().as_raw()) {
            match signed_by(cert, root, algs) {
                Ok(()) => {
                    chain.push(root);
                    break 'up;
                }
                Err(_) => forged = true,
            }
        }
        if chain.len() <= MAX_INTERMEDIATES {
            let candidates = intermediates.iter().filter(|i| i.subject().as_raw() == cert.issuer().as_raw());
            for issuer in candidates.filter(|i| !chain.iter().any(|c| c.as_raw() == i.as_raw())) {
                match signed_by(cert, issuer, algs) {
                    Ok(()) => {
                        chain.push(issuer);
                        continue 'up;
                    }
                    Err(_) => forged = true,
                }
            }
        }
        // A certificate named its issuer, but the issuer's key does not verify its signature.
        return Err(if forged { CertificateError::BadSignature } else { CertificateError::UnknownIssuer }.into());
    }
    // Between the end entity and the root, each certificate must be allowed to issue: OpenSSL
    // takes a v1 certificate for a CA only when it is self-signed, that is, a root.
    for ca in &chain[1..chain.len() - 1] {
        if !ca.is_ca() {
            return Err(other(format!(
                "the intermediate certificate '{}' of the server's chain is not a CA certificate (a v1 \
                 certificate can only be a root; give the intermediate basicConstraints CA:TRUE)",
                ca.subject()
            )));
        }
    }
    for (depth, cert) in chain.iter().enumerate() {
        in_validity(cert, now, depth)?;
    }
    match name {
        Some(name) => matches_name(&leaf, name),
        None => Ok(()),
    }
}

fn parse(der: &[u8]) -> Result<X509Certificate<'_>, Error> {
    X509Certificate::from_der(der).map(|(_, c)| c).map_err(|_| CertificateError::BadEncoding.into())
}

/// Whether `cert`'s signature verifies with `issuer`'s key, by the provider's algorithm for the
/// pair (the signature's algorithm identifier and the key's), as webpki chooses.
fn signed_by(
    cert: &X509Certificate<'_>,
    issuer: &X509Certificate<'_>,
    algs: &WebPkiSupportedAlgorithms,
) -> Result<(), Error> {
    let signature_alg = signature_algorithm(cert.as_raw()).ok_or(CertificateError::BadEncoding)?;
    let (key_alg, key) = public_key(issuer.tbs_certificate.subject_pki.raw).ok_or(CertificateError::BadEncoding)?;
    let alg = algs
        .all
        .iter()
        .find(|a| a.signature_alg_id().as_ref() == signature_alg && a.public_key_alg_id().as_ref() == key_alg)
        .ok_or_else(|| CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext {
            signature_algorithm_id: signature_alg.to_vec(),
            public_key_algorithm_id: key_alg.to_vec(),
        })?;
    alg.verify_signature(key, cert.tbs_certificate.as_ref(), &cert.signature_value.data)
        .map_err(|_| CertificateError::BadSignature.into())
}

/// The contents of each element of the DER SEQUENCE `der`.
fn elements(der: &[u8]) -> Option<Vec<&[u8]>> {
    let (_, outer) = Any::from_der(der).ok()?;
    let mut rest = outer.data;
    let mut items = Vec::new();
    while !rest.is_empty() {
        let (tail, item) = Any::from_der(rest).ok()?;
        items.push(item.data);
        rest = tail;
    }
    Some(items)
}

/// A certificate's signatureAlgorithm, as the contents of its AlgorithmIdentifier (the form
/// `SignatureVerificationAlgorithm::signature_alg_id` gives).
fn signature_algorithm(cert_der: &[u8]) -> Option<&[u8]> {
    elements(cert_der)?.get(1).copied()
}

/// A SubjectPublicKeyInfo's algorithm (AlgorithmIdentifier contents) and key (the BIT STRING's
/// bits, without its unused-bits byte).
fn public_key(spki_der: &[u8]) -> Option<(&[u8], &[u8])> {
    let items = elements(spki_der)?;
    match items.as_slice() {
        [alg, bits] => Some((alg, bits.get(1..)?)),
        _ => None,
    }
}

/// The certificate at `depth` (0 the server's, the last the root) is within its validity period.
fn in_validity(cert: &X509Certificate<'_>, now: UnixTime, depth: usize) -> Result<(), Error> {
    let validity = cert.validity();
    let at = |seconds: i64| UnixTime::since_unix_epoch(std::time::Duration::from_secs(seconds.max(0) as u64));
    let now_s = now.as_secs() as i64;
    if depth > 0 && !(validity.not_before.timestamp()..=validity.not_after.timestamp()).contains(&now_s) {
        // rustls's variants speak of the server's certificate: a CA's is said by name.
        let state = if now_s > validity.not_after.timestamp() { "has expired" } else { "is not valid yet" };
        return Err(other(format!(
            "the CA certificate '{}' of the server's chain {state} (valid {} to {})",
            cert.subject(),
            validity.not_before,
            validity.not_after
        )));
    }
    if now_s > validity.not_after.timestamp() {
        return Err(
            CertificateError::ExpiredContext { time: now, not_after: at(validity.not_after.timestamp()) }.into()
        );
    }
    if now_s < validity.not_before.timestamp() {
        return Err(CertificateError::NotValidYetContext {
            time: now,
            not_before: at(validity.not_before.timestamp()),
        }
        .into());
    }
    Ok(())
}

/// The host name against the subject's common names, as OpenSSL matches a certificate without
/// subjectAltName: case-insensitively, a leading `*.` standing for one label. An IP address
/// never matches a common name (OpenSSL looks for addresses in subjectAltName only).
fn matches_name(cert: &X509Certificate<'_>, name: &ServerName<'_>) -> Result<(), Error> {
    let common_names: Vec<String> =
        cert.subject().iter_common_name().filter_map(|cn| cn.as_str().ok()).map(str::to_string).collect();
    let found = match name {
        ServerName::DnsName(dns) => common_names.iter().any(|cn| dns_matches(cn, dns.as_ref())),
        _ => false,
    };
    if found {
        return Ok(());
    }
    Err(CertificateError::NotValidForNameContext { expected: name.to_owned(), presented: common_names }.into())
}

fn dns_matches(pattern: &str, host: &str) -> bool {
    let host = host.trim_end_matches('.');
    if let Some(suffix) = pattern.strip_prefix("*.") {
        return host
            .split_once('.')
            .is_some_and(|(label, rest)| !label.is_empty() && rest.eq_ignore_ascii_case(suffix));
    }
    pattern.eq_ignore_ascii_case(host)
}

/// A TLS 1.2 handshake signature by a v1 certificate's key: each of the provider's algorithms
/// for the scheme that fits the key is tried, as rustls does for v3 certificates.
pub fn verify_tls12_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, Error> {
    let unadvertised = || Error::PeerMisbehaved(PeerMisbehaved::SignedHandshakeWithUnadvertisedSigScheme);
    let candidates = algs.mapping.iter().find(|(scheme, _)| *scheme == dss.scheme).ok_or_else(unadvertised)?.1;
    let spki = spki_of(cert)?;
    let (key_alg, key) = public_key(&spki).ok_or(CertificateError::BadEncoding)?;
    let alg = candidates.iter().find(|a| a.public_key_alg_id().as_ref() == key_alg).ok_or_else(|| {
        CertificateError::UnsupportedSignatureAlgorithmForPublicKeyContext {
            signature_algorithm_id: Vec::new(),
            public_key_algorithm_id: key_alg.to_vec(),
        }
    })?;
    alg.verify_signature(key, message, dss.signature())
        .map(|()| HandshakeSignatureValid::assertion())
        .map_err(|_| CertificateError::BadSignature.into())
}

/// A TLS 1.3 handshake signature by a v1 certificate's key (rustls checks it against the key
/// alone, as for raw public keys).
pub fn verify_tls13_signature(
    message: &[u8],
    cert: &CertificateDer<'_>,
    dss: &DigitallySignedStruct,
    algs: &WebPkiSupportedAlgorithms,
) -> Result<HandshakeSignatureValid, Error> {
    let spki = spki_of(cert)?;
    rustls::crypto::verify_tls13_signature_with_raw_key(message, &SubjectPublicKeyInfoDer::from(spki), dss, algs)
}

fn spki_of(cert: &CertificateDer<'_>) -> Result<Vec<u8>, Error> {
    Ok(parse(cert)?.tbs_certificate.subject_pki.raw.to_vec())
}

/// A v1 client certificate with its key (`--cert`, `--key`): rustls's `with_client_auth_cert`
/// refuses v1 (it reads the certificate with webpki to check the key), so the key is checked
/// against the certificate here and the pair offered whatever the server asks.
#[derive(Debug)]
pub struct ClientCert(Arc<rustls::sign::CertifiedKey>);

impl ClientCert {
    /// `Err` says, in words, why the key does not go with the certificate.
    pub fn new(
        chain: Vec<CertificateDer<'static>>,
        key: rustls::pki_types::PrivateKeyDer<'static>,
        provider: &rustls::crypto::CryptoProvider,
    ) -> Result<ClientCert, TlsSetupError> {
        let key = provider.key_provider.load_private_key(key).map_err(|e| format!("the key cannot sign: {e}"))?;
        let spki = chain.first().map(|c| spki_of(c)).transpose().map_err(|e| format!("{e}"))?;
        match (key.public_key(), spki) {
            (Some(public), Some(spki)) if public.as_ref() != spki.as_slice() => {
                Err("the key does not fit the certificate (their public keys differ)".into())
            }
            _ => Ok(ClientCert(Arc::new(rustls::sign::CertifiedKey::new(chain, key)))),
        }
    }
}

impl rustls::client::ResolvesClientCert for ClientCert {
    fn resolve(
        &self,
        _hints: &[&[u8]],
        _schemes: &[rustls::SignatureScheme],
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        Some(Arc::clone(&self.0))
    }

    fn has_certs(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wildcard_stands_for_one_label() {
        assert!(dns_matches("*.example.com", "db.example.com"));
        assert!(dns_matches("*.Example.com", "DB.example.COM."));
        assert!(!dns_matches("*.example.com", "a.b.example.com"));
        assert!(!dns_matches("*.example.com", "example.com"));
        assert!(dns_matches("localhost", "LOCALHOST"));
        assert!(!dns_matches("localhost", "localhost2"));
    }

    #[test]
    fn der_sequences_are_read_element_by_element() {
        // SEQUENCE { OID 1.2.840.10045.2.1 (ecPublicKey), BIT STRING 00 04 01 }
        let spki = [
            0x30, 0x10, 0x30, 0x09, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x03, 0x03, 0x00, 0x04, 0x01,
        ];
        let (alg, key) = public_key(&spki).unwrap();
        assert_eq!(alg, &[0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01]);
        assert_eq!(key, &[0x04, 0x01]);
        assert!(public_key(&spki[..10]).is_none());
    }
}
