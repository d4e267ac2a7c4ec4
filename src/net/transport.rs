//! The non-blocking socket a worker's event loop reads and writes, whichever I/O path and
//! encryption it is under.

use std::io::{self, Read, Write};
use std::ops::Range;

use super::{driver, tls};
use crate::resp::{SLICES_MAX, SendBuf};

/// A non-blocking socket registered with a worker's event loop.
#[derive(Debug)]
pub enum Transport {
    Tcp(mio::net::TcpStream),
    Unix(mio::net::UnixStream),
    Tls(Box<tls::TlsStream>),
    /// A TCP or unix socket under io_uring (`driver::Driver::register` makes it).
    Ring(driver::RingSocket),
}

impl Transport {
    /// Whether a read that returns less than asked means the socket is drained. Not so for
    /// TLS, whose reads hand out decrypted records one at a time (read until `WouldBlock`,
    /// which costs no system call), nor under io_uring, whose reads copy out what receives
    /// brought (a multishot receive's buffers one at a time, and the end of the stream as a
    /// completion of its own, with no event after it): there the ring says (`drained_after`).
    #[inline]
    pub fn short_read_drains(&self) -> bool {
        matches!(self, Transport::Tcp(_) | Transport::Unix(_))
    }

    /// Whether a read of `n` bytes into `space` left the socket drained, so the worker need
    /// not read again until the next event: a short read on a plain socket; under io_uring,
    /// when the ring has nothing more to hand out (an end or failure still waiting is not
    /// drained: the next read returns it). This spares the read that would only block.
    #[inline]
    pub fn drained_after(&self, n: usize, space: usize) -> bool {
        match self {
            Transport::Ring(s) => s.would_block(),
            _ => n < space && self.short_read_drains(),
        }
    }
}

impl Transport {
    /// Whether the socket can drop received bytes without copying them
    /// ([`discard`](Self::discard)): a plain socket under io_uring (its receives' buffers are
    /// the client's own) and a TCP socket under epoll (`driver::trunc`).
    #[inline]
    pub fn drops(&self) -> bool {
        matches!(self, Transport::Ring(_) | Transport::Tcp(_))
    }

    /// Drops up to `n` received bytes without copying them, where the socket [`drops`]
    /// (elsewhere `Unsupported`); returns as `read` does: how many, `Ok(0)` at the end,
    /// `WouldBlock` when nothing is there.
    ///
    /// [`drops`]: Self::drops
    #[inline]
    pub fn discard(&mut self, n: usize) -> io::Result<usize> {
        match self {
            Transport::Ring(s) => s.discard(n),
            Transport::Tcp(s) => driver::trunc::discard(std::os::fd::AsRawFd::as_raw_fd(s), n),
            _ => Err(io::ErrorKind::Unsupported.into()),
        }
    }

    /// While a large body is dropped: wake the worker for this socket only once `n` more bytes
    /// came (`trunc::wake_after`; 1: at every arrival again). A TCP socket under epoll only;
    /// elsewhere nothing changes. True if the mark was set.
    #[inline]
    pub fn wake_after(&mut self, n: usize) -> bool {
        match self {
            Transport::Tcp(s) => driver::trunc::wake_after(std::os::fd::AsRawFd::as_raw_fd(s), n).is_ok(),
            _ => false,
        }
    }
}

impl Transport {
    /// The socket's own address and its server's (`None` on a unix socket), as a report of
    /// the connections shows them.
    pub fn endpoints(&self) -> Option<(std::net::SocketAddr, std::net::SocketAddr)> {
        match self {
            Transport::Tcp(s) => Some((s.local_addr().ok()?, s.peer_addr().ok()?)),
            Transport::Unix(_) => None,
            Transport::Tls(s) => s.endpoints(),
            Transport::Ring(s) => s.endpoints(),
        }
    }

    /// Reads as `read` does, with the kernel's receive time of the last bytes read
    /// (`CLOCK_REALTIME` nanoseconds) when the socket carries one: a TCP socket under epoll
    /// read with `recvmsg` (`stamped`: the run turned timestamps on), or under io_uring the
    /// receive these bytes came from; TLS's TCP socket likewise, through its own reader
    /// (`TlsStream::stamp`). Unix sockets carry none.
    #[inline]
    pub fn read_stamped(&mut self, buf: &mut [u8], stamped: bool) -> io::Result<(usize, Option<u64>)> {
        match self {
            Transport::Tcp(s) if stamped => driver::stamp::recv(std::os::fd::AsRawFd::as_raw_fd(s), buf),
            Transport::Ring(s) => {
                let n = s.read(buf)?;
                Ok((n, s.stamp()))
            }
            Transport::Tls(s) if stamped => {
                let n = s.read(buf)?;
                Ok((n, s.stamp()))
            }
            _ => self.read(buf).map(|n| (n, None)),
        }
    }
}

impl Transport {
    /// Writes the stream of `buf` in `range`, as far as the socket takes it; returns how
    /// many bytes it took. A plain socket takes the values `buf` keeps by reference in place,
    /// in one vectored write (`writev`); under io_uring they join the socket's queue by
    /// reference, for its `SENDMSG`. TLS encrypts a copy anyway, so it writes piece by piece.
    #[inline]
    pub fn write_buf(&mut self, buf: &SendBuf, range: Range<usize>) -> io::Result<usize> {
        if !buf.has_spans() {
            return self.write(&buf.bytes()[range]);
        }
        match self {
            Transport::Tcp(_) | Transport::Unix(_) => {
                let mut slices = [io::IoSlice::new(&[]); SLICES_MAX];
                let n = buf.io_slices(range, &mut slices);
                self.write_vectored(&slices[..n])
            }
            Transport::Ring(s) => s.write_buf(buf, range),
            Transport::Tls(s) => s.write(buf.pieces_in(range).next().unwrap_or_default()),
        }
    }
}

impl Read for Transport {
    #[inline]
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.read(buf),
            Transport::Unix(s) => s.read(buf),
            Transport::Tls(s) => s.read(buf),
            Transport::Ring(s) => s.read(buf),
        }
    }
}

impl Write for Transport {
    #[inline]
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.write(buf),
            Transport::Unix(s) => s.write(buf),
            Transport::Tls(s) => s.write(buf),
            Transport::Ring(s) => s.write(buf),
        }
    }
    /// Sends what TLS still holds encrypted; nothing to do for plain sockets.
    #[inline]
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Transport::Tls(s) => s.flush(),
            _ => Ok(()),
        }
    }

    #[inline]
    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        match self {
            Transport::Tcp(s) => s.write_vectored(bufs),
            Transport::Unix(s) => s.write_vectored(bufs),
            Transport::Tls(s) => s.write_vectored(bufs),
            Transport::Ring(s) => s.write_vectored(bufs),
        }
    }
}

impl Transport {
    /// The socket mio watches; a socket under io_uring has none.
    fn source(&mut self) -> io::Result<&mut dyn mio::event::Source> {
        let source: Option<&mut dyn mio::event::Source> = match self {
            Transport::Tcp(s) => Some(s),
            Transport::Unix(s) => Some(s),
            Transport::Tls(s) => s.mio_socket_mut().map(|s| s as &mut dyn mio::event::Source),
            Transport::Ring(_) => None,
        };
        source.ok_or_else(|| io::Error::new(io::ErrorKind::Unsupported, "a socket under io_uring has no readiness"))
    }
}

impl mio::event::Source for Transport {
    fn register(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        self.source()?.register(r, t, i)
    }
    fn reregister(&mut self, r: &mio::Registry, t: mio::Token, i: mio::Interest) -> io::Result<()> {
        self.source()?.reregister(r, t, i)
    }
    fn deregister(&mut self, r: &mio::Registry) -> io::Result<()> {
        self.source()?.deregister(r)
    }
}
