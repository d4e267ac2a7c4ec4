//! What every file of a worker shares: the plan it runs and its state.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use super::alarm::{Alarm, Wakeups};
use super::due::{Batching, DueQueue};
use super::voice::Said;
use crate::config::{Faults, ServerOptions};
use crate::engine::router::Router;
use crate::net::driver::Driver;
use crate::net::driver::stamp::Clock;
use crate::stats::{Fronts, Window};

/// Tokens: connection `c`'s link to node `n` is `c * LINKS + n`.
pub(super) const LINKS: usize = 4096;

/// What a worker needs to know about the run.
pub struct WorkerPlan<'a> {
    pub index: usize,
    pub pipeline: usize,
    pub interval: Duration,
    /// Start of the measured phase (after the warmup): requests meant for earlier are not counted.
    pub measure_from: Instant,
    pub deadline: Option<Instant>,
    pub stop: &'a AtomicBool,
    /// Rows of a window: the commands, then the sequence's unit row if any.
    pub rows: usize,
    pub unit_row: Option<usize>,
    /// How to log in again after a dropped connection.
    pub server: &'a ServerOptions,
    pub faults: Faults,
    /// `--retry-error-prefixes`: the error replies worth another try (empty: any not permanent).
    pub retry_on: &'a [String],
    /// Until the run's first reply, the connect phase goes on: by then one must have come.
    /// `None`: a timed run, bounded by its duration.
    pub first_reply: (Option<Instant>, &'a FirstReply),
    /// Cluster mode: the argument holding each command's key, and whether it reads.
    pub key_args: &'a [Option<usize>],
    pub reads: &'a [bool],
    pub max_request: usize,
    /// What this benchmark's workers have said once already.
    pub said: &'a Said,
    /// Kernel receive timestamps on: each reply's latency is decomposed.
    pub stamps: bool,
    /// Windows the collector has merged and emptied, handed back to be filled again
    /// (`stats::recycle`): a worker makes a new one only when none has come back yet.
    pub spares: Receiver<Window>,
    /// Where the worker shows its connections (for a crash report).
    pub board: &'a crate::engine::Board,
}

pub(super) struct Worker<'p> {
    pub(super) plan: &'p WorkerPlan<'p>,
    pub(super) driver: Driver,
    pub(super) window: Window,
    /// The window's response times since the last interval's end, counted apart until it is
    /// read or handed on (`settle_window`).
    pub(super) fronts: Fronts,
    /// Index of the interval `window` belongs to.
    pub(super) interval: u64,
    pub(super) next_flush: Instant,
    /// Connections not finished yet.
    pub(super) active: usize,
    /// Whether any connection waits on a clock.
    pub(super) paced: bool,
    /// Paced: the connections that can send, by when their next send is due.
    pub(super) due: DueQueue,
    /// Paced at a high rate: the grid of ticks its send wake-ups fall on.
    pub(super) batching: Option<Batching>,
    /// Links waiting to reconnect.
    pub(super) down: usize,
    /// Cluster mode.
    pub(super) router: Option<Router>,
    /// Requests are kept until answered, to send again (`--retry`, cluster redirects).
    pub(super) journal: bool,
    /// Cluster mode, every connection sending one command: that command's row, whose
    /// latencies are recorded in the nodes' rows only and added to it when the window leaves
    /// the worker (`settle_window`), so a reply's latency is recorded once, not twice.
    pub(super) fold: Option<usize>,
    /// When the cluster map was last reloaded.
    pub(super) refreshed: Instant,
    /// When the next connection a staircase ramp holds back joins.
    pub(super) next_join: Option<Instant>,
    /// Connections taking part: joined and not finished.
    pub(super) live: usize,
    /// Kernel receive timestamps on: their mapping onto the run's clock, measured again at
    /// every interval.
    pub(super) clock: Option<Clock>,
    /// The read buffer, lent to each link while it reads (`conn::lend`): a link keeps only
    /// the start of a reply not complete yet.
    pub(super) rbuf: Vec<u8>,
    /// Connections whose writes wait for the next turn's reads (`fill_and_flush`).
    pub(super) deferred: Vec<usize>,
    /// Paced connections due in the middle of a turn but left for its end
    /// (`send_due_mid_turn`).
    pub(super) not_yet: Vec<usize>,
    /// Paced without batching: wakes early by the machine's lateness, then sleeps the rest
    /// briefly. (A batching worker's sends wait for their tick anyway.)
    pub(super) alarm: Option<Alarm>,
    /// Paced: the waits the machine ended over the late threshold after their time.
    pub(super) wakeups: Wakeups,
    /// A reply came (here, or in another worker), or this worker gave up waiting for one.
    pub(super) answered: bool,
    /// Requests waiting in the connections' retry queues.
    pub(super) retrying: usize,
    /// Requests given up, for `--failed-keys`, and those beyond what is kept.
    pub(super) failed: Vec<crate::engine::FailedKey>,
    pub(super) failed_dropped: u64,
    /// This worker's slots on the run's board (`None`: a worker beyond the board's count).
    pub(super) shown: Option<&'p crate::engine::board::Part>,
    /// A node's name, written to compare with a recycled window's row (`fresh_window`).
    pub(super) node_name: String,
}

/// The connect phase ends with the run's first reply (the steady state): shared by the
/// workers, so that one worker's silent connections do not end a run the server answers.
#[derive(Debug, Default)]
pub struct FirstReply {
    /// The checks before the run found the server silent for the whole connect budget.
    spent: bool,
    pub(super) answered: AtomicBool,
    pub(super) missed: AtomicBool,
}

/// How long the run's first requests may wait for a reply when the checks before the run
/// already found the server silent for the whole connect budget: long enough for a server
/// that answers now, short enough not to wait the budget a second time.
const SPENT_GRACE: Duration = Duration::from_millis(200);

impl FirstReply {
    pub fn new(spent: bool) -> FirstReply {
        FirstReply { spent, ..FirstReply::default() }
    }

    /// When the first reply must have come, for a run that starts at `start`.
    pub fn deadline(&self, start: Instant, budget: Duration) -> Instant {
        start + if self.spent { budget.min(SPENT_GRACE) } else { budget }
    }

    /// The run's outcome when no reply came in time: why, in one line.
    pub fn missed(&self, config: &crate::config::Config) -> Option<crate::net::ConnectError> {
        let missed = self.missed.load(Ordering::SeqCst) && !self.answered.load(Ordering::SeqCst);
        let memtier = config.faults.voice == crate::config::Voice::Memtier;
        missed.then(|| crate::net::ConnectError::NoReply {
            target: config.server.target.to_string(),
            waited: config.faults.connect_timeout,
            flag: if memtier { "--connection-stage-timeout" } else { "--connect-timeout" },
        })
    }
}
