//! When a client's requests left it, from the loopback device: a packet socket sees each TCP
//! segment as the sender hands it to the device (the kernel stamps it there, in the sender's
//! own system call), so the times are the client's sends, not when a server woke to read them.
//! A server's MONITOR stamps carry its own wake-up, which on a VM grows with how long it slept:
//! long gaps come out longer, short ones shorter, whatever the client did.
//!
//! Needs CAP_NET_RAW; [`Capture::start`] says `None` without it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// How long the reader lets segments queue before reading them.
const BATCH: std::time::Duration = std::time::Duration::from_millis(10);

pub struct Capture {
    stop: Arc<AtomicBool>,
    /// The send times, and how many packets the socket dropped.
    reader: JoinHandle<(Vec<f64>, u32)>,
}

impl Capture {
    /// Starts recording the segments with a payload sent to TCP port `port` on loopback.
    pub fn start(port: u16) -> Option<Capture> {
        let fd = open()?;
        let stop = Arc::new(AtomicBool::new(false));
        let reader = std::thread::spawn({
            let stop = stop.clone();
            move || read(fd, port, &stop)
        });
        Some(Capture { stop, reader })
    }

    /// The send times recorded (seconds, in order), once every segment queued is read.
    pub fn finish(self) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        let (sends, dropped) = self.reader.join().unwrap();
        assert_eq!(dropped, 0, "the packet socket dropped {dropped} packets: the capture is not whole");
        sends
    }
}

fn open() -> Option<libc::c_int> {
    let all = (libc::ETH_P_ALL as u16).to_be() as libc::c_int;
    // SAFETY: plain socket calls on a descriptor this function owns; options point at locals.
    unsafe {
        let fd = libc::socket(libc::AF_PACKET, libc::SOCK_DGRAM, all);
        if fd < 0 {
            return None;
        }
        let on: libc::c_int = 1;
        let size: libc::c_int = 16 << 20;
        let int = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, (&raw const on).cast(), int);
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, (&raw const size).cast(), int);
        let mut at: libc::sockaddr_ll = std::mem::zeroed();
        at.sll_family = libc::AF_PACKET as u16;
        at.sll_protocol = all as u16;
        at.sll_ifindex = libc::if_nametoindex(c"lo".as_ptr()) as i32;
        let len = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
        if libc::bind(fd, (&raw const at).cast(), len) != 0 {
            libc::close(fd);
            return None;
        }
        Some(fd)
    }
}

/// Reads segments until the stop flag is set and nothing is left queued; closes `fd`.
fn read(fd: libc::c_int, port: u16, stop: &AtomicBool) -> (Vec<f64>, u32) {
    let mut sends = Vec::new();
    // Loopback's largest packet: a write of many commands is one segment, read whole.
    let mut packet = vec![0u8; 1 << 16];
    let mut control = [0u64; 16];
    loop {
        // Checked before the read: once set, every segment the client sent is already queued.
        let stopping = stop.load(Ordering::Relaxed);
        // SAFETY: the iovec, address and control buffer are locals that outlive the call.
        let (n, from, stamp) = unsafe {
            let mut iov = libc::iovec { iov_base: packet.as_mut_ptr().cast(), iov_len: packet.len() };
            let mut from: libc::sockaddr_ll = std::mem::zeroed();
            let mut msg: libc::msghdr = std::mem::zeroed();
            msg.msg_name = (&raw mut from).cast();
            msg.msg_namelen = std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            msg.msg_iov = &raw mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = control.as_mut_ptr().cast();
            msg.msg_controllen = std::mem::size_of_val(&control);
            let n = libc::recvmsg(fd, &raw mut msg, libc::MSG_DONTWAIT);
            let mut stamp = None;
            let mut c = libc::CMSG_FIRSTHDR(&raw const msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<libc::timespec>());
                    stamp = Some(ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9);
                }
                c = libc::CMSG_NXTHDR(&raw const msg, c);
            }
            (n, from, stamp)
        };
        if n < 0 {
            if stopping {
                break;
            }
            // Read in batches (the socket holds 16 MB): a wake-up per segment would take a
            // core's share from the client and server being measured.
            std::thread::sleep(BATCH);
            continue;
        }
        // Each segment shows twice on loopback, leaving and arriving: the leaving copy counts.
        if from.sll_pkttype != libc::PACKET_OUTGOING {
            continue;
        }
        if let (Some(stamp), Some((dst, payload))) = (stamp, tcp(&packet[..n as usize]))
            && dst == port
        {
            // Commands sent together (in one write) arrive together.
            sends.extend(std::iter::repeat_n(stamp, commands(payload)));
        }
    }
    // The kernel's count of packets it had no room for (PACKET_STATISTICS: received, dropped).
    let mut counts = [0u32; 2];
    let mut len = std::mem::size_of_val(&counts) as libc::socklen_t;
    // SAFETY: the descriptor was opened by `open` and is used by no one else; the option is
    // written into `counts`, whose size `len` gives.
    unsafe {
        libc::getsockopt(fd, libc::SOL_PACKET, PACKET_STATISTICS, counts.as_mut_ptr().cast(), &raw mut len);
        libc::close(fd);
    }
    (sends, counts[1])
}

/// `getsockopt(SOL_PACKET, PACKET_STATISTICS)`: `struct tpacket_stats`, two counters.
const PACKET_STATISTICS: libc::c_int = 6;

/// A TCP segment's destination port and payload, from its IPv4 or IPv6 packet (as much of
/// the payload as was read).
fn tcp(ip: &[u8]) -> Option<(u16, &[u8])> {
    let (header, proto, total) = match ip.first()? >> 4 {
        4 => (usize::from(ip[0] & 0x0f) * 4, *ip.get(9)?, usize::from(u16::from_be_bytes([ip[2], ip[3]]))),
        6 => (40, *ip.get(6)?, 40 + usize::from(u16::from_be_bytes([ip[4], ip[5]]))),
        _ => return None,
    };
    if proto != libc::IPPROTO_TCP as u8 {
        return None;
    }
    let segment = ip.get(header..)?;
    let dst = u16::from_be_bytes([*segment.get(2)?, *segment.get(3)?]);
    let offset = usize::from(segment.get(12)? >> 4) * 4;
    let end = total.min(ip.len());
    Some((dst, ip.get(header + offset..end).unwrap_or_default()))
}

/// How many GET and SET commands (RESP arrays of bulk strings) `payload` holds: the workload's,
/// not the connection's setup or the run's closing queries. A payload that is not whole
/// commands counts as one.
fn commands(payload: &[u8]) -> usize {
    fn line(p: &[u8], at: usize, kind: u8) -> Option<(usize, usize)> {
        let end = at + p.get(at..)?.windows(2).position(|w| w == b"\r\n")?;
        let n = std::str::from_utf8(p.get(at + 1..end)?).ok()?.parse().ok()?;
        (p[at] == kind).then_some((n, end + 2))
    }
    let count = || {
        let (mut at, mut count) = (0, 0);
        while at < payload.len() {
            let (args, next) = line(payload, at, b'*')?;
            at = next;
            for arg in 0..args {
                let (len, next) = line(payload, at, b'$')?;
                let name = payload.get(next..next + len)?;
                if arg == 0 && (name.eq_ignore_ascii_case(b"GET") || name.eq_ignore_ascii_case(b"SET")) {
                    count += 1;
                }
                at = next + len + 2;
            }
        }
        (at == payload.len()).then_some(count)
    };
    if payload.is_empty() { 0 } else { count().unwrap_or(1) }
}
