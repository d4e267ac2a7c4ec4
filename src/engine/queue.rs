//! A queue role's workers: listeners, each on a thread of its own, blocked on a pop of the
//! role's queue (`NAME:1`: BZPOPMIN, BLPOP, BRPOP, or BLMOVE to a list of taken items and then
//! LREM from it) while the producers (the run's connections) push stamped items. A pop that
//! waited for its item is not a slow one: per item the worker tells the time its pop waited
//! for data (from the pop's send to the item's push stamp, when the item was pushed after the
//! pop was sent, else 0) apart from the service time once the data was there (the reply's
//! arrival minus the later of the pop's send and the item's push). A pop whose timeout ran out
//! with no item is counted as empty, in no latency.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::listener::{self, Cursor, Ended, Line, Shared};
use crate::config::Config;
use crate::config::role::RoleKind;
use crate::config::role::queue::{Pop, QueueRole};
use crate::net::{ConnectError, Session};
use crate::stats::latency_name::{END_TO_END, SERVICE, WAIT};
use crate::stats::{Latencies, LatencySummary};
use crate::workload::stamp::{self, Stamp};

/// A pop's timeout, in seconds: the server answers null after it, and the worker pops again.
const POP_TIMEOUT: &[u8] = b"1";
/// The longest an LREM is waited for once the run is over.
const ACK_WAIT: Duration = Duration::from_secs(1);

/// What a queue role's items did.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct QueueFigures {
    /// Pushes (ZADD, LPUSH, RPUSH) the server answered without an error.
    pub produced: u64,
    /// Items the workers popped (each carrying a producer's stamp).
    pub consumed: u64,
    /// Produced items no worker popped by the end.
    pub unconsumed: u64,
    /// Pops whose timeout ran out with no item (blocked, not slow: in no latency).
    pub empty_pops: u64,
    /// Pops whose item was pushed after the pop was sent: they waited for data.
    pub waited: u64,
    /// From the pop's send to the item's push stamp (0 when the item was there first).
    pub wait: LatencySummary,
    /// From the later of the pop's send and the item's push to the pop's reply.
    pub service: LatencySummary,
    /// From the item's push stamp to the pop's reply.
    pub end_to_end_latency: LatencySummary,
    /// Workers whose connection ended during the run, each with why.
    pub dropped_workers: Vec<String>,
    /// The wait, service and end-to-end histograms (`histograms.roles` in the result).
    #[serde(skip)]
    pub kept: Latencies,
}

/// One worker's own figures.
struct Tally {
    worker: usize,
    consumed: u64,
    empty_pops: u64,
    waited: u64,
    wait: Histogram<u64>,
    service: Histogram<u64>,
    end_to_end: Histogram<u64>,
    ended: Option<Ended>,
}

/// A queue role's workers, popping.
pub struct Workers {
    threads: Vec<JoinHandle<Tally>>,
    shared: Arc<Shared>,
}

/// The queue role of `config`, if it has one.
pub fn role(config: &Config) -> Option<&QueueRole> {
    config.extras.roles.iter().find_map(|r| match &r.kind {
        RoleKind::Queue(q) => Some(q),
        _ => None,
    })
}

/// The list BLMOVE moves taken items to: in the queue's slot (the role's prefix is a hash tag).
fn taken(prefix: &str) -> String {
    format!("{prefix}taken")
}

/// Starts every worker, each connected, before the producers start.
pub fn listen(config: &Config) -> Result<Option<Workers>, ConnectError> {
    let Some(q) = role(config) else { return Ok(None) };
    let key = format!("{}1", config.keys.prefix);
    let taken = taken(&config.keys.prefix);
    let server = listener::home(config, key.as_bytes())?;
    let mut pop = Vec::new();
    let k = key.as_bytes();
    match q.pop {
        Pop::Bzpopmin => crate::resp::encode_command(&mut pop, &[b"BZPOPMIN", k, POP_TIMEOUT]),
        Pop::Blpop => crate::resp::encode_command(&mut pop, &[b"BLPOP", k, POP_TIMEOUT]),
        Pop::Brpop => crate::resp::encode_command(&mut pop, &[b"BRPOP", k, POP_TIMEOUT]),
        Pop::Blmove => {
            crate::resp::encode_command(&mut pop, &[b"BLMOVE", k, taken.as_bytes(), b"RIGHT", b"LEFT", POP_TIMEOUT])
        }
    }
    let shared = Arc::new(Shared { consumed: AtomicU64::new(0), stop: AtomicBool::new(false) });
    let mut threads = Vec::new();
    for worker in 0..q.workers {
        let line = Line::new(Session::open(&server)?, config.faults.max_reply);
        let (pop, kind, shared) = (pop.clone(), q.pop, Arc::clone(&shared));
        let taken = (kind == Pop::Blmove).then(|| taken.clone());
        threads.push(
            std::thread::Builder::new()
                .name(format!("respbench-pop{worker}"))
                .spawn(move || work(line, worker, (&pop, kind), taken, &shared))
                .expect("a worker thread starts"),
        );
    }
    Ok(Some(Workers { threads, shared }))
}

/// A worker's loop, until the run is over or its connection ends. `taken`: BLMOVE's list,
/// from which each item is removed once taken.
fn work(mut line: Line, worker: usize, (pop, kind): (&[u8], Pop), taken: Option<String>, shared: &Shared) -> Tally {
    let histogram = crate::stats::histogram;
    let mut tally = Tally {
        worker,
        consumed: 0,
        empty_pops: 0,
        waited: 0,
        wait: histogram(),
        service: histogram(),
        end_to_end: histogram(),
        ended: None,
    };
    let (mut lrem, name) = (Vec::new(), kind.name().to_ascii_uppercase());
    while !shared.stop.load(Ordering::Relaxed) {
        match work_once(&mut line, (pop, kind, &name), taken.as_deref().map(|t| (t, &mut lrem)), shared, &mut tally) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                tally.ended = Some(e);
                break;
            }
        }
    }
    tally
}

/// One pop (its request, kind and name), and the removal of its item from `taken` (BLMOVE's
/// list, with the buffer its LREM is written in): `false` once the run is over before a reply
/// came.
fn work_once(
    line: &mut Line,
    (pop, kind, name): (&[u8], Pop, &str),
    taken: Option<(&str, &mut Vec<u8>)>,
    shared: &Shared,
    tally: &mut Tally,
) -> Result<bool, Ended> {
    let stopped = || shared.stop.load(Ordering::Relaxed);
    let sent = stamp::now();
    let Some(reply) = line.call(pop, name, stopped)? else { return Ok(false) };
    let now = stamp::now();
    let Some(item) = item(reply, kind).ok_or_else(|| format!("it could not read a {name} reply"))? else {
        tally.empty_pops += 1;
        return Ok(true);
    };
    if let Some(pushed) = Stamp::read(item).map(|s| s.sent_ns) {
        tally.count(sent, pushed, now);
        shared.consumed.fetch_add(1, Ordering::Relaxed);
    }
    let Some((taken, lrem)) = taken else { return Ok(true) };
    lrem.clear();
    listener::command(lrem, 4);
    for arg in [&b"LREM"[..], taken.as_bytes(), b"1", item] {
        listener::arg(lrem, arg);
    }
    let asked = Instant::now();
    Ok(line.call(lrem, "LREM", || stopped() && asked.elapsed() > ACK_WAIT)?.is_some())
}

impl Tally {
    /// An item pushed at `pushed`, popped by a pop sent at `sent` whose reply came at `now`
    /// (nanoseconds on the stamp clock).
    #[inline]
    fn count(&mut self, sent: u64, pushed: u64, now: u64) {
        self.consumed += 1;
        let wait = pushed.saturating_sub(sent);
        if wait > 0 {
            self.waited += 1;
        }
        let _ = self.wait.record(wait);
        let _ = self.service.record(now.saturating_sub(sent.max(pushed)).max(1));
        let _ = self.end_to_end.record(now.saturating_sub(pushed).max(1));
    }
}

/// The item of a pop's reply: `Some(None)` for a null (the timeout ran out), `None` for a reply
/// of another shape.
fn item(reply: &[u8], kind: Pop) -> Option<Option<&[u8]>> {
    let mut c = Cursor::new(reply);
    if kind == Pop::Blmove {
        return c.string();
    }
    // [key, member, score] or [key, value]: the item is second.
    let (_, len) = c.header()?;
    if len.is_none() {
        return Some(None);
    }
    c.string()?;
    c.string()
}

impl Workers {
    /// Once the producers stopped, having pushed `produced` items: waits for what is still on
    /// its way (at most [`DRAIN`](listener::DRAIN), [`DRAIN_STOPPED`](listener::DRAIN_STOPPED) after a stop signal), stops the workers and
    /// adds up their tallies.
    pub fn finish(mut self, produced: u64, stopped: bool) -> QueueFigures {
        let tallies = listener::drained(&self.shared, &mut self.threads, produced, stopped);
        let mut f = QueueFigures { produced, ..QueueFigures::default() };
        let (mut wait, mut service, mut end_to_end) =
            (crate::stats::histogram(), crate::stats::histogram(), crate::stats::histogram());
        for t in &tallies {
            f.consumed += t.consumed;
            f.empty_pops += t.empty_pops;
            f.waited += t.waited;
            wait.add(&t.wait).expect("same bounds");
            service.add(&t.service).expect("same bounds");
            end_to_end.add(&t.end_to_end).expect("same bounds");
            if let Some(why) = &t.ended {
                f.dropped_workers.push(format!("worker {}: {why}", t.worker + 1));
            }
        }
        f.unconsumed = produced.saturating_sub(f.consumed);
        f.wait = LatencySummary::of(&wait);
        f.service = LatencySummary::of(&service);
        f.end_to_end_latency = LatencySummary::of(&end_to_end);
        f.kept = Latencies::of([(WAIT, wait), (SERVICE, service), (END_TO_END, end_to_end)]);
        f
    }
}

impl Drop for Workers {
    /// Workers of a run that could not start (or did not finish) stop popping too.
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_are_read_from_each_pop() {
        assert_eq!(item(b"*3\r\n$3\r\nq:1\r\n$2\r\nab\r\n$1\r\n0\r\n", Pop::Bzpopmin), Some(Some(&b"ab"[..])));
        assert_eq!(item(b"*3\r\n$3\r\nq:1\r\n$2\r\nab\r\n,0\r\n", Pop::Bzpopmin), Some(Some(&b"ab"[..])));
        assert_eq!(item(b"*2\r\n$3\r\nq:1\r\n$2\r\nab\r\n", Pop::Blpop), Some(Some(&b"ab"[..])));
        assert_eq!(item(b"$2\r\nab\r\n", Pop::Blmove), Some(Some(&b"ab"[..])));
        assert_eq!(item(b"*-1\r\n", Pop::Brpop), Some(None));
        assert_eq!(item(b"_\r\n", Pop::Bzpopmin), Some(None));
        assert_eq!(item(b"$-1\r\n", Pop::Blmove), Some(None));
    }

    #[test]
    fn a_pop_that_waited_is_told_apart_from_its_service() {
        let h = crate::stats::histogram;
        let mut t = Tally {
            worker: 0,
            consumed: 0,
            empty_pops: 0,
            waited: 0,
            wait: h(),
            service: h(),
            end_to_end: h(),
            ended: None,
        };
        // Sent at 100, the item pushed at 900, the reply at 1,000: waited 800, served in 100.
        t.count(100, 900, 1_000);
        // The item there first (pushed at 50): no wait, served from the send.
        t.count(100, 50, 300);
        assert_eq!((t.consumed, t.waited), (2, 1));
        assert_eq!((t.wait.min(), t.wait.max()), (0, t.wait.highest_equivalent(800)));
        assert_eq!(t.service.max(), t.service.highest_equivalent(200));
        assert_eq!(t.end_to_end.max(), t.end_to_end.highest_equivalent(250));
    }
}
