//! A reader's bounded local cache and its tally: reads served locally (each checked against the
//! witness's log), values fetched from the server, and the invalidations that drop them. No I/O:
//! the reader's thread feeds it what its connection says, in the order it says it.

use std::collections::{HashMap, VecDeque};

use super::witness::{Event, Log};

/// A cached value: its version and when the reply that brought it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub version: u64,
    pub fetched_ns: u64,
    /// Its insertion's number, to tell a live entry from an older one of the same key in the
    /// eviction order.
    inserted: u64,
}

/// At most `capacity` keys, the oldest inserted evicted first.
#[derive(Debug)]
pub struct Cache {
    entries: HashMap<usize, Entry>,
    order: VecDeque<(usize, u64)>,
    capacity: usize,
    inserted: u64,
}

impl Cache {
    pub fn new(capacity: usize) -> Cache {
        let capacity = capacity.max(1);
        Cache {
            entries: HashMap::with_capacity(capacity),
            order: VecDeque::with_capacity(capacity),
            capacity,
            inserted: 0,
        }
    }

    #[inline]
    pub fn get(&self, index: usize) -> Option<Entry> {
        self.entries.get(&index).copied()
    }

    pub fn insert(&mut self, index: usize, version: u64, fetched_ns: u64) {
        self.inserted += 1;
        let entry = Entry { version, fetched_ns, inserted: self.inserted };
        if self.entries.insert(index, entry).is_none() {
            while self.entries.len() > self.capacity {
                let Some((old, number)) = self.order.pop_front() else { break };
                if self.entries.get(&old).is_some_and(|e| e.inserted == number) {
                    self.entries.remove(&old);
                }
            }
        }
        self.order.push_back((index, self.inserted));
        if self.order.len() > 2 * self.capacity {
            // Dropped and replaced entries leave marks behind: keep the live ones only.
            let entries = &self.entries;
            self.order.retain(|&(k, n)| entries.get(&k).is_some_and(|e| e.inserted == n));
        }
    }

    pub fn remove(&mut self, index: usize) -> Option<Entry> {
        self.entries.remove(&index)
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.order.clear();
    }
}

/// One reader's figures.
#[derive(Debug, Clone, Default)]
pub struct Tally {
    pub reads: u64,
    pub local_hits: u64,
    /// Reads that went to the server (GET), the cache not holding the key.
    pub server_reads: u64,
    /// Keys the server's invalidation pushes named.
    pub invalidations: u64,
    /// Pushes that invalidated everything (a null key list).
    pub flushes: u64,
    pub stale_reads: u64,
    /// Why the reader stopped before the run was over, if it did.
    pub dropped: Option<String>,
}

/// A reader's cache, what it has read, and how far its connection has caught up.
pub struct Reader {
    pub cache: Cache,
    pub tally: Tally,
    /// The send time of the latest request whose reply has been read: every invalidation the
    /// server queued before it handled that request has been read too.
    synced_ns: u64,
}

impl Reader {
    pub fn new(capacity: usize) -> Reader {
        Reader { cache: Cache::new(capacity), tally: Tally::default(), synced_ns: 0 }
    }

    /// A read of key `index`: served locally (true) if cached, each local read checked against
    /// the witness's `log`; else the caller fetches it.
    #[inline]
    pub fn read(&mut self, index: usize, log: &Log) -> bool {
        self.tally.reads += 1;
        let Some(entry) = self.cache.get(index) else {
            self.tally.server_reads += 1;
            return false;
        };
        self.tally.local_hits += 1;
        if log.latest(index).is_some_and(|o| o.proves_stale(entry.version, entry.fetched_ns, self.synced_ns)) {
            self.tally.stale_reads += 1;
        }
        true
    }

    /// The reply of a request sent at `sent_ns` was read.
    #[inline]
    pub fn synced(&mut self, sent_ns: u64) {
        self.synced_ns = self.synced_ns.max(sent_ns);
    }

    /// A fetch of key `index` brought `version`, its reply read at `at_ns`.
    pub fn fetched(&mut self, index: usize, version: u64, at_ns: u64) {
        self.cache.insert(index, version, at_ns);
    }

    /// An invalidation of key `index` arrived at `at_ns`: the entry is dropped, and returned as
    /// an event to time if the reader held it.
    pub fn invalidated(&mut self, index: Option<usize>, at_ns: u64) -> Option<Event> {
        self.tally.invalidations += 1;
        let entry = self.cache.remove(index?)?;
        Some(Event { index: index?, dropped: entry.version, arrived_ns: at_ns })
    }

    /// An invalidation of every key.
    pub fn flushed(&mut self) {
        self.tally.flushes += 1;
        self.cache.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::super::witness::Observation;
    use super::*;

    /// A write replaces version 1 of key 0 after the reader cached it; the witness sees
    /// version 2; the server's invalidation arrives; the reader's next round trip is read.
    fn after_a_write(honour_invalidations: bool) -> Tally {
        let log = Log::new(1);
        let mut reader = Reader::new(10);
        log.publish(0, Observation { version: 1, sent_ns: 1, seen_ns: 2 });
        assert!(!reader.read(0, &log));
        reader.fetched(0, 1, 10);
        reader.synced(5);
        assert!(reader.read(0, &log));
        log.publish(0, Observation { version: 2, sent_ns: 20, seen_ns: 25 });
        // Not yet provably stale: the reader has not heard back from a request sent since.
        assert!(reader.read(0, &log));
        assert_eq!(reader.tally.stale_reads, 0);
        if honour_invalidations {
            let event = reader.invalidated(Some(0), 22).expect("the key was held");
            assert_eq!((event.dropped, event.arrived_ns), (1, 22));
        }
        reader.synced(30);
        if !reader.read(0, &log) {
            reader.fetched(0, 2, 35);
        }
        reader.read(0, &log);
        reader.tally
    }

    #[test]
    fn a_cache_that_honours_invalidations_is_never_stale() {
        let t = after_a_write(true);
        assert_eq!((t.reads, t.local_hits, t.server_reads, t.stale_reads), (5, 3, 2, 0));
    }

    #[test]
    fn a_cache_that_ignores_invalidations_is_caught_as_stale() {
        let t = after_a_write(false);
        assert_eq!((t.reads, t.local_hits, t.stale_reads), (5, 4, 2));
    }

    #[test]
    fn a_version_seen_before_the_fetch_proves_nothing() {
        // The witness asked before the reader's fetch was read: its version may be older.
        let o = Observation { version: 9, sent_ns: 5, seen_ns: 6 };
        assert!(!o.proves_stale(1, 10, 100));
        assert!(Observation { sent_ns: 11, ..o }.proves_stale(1, 10, 100));
        assert!(!Observation { sent_ns: 11, version: 1, ..o }.proves_stale(1, 10, 100));
    }

    #[test]
    fn the_cache_keeps_at_most_its_capacity_oldest_out_first() {
        let mut c = Cache::new(2);
        c.insert(1, 1, 0);
        c.insert(2, 1, 0);
        c.insert(1, 2, 0);
        c.insert(3, 1, 0);
        assert_eq!(c.entries.len(), 2);
        assert!(c.get(3).is_some());
        for n in 0..100 {
            c.insert(4, n, 0);
            c.remove(4);
        }
        assert!(c.order.len() <= 4, "{}", c.order.len());
    }
}
