//! Connection options valkey-benchmark brought (multipath TCP, client-side caching's
//! tracking) and the I/O path (`--io`), as respbench flags: flattened into the native ones,
//! kept here so that `native/` does not grow.

use clap::Args as ClapArgs;

use crate::net::driver::IoChoice;

#[derive(Debug, Clone, Default, ClapArgs)]
pub struct SessionFlags {
    /// Open TCP connections as multipath TCP (Linux; falls back to TCP when the server does
    /// not speak it).
    #[arg(long, help_heading = "Connection")]
    pub mptcp: bool,
    /// Send CLIENT TRACKING on after logging in (client-side caching: the server tracks the
    /// keys read and pushes invalidations; use with --resp3 to receive them).
    #[arg(long, help_heading = "Connection")]
    pub enable_tracking: bool,
    /// How the worker threads drive their sockets: auto (io_uring where the kernel allows it,
    /// else epoll), uring (io_uring: a loop turn's sends and receives for every connection in
    /// one system call) or epoll. Every front-end reads RESPBENCH_IO.
    #[arg(
        long,
        value_enum,
        value_name = "auto|uring|epoll",
        default_value_t,
        env = "RESPBENCH_IO",
        help_heading = "Connection"
    )]
    pub io: IoChoice,
}

impl SessionFlags {
    /// What a session asks for: these flags, the wire protocol and `--debug`.
    pub fn extras(&self, protocol: crate::codec::Protocol, debug: bool) -> crate::config::SessionExtras {
        crate::config::SessionExtras { mptcp: self.mptcp, tracking: self.enable_tracking, protocol, debug }
    }
}
