//! One connection's own figures, second by second, for memtier's `--client-stats` files.
//! Only kept when asked for: each connection then carries one of these (boxed, so that a
//! connection without it costs a pointer), updated with plain adds; a second's row is
//! allocated once, when the second begins.

use std::time::Instant;

use hdrhistogram::Histogram;

/// One command row's counters over one second.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowSecond {
    /// Replies received.
    pub count: u64,
    /// Sum of their response times, in microseconds (memtier's unit).
    pub latency_us: u64,
    pub bytes_tx: u64,
    pub bytes_rx: u64,
    pub hits: u64,
    pub misses: u64,
}

/// A connection's figures: which connection, then per second (from the measured start) a
/// row of counters per command, and each command's response times over the run.
#[derive(Debug, Clone)]
pub struct ClientStats {
    /// The connection's place among all of them, its worker thread and its place in that thread.
    pub index: usize,
    pub thread: usize,
    pub client: usize,
    start: Instant,
    rows: usize,
    /// Seconds with something sent or received, in order, each with a row per command.
    pub seconds: Vec<(u64, Vec<RowSecond>)>,
    /// Per command, in microseconds (grows as values need, from a small start).
    pub latency_us: Vec<Histogram<u64>>,
}

impl ClientStats {
    pub fn new(index: usize, (thread, client): (usize, usize), rows: usize, start: Instant) -> ClientStats {
        let histogram = || Histogram::new(3).expect("3 significant digits are valid");
        ClientStats {
            index,
            thread,
            client,
            start,
            rows,
            seconds: Vec::new(),
            latency_us: (0..rows).map(|_| histogram()).collect(),
        }
    }

    /// The counters of `command` in the second `now` falls in.
    #[inline]
    fn at(&mut self, command: usize, now: Instant) -> &mut RowSecond {
        let second = now.saturating_duration_since(self.start).as_secs();
        if self.seconds.last().is_none_or(|(s, _)| *s < second) {
            self.seconds.push((second, vec![RowSecond::default(); self.rows]));
        }
        let (_, row) = self.seconds.last_mut().expect("pushed above");
        &mut row[command]
    }

    /// A request of `command`, `bytes` long, went out.
    #[inline]
    pub fn sent(&mut self, command: usize, bytes: u64, now: Instant) {
        self.at(command, now).bytes_tx += bytes;
    }

    /// A reply to `command`, `bytes` long, came `response_ns` after the request was due.
    #[inline]
    pub fn replied(&mut self, command: usize, bytes: u64, response_ns: u64, (hits, misses): (u64, u64), now: Instant) {
        let us = response_ns / 1000;
        let row = self.at(command, now);
        row.count += 1;
        row.latency_us += us;
        row.bytes_rx += bytes;
        row.hits += hits;
        row.misses += misses;
        // Auto-resizing: it grows to the largest value instead of failing.
        let _ = self.latency_us[command].record(us.max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn counts_land_in_their_second() {
        let start = Instant::now();
        let mut s = ClientStats::new(0, (0, 0), 2, start);
        s.sent(1, 10, start);
        s.replied(1, 5, 2_000, (1, 0), start + Duration::from_millis(10));
        s.replied(0, 5, 4_000, (0, 0), start + Duration::from_millis(2500));
        assert_eq!(s.seconds.len(), 2);
        assert_eq!(
            s.seconds[0].1[1],
            RowSecond { count: 1, latency_us: 2, bytes_tx: 10, bytes_rx: 5, hits: 1, misses: 0 }
        );
        assert_eq!((s.seconds[1].0, s.seconds[1].1[0].count), (2, 1));
        assert_eq!(s.latency_us[0].len(), 1);
    }
}
