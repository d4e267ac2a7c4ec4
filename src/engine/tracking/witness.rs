//! The witness: the writers' log as the server applied it. One connection of its own reads every
//! key of the role with MGET, one round trip at a time, about every millisecond, and publishes
//! for each key the latest version it saw with when it asked (`sent_ns`) and when the answer
//! came (`seen_ns`). A version the witness saw was applied by the server before `seen_ns`, and
//! is newer than any value a reader fetched before `sent_ns` if it differs from it: that is
//! what proves a cached read stale ([`Observation::proves_stale`]). The witness also keeps each
//! key's last few versions with the send time their stamp carries, to time an invalidation from
//! the write that caused it ([`Event`]).
//!
//! The latest observations are published through per-key sequence locks made of atomics: a
//! reader's check takes no lock and allocates nothing.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering, fence};
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Duration;

use hdrhistogram::Histogram;

use crate::engine::listener::{Cursor, Line};
use crate::resp;
use crate::workload::stamp::{self, Stamp};

/// Keys one MGET asks for.
const BATCH: u64 = 256;
/// The pause between two sweeps over every key.
const SWEEP_PAUSE: Duration = Duration::from_millis(1);
/// Versions kept per key to find the one that followed a cached version.
const HISTORY: usize = 8;
/// Invalidations waiting for their cause to be seen, at most; past it they are not timed.
const MAX_PENDING: usize = 1 << 16;

/// The identity of a value: a hash of its bytes (0: no value). Two values that hash alike only
/// hide a change from the check, never invent one.
pub fn version_of(value: Option<&[u8]>) -> u64 {
    let Some(value) = value else { return 0 };
    // FNV-1a: a few nanoseconds for a 40-byte stamp.
    value.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)) | 1
}

/// What the witness last saw of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    pub version: u64,
    /// Before its MGET was written.
    pub sent_ns: u64,
    /// After its reply was read.
    pub seen_ns: u64,
}

impl Observation {
    /// Whether a reader serving `version` (fetched with a reply read at `fetched_ns`) from its
    /// cache is serving a stale value, given that the reader has read the reply of a request
    /// it sent at `synced_ns`.
    ///
    /// Sound: the witness asked after the reader's fetch (`sent_ns > fetched_ns`) and saw another
    /// version, so a write was applied after the server answered the fetch, and the server then
    /// queued an invalidation on the reader's connection. It answered before `seen_ns`, before the
    /// reader sent the request of `synced_ns`, whose reply comes after that invalidation on the
    /// same connection. A cache that honours invalidations has dropped the value by then; one
    /// that ignores them is caught on its first local read after the next witness sweep and
    /// reader round trip.
    #[inline]
    pub fn proves_stale(&self, version: u64, fetched_ns: u64, synced_ns: u64) -> bool {
        self.sent_ns > fetched_ns && self.seen_ns < synced_ns && self.version != version
    }
}

/// One key's latest observation behind a sequence lock (odd `seq`: being written).
#[derive(Default)]
struct Slot {
    seq: AtomicU64,
    version: AtomicU64,
    sent_ns: AtomicU64,
    seen_ns: AtomicU64,
}

/// The latest observation of every key, shared by the witness (the one writer) and the readers.
pub struct Log {
    slots: Vec<Slot>,
}

impl Log {
    pub fn new(keys: u64) -> Log {
        Log { slots: (0..keys).map(|_| Slot::default()).collect() }
    }

    /// Key `index` (0-based) was seen as `o`. Only the witness calls this.
    pub(super) fn publish(&self, index: usize, o: Observation) {
        let s = &self.slots[index];
        let seq = s.seq.load(Ordering::Relaxed);
        s.seq.store(seq + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        s.version.store(o.version, Ordering::Relaxed);
        s.sent_ns.store(o.sent_ns, Ordering::Relaxed);
        s.seen_ns.store(o.seen_ns, Ordering::Relaxed);
        s.seq.store(seq + 2, Ordering::Release);
    }

    /// The latest observation of key `index` (0-based), if the witness has seen it.
    #[inline]
    pub fn latest(&self, index: usize) -> Option<Observation> {
        let s = self.slots.get(index)?;
        loop {
            let before = s.seq.load(Ordering::Acquire);
            if before == 0 {
                return None;
            }
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let o = Observation {
                version: s.version.load(Ordering::Relaxed),
                sent_ns: s.sent_ns.load(Ordering::Relaxed),
                seen_ns: s.seen_ns.load(Ordering::Relaxed),
            };
            fence(Ordering::Acquire);
            if s.seq.load(Ordering::Relaxed) == before {
                return Some(o);
            }
        }
    }
}

/// A reader's invalidation of a key it held: the version it dropped, and when the push came.
#[derive(Debug, Clone, Copy)]
pub struct Event {
    pub index: usize,
    pub dropped: u64,
    pub arrived_ns: u64,
}

/// The invalidations timed from the write that caused them.
pub struct Timing {
    /// From the causing write's send (its stamp) to the invalidation's arrival, nanoseconds.
    pub delay: Histogram<u64>,
    pub timed: u64,
    /// Invalidations whose cause the witness did not see (overwritten within a sweep, or older
    /// than the versions it keeps).
    pub untimed: u64,
    /// Why the witness stopped before the run was over, if it did.
    pub failed: Option<String>,
}

/// The witness's own state, on its thread.
pub struct Witness {
    line: Line,
    prefix: String,
    log: Arc<Log>,
    /// Per key: the versions seen, oldest first, with their stamp's send time.
    history: Vec<VecDeque<(u64, Option<u64>)>>,
    pending: Vec<Event>,
    timing: Timing,
    out: Vec<u8>,
}

impl Witness {
    pub fn new(line: Line, prefix: String, log: Arc<Log>) -> Witness {
        let keys = log.slots.len();
        Witness {
            line,
            prefix,
            log,
            history: vec![VecDeque::new(); keys],
            pending: Vec::new(),
            timing: Timing { delay: crate::stats::histogram(), timed: 0, untimed: 0, failed: None },
            out: Vec::new(),
        }
    }

    /// Sweeps until `stop`, then once more, and times what it can.
    pub fn run(mut self, events: Receiver<Event>, stop: &AtomicBool) -> Timing {
        let mut open = true;
        while !stop.load(Ordering::Relaxed) {
            if let Err(e) = self.sweep(stop) {
                self.timing.failed = Some(e);
                break;
            }
            open = self.take(&events);
            self.resolve(false);
            std::thread::sleep(SWEEP_PAUSE);
        }
        // The readers have stopped: one more sweep sees the writes that caused their last pushes.
        if self.timing.failed.is_none() {
            let _ = self.sweep(&AtomicBool::new(false));
        }
        if open {
            self.take(&events);
        }
        self.resolve(true);
        self.timing
    }

    /// Moves the readers' events in; false once every reader has gone.
    fn take(&mut self, events: &Receiver<Event>) -> bool {
        loop {
            match events.try_recv() {
                Ok(e) if self.pending.len() < MAX_PENDING => self.pending.push(e),
                Ok(_) => self.timing.untimed += 1,
                Err(TryRecvError::Empty) => return true,
                Err(TryRecvError::Disconnected) => return false,
            }
        }
    }

    /// Times each pending invalidation whose cause is known: the version that followed the one
    /// the reader dropped. `last`: nothing more will be seen, so the rest are untimed.
    fn resolve(&mut self, last: bool) {
        let (history, timing) = (&self.history, &mut self.timing);
        self.pending.retain(|e| {
            let versions = &history[e.index];
            let Some(at) = versions.iter().rposition(|&(v, _)| v == e.dropped) else {
                timing.untimed += 1;
                return false;
            };
            match versions.get(at + 1) {
                Some(&(_, Some(sent_ns))) if sent_ns <= e.arrived_ns => {
                    let _ = timing.delay.record((e.arrived_ns - sent_ns).max(1));
                    timing.timed += 1;
                    false
                }
                Some(_) => {
                    timing.untimed += 1;
                    false
                }
                None if last => {
                    timing.untimed += 1;
                    false
                }
                None => true,
            }
        });
    }

    /// One MGET round trip per [`BATCH`] keys, each key's value published.
    fn sweep(&mut self, stop: &AtomicBool) -> Result<(), String> {
        let keys = self.history.len() as u64;
        let mut first = 0;
        while first < keys {
            let last = (first + BATCH).min(keys);
            let names: Vec<String> = (first + 1..=last).map(|n| format!("{}{n}", self.prefix)).collect();
            let mut args: Vec<&[u8]> = vec![b"MGET"];
            args.extend(names.iter().map(|n| n.as_bytes()));
            self.out.clear();
            resp::encode_command(&mut self.out, &args);
            let sent_ns = stamp::now();
            let Some(reply) = self.line.call(&self.out, "MGET", || stop.load(Ordering::Relaxed))? else {
                return Err("the run ended during a witness's read".into());
            };
            let seen_ns = stamp::now();
            let values =
                mget_values(reply, (last - first) as usize).ok_or("its MGET reply was not an array of values")?;
            for (i, value) in values.into_iter().enumerate() {
                let index = (first as usize) + i;
                let version = version_of(value);
                self.log.publish(index, Observation { version, sent_ns, seen_ns });
                let versions = &mut self.history[index];
                if versions.back().map(|&(v, _)| v) != Some(version) {
                    if versions.len() == HISTORY {
                        versions.pop_front();
                    }
                    versions.push_back((version, value.and_then(Stamp::read).map(|s| s.sent_ns)));
                }
            }
            first = last;
        }
        Ok(())
    }
}

/// The `n` values of an MGET reply, in order (`None` for a key that has none).
fn mget_values(reply: &[u8], n: usize) -> Option<Vec<Option<&[u8]>>> {
    let mut c = Cursor::new(reply);
    if c.header()? != (b'*', Some(n)) {
        return None;
    }
    (0..n).map(|_| c.string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_latest_observation_reads_back() {
        let log = Log::new(3);
        assert_eq!(log.latest(1), None);
        let o = Observation { version: 7, sent_ns: 10, seen_ns: 20 };
        log.publish(1, o);
        assert_eq!(log.latest(1), Some(o));
        assert_eq!(log.latest(5), None);
    }

    #[test]
    fn mget_values_read_with_their_nulls() {
        let reply = b"*3\r\n$2\r\nab\r\n_\r\n$-1\r\n";
        assert_eq!(mget_values(reply, 3), Some(vec![Some(&b"ab"[..]), None, None]));
        assert_eq!(mget_values(reply, 2), None);
    }

    #[test]
    fn versions_tell_values_apart() {
        assert_eq!(version_of(None), 0);
        assert_ne!(version_of(Some(b"a")), version_of(Some(b"b")));
        assert_ne!(version_of(Some(b"")), 0);
    }
}
