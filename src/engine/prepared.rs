//! What the worker threads share, read-only, once the run is prepared.

use std::sync::Arc;

use crate::net::driver::IoKind;
use crate::workload::Workload;

/// What the worker threads share, read-only.
pub(super) struct Prepared {
    pub(super) workload: Arc<Workload>,
    pub(super) threads: usize,
    /// Room a link's write buffer needs for the largest request.
    pub(super) max_request: usize,
    /// Cluster mode: each command's key argument, and whether it reads.
    pub(super) key_args: Vec<Option<usize>>,
    pub(super) reads: Vec<bool>,
    /// How the workers drive their sockets (checked when the configuration was built).
    pub(super) io: IoKind,
    /// Kernel receive timestamps on every data connection (`--timestamps`, over TCP).
    pub(super) stamps: bool,
    /// Holds the kernel's timestamping on for the run (`stamps` only).
    pub(super) _keeper: Option<crate::net::driver::stamp::Keeper>,
}
