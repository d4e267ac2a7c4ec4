//! Reaching the server: connecting and logging in (blocking, before the measured phase), the
//! non-blocking transports the engine drives, and one-off calls such as INFO.

pub mod cluster;
mod dial;
pub mod driver;
mod error;
mod memcache;
// unsafe: a socket of IPPROTO_MPTCP is made with libc, which std cannot; each block says why it is sound.
#[allow(unsafe_code)]
pub mod mptcp;
mod silence;
mod stream;
mod tls;
mod transport;

pub use dial::{Dial, Login, Progress, resolve};
pub use error::{CallError, ConnectError};
pub use silence::{guess_for as reply_guess, hex};
pub use stream::Stream;
pub use transport::Transport;

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::config::{ServerOptions, Target};
use crate::resp::{self, ReplyClass};

/// How long connecting and each handshake reply may take.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// Prints `what()` on stderr when `--debug` is `on` (the session's `SessionExtras::debug`;
/// the text is built only then).
pub fn debug(on: bool, what: impl FnOnce() -> String) {
    if on {
        eprintln!("respbench: debug: {}", what());
    }
}

/// Control replies (INFO, CLUSTER SHARDS, DBSIZE, ...) are small: a server declaring more
/// cannot make a control call buffer the run's --max-reply-size.
const CONTROL_LIMITS: resp::Limits = resp::Limits { max_bulk: 64 * 1024 * 1024 };

/// A reply to a control call that was not an error.
pub struct Reply(pub Vec<u8>);

impl Reply {
    /// The payload of a bulk or verbatim string reply (INFO's text), else the whole reply.
    pub fn text(&self) -> &[u8] {
        let bytes = &self.0;
        let Some(first_crlf) = memchr::memmem::find(bytes, b"\r\n") else {
            return bytes;
        };
        if matches!(bytes.first(), Some(b'$') | Some(b'=')) && bytes.len() >= first_crlf + 4 {
            let body = &bytes[first_crlf + 2..bytes.len() - 2];
            // RESP3 verbatim strings start with a three-letter format and a colon.
            return if bytes[0] == b'=' && body.len() >= 4 { &body[4..] } else { body };
        }
        bytes
    }
}

/// A connected, logged-in server.
pub struct Session {
    pub stream: Stream,
    target: String,
    /// Every call must be answered by then (`open_by_deadline`), else it fails as `Silent`.
    deadline: Option<(Instant, Duration)>,
    /// RESP, or one of memcached's: how control calls are written and read.
    protocol: crate::codec::Protocol,
}

impl Session {
    /// Connects, then logs in and selects the database as `opts` says.
    pub fn open(opts: &ServerOptions) -> Result<Session, ConnectError> {
        Session::open_within(opts, opts.connect_timeout.unwrap_or(HANDSHAKE_TIMEOUT))
    }

    /// Like [`open`](Self::open), with each step (connect, each handshake reply) bounded by `timeout`.
    pub fn open_within(opts: &ServerOptions, timeout: Duration) -> Result<Session, ConnectError> {
        Session::connect(opts, timeout, false)
    }

    /// Connects and logs in within `budget` all together, and keeps that deadline for every
    /// later call: once it has passed, calls fail at once as [`ConnectError::Silent`] instead
    /// of waiting again. For the checks before a run.
    pub fn open_by_deadline(opts: &ServerOptions, budget: Duration) -> Result<Session, ConnectError> {
        Session::connect(opts, budget, true)
    }

    fn connect(opts: &ServerOptions, timeout: Duration, deadline: bool) -> Result<Session, ConnectError> {
        let started = Instant::now();
        let target = opts.target.to_string();
        debug(opts.session.debug, || format!("connecting to {target} (timeout {timeout:?})"));
        let session = Session::establish(opts, target, timeout, started, deadline);
        match &session {
            Ok(s) => debug(opts.session.debug, || format!("connected to {} and logged in", s.target)),
            Err(e) => debug(opts.session.debug, || format!("connecting failed: {e}")),
        }
        session
    }

    fn establish(
        opts: &ServerOptions,
        target: String,
        timeout: Duration,
        started: Instant,
        deadline: bool,
    ) -> Result<Session, ConnectError> {
        let unreachable = |source| ConnectError::Unreachable { target: target.clone(), source };
        let stream = match &opts.target {
            Target::Tcp { host, port } => {
                let addrs = (host.as_str(), *port).to_socket_addrs().map_err(unreachable)?;
                let mut last = io::Error::new(io::ErrorKind::NotFound, "host has no address");
                let mut connected = None;
                for addr in addrs {
                    let attempt = if opts.session.mptcp {
                        mptcp::connect_timeout(&addr, timeout)
                    } else {
                        TcpStream::connect_timeout(&addr, timeout)
                    };
                    match attempt {
                        Ok(s) => {
                            connected = Some(s);
                            break;
                        }
                        Err(e) => last = e,
                    }
                }
                let s = connected.ok_or_else(|| unreachable(last))?;
                s.set_nodelay(true).map_err(unreachable)?;
                s.set_read_timeout(Some(timeout)).map_err(unreachable)?;
                match &opts.tls {
                    Some(tls_opts) => {
                        let tls_error = |message| ConnectError::Tls { target: target.clone(), message };
                        let config = tls::client_config(tls_opts).map_err(|e| tls_error(e.0))?;
                        let name = tls::server_name(tls_opts, host).map_err(|e| tls_error(e.0))?;
                        Stream::Tls(Box::new(
                            tls::handshake(config, name, s, opts.session.protocol, !tls_opts.no_probe)
                                .map_err(|e| e.into_connect_error(target.clone()))?,
                        ))
                    }
                    None => Stream::Tcp(s),
                }
            }
            Target::Unix(_) if opts.tls.is_some() => {
                let message = "TLS over a unix socket is not supported: connect over TCP".to_string();
                return Err(ConnectError::Tls { target, message });
            }
            Target::Unix(path) => {
                let s = UnixStream::connect(path).map_err(unreachable)?;
                s.set_read_timeout(Some(timeout)).map_err(unreachable)?;
                Stream::Unix(s)
            }
        };
        let mut session = Session { stream, target, deadline: None, protocol: opts.session.protocol };
        if deadline {
            // What connecting took is spent: the login shares the rest.
            session.deadline = Some((started + timeout, timeout));
        }
        if let Some(dialect) = opts.session.protocol.dialect() {
            session.memcache_login(opts, dialect)?;
            return Ok(session);
        }
        // HELLO 3 switches the protocol and logs in at once; a refused HELLO or AUTH is a login
        // failure, the rest name themselves.
        for step in dial::steps(opts, false) {
            let args: Vec<&[u8]> = step.args.iter().map(Vec::as_slice).collect();
            match step.kind {
                dial::StepKind::Other => {
                    session.call_checked(&args)?;
                }
                kind => {
                    session.call(&args).map_err(|e| match e {
                        CallError::Server(message)
                            if kind == dial::StepKind::Auth
                                || message.starts_with("WRONGPASS")
                                || message.starts_with("NOAUTH") =>
                        {
                            ConnectError::Auth { target: session.target.clone(), message }
                        }
                        CallError::Server(message) => ConnectError::Refused {
                            target: session.target.clone(),
                            command: "HELLO 3 (RESP3)".into(),
                            message,
                        },
                        CallError::Connect(e) => e,
                    })?;
                }
            }
        }
        Ok(session)
    }

    /// Whether the session speaks TLS.
    pub fn is_tls(&self) -> bool {
        matches!(self.stream, Stream::Tls(_))
    }

    /// The subject of an X.509 v1 certificate in the chain the server presented, if any: such
    /// a chain was accepted by respbench's own checks rather than webpki's.
    pub fn tls_v1_certificate(&self) -> Option<String> {
        match &self.stream {
            Stream::Tls(s) => tls::v1_certificate(&s.conn),
            _ => None,
        }
    }

    /// The address this connection goes to, for messages.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Sends one command and waits for its reply. On memcached, the control commands the
    /// engine asks (INFO, DBSIZE, EXISTS, PING, FLUSHALL) are memcached's own underneath.
    pub fn call(&mut self, args: &[&[u8]]) -> Result<Reply, CallError> {
        let command = args.first().copied().unwrap_or_default();
        match self.protocol.dialect() {
            None => {
                let mut out = Vec::new();
                resp::encode_command(&mut out, args);
                self.exchange(&out, command)
            }
            Some(dialect) => {
                let (out, ask) = memcache::request(dialect, args).map_err(|e| CallError::Server(e.0))?;
                let reply = self.exchange(&out, command)?;
                memcache::answer(dialect, ask, &reply.0).map(Reply).map_err(|e| CallError::Server(e.0))
            }
        }
    }

    /// memcached's login: SASL PLAIN over the binary protocol when a user and password are
    /// given, then `version` to see that it answers.
    fn memcache_login(
        &mut self,
        opts: &ServerOptions,
        dialect: crate::codec::memcache::Dialect,
    ) -> Result<(), ConnectError> {
        if let (crate::codec::memcache::Dialect::Binary, Some(user), Some(password)) =
            (dialect, &opts.user, &opts.password)
        {
            self.exchange(&memcache::sasl_plain(user, password), b"SASL PLAIN").map_err(|e| match e {
                CallError::Server(message) => {
                    let why = if message.contains("Unknown command") {
                        "memcached was not started with SASL (-S)".to_string()
                    } else {
                        format!("{} (check --authenticate USER:PASS, or --user and -a)", message.trim_end_matches('.'))
                    };
                    ConnectError::Auth { target: self.target.clone(), message: format!("SASL PLAIN as {user}: {why}") }
                }
                CallError::Connect(e) => e,
            })?;
        }
        self.call_checked(&[b"PING"])?;
        if dialect == crate::codec::memcache::Dialect::Binary && opts.password.is_none() {
            // version answers before a login; a NOOP tells whether memcached wants one.
            if let Err(CallError::Server(message)) = self.exchange(&memcache::noop(), b"NOOP") {
                let message =
                    format!("{message} memcached wants a SASL login: --authenticate USER:PASS, or --user and -a");
                return Err(ConnectError::Auth { target: self.target.clone(), message });
            }
        }
        Ok(())
    }

    /// Writes one request (any bytes: valkey-benchmark's `--fuzz` sends malformed ones) and
    /// reads its one reply, as the session's protocol frames it.
    pub fn exchange(&mut self, out: &[u8], command: &[u8]) -> Result<Reply, CallError> {
        let silent = |target: &str| ConnectError::Silent {
            target: target.to_string(),
            command: String::from_utf8_lossy(command).into_owned(),
            waited: self.deadline.map_or(Duration::ZERO, |(_, budget)| budget),
        };
        if let Some((deadline, _)) = self.deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || silence::read_timeout(&self.stream, left).is_err() {
                return Err(silent(&self.target).into());
            }
        }
        let io_err = |source| ConnectError::Io { target: self.target.clone(), source };
        self.stream.write_all(out).map_err(io_err)?;
        let mut buf = Vec::with_capacity(4096);
        let mut chunk = [0u8; 16 * 1024];
        loop {
            match self.protocol.scan(&buf, CONTROL_LIMITS) {
                Ok(Some(scanned)) => {
                    buf.truncate(scanned.len);
                    return match scanned.class {
                        ReplyClass::Error { msg_start, msg_end } => {
                            Err(CallError::Server(String::from_utf8_lossy(&buf[msg_start..msg_end]).into_owned()))
                        }
                        // An out-of-band push is not our answer: keep reading.
                        ReplyClass::Push => {
                            buf.clear();
                            continue;
                        }
                        _ => Ok(Reply(buf)),
                    };
                }
                Ok(None) => {}
                Err(source) => return Err(silence::not_resp(&self.target, &buf, source, self.protocol).into()),
            }
            let n = match self.stream.read(&mut chunk) {
                Err(e) if self.deadline.is_some() && silence::timed_out(&e) => return Err(silent(&self.target).into()),
                read => read.map_err(io_err)?,
            };
            if n == 0 {
                let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection");
                return Err(io_err(eof).into());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// Like [`call`](Self::call), with an error reply turned into a [`ConnectError`].
    pub fn call_checked(&mut self, args: &[&[u8]]) -> Result<Reply, ConnectError> {
        self.call(args).map_err(|e| match e {
            CallError::Server(message) => ConnectError::Refused {
                target: self.target.clone(),
                command: String::from_utf8_lossy(args[0]).into_owned(),
                message,
            },
            CallError::Connect(e) => e,
        })
    }

    /// Hands the logged-in socket to the engine, non-blocking.
    pub fn into_transport(self) -> io::Result<Transport> {
        Ok(match self.stream {
            Stream::Tcp(s) => {
                s.set_nonblocking(true)?;
                Transport::Tcp(mio::net::TcpStream::from_std(s))
            }
            Stream::Unix(s) => {
                s.set_nonblocking(true)?;
                Transport::Unix(mio::net::UnixStream::from_std(s))
            }
            Stream::Tls(s) => Transport::Tls(Box::new(tls::TlsStream::from_blocking(*s)?)),
        })
    }
}

/// What the server says about itself in `INFO server`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ServerInfo {
    /// `redis`, `valkey`, `dragonfly`, ... as far as INFO tells.
    pub name: String,
    pub version: String,
    pub mode: String,
    pub os: String,
}

impl ServerInfo {
    /// Parses INFO's `field:value` lines.
    pub fn parse(text: &str) -> ServerInfo {
        let mut info = ServerInfo::default();
        for line in text.lines() {
            let Some((field, value)) = line.trim_end().split_once(':') else {
                continue;
            };
            match field {
                "redis_version" if info.version.is_empty() => {
                    info.name = "redis".into();
                    info.version = value.into();
                }
                "valkey_version" | "dragonfly_version" | "memcached_version" => {
                    info.name = field.trim_end_matches("_version").into();
                    info.version = value.into();
                }
                "server_name" => info.name = value.into(),
                "redis_mode" | "server_mode" => info.mode = value.into(),
                "os" => info.os = value.into(),
                _ => {}
            }
        }
        info
    }

    /// Asks the server; `None` when it refuses INFO (managed caches may).
    pub fn query(session: &mut Session) -> Option<ServerInfo> {
        ServerInfo::ask(session).ok()
    }

    /// Asks the server, telling a refusal (`CallError::Server`) from silence or a failure.
    pub fn ask(session: &mut Session) -> Result<ServerInfo, CallError> {
        let reply = session.call(&[b"INFO", b"server"])?;
        Ok(ServerInfo::parse(&String::from_utf8_lossy(reply.text())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_info_server() {
        let text = "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nos:Linux 6.1 x86_64\r\n";
        let info = ServerInfo::parse(text);
        assert_eq!(info.name, "redis");
        assert_eq!(info.version, "7.0.15");
        assert_eq!(info.mode, "standalone");
        let valkey = ServerInfo::parse("redis_version:7.2.4\r\nserver_name:valkey\r\nvalkey_version:8.0.1\r\n");
        assert_eq!((valkey.name.as_str(), valkey.version.as_str()), ("valkey", "8.0.1"));
    }

    #[test]
    fn reply_text_unwraps_bulk_and_verbatim() {
        assert_eq!(Reply(b"$5\r\nhello\r\n".to_vec()).text(), b"hello");
        assert_eq!(Reply(b"=9\r\ntxt:hello\r\n".to_vec()).text(), b"hello");
        assert_eq!(Reply(b"+OK\r\n".to_vec()).text(), b"+OK\r\n");
    }
}
