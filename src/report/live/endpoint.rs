//! The `--metrics-listen` HTTP endpoint, safe to leave open: one thread answers `GET /metrics`
//! (and `HEAD`) with the last page the run pinned up, and nothing else. Our own small server,
//! not tiny_http: tiny_http starts a thread per connection without bound and sets no timeouts,
//! so a scraper that connected and never sent (or never read) held a thread for good. Here a
//! scraper holds at most one of `Limits::connections` slots (the oldest is dropped for a new
//! one), a request head of at most `Limits::head_bytes`, and its slot for at most
//! `Limits::exchange`; the page is shared, never copied per scrape. The run never waits on a
//! scraper: it swaps the page in under a lock the endpoint holds only to clone an `Arc`.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token};

/// What one scraper may hold.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Connections served at once; a new one beyond this drops the oldest.
    pub connections: usize,
    /// The longest request head (request line and headers) read; a longer one gets 431.
    pub head_bytes: usize,
    /// From accept to the last byte of the reply: a scraper slower than this is dropped.
    pub exchange: Duration,
}

impl Default for Limits {
    /// Prometheus's default scrape timeout is 10 s; 64 scrapers at once is far more than any
    /// monitoring set-up sends.
    fn default() -> Limits {
        Limits { connections: 64, head_bytes: 8 * 1024, exchange: Duration::from_secs(10) }
    }
}

/// One complete HTTP reply for `/metrics`, shared by every scrape until the next is pinned up.
#[derive(Debug)]
pub struct Page {
    bytes: Vec<u8>,
    /// Where the body starts (what a HEAD gets is the bytes before).
    head: usize,
    /// The run is over: these values are final.
    finished: bool,
}

impl Page {
    pub fn new(body: &str, finished: bool) -> Page {
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/openmetrics-text; version=1.0.0; charset=utf-8\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        );
        let mut bytes = Vec::with_capacity(head.len() + body.len());
        bytes.extend_from_slice(head.as_bytes());
        bytes.extend_from_slice(body.as_bytes());
        Page { bytes, head: head.len(), finished }
    }

    /// The metrics text itself, without the HTTP head.
    pub fn body(&self) -> &[u8] {
        &self.bytes[self.head..]
    }
}

/// The page the run pins up and the endpoint hands out, and what the endpoint has done.
#[derive(Debug)]
pub struct Board {
    page: Mutex<Arc<Page>>,
    /// Connections open now.
    pub open: AtomicUsize,
    /// Connections dropped at their deadline or to make room for a newer one.
    pub dropped: AtomicU64,
}

impl Default for Board {
    fn default() -> Board {
        Board {
            page: Mutex::new(Arc::new(Page::new("# EOF\n", false))),
            open: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
        }
    }
}

impl Board {
    /// Replaces the page; the endpoint never holds this lock longer than an `Arc` clone.
    pub fn pin(&self, page: Page) {
        let page = Arc::new(page);
        *self.page.lock().unwrap_or_else(|e| e.into_inner()) = page;
    }

    pub fn current(&self) -> Arc<Page> {
        Arc::clone(&self.page.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

const NOT_FOUND: &str = "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 29\r\nConnection: close\r\n\r\nonly /metrics is served here\n";
const NOT_ALLOWED: &str = "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Type: text/plain\r\n\
                           Content-Length: 18\r\nConnection: close\r\n\r\nonly GET and HEAD\n";
const BAD_REQUEST: &str = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 12\r\nConnection: close\r\n\r\nbad request\n";
const TOO_LARGE: &str = "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\n\
                         Content-Length: 18\r\nConnection: close\r\n\r\nrequest too large\n";

/// What a connection is sending back.
enum Reply {
    Page(Arc<Page>),
    Canned(&'static str),
}

impl Reply {
    fn bytes(&self) -> &[u8] {
        match self {
            Reply::Page(page) => &page.bytes,
            Reply::Canned(text) => text.as_bytes(),
        }
    }
}

enum Phase {
    /// The request head so far.
    Reading(Vec<u8>),
    /// The reply, how much of it goes out (a HEAD stops before the body), and how much went.
    Writing { reply: Reply, len: usize, sent: usize },
}

struct Conn {
    stream: TcpStream,
    deadline: Instant,
    phase: Phase,
}

/// How far a connection got on this wake.
enum Step {
    Waiting,
    /// The whole reply went out: the final page's, if it was one.
    Served {
        final_page: bool,
    },
    Gone,
}

/// A bound endpoint, not yet serving.
pub struct Endpoint {
    listener: TcpListener,
    limits: Limits,
}

impl Endpoint {
    /// Binds exactly `addr` (127.0.0.1 is loopback only; 0.0.0.0 or `[::]` is every address).
    pub fn bind(addr: SocketAddr, limits: Limits) -> std::io::Result<Endpoint> {
        Ok(Endpoint { listener: TcpListener::bind(addr)?, limits })
    }

    pub fn addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serves on a thread of its own until the process exits; `on_final` is called after each
    /// complete reply of a final page.
    pub fn spawn(self, board: Arc<Board>, on_final: impl Fn() + Send + 'static) -> std::io::Result<()> {
        let poll = Poll::new()?;
        std::thread::Builder::new().name("metrics".into()).spawn(move || {
            crate::engine::yield_to_the_load();
            Server { poll, listener: self.listener, limits: self.limits, conns: BTreeMap::new(), next_id: 1, board }
                .run(on_final)
        })?;
        Ok(())
    }
}

const LISTENER: Token = Token(0);

/// How soon to accept again after running out of descriptors.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

struct Server {
    poll: Poll,
    listener: TcpListener,
    limits: Limits,
    /// By id, in the order accepted: the first is the oldest.
    conns: BTreeMap<usize, Conn>,
    next_id: usize,
    board: Arc<Board>,
}

impl Server {
    fn run(mut self, on_final: impl Fn()) {
        if let Err(e) = self.poll.registry().register(&mut self.listener, LISTENER, Interest::READABLE) {
            eprintln!("respbench: metrics endpoint stopped: {e}");
            return;
        }
        let mut events = Events::with_capacity(128);
        let mut backlog_left = false;
        loop {
            let now = Instant::now();
            let retry = backlog_left.then_some(ACCEPT_RETRY);
            let timeout = self.conns.values().map(|c| c.deadline.saturating_duration_since(now)).chain(retry).min();
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == ErrorKind::Interrupted {
                    continue;
                }
                eprintln!("respbench: metrics endpoint stopped: {e}");
                return;
            }
            if backlog_left {
                backlog_left = !self.accept();
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => backlog_left = !self.accept(),
                    Token(id) => self.advance(id, &on_final),
                }
            }
            self.expire(Instant::now());
        }
    }

    /// Takes every waiting connection, dropping the oldest when all slots are held. False after
    /// an error (out of descriptors) that left connections in the backlog: try again soon,
    /// since the listener signals only new arrivals.
    fn accept(&mut self) -> bool {
        loop {
            let (mut stream, _) = match self.listener.accept() {
                Ok(accepted) => accepted,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return e.kind() == ErrorKind::WouldBlock,
            };
            while self.conns.len() >= self.limits.connections.max(1) {
                self.conns.pop_first();
                self.board.dropped.fetch_add(1, Ordering::Relaxed);
            }
            let id = self.next_id;
            self.next_id += 1;
            if self.poll.registry().register(&mut stream, Token(id), Interest::READABLE | Interest::WRITABLE).is_err() {
                continue;
            }
            let deadline = Instant::now() + self.limits.exchange;
            self.conns.insert(id, Conn { stream, deadline, phase: Phase::Reading(Vec::new()) });
            self.board.open.store(self.conns.len(), Ordering::Relaxed);
        }
    }

    fn advance(&mut self, id: usize, on_final: &impl Fn()) {
        let Some(conn) = self.conns.get_mut(&id) else { return };
        match conn.advance(&self.board, self.limits.head_bytes) {
            Step::Waiting => return,
            Step::Served { final_page } if final_page => on_final(),
            Step::Served { .. } | Step::Gone => {}
        }
        self.conns.remove(&id);
        self.board.open.store(self.conns.len(), Ordering::Relaxed);
    }

    fn expire(&mut self, now: Instant) {
        let before = self.conns.len();
        self.conns.retain(|_, c| c.deadline > now);
        self.board.dropped.fetch_add((before - self.conns.len()) as u64, Ordering::Relaxed);
        self.board.open.store(self.conns.len(), Ordering::Relaxed);
    }
}

impl Conn {
    /// Reads the request head, then writes the reply, as far as the socket lets us now.
    fn advance(&mut self, board: &Board, head_bytes: usize) -> Step {
        loop {
            match &mut self.phase {
                Phase::Reading(head) => {
                    let mut chunk = [0u8; 2048];
                    let room = (head_bytes + 1).saturating_sub(head.len()).min(chunk.len());
                    match self.stream.read(&mut chunk[..room]) {
                        Ok(0) => return Step::Gone,
                        Ok(n) => head.extend_from_slice(&chunk[..n]),
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Waiting,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(_) => return Step::Gone,
                    }
                    let (reply, head_only) = match head_end(head) {
                        Some(end) => answer(&head[..end], board),
                        None if head.len() > head_bytes => (Reply::Canned(TOO_LARGE), false),
                        None => continue,
                    };
                    let len = if head_only { head_length(&reply) } else { reply.bytes().len() };
                    self.phase = Phase::Writing { reply, len, sent: 0 };
                }
                Phase::Writing { reply, len, sent } => {
                    match self.stream.write(&reply.bytes()[*sent..*len]) {
                        Ok(0) => return Step::Gone,
                        Ok(n) => *sent += n,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => return Step::Waiting,
                        Err(e) if e.kind() == ErrorKind::Interrupted => {}
                        Err(_) => return Step::Gone,
                    }
                    if sent == len {
                        // A HEAD read no values: it does not count as the final page read.
                        let whole = *len == reply.bytes().len();
                        let final_page = whole && matches!(reply, Reply::Page(page) if page.finished);
                        return Step::Served { final_page };
                    }
                }
            }
        }
    }
}

/// The end of the request head (its empty line), if it has arrived; a bare `\n` ends a line too.
fn head_end(bytes: &[u8]) -> Option<usize> {
    let crlf = memchr::memmem::find(bytes, b"\n\r\n").map(|i| i + 3);
    let lf = memchr::memmem::find(bytes, b"\n\n").map(|i| i + 2);
    crlf.into_iter().chain(lf).min()
}

/// The bytes of a reply before its body.
fn head_length(reply: &Reply) -> usize {
    match reply {
        Reply::Page(page) => page.head,
        Reply::Canned(text) => text.find("\r\n\r\n").map_or(text.len(), |i| i + 4),
    }
}

/// The reply to a request head, and whether it was a HEAD. Only the request line matters.
fn answer(head: &[u8], board: &Board) -> (Reply, bool) {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let words: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
    let [method, target, version] = words[..] else { return (Reply::Canned(BAD_REQUEST), false) };
    if !version.starts_with(b"HTTP/1.") {
        return (Reply::Canned(BAD_REQUEST), false);
    }
    let head_only = match method {
        b"GET" => false,
        b"HEAD" => true,
        _ => return (Reply::Canned(NOT_ALLOWED), false),
    };
    let path = target.split(|&b| b == b'?').next().unwrap_or_default();
    if path != b"/metrics" {
        return (Reply::Canned(NOT_FOUND), head_only);
    }
    (Reply::Page(board.current()), head_only)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::TcpStream;

    use super::*;

    fn start(limits: Limits, body: &str) -> (SocketAddr, Arc<Board>, Arc<AtomicU64>) {
        let endpoint = Endpoint::bind("127.0.0.1:0".parse().unwrap(), limits).unwrap();
        let addr = endpoint.addr().unwrap();
        let board = Arc::new(Board::default());
        board.pin(Page::new(body, false));
        let finals = Arc::new(AtomicU64::new(0));
        let counted = Arc::clone(&finals);
        endpoint.spawn(Arc::clone(&board), move || _ = counted.fetch_add(1, Ordering::SeqCst)).unwrap();
        (addr, board, finals)
    }

    /// Sends `request` and reads the reply to the end.
    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request).unwrap();
        let mut reply = Vec::new();
        s.read_to_end(&mut reply).unwrap();
        String::from_utf8(reply).unwrap()
    }

    fn wait_for(what: &str, mut check: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while !check() {
            assert!(Instant::now() < deadline, "never happened: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn canned_replies_say_their_length() {
        for text in [NOT_FOUND, NOT_ALLOWED, BAD_REQUEST, TOO_LARGE] {
            let (head, body) = text.split_once("\r\n\r\n").unwrap();
            assert!(head.contains(&format!("Content-Length: {}\r\n", body.len())), "{text}");
        }
    }

    #[test]
    fn only_get_and_head_of_metrics_are_served() {
        let (addr, board, finals) = start(Limits::default(), "a 1\n# EOF\n");
        let page = exchange(addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(page.starts_with("HTTP/1.1 200 OK\r\n") && page.ends_with("\r\n\r\na 1\n# EOF\n"), "{page}");
        assert!(page.contains("Content-Length: 10\r\n") && page.contains("application/openmetrics-text"));
        // A query string is the same page; a bare LF ends the head too (netcat).
        assert_eq!(exchange(addr, b"GET /metrics?x=1 HTTP/1.0\n\n"), page);
        let head = exchange(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n");
        assert_eq!(head, page.split_once("\r\n\r\n").unwrap().0.to_string() + "\r\n\r\n");
        for (request, status) in [
            (&b"GET / HTTP/1.1\r\n\r\n"[..], "404"),
            (b"GET /metrics/../etc HTTP/1.1\r\n\r\n", "404"),
            (b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", "405"),
            (b"DELETE /metrics HTTP/1.1\r\n\r\n", "405"),
            (b"GET /metrics\r\n\r\n", "400"),
            (b"\x16\x03\x01 hello\r\n\r\n", "400"),
        ] {
            let reply = exchange(addr, request);
            assert!(reply.starts_with(&format!("HTTP/1.1 {status} ")), "{reply}");
            assert!(reply.len() < 200, "{reply}");
        }
        // A head past the limit, without its end: 431, and nothing more is read.
        let long = vec![b'a'; Limits::default().head_bytes + 1];
        assert!(exchange(addr, &long).starts_with("HTTP/1.1 431 "));
        assert_eq!(finals.load(Ordering::SeqCst), 0);
        board.pin(Page::new("# EOF\n", true));
        // A HEAD of the final page reads no values: it does not end a linger (the count goes up
        // before the connection closes, so this is no race).
        assert!(exchange(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200 "));
        assert_eq!(finals.load(Ordering::SeqCst), 0);
        assert!(exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n").ends_with("# EOF\n"));
        wait_for("the final scrape counted", || finals.load(Ordering::SeqCst) == 1);
    }

    #[test]
    fn silent_scrapers_beyond_the_slots_make_room_for_a_new_one() {
        let limits = Limits { connections: 4, ..Limits::default() };
        let (addr, board, _) = start(limits, "# EOF\n");
        let silent: Vec<TcpStream> = (0..10).map(|_| TcpStream::connect(addr).unwrap()).collect();
        // Accepted after the ten: it takes the oldest's slot and is answered.
        assert!(exchange(addr, b"GET /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200 "));
        assert!(board.dropped.load(Ordering::Relaxed) >= 7);
        assert!(board.open.load(Ordering::Relaxed) <= 4);
        // The dropped ones were closed: the oldest reads its end.
        let mut oldest = &silent[0];
        assert_eq!(oldest.read(&mut [0; 8]).unwrap(), 0);
    }

    #[test]
    fn a_scraper_that_never_reads_is_dropped_at_its_deadline() {
        let limits = Limits { exchange: Duration::from_millis(300), ..Limits::default() };
        // Far more than the kernel's buffers on both sides hold.
        let body = "x".repeat(64 << 20);
        let (addr, board, _) = start(limits, &body);
        let mut stuck = TcpStream::connect(addr).unwrap();
        stuck.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        // Meanwhile others are served.
        assert!(exchange(addr, b"HEAD /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 200 "));
        wait_for("the stuck scraper dropped", || board.dropped.load(Ordering::Relaxed) >= 1);
        assert_eq!(board.open.load(Ordering::Relaxed), 0);
        let mut got = Vec::new();
        let _ = stuck.read_to_end(&mut got);
        assert!(got.len() < body.len(), "the whole page went out: {}", got.len());
    }

    #[test]
    fn the_address_given_is_the_only_one_bound() {
        let endpoint = Endpoint::bind("127.0.0.1:0".parse().unwrap(), Limits::default()).unwrap();
        let port = endpoint.addr().unwrap().port();
        // 127.0.0.2 is loopback too on Linux, but not the address given.
        let other: SocketAddr = format!("127.0.0.2:{port}").parse().unwrap();
        assert!(TcpStream::connect_timeout(&other, Duration::from_secs(5)).is_err());
        assert!(TcpStream::connect(("127.0.0.1", port)).is_ok());
    }
}
