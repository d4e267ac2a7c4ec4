//! Connection options valkey-benchmark brought (multipath TCP, client-side caching's
//! tracking), as respbench flags: flattened into the native ones, kept here so that
//! `native/` does not grow.

use clap::Args as ClapArgs;

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
}
