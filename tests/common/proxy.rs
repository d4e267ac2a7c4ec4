//! A fault-injecting TCP proxy between a run and a real server, for what lies between them and
//! neither can be made to do: added latency and jitter, a bandwidth cap, a reset in the middle
//! of a reply, a connection that stops forwarding without closing, and accepts that come late
//! or never. It counts what passes through it, so a test can wait for an event (bytes
//! forwarded, a connection reset) instead of the clock.
//!
//! Latency and the bandwidth cap apply to every connection. A reset and a half-open apply only
//! to the run's own connections (those whose first request is not one of the checks respbench
//! makes on its control connection), up to a number of them: the run's reconnections pass
//! untouched once that many have failed.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// What the proxy does to the traffic it forwards.
#[derive(Clone, Default)]
pub struct Faults {
    /// Added to every chunk, each way, plus up to `jitter` more (uniform, never reordering).
    pub latency: Duration,
    pub jitter: Duration,
    /// Bytes per second, each way and per connection.
    pub bytes_per_sec: Option<u64>,
    /// After this many reply bytes on a run connection, the client side is reset (RST, as
    /// `close` with `SO_LINGER` 0 sends it) and the server side closed: `Some((bytes, how many
    /// connections))`.
    pub reset_after: Option<(usize, usize)>,
    /// After this many reply bytes on a run connection, nothing more is forwarded either way,
    /// and nothing is closed: `Some((bytes, how many connections))`.
    pub half_open_after: Option<(usize, usize)>,
    /// Waited before each accept.
    pub accept_delay: Duration,
    /// Never accept: connections wait in the listen backlog (their connect succeeded).
    pub never_accept: bool,
}

/// What has passed through the proxy so far.
#[derive(Clone, Copy, Default, Debug)]
pub struct Counts {
    pub accepted: usize,
    pub bytes_to_server: u64,
    pub bytes_to_client: u64,
    pub resets: usize,
    pub half_opened: usize,
}

struct Shared {
    faults: Faults,
    counts: Mutex<Counts>,
    changed: Condvar,
}

impl Shared {
    fn update(&self, f: impl FnOnce(&mut Counts)) {
        f(&mut self.counts.lock().unwrap());
        self.changed.notify_all();
    }

    /// Takes one of the fault's connections, if any are left.
    fn claim(&self, budget: impl Fn(&Faults) -> Option<usize>, done: impl Fn(&mut Counts) -> &mut usize) -> bool {
        let Some(max) = budget(&self.faults) else { return false };
        let mut counts = self.counts.lock().unwrap();
        let taken = done(&mut counts);
        if *taken >= max {
            return false;
        }
        *taken += 1;
        drop(counts);
        self.changed.notify_all();
        true
    }
}

pub struct Proxy {
    pub port: u16,
    shared: Arc<Shared>,
}

impl Proxy {
    /// Listens on a free loopback port and forwards each connection to `server_port`.
    pub fn start(server_port: u16, faults: Faults) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let shared = Arc::new(Shared { faults, counts: Mutex::default(), changed: Condvar::new() });
        let accepting = shared.clone();
        std::thread::spawn(move || accept_loop(listener, server_port, accepting));
        Proxy { port, shared }
    }

    pub fn port_arg(&self) -> String {
        self.port.to_string()
    }

    pub fn counts(&self) -> Counts {
        *self.shared.counts.lock().unwrap()
    }

    /// Waits (a minute at most) until what has passed satisfies `event`.
    pub fn wait_for(&self, what: &str, event: impl Fn(&Counts) -> bool) -> Counts {
        let counts = self.shared.counts.lock().unwrap();
        let (counts, _) =
            self.shared.changed.wait_timeout_while(counts, Duration::from_secs(60), |c| !event(c)).unwrap();
        assert!(event(&counts), "proxy: {what} did not happen in a minute: {:?}", *counts);
        *counts
    }
}

fn accept_loop(listener: TcpListener, server_port: u16, shared: Arc<Shared>) {
    if shared.faults.never_accept {
        // Hold the listener (and its backlog) for the life of the test binary.
        std::mem::forget(listener);
        return;
    }
    loop {
        std::thread::sleep(shared.faults.accept_delay);
        let Ok((client, _)) = listener.accept() else { return };
        let Ok(server) = TcpStream::connect(("127.0.0.1", server_port)) else { continue };
        let _ = (client.set_nodelay(true), server.set_nodelay(true));
        shared.update(|c| c.accepted += 1);
        let (client, server) = (Arc::new(client), Arc::new(server));
        let link = Arc::new(Link::default());
        let up = (client.clone(), server.clone(), shared.clone(), link.clone());
        std::thread::spawn(move || forward_requests(up.0, up.1, &up.2, &up.3));
        let down = shared.clone();
        std::thread::spawn(move || forward_replies(server, client, &down, &link));
    }
}

/// What the two directions of one connection tell each other.
#[derive(Default)]
struct Link {
    /// The first request was a run's command, not one of respbench's checks (known once read).
    run_connection: Mutex<Option<bool>>,
    known: Condvar,
    /// Half-open: nothing more is forwarded.
    frozen: std::sync::atomic::AtomicBool,
}

impl Link {
    fn is_run_connection(&self) -> bool {
        let known = self.run_connection.lock().unwrap();
        self.known.wait_while(known, |k| k.is_none()).unwrap().unwrap_or(false)
    }

    fn learn(&self, first: &[u8]) {
        *self.run_connection.lock().unwrap() = Some(!is_check(first));
        self.known.notify_all();
    }

    fn frozen(&self) -> bool {
        self.frozen.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// Whether a connection's first bytes are one of the checks respbench makes before and after a
/// run on a connection of its own (their faults are not what these tests are about).
fn is_check(first: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&first[..first.len().min(64)]).to_ascii_uppercase();
    ["DBSIZE", "INFO", "CONFIG", "CLIENT", "EXISTS", "CLUSTER"].iter().any(|c| text.contains(&format!("\r\n{c}\r\n")))
}

/// Client to server: latency and bandwidth, nothing more once the link is frozen.
fn forward_requests(client: Arc<TcpStream>, server: Arc<TcpStream>, shared: &Shared, link: &Link) {
    let mut pace = Pace::new(&shared.faults);
    let mut buf = vec![0; 64 * 1024];
    let mut first = true;
    loop {
        let n = match (&*client).read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if first {
            link.learn(&buf[..n]);
            first = false;
        }
        if link.frozen() {
            continue; // swallowed: the half-open link forwards nothing
        }
        if pace.send(&server, &buf[..n]).is_err() {
            break;
        }
        shared.update(|c| c.bytes_to_server += n as u64);
    }
    if first {
        link.learn(b"");
    }
    let _ = server.shutdown(Shutdown::Both);
}

/// Server to client: latency and bandwidth, then a reset or a freeze at its byte count.
fn forward_replies(server: Arc<TcpStream>, client: Arc<TcpStream>, shared: &Shared, link: &Link) {
    let faults = &shared.faults;
    let mut pace = Pace::new(faults);
    let mut buf = vec![0; 64 * 1024];
    let mut passed = 0usize;
    let run_connection = link.is_run_connection();
    let mut reset_at = faults.reset_after.map(|(bytes, _)| bytes).filter(|_| run_connection);
    let mut freeze_at = faults.half_open_after.map(|(bytes, _)| bytes).filter(|_| run_connection);
    loop {
        let n = match (&*server).read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let cut = [reset_at, freeze_at].into_iter().flatten().min().map(|at| at.saturating_sub(passed));
        let forward = cut.map_or(n, |c| c.min(n));
        if pace.send(&client, &buf[..forward]).is_err() {
            break;
        }
        passed += forward;
        shared.update(|c| c.bytes_to_client += forward as u64);
        if reset_at.is_some_and(|at| passed >= at) {
            reset_at = None;
            if shared.claim(|f| f.reset_after.map(|r| r.1), |c| &mut c.resets) {
                // No FIN first: the last handle's close sends the RST.
                reset(&client);
                return;
            }
        }
        if freeze_at.is_some_and(|at| passed >= at) {
            freeze_at = None;
            if shared.claim(|f| f.half_open_after.map(|h| h.1), |c| &mut c.half_opened) {
                link.frozen.store(true, std::sync::atomic::Ordering::SeqCst);
            }
        }
        if link.frozen() {
            // Hold the connection open, forwarding nothing, until the client gives up on it.
            while (&*server).read(&mut buf).is_ok_and(|n| n > 0) {}
            return;
        }
        if forward < n && pace.send(&client, &buf[forward..n]).is_err() {
            break;
        }
        passed += n - forward;
        shared.update(|c| c.bytes_to_client += (n - forward) as u64);
    }
    let _ = client.shutdown(Shutdown::Write);
}

/// Sends RST instead of FIN when the last handle closes, and wakes the other direction's read.
fn reset(client: &TcpStream) {
    let linger = libc::linger { l_onoff: 1, l_linger: 0 };
    // SAFETY: setsockopt reads a `linger` of the size given from a live socket.
    unsafe {
        libc::setsockopt(
            client.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&linger as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        );
    }
    let _ = client.shutdown(Shutdown::Read);
}

/// Latency, jitter and the bandwidth cap of one direction.
struct Pace {
    latency: Duration,
    jitter: Duration,
    bytes_per_sec: Option<u64>,
    /// When the previous chunk went out (a later one never overtakes it).
    last_due: Instant,
    /// When the bandwidth cap lets the next byte out.
    next_free: Instant,
    random: u64,
}

impl Pace {
    fn new(faults: &Faults) -> Pace {
        let now = Instant::now();
        Pace {
            latency: faults.latency,
            jitter: faults.jitter,
            bytes_per_sec: faults.bytes_per_sec,
            last_due: now,
            next_free: now,
            random: 0x9E37_79B9_7F4A_7C15,
        }
    }

    fn send(&mut self, to: &TcpStream, bytes: &[u8]) -> std::io::Result<()> {
        if !self.latency.is_zero() || !self.jitter.is_zero() {
            let due = (Instant::now() + self.latency + self.jitter.mul_f64(self.next_fraction())).max(self.last_due);
            sleep_until(due);
            self.last_due = due;
        }
        let Some(rate) = self.bytes_per_sec else { return (&*to).write_all(bytes) };
        // Slices of a hundredth of a second's allowance, each sent when the cap allows it (no
        // credit saved up while idle).
        for slice in bytes.chunks((rate / 100).max(1) as usize) {
            self.next_free = self.next_free.max(Instant::now());
            sleep_until(self.next_free);
            (&*to).write_all(slice)?;
            self.next_free += Duration::from_secs_f64(slice.len() as f64 / rate as f64);
        }
        Ok(())
    }

    /// A fraction in [0, 1) from xorshift: jitter needs spread, not quality.
    fn next_fraction(&mut self) -> f64 {
        self.random ^= self.random << 13;
        self.random ^= self.random >> 7;
        self.random ^= self.random << 17;
        (self.random >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn sleep_until(due: Instant) {
    let now = Instant::now();
    if due > now {
        std::thread::sleep(due - now);
    }
}
