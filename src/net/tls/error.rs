//! Why TLS options cannot make a client configuration or a stream.

message_error!(
    /// TLS options that cannot make a client configuration (a file, a certificate, a name).
    TlsSetupError
);
