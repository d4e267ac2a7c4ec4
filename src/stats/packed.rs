//! A completed interval's rows as bytes, for the timeline that keeps a long run's intervals in
//! one buffer: counters as varints, each summary as the nanosecond integers its microsecond
//! figures came from (`ns / 1000`, so they come back exactly), its mean as the float it is.
//!
//! Written by hand rather than with a serde format: such a format would store the figures as
//! the eight-byte floats they are in memory, where the integers they were made from take two
//! or three bytes, and each kept quantile as its float where its place in the run's list of
//! quantiles takes one. The bytes never leave the process, so a reader only ever reads what
//! this writer wrote: reading past the end is a bug, and panics.

use super::compact::Summarized;
use super::compact::summary_quantile_ns;
use super::latency::LatencySummary;
use super::op::{COUNTERS, CompactOp, OpStats};
use super::parts::LatencyParts;

/// Appends values to a buffer.
pub struct Writer<'a> {
    pub out: &'a mut Vec<u8>,
}

/// Reads values back in the order they were written.
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// How a summary is stored (its first byte).
const EMPTY: u8 = 0;
const IN_NS: u8 = 1;
const AS_FLOATS: u8 = 2;

/// A row's flags byte.
const UNIT: u8 = 1;
const PARTS: u8 = 2;

impl Writer<'_> {
    /// LEB128: seven bits a byte, low first.
    pub fn u64(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.out.push(v as u8 | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
    }

    /// Zigzag, then LEB128: small magnitudes of either sign take a byte.
    pub fn i64(&mut self, v: i64) {
        self.u64(((v << 1) ^ (v >> 63)) as u64);
    }

    pub fn f64(&mut self, v: f64) {
        self.out.extend_from_slice(&v.to_le_bytes());
    }

    /// A float whose low mantissa bits are mostly zero (1.0, 17.0, 0.4375) in two or three
    /// bytes: its bits byte-swapped, as a varint.
    pub fn round_f64(&mut self, v: f64) {
        self.u64(v.to_bits().swap_bytes());
    }

    pub fn u8(&mut self, v: u8) {
        self.out.push(v);
    }

    /// `s`; its kept quantiles by their place in `quantiles` (added there when new).
    pub fn summarized(&mut self, s: &Summarized, quantiles: &mut Vec<f64>) {
        let summary = s.summary();
        if s.is_empty() && summary == LatencySummary::default() && s.extra().is_empty() {
            return self.u8(EMPTY);
        }
        let figures = [summary.min_us, summary.p50_us, summary.p90_us, summary.p99_us, summary.p999_us, summary.max_us];
        let ns: Option<Vec<u64>> = figures.iter().map(|&us| ns_of(us)).collect();
        match ns {
            Some(ns) => {
                self.u8(IN_NS);
                self.u64(s.len());
                self.f64(summary.mean_us);
                // Each figure from the one before (min to max, rising): a byte or two each.
                let mut before = 0u64;
                for n in ns {
                    self.i64(n.wrapping_sub(before) as i64);
                    before = n;
                }
            }
            None => {
                self.u8(AS_FLOATS);
                self.u64(s.len());
                self.f64(summary.mean_us);
                figures.iter().for_each(|&us| self.f64(us));
            }
        }
        self.u64(s.extra().len() as u64);
        for &(q, ns) in s.extra() {
            let place = quantiles.iter().position(|&known| known.to_bits() == q.to_bits()).unwrap_or_else(|| {
                quantiles.push(q);
                quantiles.len() - 1
            });
            self.u64(place as u64);
            // Mostly equal to the summary's own figure at or above it: a byte.
            self.i64(ns.wrapping_sub(summary_quantile_ns(&summary, q)) as i64);
        }
    }

    /// A row: counters, its flags, then its summaries.
    pub fn op(&mut self, op: &CompactOp, quantiles: &mut Vec<f64>) {
        let counters = op.counters();
        counters.into_iter().for_each(|v| self.u64(v));
        self.u8(if op.unit { UNIT } else { 0 } | if op.parts.is_some() { PARTS } else { 0 });
        self.summarized(&op.latency_ns, quantiles);
        self.summarized(&op.service_ns, quantiles);
        if let Some(p) = op.parts.as_deref() {
            for s in [&p.send_lag_ns, &p.wire_ns, &p.receive_lag_ns, &p.without_client_ns] {
                self.summarized(s, quantiles);
            }
            p.sums_ns.iter().for_each(|&v| self.u64(v));
        }
    }
}

impl<'a> Reader<'a> {
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    pub fn u8(&mut self) -> u8 {
        self.at += 1;
        self.bytes[self.at - 1]
    }

    pub fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let b = self.u8();
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
            shift += 7;
        }
    }

    pub fn i64(&mut self) -> i64 {
        let v = self.u64();
        (v >> 1) as i64 ^ -((v & 1) as i64)
    }

    pub fn f64(&mut self) -> f64 {
        let end = self.at + 8;
        let bytes: [u8; 8] = self.bytes[self.at..end].try_into().expect("eight bytes");
        self.at = end;
        f64::from_le_bytes(bytes)
    }

    pub fn round_f64(&mut self) -> f64 {
        f64::from_bits(self.u64().swap_bytes())
    }

    /// A summary [`Writer::summarized`] wrote, with the same `quantiles`.
    pub fn summarized(&mut self, quantiles: &[f64]) -> Summarized {
        let (len, summary) = match self.u8() {
            EMPTY => return Summarized::from_parts(0, LatencySummary::default(), Box::default()),
            IN_NS => {
                let (len, mean_us) = (self.u64(), self.f64());
                let mut before = 0u64;
                let ns = [(); 6].map(|()| {
                    before = before.wrapping_add_signed(self.i64());
                    before
                });
                let [min, p50, p90, p99, p999, max] = ns.map(|ns| ns as f64 / 1000.0);
                (
                    len,
                    LatencySummary {
                        mean_us,
                        min_us: min,
                        p50_us: p50,
                        p90_us: p90,
                        p99_us: p99,
                        p999_us: p999,
                        max_us: max,
                    },
                )
            }
            _ => {
                let len = self.u64();
                let [mean_us, min_us, p50_us, p90_us, p99_us, p999_us, max_us] = [(); 7].map(|()| self.f64());
                (len, LatencySummary { mean_us, min_us, p50_us, p90_us, p99_us, p999_us, max_us })
            }
        };
        let extra = (0..self.u64())
            .map(|_| {
                let q = quantiles[self.u64() as usize];
                (q, summary_quantile_ns(&summary, q).wrapping_add_signed(self.i64()))
            })
            .collect();
        Summarized::from_parts(len, summary, extra)
    }

    /// A row [`Writer::op`] wrote.
    pub fn op(&mut self, quantiles: &[f64]) -> CompactOp {
        let counters = [(); COUNTERS].map(|()| self.u64());
        let flags = self.u8();
        let latency_ns = self.summarized(quantiles);
        let service_ns = self.summarized(quantiles);
        let parts = (flags & PARTS != 0).then(|| {
            let [send_lag_ns, wire_ns, receive_lag_ns, without_client_ns] =
                [(); 4].map(|()| self.summarized(quantiles));
            let sums_ns = [(); 3].map(|()| self.u64());
            Box::new(LatencyParts { send_lag_ns, wire_ns, receive_lag_ns, without_client_ns, sums_ns })
        });
        OpStats::with_counters(counters, latency_ns, service_ns, flags & UNIT != 0, parts)
    }
}

/// The nanoseconds a summary's figure was made from, when it reads back as exactly that
/// figure (always, for a summary of a histogram: its values are integers under 2^53).
fn ns_of(us: f64) -> Option<u64> {
    let ns = (us * 1000.0).round();
    ((0.0..9e15).contains(&ns) && ((ns as u64) as f64 / 1000.0).to_bits() == us.to_bits()).then_some(ns as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(op: &CompactOp) -> (CompactOp, usize) {
        let (mut bytes, mut quantiles) = (Vec::new(), Vec::new());
        Writer { out: &mut bytes }.op(op, &mut quantiles);
        let back = Reader::new(&bytes).op(&quantiles);
        (back, bytes.len())
    }

    #[test]
    fn any_row_reads_back_as_written() {
        // A histogram's row: figures in whole nanoseconds, quantiles kept.
        let mut full = OpStats::default().with_parts(true);
        for ns in [1, 999, 12_345, 1_000_000, 3_600_000_000_000] {
            full.record(ns, Some(ns / 2));
            full.parts
                .as_mut()
                .expect("on")
                .record(super::super::Parts { send_lag_ns: 1, wire_ns: ns, receive_lag_ns: 7 }, None);
        }
        let kept = full.compact(&[0.5, 0.9999, 1.0]);
        assert_eq!(round_trip(&kept).0, kept);
        // Extreme counters; figures that are no nanosecond count (a combined or hand-made
        // summary), not in order, and a quantile's value far from the figures.
        let odd = LatencySummary {
            mean_us: 0.1,
            min_us: 5.0,
            p50_us: 0.000_1,
            p90_us: 1e300,
            p99_us: -2.5,
            p999_us: 3.0,
            max_us: f64::MAX,
        };
        let mut row =
            OpStats { count: u64::MAX, latency_sum_ns: u64::MAX - 1, unit: true, ..OpStats::default() }.compact(&[]);
        row.latency_ns = Summarized::from_parts(u64::MAX, odd, Box::new([(0.75, u64::MAX), (0.5, 0)]));
        let unordered = LatencySummary {
            mean_us: 2.0,
            min_us: 9.0,
            p50_us: 1.0,
            p90_us: 0.0,
            p99_us: 7.0,
            p999_us: 3.0,
            max_us: 8.0,
        };
        row.service_ns = Summarized::from_parts(3, unordered, Box::default());
        assert_eq!(round_trip(&row).0, row);
        // An empty summary is a byte.
        let empty = OpStats::default().compact_response(&[0.5]);
        assert_eq!(round_trip(&empty), (empty.clone(), 11 + 1 + 2));
    }
}
