//! TLS with rustls: one client configuration per set of options (built once, shared by every
//! connection), the handshake done blocking at connect time with errors that say what failed,
//! and the non-blocking stream the engine drives afterwards.

mod ciphers;
mod error;
pub use error::{HandshakeError, TlsSetupError};
mod v1;
mod verify;

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use verify::{Check, Verifier};

use super::driver::RingSocket;
use crate::config::TlsOptions;

/// The configuration for `opts`, built on first use and reused by every later connection.
pub fn client_config(opts: &TlsOptions) -> Result<Arc<ClientConfig>, TlsSetupError> {
    // A pure memo: the same options always build the same configuration.
    static CACHE: Mutex<Option<(TlsOptions, Arc<ClientConfig>)>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((cached, config)) = cache.as_ref()
        && cached == opts
    {
        return Ok(Arc::clone(config));
    }
    let config = Arc::new(build(opts)?);
    *cache = Some((opts.clone(), Arc::clone(&config)));
    Ok(config)
}

fn build(opts: &TlsOptions) -> Result<ClientConfig, TlsSetupError> {
    let mut provider = rustls::crypto::ring::default_provider();
    if !opts.ciphers.is_empty() {
        provider.cipher_suites = ciphers::cipher_suites(&provider.cipher_suites, &opts.ciphers)?;
    }
    let provider = Arc::new(provider);
    let versions: Vec<&'static rustls::SupportedProtocolVersion> = rustls::ALL_VERSIONS
        .iter()
        .copied()
        .filter(|v| opts.versions.is_empty() || opts.versions.contains(&u16::from(v.version)))
        .collect();
    let builder = ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_protocol_versions(&versions)
        .map_err(|e| format!("TLS setup: {e} (do the cipher suites chosen fit the TLS versions allowed?)"))?;
    let (check, roots) = if opts.skip_verify {
        (Check::Nothing, Vec::new())
    } else {
        let roots = match &opts.cacert {
            Some(path) => {
                let certs = ca_certificates(path)?;
                if certs.is_empty() {
                    return Err(format!("--cacert {}: no certificate in it", path.display()).into());
                }
                // A CA certificate rustls cannot trust is named here, before any connection.
                let mut store = RootCertStore::empty();
                for cert in &certs {
                    store.add(cert.clone()).map_err(|e| format!("--cacert {}: {e}", path.display()))?;
                }
                certs
            }
            None => rustls_native_certs::load_native_certs().certs,
        };
        (if opts.skip_hostname { Check::ChainOnly } else { Check::Everything }, roots)
    };
    let verifier = Verifier::new(check, roots, Arc::clone(&provider))?;
    let builder = builder.dangerous().with_custom_certificate_verifier(Arc::new(verifier));
    let mut config = match (&opts.cert, &opts.key) {
        (Some(cert), Some(key)) => {
            let chain = CertificateDer::pem_file_iter(cert)
                .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
                .map_err(|e| format!("--cert {}: cannot read PEM certificates: {e}", cert.display()))?;
            let key_der = PrivateKeyDer::from_pem_file(key)
                .map_err(|e| format!("--key {}: cannot read a PEM private key: {e}", key.display()))?;
            if chain.first().is_some_and(v1::is_v1) {
                let pair = v1::ClientCert::new(chain, key_der, &provider)
                    .map_err(|e| format!("--cert/--key: {e} ({}, an X.509 v1 certificate)", cert.display()))?;
                builder.with_client_cert_resolver(Arc::new(pair))
            } else {
                builder
                    .with_client_auth_cert(chain, key_der)
                    .map_err(|e| format!("--cert/--key: the key does not fit the certificate: {e}"))?
            }
        }
        (None, None) => builder.with_no_client_auth(),
        _ => return Err("--cert and --key go together: a client certificate needs its private key".into()),
    };
    if opts.no_resumption {
        config.resumption = rustls::client::Resumption::disabled();
    }
    Ok(config)
}

/// `--cacert`: the certificates of a PEM file, or of every file in a directory (valkey's
/// `--cacertdir`; files that hold no certificate are passed over).
fn ca_certificates(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TlsSetupError> {
    let read = |file: &std::path::Path| {
        CertificateDer::pem_file_iter(file)
            .and_then(|iter| iter.collect::<Result<Vec<_>, _>>())
            .map_err(|e| TlsSetupError(format!("--cacert {}: cannot read PEM certificates: {e}", file.display())))
    };
    if !path.is_dir() {
        return read(path);
    }
    let entries = std::fs::read_dir(path).map_err(|e| format!("--cacert {}: {e}", path.display()))?;
    let mut files: Vec<std::path::PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    Ok(files.iter().filter(|f| f.is_file()).filter_map(|f| read(f).ok()).flatten().collect())
}

/// The name the server's certificate must carry: `--sni`, else the host we connect to.
pub fn server_name(opts: &TlsOptions, host: &str) -> Result<ServerName<'static>, TlsSetupError> {
    let name = opts.sni.as_deref().unwrap_or(host);
    ServerName::try_from(name.to_string())
        .map_err(|_| TlsSetupError(format!("'{name}' is not a valid TLS server name")))
}

/// Runs the handshake over a connected blocking socket.
pub fn handshake(
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    sock: TcpStream,
    protocol: crate::codec::Protocol,
    probe: bool,
) -> Result<StreamOwned<ClientConnection, TcpStream>, HandshakeError> {
    let conn = ClientConnection::new(config, name.clone())
        .map_err(|e| HandshakeError { message: format!("TLS setup: {e}"), lost: None })?;
    let mut stream = StreamOwned::new(conn, sock);
    while stream.conn.is_handshaking() {
        if let Err(e) = stream.conn.complete_io(&mut stream.sock) {
            return Err(HandshakeError::of(e, &name));
        }
    }
    if !probe {
        return Ok(stream);
    }
    // With TLS 1.3 the server judges a client certificate after the client has finished its
    // side of the handshake: one PING (any reply, even NOAUTH) proves we were accepted. A
    // memcached is asked its version, in the protocol the connection will speak.
    let probe = match protocol.dialect() {
        None => b"*1\r\n$4\r\nPING\r\n".to_vec(),
        Some(crate::codec::memcache::Dialect::Binary) => {
            crate::codec::memcache::binary::request(crate::codec::memcache::binary::OP_VERSION, b"", b"", b"", 0)
        }
        Some(_) => b"version\r\n".to_vec(),
    };
    let mut reply = Vec::new();
    let mut chunk = [0u8; 512];
    let result = stream.write_all(&probe).and_then(|()| stream.flush()).and_then(|()| {
        loop {
            if matches!(protocol.scan(&reply, crate::resp::Limits::default()), Ok(Some(_)) | Err(_)) {
                return Ok(());
            }
            match stream.read(&mut chunk)? {
                0 => return Err(io::ErrorKind::UnexpectedEof.into()),
                n => reply.extend_from_slice(&chunk[..n]),
            }
        }
    });
    result.map_err(|e| HandshakeError::of(e, &name))?;
    Ok(stream)
}

impl HandshakeError {
    /// The connection error it is: [`ConnectError::TlsIo`] when the socket was closed or reset
    /// under the handshake, else [`ConnectError::Tls`].
    pub fn into_connect_error(self, target: String) -> super::ConnectError {
        match self.lost {
            Some(source) => super::ConnectError::TlsIo { target, message: self.message, source },
            None => super::ConnectError::Tls { target, message: self.message },
        }
    }

    fn of(e: io::Error, name: &ServerName<'_>) -> HandshakeError {
        let message = explain(&e, name);
        let closed = matches!(
            e.kind(),
            io::ErrorKind::UnexpectedEof
                | io::ErrorKind::ConnectionReset
                | io::ErrorKind::ConnectionAborted
                | io::ErrorKind::BrokenPipe
        );
        let alert = e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>());
        HandshakeError { message, lost: (closed && !alert).then_some(e) }
    }
}

/// A handshake failure in words: which side refused and what to do about it.
fn explain(e: &io::Error, name: &ServerName<'_>) -> String {
    let name = name.to_str();
    if let Some(tls) = e.get_ref().and_then(|inner| inner.downcast_ref::<rustls::Error>()) {
        use rustls::{AlertDescription, CertificateError, Error};
        return match tls {
            Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                "TLS handshake failed: the server's certificate is signed by an unknown CA (pass the CA with \
                 --cacert FILE, or --tls-skip-verify to trust anything)"
                    .to_string()
            }
            Error::InvalidCertificate(CertificateError::NotValidForNameContext { presented, .. }) => format!(
                "TLS handshake failed: the server's certificate is not valid for the name '{name}' but for {}; \
                 connect with --sni NAME (one of those), or --tls-skip-hostname to verify the chain only",
                if presented.is_empty() { "no name at all".to_string() } else { presented.join(", ") }
            ),
            Error::InvalidCertificate(CertificateError::NotValidForName) => format!(
                "TLS handshake failed: the server's certificate is not valid for the name '{name}' (name mismatch); \
                 connect with --sni NAME (a name it carries), or --tls-skip-hostname to verify the chain only"
            ),
            Error::InvalidCertificate(CertificateError::Expired) => {
                "TLS handshake failed: the server's certificate has expired".to_string()
            }
            Error::InvalidCertificate(CertificateError::ExpiredContext { time, not_after }) => format!(
                "TLS handshake failed: the server's certificate has expired (its validity ended {} ago)",
                age(not_after.as_secs(), time.as_secs())
            ),
            Error::InvalidCertificate(CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. }) => {
                "TLS handshake failed: the server's certificate is not valid yet (is this machine's clock right?)"
                    .to_string()
            }
            Error::InvalidCertificate(CertificateError::BadSignature) => {
                "TLS handshake failed: bad signature: a certificate of the server's chain was not signed by the key \
                 of the issuer it names (a forged or mismatched certificate)"
                    .to_string()
            }
            Error::InvalidCertificate(CertificateError::Other(other))
                if let Some(chain) = other.0.downcast_ref::<v1::ChainError>() =>
            {
                format!("TLS handshake failed: {chain}")
            }
            Error::InvalidCertificate(other) => format!("TLS handshake failed: the server's certificate: {other:?}"),
            Error::AlertReceived(
                AlertDescription::CertificateRequired
                | AlertDescription::HandshakeFailure
                | AlertDescription::BadCertificate
                | AlertDescription::UnknownCA,
            ) => format!(
                "TLS handshake refused by the server ({tls}): it may require a client certificate (--cert FILE \
                 --key FILE) signed by a CA it trusts"
            ),
            other => format!("TLS handshake failed: {other}"),
        };
    }
    match e.kind() {
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset | io::ErrorKind::ConnectionAborted => {
            format!("TLS handshake failed: the server closed the connection ({e}); is TLS enabled on that port?")
        }
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            "TLS handshake failed: no answer from the server in time; is TLS enabled on that port?".to_string()
        }
        _ => format!("TLS handshake failed: {e}"),
    }
}

/// How long ago `then` was at `now` (seconds since the epoch), in the largest whole unit.
fn age(then: u64, now: u64) -> String {
    let seconds = now.saturating_sub(then);
    match seconds {
        0..120 => format!("{seconds} s"),
        120..7200 => format!("{} min", seconds / 60),
        7200..172_800 => format!("{} h", seconds / 3600),
        _ => format!("{} days", seconds / 86_400),
    }
}

/// The subject of an X.509 v1 certificate the server presented, when there is one: such a
/// chain was verified by our own checks, not webpki's, and the run's result says so.
pub fn v1_certificate(conn: &ClientConnection) -> Option<String> {
    v1::first_v1_subject(conn.peer_certificates()?)
}

/// An established TLS connection on a non-blocking socket.
#[derive(Debug)]
pub struct TlsStream {
    conn: ClientConnection,
    sock: TlsSock,
    /// Kernel receive timestamps are on for the socket under mio (`stamp_reads`): it is read
    /// with `recvmsg` and its control messages. Under io_uring the ring's receive keeps them.
    stamped: bool,
    /// The kernel's receive time of the last bytes read from the socket (`CLOCK_REALTIME`
    /// nanoseconds), when timestamps are on.
    stamp: Option<u64>,
}

/// The socket under a TLS connection: one mio watches, or one under io_uring.
#[derive(Debug)]
enum TlsSock {
    Mio(mio::net::TcpStream),
    Ring(RingSocket),
}

impl TlsStream {
    /// A client connection whose handshake is driven by the reads and writes that follow
    /// (plaintext written meanwhile waits in rustls until the handshake is done).
    pub fn client(
        config: Arc<ClientConfig>,
        name: ServerName<'static>,
        sock: mio::net::TcpStream,
    ) -> Result<TlsStream, TlsSetupError> {
        let conn = ClientConnection::new(config, name).map_err(|e| format!("TLS setup: {e}"))?;
        Ok(TlsStream { conn, sock: TlsSock::Mio(sock), stamped: false, stamp: None })
    }

    pub fn is_handshaking(&self) -> bool {
        self.conn.is_handshaking()
    }

    pub fn from_blocking(stream: StreamOwned<ClientConnection, TcpStream>) -> io::Result<TlsStream> {
        let StreamOwned { conn, sock } = stream;
        sock.set_nonblocking(true)?;
        let sock = TlsSock::Mio(mio::net::TcpStream::from_std(sock));
        Ok(TlsStream { conn, sock, stamped: false, stamp: None })
    }

    /// The socket, while mio watches it.
    pub fn mio_socket(&self) -> Option<&mio::net::TcpStream> {
        match &self.sock {
            TlsSock::Mio(s) => Some(s),
            TlsSock::Ring(_) => None,
        }
    }

    pub fn mio_socket_mut(&mut self) -> Option<&mut mio::net::TcpStream> {
        match &mut self.sock {
            TlsSock::Mio(s) => Some(s),
            TlsSock::Ring(_) => None,
        }
    }

    /// The TCP socket's own address and its server's.
    pub fn endpoints(&self) -> Option<(std::net::SocketAddr, std::net::SocketAddr)> {
        match &self.sock {
            TlsSock::Mio(s) => Some((s.local_addr().ok()?, s.peer_addr().ok()?)),
            TlsSock::Ring(s) => s.endpoints(),
        }
    }

    /// The same session over the socket handed to io_uring (`adopt` takes its descriptor).
    pub fn over_ring(self, adopt: impl FnOnce(OwnedFd) -> RingSocket) -> TlsStream {
        let sock = match self.sock {
            TlsSock::Mio(s) => TlsSock::Ring(adopt(OwnedFd::from(s))),
            ring => ring,
        };
        TlsStream { sock, ..self }
    }

    /// Reads the socket under mio with its kernel receive timestamps from now on (the driver
    /// turned them on for it).
    pub fn stamp_reads(&mut self) {
        self.stamped = true;
    }

    /// The kernel's receive time of the last bytes read from the socket, when timestamps are
    /// on. The plaintext `read` hands out came from them or from records read before (rustls
    /// may hold several): a reply is stamped with the last arrival, as a plain socket's read
    /// stamps every reply it completes with its last bytes' arrival.
    pub fn stamp(&self) -> Option<u64> {
        match &self.sock {
            TlsSock::Ring(s) => s.stamp(),
            TlsSock::Mio(_) => self.stamp,
        }
    }
}

/// The socket as rustls reads it: through `recvmsg`, keeping the receive time, when
/// timestamps are on for a socket under mio.
struct Stamping<'a> {
    sock: &'a mut TlsSock,
    stamp: Option<&'a mut Option<u64>>,
}

impl Read for Stamping<'_> {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match (&mut *self.sock, self.stamp.as_deref_mut()) {
            (TlsSock::Mio(s), Some(stamp)) => {
                let (n, at) = super::driver::stamp::recv(std::os::fd::AsRawFd::as_raw_fd(s), buf)?;
                if at.is_some() {
                    *stamp = at;
                }
                Ok(n)
            }
            (sock, _) => sock.read(buf),
        }
    }
}

impl Read for TlsSock {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            TlsSock::Mio(s) => s.read(buf),
            TlsSock::Ring(s) => s.read(buf),
        }
    }
}

impl Write for TlsSock {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            TlsSock::Mio(s) => s.write(buf),
            TlsSock::Ring(s) => s.write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Read for TlsStream {
    /// Plaintext when some is decrypted; otherwise reads TLS records until the socket would
    /// block, so `WouldBlock` means the socket is drained (what an edge-triggered loop needs).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            match self.conn.reader().read(buf) {
                Ok(n) => return Ok(n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(e) => return Err(e),
            }
            let stamp = self.stamped.then_some(&mut self.stamp);
            match self.conn.read_tls(&mut Stamping { sock: &mut self.sock, stamp }) {
                Ok(0) => return Ok(0),
                Ok(_) => {
                    self.conn.process_new_packets().map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl Write for TlsStream {
    /// Encrypts what rustls accepts and sends as much as the socket takes; the rest goes out
    /// on [`flush`](Write::flush) at the next writable edge.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.conn.writer().write(buf)?;
        self.flush()?;
        if n == 0 && !buf.is_empty() {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        while self.conn.wants_write() {
            match self.conn.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}
