//! Connection options valkey-benchmark brought (multipath TCP, client-side caching's
//! tracking) and the I/O path (`--io`), as respbench flags: flattened into the native ones,
//! kept here so that `options/mod.rs` does not grow.

use clap::Args as ClapArgs;

use crate::config::parse::InvalidValue;
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
    /// else epoll; epoll for plain TCP when every value is 64 KB or more), uring (io_uring: a loop turn's sends and receives for every connection in
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
    /// Kernel receive timestamps on every TCP connection, which split each request's latency
    /// into the client's send lag, the wire and server, and the client's receive lag: auto (on
    /// in open loop, --rate), on (--timestamps alone) or off.
    #[arg(
        long,
        value_enum,
        value_name = "auto|on|off",
        default_value_t,
        num_args = 0..=1,
        default_missing_value = "on",
        help_heading = "Measurement"
    )]
    pub timestamps: crate::config::Timestamps,
    /// Warn when the client adds more than this share of p99 (percent; with timestamps on).
    #[arg(long, value_name = "PERCENT", value_parser = share_percent, help_heading = "Measurement")]
    pub client_share_warning: Option<f64>,
}

/// `--client-share-warning`: a percentage from 0 to 100, kept as a fraction.
fn share_percent(s: &str) -> Result<f64, InvalidValue> {
    match s.trim_end_matches('%').parse::<f64>() {
        Ok(p) if (0.0..=100.0).contains(&p) => Ok(p / 100.0),
        _ => Err(format!("'{s}' is not a percentage from 0 to 100").into()),
    }
}

impl SessionFlags {
    /// What a session asks for: these flags, the wire protocol and `--debug`.
    pub fn extras(&self, protocol: crate::codec::Protocol, debug: bool) -> crate::config::SessionExtras {
        crate::config::SessionExtras { mptcp: self.mptcp, tracking: self.enable_tracking, protocol, debug }
    }
}
