//! Connecting without blocking: a [`Dial`] is one connection attempt driven by the worker's
//! event loop (TCP connect, TLS handshake, the login commands written at once, their replies
//! checked), so a reconnect never stalls the other connections of its worker.
//!
//! The blocking path (`Session`) stays for the control connections and for what this one
//! cannot do without blocking: MPTCP sockets and memcached SASL logins.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Instant;

use super::error::ConnectError;
use super::tls;
use super::transport::Transport;
use crate::config::{ServerOptions, Target};
use crate::resp::{self, ReplyClass};

/// The login a connection sends as one write, and how many replies it waits for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Login {
    pub bytes: Vec<u8>,
    pub replies: usize,
}

impl Login {
    /// What `opts` asks for after connecting (HELLO or AUTH, SELECT, CLIENT TRACKING, and
    /// READONLY on a cluster replica), or `None` when only the blocking path can log in.
    pub fn of(opts: &ServerOptions, replica: bool) -> Option<Login> {
        if opts.session.mptcp || (opts.session.protocol.is_memcache() && opts.password.is_some()) {
            return None;
        }
        if opts.session.protocol.is_memcache() {
            return Some(Login::default());
        }
        let mut login = Login::default();
        for step in steps(opts, replica) {
            let args: Vec<&[u8]> = step.args.iter().map(Vec::as_slice).collect();
            login.push(&args);
        }
        if opts.tls.as_ref().is_some_and(|tls| !tls.no_probe) && login.replies == 0 {
            // With TLS 1.3 the server judges a client certificate after our side of the
            // handshake: a reply (any, even NOAUTH) proves we were accepted.
            login.push(&[b"PING"]);
        }
        Some(login)
    }

    fn push(&mut self, args: &[&[u8]]) {
        resp::encode_command(&mut self.bytes, args);
        self.replies += 1;
    }
}

/// Most bytes a login's replies may take (OK, +PONG, a HELLO map: a few hundred bytes): a
/// server that sends more while we log in is not answering the login.
const LOGIN_REPLIES_MAX: usize = 64 * 1024;

/// What one login command is, for the words of its refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum StepKind {
    /// `HELLO 3 [AUTH ...]`: switches to RESP3 and logs in.
    Hello,
    /// `AUTH [user] password`.
    Auth,
    /// SELECT, CLIENT TRACKING, READONLY: refused, they name themselves.
    Other,
}

/// One command of a RESP login.
pub(super) struct Step {
    pub(super) args: Vec<Vec<u8>>,
    pub(super) kind: StepKind,
}

/// The commands a RESP connection sends after connecting, in order: HELLO 3 (with AUTH) or AUTH,
/// SELECT, CLIENT TRACKING, and READONLY on a cluster replica. The blocking login and the dial
/// both send these.
pub(super) fn steps(opts: &ServerOptions, replica: bool) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut push = |args: &[&[u8]], kind| steps.push(Step { args: args.iter().map(|a| a.to_vec()).collect(), kind });
    if opts.resp3 {
        let mut args: Vec<&[u8]> = vec![b"HELLO", b"3"];
        if let Some(password) = &opts.password {
            args.extend([&b"AUTH"[..], opts.user.as_deref().unwrap_or("default").as_bytes(), password.as_bytes()]);
        }
        push(&args, StepKind::Hello);
    } else if let Some(password) = &opts.password {
        let mut args: Vec<&[u8]> = vec![b"AUTH"];
        if let Some(user) = &opts.user {
            args.push(user.as_bytes());
        }
        args.push(password.as_bytes());
        push(&args, StepKind::Auth);
    }
    if let Some(db) = opts.db {
        push(&[b"SELECT", db.to_string().as_bytes()], StepKind::Other);
    }
    if opts.session.tracking {
        push(&[b"CLIENT", b"TRACKING", b"on"], StepKind::Other);
    }
    if replica {
        push(&[b"READONLY"], StepKind::Other);
    }
    steps
}

/// The first address of a TCP target's host (a blocking lookup: DNS for a name).
pub fn resolve(opts: &ServerOptions) -> io::Result<SocketAddr> {
    let Target::Tcp { host, port } = &opts.target else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a TCP target"));
    };
    (host.as_str(), *port)
        .to_socket_addrs()?
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "host has no address"))
}

/// Where an attempt stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The TCP handshake is under way.
    Connecting,
    /// Connected (TLS handshaking underneath if any): the login is written, replies awaited.
    LoggingIn,
}

/// What [`Dial::advance`] found.
#[derive(Debug)]
pub enum Progress {
    /// Wait for the socket's next readiness (or the deadline).
    Pending,
    /// Logged in: take the transport with [`finish`](Dial::finish).
    Ready,
    Failed(ConnectError),
}

/// One non-blocking connection attempt.
#[derive(Debug)]
pub struct Dial {
    io: Transport,
    stage: Stage,
    login: Login,
    written: usize,
    replies: Vec<u8>,
    /// Bytes of `replies` the login's own replies take, once all are in.
    login_len: usize,
    target: String,
    /// When the attempt gives up (the caller checks; the socket does not wake us for it).
    pub deadline: Instant,
}

impl Dial {
    /// Starts connecting (returns at once); register [`source`](Self::source) with the event
    /// loop for readable and writable events, then call [`advance`](Self::advance) on each.
    /// `addr`: the host's address when the caller resolved it already (many connections to one
    /// host ask the resolver once); `None` resolves it now.
    pub fn start(
        opts: &ServerOptions,
        addr: Option<SocketAddr>,
        login: Login,
        deadline: Instant,
    ) -> Result<Dial, ConnectError> {
        let target = opts.target.to_string();
        let unreachable = |source| ConnectError::Unreachable { target: target.clone(), source };
        let io = match &opts.target {
            Target::Tcp { host, .. } => {
                let addr = match addr {
                    Some(addr) => addr,
                    None => resolve(opts).map_err(unreachable)?,
                };
                let sock = mio::net::TcpStream::connect(addr).map_err(unreachable)?;
                sock.set_nodelay(true).map_err(unreachable)?;
                match &opts.tls {
                    Some(tls_opts) => {
                        let tls_error = |message| ConnectError::Tls { target: target.clone(), message };
                        let config = tls::client_config(tls_opts).map_err(|e| tls_error(e.0))?;
                        let name = tls::server_name(tls_opts, host).map_err(|e| tls_error(e.0))?;
                        Transport::Tls(Box::new(
                            tls::TlsStream::client(config, name, sock).map_err(|e| tls_error(e.0))?,
                        ))
                    }
                    None => Transport::Tcp(sock),
                }
            }
            Target::Unix(_) if opts.tls.is_some() => {
                let message = "TLS over a unix socket is not supported: connect over TCP".to_string();
                return Err(ConnectError::Tls { target, message });
            }
            Target::Unix(path) => Transport::Unix(mio::net::UnixStream::connect(path).map_err(unreachable)?),
        };
        Ok(Dial {
            io,
            stage: Stage::Connecting,
            login,
            written: 0,
            replies: Vec::new(),
            login_len: 0,
            target,
            deadline,
        })
    }

    /// The socket to register with the event loop.
    pub fn source(&mut self) -> &mut Transport {
        &mut self.io
    }

    /// Moves the attempt on as far as the socket allows.
    pub fn advance(&mut self) -> Progress {
        match self.step() {
            Ok(true) => Progress::Ready,
            Ok(false) => Progress::Pending,
            Err(e) => Progress::Failed(e),
        }
    }

    /// The logged-in transport (still registered as the dial's socket was), and the bytes
    /// read after the login's replies (a RESP3 push), which belong to the run.
    pub fn finish(self) -> (Transport, Vec<u8>) {
        let mut rest = self.replies;
        rest.drain(..self.login_len);
        (self.io, rest)
    }

    /// True once logged in.
    fn step(&mut self) -> Result<bool, ConnectError> {
        let io_err = |source| ConnectError::Io { target: self.target.clone(), source };
        if self.stage == Stage::Connecting {
            let sock = match &self.io {
                Transport::Tcp(s) => Some(s),
                Transport::Tls(s) => s.mio_socket(),
                Transport::Unix(_) | Transport::Ring(_) => None,
            };
            if let Some(sock) = sock {
                if let Some(e) = sock.take_error().map_err(io_err)? {
                    return Err(ConnectError::Unreachable { target: self.target.clone(), source: e });
                }
                match sock.peer_addr() {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => return Ok(false),
                    Err(e) => return Err(ConnectError::Unreachable { target: self.target.clone(), source: e }),
                }
            }
            self.stage = Stage::LoggingIn;
        }
        while self.written < self.login.bytes.len() {
            match self.io.write(&self.login.bytes[self.written..]) {
                Ok(n) => self.written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.tls_or_io(e)),
            }
        }
        if let Err(e) = self.io.flush() {
            return Err(self.tls_or_io(e));
        }
        let mut chunk = [0u8; 4096];
        loop {
            if self.checked_replies()? {
                return Ok(true);
            }
            match self.io.read(&mut chunk) {
                Ok(0) => {
                    let eof = io::Error::new(io::ErrorKind::UnexpectedEof, "server closed the connection");
                    return Err(self.tls_or_io(eof));
                }
                Ok(n) if self.replies.len() + n > LOGIN_REPLIES_MAX => {
                    let message = format!("login replies longer than {LOGIN_REPLIES_MAX} bytes");
                    return Err(ConnectError::Refused {
                        target: self.target.clone(),
                        command: "login".into(),
                        message,
                    });
                }
                Ok(n) => self.replies.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.tls_or_io(e)),
            }
        }
        // Handshake messages read just now may let rustls send what it held.
        if let Err(e) = self.io.flush() {
            return Err(self.tls_or_io(e));
        }
        self.checked_replies()
    }

    /// Whether every login reply is in; an error reply fails the attempt.
    fn checked_replies(&mut self) -> Result<bool, ConnectError> {
        if self.written < self.login.bytes.len() {
            return Ok(false);
        }
        let mut at = 0;
        for _ in 0..self.login.replies {
            match resp::scan(&self.replies[at..]) {
                Ok(Some(s)) => {
                    if let ReplyClass::Error { msg_start, msg_end } = s.class {
                        let message = String::from_utf8_lossy(&self.replies[at + msg_start..at + msg_end]).into_owned();
                        return Err(ConnectError::Refused {
                            target: self.target.clone(),
                            command: "login".into(),
                            message,
                        });
                    }
                    at += s.len;
                }
                Ok(None) => return Ok(false),
                Err(source) => {
                    return Err(ConnectError::Protocol { target: self.target.clone(), source, protocol: "RESP" });
                }
            }
        }
        // TLS: our side is done only once rustls says so (a login of zero replies).
        if let Transport::Tls(s) = &self.io
            && s.is_handshaking()
        {
            return Ok(false);
        }
        self.login_len = at;
        Ok(true)
    }

    fn tls_or_io(&self, source: io::Error) -> ConnectError {
        match &self.io {
            Transport::Tls(_) => {
                ConnectError::TlsIo { target: self.target.clone(), message: format!("TLS: {source}"), source }
            }
            _ => ConnectError::Io { target: self.target.clone(), source },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Target;

    #[test]
    fn a_server_flooding_the_login_fails_the_dial_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("flood.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        std::thread::spawn(move || {
            let (mut sock, _) = listener.accept().unwrap();
            // A bulk string "reply" to AUTH far larger than any login reply, sent endlessly.
            let _ = sock.write_all(b"$400000000\r\n");
            let chunk = [b'x'; 16 * 1024];
            while sock.write_all(&chunk).is_ok() {}
        });
        let mut opts = crate::config::tests::sample().server;
        opts.target = Target::Unix(path);
        opts.password = Some("pw".into());
        let login = Login::of(&opts, false).unwrap();
        let mut dial = Dial::start(&opts, None, login, Instant::now()).unwrap();
        let failed = loop {
            match dial.advance() {
                Progress::Pending => std::thread::yield_now(),
                Progress::Ready => panic!("a flood is not a login"),
                Progress::Failed(e) => break e,
            }
        };
        assert!(failed.to_string().contains("login replies longer than 65536 bytes"), "{failed}");
        assert!(dial.replies.len() <= LOGIN_REPLIES_MAX);
    }
}
