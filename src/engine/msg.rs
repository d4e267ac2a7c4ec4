//! What a worker sends the collector.

use std::time::Instant;

use super::outcome::FailedKey;
use super::telemetry::ThreadCpu;
use crate::net::ConnectError;
use crate::stats::{ClientStats, RoleWindow, Window};

/// What a worker (or a role's listener) sends the collector.
pub enum Msg {
    /// The worker's connections could not be made ready.
    Failed(ConnectError),
    /// A finished interval.
    Window { worker: usize, interval: u64, window: Window },
    /// The worker stopped; `window` is its last, partial interval.
    /// `clients`: its connections' own figures, when `--client-stats` asked for them.
    /// `failed`: the requests it gave up, for `--failed-keys`, and how many more it did not keep.
    Done {
        worker: usize,
        interval: u64,
        window: Window,
        ended: Instant,
        cpu: ThreadCpu,
        clients: Vec<ClientStats>,
        failed: (Vec<FailedKey>, u64),
    },
    /// A role's listener's figures for one interval (`pubsub`): the role by its index among
    /// the collector's, the listener among the role's; `last`: it has stopped, and this is its
    /// last, partial interval.
    Deliveries { role: usize, listener: usize, interval: u64, window: RoleWindow, last: bool },
}
