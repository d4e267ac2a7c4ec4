//! The floor: the least a closed-loop client can do per request on each I/O path, so that
//! `make bench` can say how far respbench is from what the kernel's path costs any client.
//!
//! It does nothing a benchmark must do beyond keeping the connections busy: no latency
//! recording, no statistics, no key choice (each connection asks for the same `PIPELINE` keys again and again), no
//! reply parsing, nothing encoded after the start (every reply to `GET` of a prefilled key is `$<len>\r\n<value>\r\n`, so a
//! connection's batch is answered once that many bytes have arrived). Its cost per request is
//! the system calls' and the kernel's.
//!
//! - `epoll`: `epoll_wait`, then per ready connection one `recv`, and one `send` of the next
//!   batch once the last one is answered.
//! - `uring`: one ring (single issuer, deferred task work), one receive in flight per connection,
//!   sends that complete silently unless they fail, everything a loop turn needs submitted with
//!   one `io_uring_enter` that also waits.
//!
//! With `set` as the last word, each request is `SET key VALUE` (a value of VALUE_SIZE bytes,
//! answered `+OK`): on the epoll path only, a send the socket cannot take whole waits with
//! `poll` for room, as any client writing large values must. The connections take turns over
//! all KEYS keys, each request its key's header, encoded once, and the one value (written
//! with `writev`, not copied), so the server stores what respbench's SETs make it store: over
//! 10 of 100 keys instead, a 1 MB SET cost the client a fifth less.
//!
//! With `tls=CAFILE`, on the epoll path only, every connection speaks TLS through rustls with
//! ring, the library and provider respbench uses: the handshake is done before the clock's
//! work starts, then each batch is encrypted into records and written, and each ready
//! connection gets one `recv` of records that are decrypted and dropped. That is the TLS floor:
//! what any client of this library pays per request beyond the plain floor.
//!
//! With `rate=R`, on the epoll path only and at pipeline 1, the requests are paced: request
//! `k` is due at `k / R` seconds from the start and goes to the connection free the longest.
//! The wait is `epoll_pwait2` until the next send is due, on the grid of ticks a paced
//! respbench worker wakes on (8 sends' time, at most 250 µs, none where a tick would gather
//! fewer than 2 sends); at each wake-up every send due is written, then every ready
//! connection read. That is the open-loop floor: what pacing costs any client of this kernel
//! beyond the closed loop (its sends wake an idle server, its replies an idle client). It
//! counts its sends that left over 1 ms after their time: it sleeps until the next is due and
//! does nothing else, so those are the machine's late wake-ups.
//!
//! It prints its replies, then the time and CPU from the connections' opening to the last
//! reply (and, paced, its late sends).
//!
//! Usage: floor epoll|uring PORT CONNECTIONS REQUESTS PIPELINE VALUE_SIZE KEYS [get|set] [tls=CAFILE] [rate=R]

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;

struct Conn {
    stream: TcpStream,
    /// `pipeline` GETs of this connection's own keys, encoded once; a batch sends a prefix.
    out: Vec<u8>,
    /// Where each request of `out` ends.
    ends: Vec<usize>,
    /// `set`: the header of each SET this connection sends in turn (up to the value), and the
    /// next to send.
    sets: Vec<Vec<u8>>,
    next: usize,
    /// Requests in the batch in flight, and the bytes the server still owes for it.
    sent: usize,
    owed: usize,
    buf: Vec<u8>,
    tls: Option<rustls::ClientConnection>,
}

struct Load {
    pipeline: usize,
    reply: usize,
    /// Requests still to be sent.
    left: u64,
    /// Paced: sends that left over 1 ms after their time.
    late: u64,
}

impl Load {
    /// Starts the connection's next batch; false when nothing is left to send.
    fn next_batch(&mut self, c: &mut Conn) -> bool {
        let n = (self.pipeline as u64).min(self.left) as usize;
        self.left -= n as u64;
        c.sent = n;
        c.owed = n * self.reply;
        n > 0
    }
}

impl Conn {
    fn batch(&self) -> &[u8] {
        &self.out[..self.ends[self.sent - 1]]
    }
}

fn main() -> io::Result<()> {
    let a: Vec<String> = std::env::args().collect();
    if !(8..=11).contains(&a.len()) {
        eprintln!(
            "usage: floor epoll|uring PORT CONNECTIONS REQUESTS PIPELINE VALUE_SIZE KEYS [get|set] [tls=CAFILE] [rate=R]"
        );
        std::process::exit(2);
    }
    let num = |i: usize| a[i].parse::<u64>().unwrap_or_else(|_| panic!("'{}' is not a number", a[i]));
    let (port, conns, requests, pipeline, value, keys) = (num(2), num(3), num(4), num(5), num(6), num(7));
    let (mut set, mut tls, mut rate) = (false, None, None);
    for word in &a[8..] {
        match word.as_str() {
            "get" => set = false,
            "set" => set = true,
            w if w.starts_with("tls=") => tls = Some(tls_config(&w[4..])?),
            w if w.starts_with("rate=") => {
                rate = Some(w[5..].parse::<f64>().unwrap_or_else(|_| panic!("'{w}' is not rate=PER_SECOND")))
            }
            other => panic!("'{other}' is not get, set, tls=CAFILE or rate=R"),
        }
    }
    if (set || tls.is_some() || rate.is_some()) && a[1] != "epoll" {
        panic!("set, tls and rate are measured on the epoll path only");
    }
    if rate.is_some() && pipeline != 1 {
        panic!("rate paces pipeline 1 only");
    }
    let reply = if set { "+OK\r\n".len() } else { format!("${value}\r\n").len() + value as usize + 2 };
    // The value of every SET and its line end, sent from here by each.
    let mut payload = vec![b'x'; if set { value as usize } else { 0 }];
    payload.extend_from_slice(b"\r\n");
    // Room for a whole batch of replies, within 64 KiB and 4 MiB: fewer reads never cost more.
    let buf_size = (reply * pipeline as usize).clamp(64 * 1024, 4 << 20);
    let mut load = Load { pipeline: pipeline as usize, reply, left: requests, late: 0 };
    let mut cs = Vec::new();
    for i in 0..conns {
        let mut stream = TcpStream::connect(("127.0.0.1", port as u16))?;
        stream.set_nodelay(true)?;
        let session = match &tls {
            None => None,
            Some(config) => {
                let name = rustls::pki_types::ServerName::IpAddress(std::net::Ipv4Addr::LOCALHOST.into());
                let mut session =
                    rustls::ClientConnection::new(std::sync::Arc::clone(config), name).map_err(io::Error::other)?;
                while session.is_handshaking() {
                    session.complete_io(&mut stream)?;
                }
                Some(session)
            }
        };
        let (mut out, mut ends, mut sets) = (Vec::new(), Vec::new(), Vec::new());
        if set {
            // This connection's turn of the keys: every `conns`-th, so together they take all.
            for k in (i..keys.max(i + 1)).step_by(conns as usize) {
                let key = format!("key:{}", k * 7919 % keys);
                sets.push(format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n${value}\r\n", key.len()).into_bytes());
            }
        } else {
            for j in 0..pipeline {
                let key = format!("key:{}", (i * pipeline + j) * 7919 % keys);
                write!(out, "*2\r\n$3\r\nGET\r\n${}\r\n{}\r\n", key.len(), key)?;
                ends.push(out.len());
            }
        }
        cs.push(Conn { stream, out, ends, sets, next: 0, sent: 0, owed: 0, buf: vec![0; buf_size], tls: session });
    }
    // The connections are open: what follows is the requests' work alone.
    let (started, cpu_before) = (std::time::Instant::now(), cpu_secs());
    let done = match a[1].as_str() {
        "epoll" if rate.is_some() => paced(&mut cs, &mut load, &payload, rate.unwrap())?,
        "epoll" => epoll(&mut cs, &mut load, &payload)?,
        "uring" => uring(&mut cs, &mut load)?,
        other => panic!("'{other}' is not epoll or uring"),
    };
    let (wall, cpu) = (started.elapsed().as_secs_f64(), cpu_secs() - cpu_before);
    let late = if rate.is_some() { format!("; {} sends over 1 ms late", load.late) } else { String::new() };
    println!("{done} replies; after connecting {wall:.6} s, {cpu:.6} s of CPU{late}");
    Ok(())
}

/// The process's CPU time so far (user + system), in seconds.
fn cpu_secs() -> f64 {
    // SAFETY: an all-zero rusage is valid, and getrusage writes only into it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid rusage for the duration of the call.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// A client configuration trusting the PEM certificates of `ca`, on rustls's ring provider.
fn tls_config(ca: &str) -> io::Result<std::sync::Arc<rustls::ClientConfig>> {
    use rustls::pki_types::{CertificateDer, pem::PemObject};
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_file_iter(ca).map_err(io::Error::other)? {
        roots.add(cert.map_err(io::Error::other)?).map_err(io::Error::other)?;
    }
    let config = rustls::ClientConfig::builder_with_provider(rustls::crypto::ring::default_provider().into())
        .with_safe_default_protocol_versions()
        .map_err(io::Error::other)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(std::sync::Arc::new(config))
}

/// Sends the connection's batch: as it is, or encrypted into TLS records. A batch of SETs is
/// its requests' headers, each followed by `value` (the value and its line end); it is built
/// per batch, which beside a large value's copy costs nothing.
fn send_batch(c: &mut Conn, value: &[u8]) -> io::Result<()> {
    let Conn { stream, out, ends, sets, next, sent, tls, .. } = c;
    if sets.is_empty() {
        return send_pieces(stream, tls.as_mut(), &mut [io::IoSlice::new(&out[..ends[*sent - 1]])]);
    }
    let mut pieces = Vec::with_capacity(2 * *sent);
    for j in 0..*sent {
        pieces.push(io::IoSlice::new(&sets[(*next + j) % sets.len()]));
        pieces.push(io::IoSlice::new(value));
    }
    *next = (*next + *sent) % sets.len();
    send_pieces(stream, tls.as_mut(), &mut pieces)
}

/// Writes `pieces` to the socket, or encrypted into TLS records through `session`.
fn send_pieces(
    stream: &TcpStream,
    session: Option<&mut rustls::ClientConnection>,
    pieces: &mut [io::IoSlice<'_>],
) -> io::Result<()> {
    let Some(session) = session else {
        return send_all(stream, pieces);
    };
    for piece in pieces.iter() {
        session.writer().write_all(piece)?;
    }
    while session.wants_write() {
        match session.write_tls(&mut &*stream) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_writable(stream)?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// One read of what the socket holds: its bytes, or the plaintext its TLS records carried
/// (0 when they completed no record). `WouldBlock` when there was nothing to read.
fn receive(c: &mut Conn) -> io::Result<usize> {
    let Some(session) = c.tls.as_mut() else {
        return match c.stream.read(&mut c.buf) {
            Ok(0) => Err(io::ErrorKind::UnexpectedEof.into()),
            other => other,
        };
    };
    if session.read_tls(&mut &c.stream)? == 0 {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    session.process_new_packets().map_err(io::Error::other)?;
    let mut total = 0;
    loop {
        match session.reader().read(&mut c.buf) {
            Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
            Ok(n) => total += n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(total),
            Err(e) => return Err(e),
        }
    }
}

fn wait_writable(stream: &TcpStream) -> io::Result<()> {
    let mut pfd = libc::pollfd { fd: stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
    // SAFETY: `pfd` is one valid pollfd for the duration of the call.
    if unsafe { libc::poll(&mut pfd, 1, -1) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Writes all of `pieces` to a non-blocking socket, waiting in `poll` while its buffer is full:
/// one piece with `write` (as a client sends a buffer it encoded), more with `writev`.
fn send_all(mut stream: &TcpStream, mut pieces: &mut [io::IoSlice<'_>]) -> io::Result<()> {
    while !pieces.is_empty() {
        let written = match pieces {
            [one] => stream.write(one),
            _ => stream.write_vectored(pieces),
        };
        match written {
            Ok(n) => io::IoSlice::advance_slices(&mut pieces, n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => wait_writable(stream)?,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// An epoll instance with every connection made non-blocking and registered for reading under
/// its index.
fn registered(cs: &mut [Conn]) -> io::Result<libc::c_int> {
    // SAFETY: epoll_create1 takes no pointers.
    let ep = unsafe { libc::epoll_create1(0) };
    if ep < 0 {
        return Err(io::Error::last_os_error());
    }
    for (i, c) in cs.iter_mut().enumerate() {
        c.stream.set_nonblocking(true)?;
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: i as u64 };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call.
        if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, c.stream.as_raw_fd(), &mut ev) } < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(ep)
}

fn epoll(cs: &mut [Conn], load: &mut Load, value: &[u8]) -> io::Result<u64> {
    let ep = registered(cs)?;
    let mut busy = 0;
    for c in cs.iter_mut() {
        if load.next_batch(c) {
            send_batch(c, value)?;
            busy += 1;
        }
    }
    let mut replies = 0u64;
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; cs.len()];
    while busy > 0 {
        // SAFETY: `events` has room for `events.len()` entries.
        let n = unsafe { libc::epoll_wait(ep, events.as_mut_ptr(), events.len() as i32, -1) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        for ev in &events[..n as usize] {
            let c = &mut cs[ev.u64 as usize];
            let got = match receive(c) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            };
            c.owed -= got;
            if c.owed == 0 {
                replies += c.sent as u64;
                if load.next_batch(c) {
                    send_batch(c, value)?;
                } else {
                    busy -= 1;
                }
            }
        }
    }
    Ok(replies)
}

/// The epoll floor paced at `rate` requests a second (see the module's note).
fn paced(cs: &mut [Conn], load: &mut Load, value: &[u8], rate: f64) -> io::Result<u64> {
    use std::time::{Duration, Instant};
    // SAFETY: PR_SET_TIMERSLACK takes an integer: epoll_pwait2's timeout then fires on time.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let ep = registered(cs)?;
    let mut free: std::collections::VecDeque<usize> = (0..cs.len()).collect();
    let gap_ns = 1e9 / rate;
    let tick_ns = (8.0 * gap_ns).min(250_000.0);
    let tick_ns = if tick_ns / gap_ns >= 2.0 { tick_ns as u64 } else { 0 };
    let (start, total) = (Instant::now(), load.left);
    let due = |k: u64| start + Duration::from_nanos((k as f64 * gap_ns) as u64);
    let (mut sent, mut replies) = (0u64, 0u64);
    let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; cs.len()];
    while replies < total {
        let now = Instant::now();
        while sent < total && due(sent) <= now {
            let Some(i) = free.pop_front() else { break };
            let c = &mut cs[i];
            load.next_batch(c);
            send_batch(c, value)?;
            // Late: over 1 ms after its time, by the clock read before this turn's sends.
            load.late += u64::from(now - due(sent) > Duration::from_millis(1));
            sent += 1;
        }
        let timeout = if sent < total && !free.is_empty() {
            let wake = match tick_ns {
                0 => due(sent),
                t => start + Duration::from_nanos(((due(sent) - start).as_nanos() as u64).div_ceil(t) * t),
            };
            wake.saturating_duration_since(now)
        } else {
            Duration::from_secs(3600)
        };
        let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as _ };
        // SAFETY: the kernel writes at most `events.len()` events; `ts` outlives the call; no
        // signal mask is passed.
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                ep,
                events.as_mut_ptr(),
                events.len() as libc::c_int,
                &ts as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                8usize,
            )
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        for ev in &events[..n as usize] {
            let i = ev.u64 as usize;
            let c = &mut cs[i];
            let got = match receive(c) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(e),
            };
            c.owed -= got;
            if c.owed == 0 && c.sent > 0 {
                replies += 1;
                c.sent = 0;
                free.push_back(i);
            }
        }
    }
    Ok(replies)
}

fn uring(cs: &mut [Conn], load: &mut Load) -> io::Result<u64> {
    use io_uring::{IoUring, opcode, squeue, types};
    let entries = (2 * cs.len()).next_power_of_two() as u32;
    let mut ring: IoUring = IoUring::builder().setup_single_issuer().setup_defer_taskrun().build(entries)?;
    const SEND: u64 = 1 << 63;
    let mut busy = 0;
    let mut replies = 0u64;
    let push = |ring: &mut IoUring, sqe: squeue::Entry| {
        // SAFETY: every buffer a pushed entry points at belongs to a `Conn` that outlives the
        // ring's use of it (the loop ends only when no receive or send is in flight).
        unsafe { ring.submission().push(&sqe) }.map_err(|_| io::Error::other("submission queue full"))
    };
    for (i, c) in cs.iter_mut().enumerate() {
        if load.next_batch(c) {
            let fd = types::Fd(c.stream.as_raw_fd());
            let send = opcode::Send::new(fd, c.batch().as_ptr(), c.batch().len() as u32).build();
            push(&mut ring, send.user_data(SEND | i as u64).flags(squeue::Flags::SKIP_SUCCESS))?;
            let recv = opcode::Recv::new(fd, c.buf.as_mut_ptr(), c.buf.len() as u32).build();
            push(&mut ring, recv.user_data(i as u64))?;
            busy += 1;
        }
    }
    let mut done = Vec::with_capacity(entries as usize);
    while busy > 0 {
        ring.submit_and_wait(1)?;
        done.clear();
        done.extend(ring.completion().map(|e| (e.user_data(), e.result())));
        for &(data, res) in &done {
            if res < 0 {
                return Err(io::Error::from_raw_os_error(-res));
            }
            if data & SEND != 0 {
                continue;
            }
            let i = data as usize;
            let c = &mut cs[i];
            if res == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            c.owed -= res as usize;
            let fd = types::Fd(c.stream.as_raw_fd());
            if c.owed == 0 {
                replies += c.sent as u64;
                if !load.next_batch(c) {
                    busy -= 1;
                    continue;
                }
                let send = opcode::Send::new(fd, c.batch().as_ptr(), c.batch().len() as u32).build();
                push(&mut ring, send.user_data(SEND | i as u64).flags(squeue::Flags::SKIP_SUCCESS))?;
            }
            let recv = opcode::Recv::new(fd, c.buf.as_mut_ptr(), c.buf.len() as u32).build();
            push(&mut ring, recv.user_data(i as u64))?;
        }
    }
    Ok(replies)
}
