//! Why a connection could not be made ready, and why a control call failed.

use std::io;
use std::time::Duration;

use crate::resp;

/// Why a connection could not be made ready.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot connect to {target}: {source}")]
    Unreachable { target: String, source: io::Error },
    #[error("{target} refused the login: {message}")]
    Auth { target: String, message: String },
    #[error("{target} refused `{command}`: {message}")]
    Refused { target: String, command: String, message: String },
    #[error("{target}: {source}")]
    Io { target: String, source: io::Error },
    #[error("{target} sent a reply that is not {protocol}: {source}")]
    Protocol { target: String, source: resp::ScanError, protocol: &'static str },
    #[error("{target}: {message}")]
    Tls { target: String, message: String },
    /// The socket failed or closed while a non-blocking TLS handshake was under way (a server
    /// at its client limit closes before it answers).
    #[error("{target}: {message}")]
    TlsIo { target: String, message: String, source: io::Error },
    /// No reply within the connect timeout's deadline.
    #[error("{target} did not answer {command} within {waited:?} (--connect-timeout)")]
    Silent { target: String, command: String, waited: Duration },
    /// The connections were made but no request of the run was answered before the connect
    /// phase's budget ran out: the run never reached its steady state.
    #[error("{target} accepted the connections but answered no request within {waited:?} ({flag})")]
    NoReply { target: String, waited: Duration, flag: &'static str },
    /// The first bytes are not RESP at all: the wrong port or protocol.
    #[error("no {protocol} reply from {target}: got bytes {bytes} — {guess}")]
    NotResp { target: String, bytes: String, guess: &'static str, protocol: &'static str },
    /// Cluster mode: the node's slot map is empty (a cluster not formed yet, or failed).
    #[error(
        "the cluster at {target} serves no slots (CLUSTER SLOTS is empty: a cluster not formed yet, or failed; \
         see CLUSTER INFO)"
    )]
    NoSlots { target: String },
    /// A role the server cannot run as planned (a tracking mode it refuses): the line names the
    /// role and the fix; a usage error.
    #[error("{message}")]
    Role { message: String },
}

/// A control call's failure: the server said no, or the connection failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("{0}")]
    Server(String),
    #[error(transparent)]
    Connect(#[from] ConnectError),
}
