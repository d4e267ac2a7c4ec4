//! Why requests failed and connections were lost, counted by kind.

message_error!(
    /// An error kind's name that is none of the kinds counted.
    UnknownErrorKind
);

/// Why a request failed.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum ErrorKind {
    /// An error reply, by its first word (`ERR`, `WRONGTYPE`, `OOM`, ...).
    Server(String),
    /// The connection failed or closed with the request in flight.
    Io,
    /// No reply within the timeout.
    Timeout,
    /// The server sent bytes that are not RESP.
    Protocol,
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ErrorKind::Server(prefix) => write!(f, "server:{prefix}"),
            ErrorKind::Io => f.write_str("io"),
            ErrorKind::Timeout => f.write_str("timeout"),
            ErrorKind::Protocol => f.write_str("protocol"),
        }
    }
}

impl std::str::FromStr for ErrorKind {
    type Err = UnknownErrorKind;

    /// The kind its `Display` wrote (`server:ERR`, `io`, `timeout`, `protocol`).
    fn from_str(text: &str) -> Result<ErrorKind, UnknownErrorKind> {
        match text {
            "io" => Ok(ErrorKind::Io),
            "timeout" => Ok(ErrorKind::Timeout),
            "protocol" => Ok(ErrorKind::Protocol),
            _ => match text.strip_prefix("server:") {
                Some(prefix) => Ok(ErrorKind::Server(prefix.to_string())),
                None => {
                    Err(format!("unknown error kind '{text}' (expected io, timeout, protocol or server:PREFIX)").into())
                }
            },
        }
    }
}

/// Counts of requests by why they failed (error replies by prefix, requests without a reply
/// by kind): one request each, never a connection; or of connections lost, by why. Allocates
/// only the first time a kind is seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorCounts {
    entries: Vec<(ErrorKind, u64)>,
    /// The first error reply's text, whole (a front-end whose original stops at the first
    /// error reply names it: redis-benchmark's `Error from server: ...`).
    first_reply: Option<String>,
    /// Of connections lost: how the first went (redis-benchmark ends there, with its reason).
    first_loss: Option<Loss>,
}

/// How a connection went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loss {
    /// The server closed it (end of stream).
    Closed,
    /// A read or write failed with this OS error (`errno`).
    Os(i32),
    /// A request timed out, or the replies made no sense.
    Other,
}

impl ErrorCounts {
    pub fn add(&mut self, kind: ErrorKind, n: u64) {
        match self.entries.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, count)) => *count += n,
            None => self.entries.push((kind, n)),
        }
    }

    /// Counts an error reply by its prefix without allocating for a known prefix.
    pub fn add_server(&mut self, prefix: &[u8]) {
        let known = self.entries.iter_mut().find(|(k, _)| matches!(k, ErrorKind::Server(p) if p.as_bytes() == prefix));
        match known {
            Some((_, count)) => *count += 1,
            None => self.entries.push((ErrorKind::Server(String::from_utf8_lossy(prefix).into_owned()), 1)),
        }
    }

    /// Keeps an error reply's text if it is the first (allocates once).
    #[inline]
    pub fn keep_first_reply(&mut self, msg: &[u8]) {
        if self.first_reply.is_none() {
            self.first_reply = Some(String::from_utf8_lossy(msg).into_owned());
        }
    }

    /// The first error reply's text, if any came.
    pub fn first_reply(&self) -> Option<&str> {
        self.first_reply.as_deref()
    }

    /// Keeps how a connection went if it is the first.
    pub fn keep_first_loss(&mut self, loss: Loss) {
        self.first_loss.get_or_insert(loss);
    }

    /// How the first connection lost went, if one was.
    pub fn first_loss(&self) -> Option<Loss> {
        self.first_loss
    }

    pub fn merge(&mut self, other: &ErrorCounts) {
        for (kind, n) in &other.entries {
            self.add(kind.clone(), *n);
        }
        if self.first_reply.is_none() {
            self.first_reply.clone_from(&other.first_reply);
        }
        self.first_loss = self.first_loss.or(other.first_loss);
    }

    pub fn total(&self) -> u64 {
        self.entries.iter().map(|(_, n)| n).sum()
    }

    /// Kinds and counts, sorted by kind.
    pub fn sorted(&self) -> Vec<(ErrorKind, u64)> {
        let mut v = self.entries.clone();
        v.sort();
        v
    }
}
