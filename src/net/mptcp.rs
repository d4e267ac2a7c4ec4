//! Multipath TCP sockets (`--mptcp`): the same stream API as TCP, opened with
//! `IPPROTO_MPTCP` so that the kernel may use several paths; a server that does not speak
//! MPTCP gets plain TCP (the kernel falls back), so nothing is needed on its side.

use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// Linux's protocol number for MPTCP (not in every libc yet).
pub const IPPROTO_MPTCP: libc::c_int = 262;

/// Connects to `addr` over MPTCP within `timeout`, as `TcpStream::connect_timeout` does over TCP.
pub fn connect_timeout(addr: &SocketAddr, timeout: Duration) -> io::Result<TcpStream> {
    let domain = if addr.is_ipv4() { libc::AF_INET } else { libc::AF_INET6 };
    // SAFETY: socket(2) with constant arguments; the descriptor is owned at once.
    let fd = unsafe { libc::socket(domain, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, IPPROTO_MPTCP) };
    if fd < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("cannot open an MPTCP socket ({e}); is net.mptcp.enabled set to 1?"),
        ));
    }
    // SAFETY: fd is a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let stream = TcpStream::from(fd);
    // Non-blocking connect, then wait for it the way std's connect_timeout does.
    stream.set_nonblocking(true)?;
    let (storage, len) = sockaddr(addr);
    // SAFETY: storage holds a valid sockaddr of `len` bytes for this address family.
    let rc = unsafe { libc::connect(stream.as_raw_fd(), (&raw const storage).cast(), len) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
        let mut pfd = libc::pollfd { fd: stream.as_raw_fd(), events: libc::POLLOUT, revents: 0 };
        let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
        // SAFETY: one valid pollfd.
        match unsafe { libc::poll(&mut pfd, 1, ms) } {
            0 => return Err(io::Error::new(io::ErrorKind::TimedOut, "connection timed out")),
            n if n < 0 => return Err(io::Error::last_os_error()),
            _ => {}
        }
        if let Some(e) = stream.take_error()? {
            return Err(e);
        }
    }
    stream.set_nonblocking(false)?;
    Ok(stream)
}

/// The C socket address of `addr`.
fn sockaddr(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: an all-zero sockaddr_storage is valid.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes(a.ip().octets()) },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in.
            unsafe { std::ptr::write((&raw mut storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr { s6_addr: a.ip().octets() },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for sockaddr_in6.
            unsafe { std::ptr::write((&raw mut storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// The protocol a socket was opened with (`SO_PROTOCOL`).
pub fn protocol(stream: &TcpStream) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value and len describe a c_int buffer.
    let rc = unsafe {
        libc::getsockopt(stream.as_raw_fd(), libc::SOL_SOCKET, libc::SO_PROTOCOL, (&raw mut value).cast(), &mut len)
    };
    if rc < 0 { Err(io::Error::last_os_error()) } else { Ok(value) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpListener;

    #[test]
    fn an_mptcp_socket_talks_to_a_tcp_listener() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut client = match connect_timeout(&addr, Duration::from_secs(2)) {
            Ok(c) => c,
            // A kernel without MPTCP: nothing to test here.
            Err(e) if e.to_string().contains("net.mptcp.enabled") => return,
            Err(e) => panic!("{e}"),
        };
        assert_eq!(protocol(&client).unwrap(), IPPROTO_MPTCP);
        let (mut server, _) = listener.accept().unwrap();
        client.write_all(b"ping").unwrap();
        let mut buf = [0u8; 4];
        server.read_exact(&mut buf).unwrap();
        assert_eq!(&buf, b"ping");
        let refused = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
        assert!(connect_timeout(&refused, Duration::from_secs(2)).is_err());
    }
}
