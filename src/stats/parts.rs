//! Latency decomposed: where each request's time went, measured with the kernel's receive
//! timestamp. Client send lag (from the intended time, or from when a pipeline slot
//! freed if that was later, to the send), wire and server (from the send to the kernel's
//! receive of the reply's last bytes) and client receive lag (from there to the reply parsed).
//! The server's own share (INFO latencystats) is another engineer's part: it goes beside
//! `wire_ns`, never inside it.

use hdrhistogram::Histogram;

use super::compact::Recorded;
use super::latency::histogram;

/// One reply's parts, in nanoseconds. They add up to its response time minus any wait for a
/// pipeline slot (open loop), exactly: the kernel's time is clamped between the send and the
/// parse, which absorbs the clock offset's error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Parts {
    pub send_lag_ns: u64,
    pub wire_ns: u64,
    pub receive_lag_ns: u64,
}

/// Histograms of the parts for one row, and their exact sums. Full histograms while filled
/// and merged; packed in a completed interval, as the row's others are.
#[derive(Debug, Clone, PartialEq)]
pub struct LatencyParts<H = Histogram<u64>> {
    pub send_lag_ns: H,
    pub wire_ns: H,
    pub receive_lag_ns: H,
    /// Response time with the client's own parts taken out (the pipeline wait and the wire):
    /// its p99 against the response time's says how much of p99 the client added. Closed loop
    /// leaves it empty (it is `wire_ns` there, no request waits for a slot).
    pub without_client_ns: H,
    /// Exact sums of the three parts, in nanoseconds (means without the histograms' precision).
    pub sums_ns: [u64; 3],
}

impl Default for LatencyParts {
    fn default() -> LatencyParts {
        LatencyParts {
            send_lag_ns: histogram(),
            wire_ns: histogram(),
            receive_lag_ns: histogram(),
            without_client_ns: histogram(),
            sums_ns: [0; 3],
        }
    }
}

impl<H> LatencyParts<H> {
    /// The same parts with each histogram turned by `f` (see `OpStats::map_histograms`).
    pub fn map_histograms<G>(&self, f: &mut impl FnMut(&H) -> G) -> LatencyParts<G> {
        let LatencyParts { send_lag_ns, wire_ns, receive_lag_ns, without_client_ns, sums_ns } = self;
        LatencyParts {
            send_lag_ns: f(send_lag_ns),
            wire_ns: f(wire_ns),
            receive_lag_ns: f(receive_lag_ns),
            without_client_ns: f(without_client_ns),
            sums_ns: *sums_ns,
        }
    }
}

impl<H: Recorded> LatencyParts<H> {
    /// Replies decomposed.
    pub fn count(&self) -> u64 {
        self.wire_ns.len()
    }

    /// Response time without the client's parts: its own histogram in open loop, the wire's
    /// in closed loop.
    pub fn without_client(&self) -> &H {
        if self.without_client_ns.is_empty() { &self.wire_ns } else { &self.without_client_ns }
    }

    /// How much of the response time's quantile `q` the client added, in nanoseconds, and as a
    /// share of it: the quantile minus the same quantile of the response times with the
    /// client's parts taken out (what the quantile would have been had the client added
    /// nothing). `None` when nothing was decomposed.
    pub fn client_share(&self, response: &H, q: f64) -> Option<(u64, f64)> {
        if self.count() == 0 || response.is_empty() {
            return None;
        }
        let whole = response.quantile_ns(q);
        let client = whole.saturating_sub(self.without_client().quantile_ns(q));
        Some((client, if whole > 0 { client as f64 / whole as f64 } else { 0.0 }))
    }
}

impl LatencyParts {
    /// Records one reply; `without_client` only in open loop.
    #[inline]
    pub fn record(&mut self, p: Parts, without_client_ns: Option<u64>) {
        self.send_lag_ns.saturating_record(p.send_lag_ns.max(1));
        self.wire_ns.saturating_record(p.wire_ns.max(1));
        self.receive_lag_ns.saturating_record(p.receive_lag_ns.max(1));
        if let Some(ns) = without_client_ns {
            self.without_client_ns.saturating_record(ns.max(1));
        }
        for (sum, ns) in self.sums_ns.iter_mut().zip([p.send_lag_ns, p.wire_ns, p.receive_lag_ns]) {
            *sum = sum.saturating_add(ns);
        }
    }

    pub fn merge(&mut self, other: &LatencyParts) {
        // Same bounds everywhere: adding cannot fail.
        self.send_lag_ns.add(&other.send_lag_ns).expect("same bounds");
        self.wire_ns.add(&other.wire_ns).expect("same bounds");
        self.receive_lag_ns.add(&other.receive_lag_ns).expect("same bounds");
        self.without_client_ns.add(&other.without_client_ns).expect("same bounds");
        for (mine, theirs) in self.sums_ns.iter_mut().zip(other.sums_ns) {
            *mine = mine.saturating_add(theirs);
        }
    }
}

/// A reply's parts from its four instants: when it was meant to go (or could go, a pipeline
/// slot free), when it was sent, when the kernel received the bytes that completed it (as the
/// run's monotonic clock) and when it was parsed. The kernel's instant is clamped to
/// `[sent, parsed]`: the clock offset's error must not make a part negative, and the parts
/// then add up to `parsed - queued` exactly.
#[inline]
pub fn split(queued_ns: u64, sent_ns: u64, kernel_ns: u64, parsed_ns: u64) -> Parts {
    let sent = sent_ns.max(queued_ns).min(parsed_ns);
    let kernel = kernel_ns.clamp(sent, parsed_ns);
    Parts { send_lag_ns: sent - queued_ns.min(sent), wire_ns: kernel - sent, receive_lag_ns: parsed_ns - kernel }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_add_up_and_are_never_negative() {
        assert_eq!(split(100, 150, 400, 450), Parts { send_lag_ns: 50, wire_ns: 250, receive_lag_ns: 50 });
        // The offset's error puts the kernel's stamp before the send, or after the parse.
        assert_eq!(split(100, 150, 120, 450), Parts { send_lag_ns: 50, wire_ns: 0, receive_lag_ns: 300 });
        assert_eq!(split(100, 150, 500, 450), Parts { send_lag_ns: 50, wire_ns: 300, receive_lag_ns: 0 });
        for (q, s, k, p) in [(0, 0, 0, 0), (5, 3, 9, 7), (10, 20, 15, 12)] {
            let parts = split(q, s, k, p);
            assert_eq!(
                parts.send_lag_ns + parts.wire_ns + parts.receive_lag_ns,
                p.saturating_sub(q),
                "{q} {s} {k} {p}"
            );
        }
    }

    #[test]
    fn the_client_share_is_what_the_quantile_loses_without_the_client() {
        let mut parts = LatencyParts::default();
        let mut response = histogram();
        for i in 1..=100u64 {
            // The slowest request waited 30 µs in the client's socket buffer.
            let recv = if i == 100 { 30_000 } else { 1_000 };
            parts.record(Parts { send_lag_ns: 0, wire_ns: 100_000, receive_lag_ns: recv }, None);
            response.record(100_000 + recv).unwrap();
        }
        let (client_ns, share) = parts.client_share(&response, 1.0).unwrap();
        assert!((29_000..=31_000).contains(&client_ns), "{client_ns}");
        assert!((share - 30.0 / 130.0).abs() < 0.01, "{share}");
        assert_eq!(parts.sums_ns, [0, 10_000_000, 99 * 1_000 + 30_000]);
        assert!(LatencyParts::default().client_share(&response, 0.99).is_none());
    }
}
