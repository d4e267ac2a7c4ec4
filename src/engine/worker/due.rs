//! The paced worker's timer queue: which connections have a send due, earliest first, so a
//! wake-up touches only those (not every connection open) and the next wake-up is one peek.
//!
//! A min-heap of (next intended send, connection), at most one entry per connection, so it
//! never grows past the connection count it was made for (no allocation once running).
//! Entries are invalidated lazily: a connection that sent on another path (a reply freed a
//! slot and its send was due) keeps its old, earlier entry; when that entry comes up the
//! worker finds nothing due yet and queues the connection again at its real time. An entry is
//! never *later* than its connection's schedule (schedules only move forward), so a stale
//! entry can cost a look, never a late send. A connection that cannot send (pipeline full,
//! down, held back, quota spent) is not queued again when its entry comes up; it re-enters
//! when a reply frees a slot or it reconnects (`Worker::fill_and_flush` queues it).
//!
//! At high rates the worker wakes for sends on a grid of ticks ([`Batching`]) rather than at
//! each send's own time: a timer wake-up costs more than a send, so the sends due within one
//! tick are written in one loop turn (one `epoll_pwait2` or `io_uring_enter` for all of them).
//! A send never leaves before its intended time; one that leaves at the tick after it keeps
//! its intended time, and the wait shows in its response time and send lag.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

pub(super) struct DueQueue {
    heap: BinaryHeap<Reverse<(Instant, u32)>>,
    /// Connection `c` has an entry in `heap`.
    queued: Vec<bool>,
}

impl DueQueue {
    /// A queue for connections `0..conns`, allocated once.
    pub(super) fn new(conns: usize) -> DueQueue {
        DueQueue { heap: BinaryHeap::with_capacity(conns), queued: vec![false; conns] }
    }

    /// Queues connection `conn` to be looked at `at`, unless it already has an entry (which is
    /// no later: see the module's note).
    #[inline]
    pub(super) fn push(&mut self, conn: usize, at: Instant) {
        if self.queued[conn] {
            return;
        }
        self.queued[conn] = true;
        debug_assert!(self.heap.len() < self.queued.len(), "one entry per connection");
        self.heap.push(Reverse((at, conn as u32)));
    }

    /// When the earliest entry is due.
    #[inline]
    pub(super) fn next(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((at, _))| *at)
    }

    /// Takes the earliest entry if it is due by `now`; its connection leaves the queue until
    /// pushed again.
    #[inline]
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<usize> {
        let Reverse((at, conn)) = *self.heap.peek()?;
        if at > now {
            return None;
        }
        self.heap.pop();
        self.queued[conn as usize] = false;
        Some(conn as usize)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.heap.len()
    }
}

/// How many sends, on average, a tick should gather before batching is worth its lateness.
const BATCH_SENDS: f64 = 8.0;

/// The longest tick: the most a send waits for its batch.
const LONGEST_TICK: Duration = Duration::from_micros(250);

/// Batching pays only where a tick gathers at least this many sends on average; below, a
/// worker wakes at each send's own time.
const FEWEST_SENDS: f64 = 2.0;

/// The grid a paced worker's send wake-ups fall on: ticks `tick` apart from `anchor`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Batching {
    anchor: Instant,
    tick_ns: u64,
}

impl Batching {
    /// For a worker whose schedules ask `per_sec` sends a second in all, from `anchor`: ticks of
    /// [`BATCH_SENDS`] sends' time, at most [`LONGEST_TICK`]; none where a tick that long would
    /// gather fewer than [`FEWEST_SENDS`].
    pub(super) fn for_rate(per_sec: f64, anchor: Instant) -> Option<Batching> {
        if !per_sec.is_finite() || per_sec <= 0.0 {
            return None;
        }
        let tick = Duration::from_secs_f64(BATCH_SENDS / per_sec).min(LONGEST_TICK);
        if tick.as_secs_f64() * per_sec < FEWEST_SENDS {
            return None;
        }
        Some(Batching { anchor, tick_ns: tick.as_nanos() as u64 })
    }

    /// The tick at which a send due at `due` goes: the first at or after it, never before.
    #[inline]
    pub(super) fn wake_for(&self, due: Instant) -> Instant {
        if due <= self.anchor {
            return due;
        }
        let since = (due - self.anchor).as_nanos() as u64;
        let ticks = since.div_ceil(self.tick_ns);
        self.anchor + Duration::from_nanos(ticks * self.tick_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batching_wakes_at_the_tick_at_or_after_a_send_never_before() {
        let t = Instant::now();
        // 80,000 sends a second: ticks of 8 sends' time, 100 µs.
        let b = Batching::for_rate(80_000.0, t).expect("batches");
        assert_eq!(b.tick_ns, 100_000);
        assert_eq!(b.wake_for(t), t);
        assert_eq!(b.wake_for(t + us(1)), t + us(100));
        assert_eq!(b.wake_for(t + us(100)), t + us(100));
        assert_eq!(b.wake_for(t + us(199)), t + us(200));
        // Before the anchor (a schedule staggered back): the send's own time.
        let early = t.checked_sub(us(5)).unwrap();
        assert_eq!(b.wake_for(early), early);
        for n in 0..1000u64 {
            let due = t + Duration::from_nanos(n * 7_919);
            let at = b.wake_for(due);
            assert!(at >= due && at - due < us(100), "{n}: {:?}", at - due);
        }
        // Faster: shorter ticks, 8 sends each.
        assert_eq!(Batching::for_rate(400_000.0, t).unwrap().tick_ns, 20_000);
    }

    #[test]
    fn slow_schedules_wake_at_each_send() {
        let t = Instant::now();
        // 8,000 a second gathers 2 sends in 250 µs: the least worth batching.
        assert_eq!(Batching::for_rate(8_000.0, t).unwrap().tick_ns, 250_000);
        assert!(Batching::for_rate(7_900.0, t).is_none());
        assert!(Batching::for_rate(1_000.0, t).is_none());
        assert!(Batching::for_rate(0.0, t).is_none());
    }

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[test]
    fn pops_in_time_order_only_what_is_due() {
        let t = Instant::now();
        let mut q = DueQueue::new(4);
        q.push(0, t + us(30));
        q.push(1, t + us(10));
        q.push(2, t + us(20));
        q.push(3, t + us(40));
        assert_eq!(q.next(), Some(t + us(10)));
        assert_eq!(q.pop_due(t), None, "nothing is due before its time");
        let due: Vec<usize> = std::iter::from_fn(|| q.pop_due(t + us(30))).collect();
        assert_eq!(due, vec![1, 2, 0]);
        assert_eq!(q.next(), Some(t + us(40)));
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn equal_times_come_out_by_connection() {
        let t = Instant::now();
        let mut q = DueQueue::new(3);
        for c in [2, 0, 1] {
            q.push(c, t);
        }
        let due: Vec<usize> = std::iter::from_fn(|| q.pop_due(t)).collect();
        assert_eq!(due, vec![0, 1, 2]);
    }

    #[test]
    fn a_stale_entry_is_corrected_when_it_comes_up() {
        // Connection 0 is queued for t+10, then sends on another path: its schedule moves to
        // t+50 while the old entry stays. Pushing again keeps one entry (the earlier one).
        let t = Instant::now();
        let mut q = DueQueue::new(2);
        q.push(0, t + us(10));
        q.push(1, t + us(30));
        q.push(0, t + us(50));
        assert_eq!(q.len(), 2, "one entry per connection");
        // The stale entry comes up first; the worker finds nothing due and queues it again.
        assert_eq!(q.pop_due(t + us(10)), Some(0));
        q.push(0, t + us(50));
        assert_eq!(q.pop_due(t + us(10)), None);
        assert_eq!(q.next(), Some(t + us(30)));
        let due: Vec<usize> = std::iter::from_fn(|| q.pop_due(t + us(60))).collect();
        assert_eq!(due, vec![1, 0]);
    }

    #[test]
    fn a_connection_leaves_when_popped_and_reenters_when_pushed() {
        // A full pipeline: popped and not pushed back, it is gone (no wake-ups for it) until a
        // reply frees a slot and the worker pushes it again.
        let t = Instant::now();
        let mut q = DueQueue::new(2);
        q.push(0, t);
        assert_eq!(q.pop_due(t), Some(0));
        assert_eq!(q.next(), None);
        assert_eq!(q.pop_due(t + us(1000)), None);
        q.push(0, t + us(5));
        assert_eq!(q.next(), Some(t + us(5)));
        assert_eq!(q.pop_due(t + us(5)), Some(0));
    }

    #[test]
    fn never_grows_past_its_connections() {
        let t = Instant::now();
        let n = 1000;
        let mut q = DueQueue::new(n);
        let capacity = q.heap.capacity();
        for round in 0..50u64 {
            for c in 0..n {
                q.push(c, t + us(round * 7 + (c as u64 * 13) % 97));
            }
            while q.pop_due(t + us(round * 7 + 50)).is_some() {}
        }
        assert!(q.len() <= n);
        assert_eq!(q.heap.capacity(), capacity, "the heap reallocated");
    }
}
