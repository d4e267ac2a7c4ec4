//! Why TLS options cannot make a client configuration or a stream, and why a handshake failed.

message_error!(
    /// TLS options that cannot make a client configuration (a file, a certificate, a name).
    TlsSetupError
);

/// A handshake that failed: why, in words, and the socket's own error when the server closed
/// or reset the connection under it without a TLS alert (a server at its client limit).
#[derive(Debug)]
pub struct HandshakeError {
    pub message: String,
    pub lost: Option<std::io::Error>,
}
