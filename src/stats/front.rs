//! A worker's record of response times between two interval ends: each reply adds one to the
//! count of its value's bucket, in the same buckets as the run's histograms ([`histogram`](super::latency::histogram)),
//! and nothing else. [`Histogram`]'s own record also keeps the total, the least and the
//! greatest value and checks its bounds, some 65 instructions a reply where this takes a
//! dozen; the histogram gets the counts, bucket by bucket, when the worker hands its window on
//! ([`Front::drain_into`]), and answers every query as if each reply had been recorded in it.

use hdrhistogram::Histogram;

use super::latency::MAX_LATENCY_NS;
use super::op::OpStats;
use super::window::Window;

/// log2 of the buckets' halves: [`histogram`](super::latency::histogram)'s three significant digits make buckets of
/// 2048 sub-buckets (values below 2048 ns are exact), each further bucket twice as wide, the
/// lower half of each overlapping the one before.
const HALF_MAGNITUDE: u32 = 10;
const HALF: u64 = 1 << HALF_MAGNITUDE;
/// Buckets a front keeps: up to the one of the largest value recorded.
const BUCKETS: usize = index_of(MAX_LATENCY_NS) + 1;

/// Counts by bucket, in the order of the run's histograms (`latency::histogram`); allocated
/// at the first record (a row that records nothing, another command's or a replica's, takes
/// no memory).
#[derive(Debug, Clone, Default)]
pub struct Front {
    counts: Box<[u64]>,
}

/// The bucket of `ns` (at most [`MAX_LATENCY_NS`]), as [`Histogram`] places it; 0 shares
/// bucket 0 with nothing a histogram records (its record takes 0 as 1).
#[inline(always)]
const fn index_of(ns: u64) -> usize {
    let bucket = (ns | (2 * HALF - 1)).ilog2() - HALF_MAGNITUDE;
    ((bucket as usize) << HALF_MAGNITUDE) + (ns >> bucket) as usize
}

/// The least value of the bucket at `index`.
fn value_at(index: usize) -> u64 {
    let bucket = (index >> HALF_MAGNITUDE) as i64 - 1;
    let sub = (index as u64 & (HALF - 1)) + HALF;
    if bucket < 0 { sub - HALF } else { sub << bucket }
}

impl Front {
    /// One response time, clamped to the histograms' bounds as their record clamps it (0 to 1
    /// when drained).
    #[inline(always)]
    pub fn record(&mut self, ns: u64) {
        let i = index_of(ns.min(MAX_LATENCY_NS));
        match self.counts.get_mut(i) {
            Some(c) => *c += 1,
            None => self.first(i),
        }
    }

    #[cold]
    fn first(&mut self, i: usize) {
        self.counts = vec![0; BUCKETS].into_boxed_slice();
        self.counts[i] = 1;
    }

    /// Adds the counts to `h` and empties them.
    pub fn drain_into(&mut self, h: &mut Histogram<u64>) {
        for (chunk, at) in self.counts.chunks_mut(64).zip((0..).step_by(64)) {
            if chunk.iter().fold(0, |any, &c| any | c) == 0 {
                continue;
            }
            for (i, c) in chunk.iter_mut().enumerate().filter(|(_, c)| **c != 0) {
                h.saturating_record_n(value_at(at + i).max(1), std::mem::take(c));
            }
        }
    }
}

/// A worker's fronts: one per command row of its window and one per node row.
#[derive(Debug, Default)]
pub struct Fronts {
    ops: Vec<Front>,
    nodes: Vec<Front>,
}

impl Fronts {
    /// Fronts for a window of `rows` command rows (node rows are added as they record).
    pub fn new(rows: usize) -> Fronts {
        Fronts { ops: vec![Front::default(); rows], nodes: Vec::new() }
    }

    /// As [`OpStats::record`] on `op`, command row `row`, the response time into its front.
    #[inline(always)]
    pub fn record_op(&mut self, op: &mut OpStats, row: usize, response_ns: u64, service_ns: Option<u64>) {
        record(op, &mut self.ops[row], response_ns, service_ns);
    }

    /// As [`OpStats::record`] on `op`, node row `node`, the response time into its front.
    #[inline(always)]
    pub fn record_node(&mut self, op: &mut OpStats, node: usize, response_ns: u64, service_ns: Option<u64>) {
        if self.nodes.len() <= node {
            self.nodes.resize_with(node + 1, Front::default);
        }
        record(op, &mut self.nodes[node], response_ns, service_ns);
    }

    /// Every front's counts into its row's response-time histogram, fronts emptied: before
    /// the window's histograms are read or it leaves the worker.
    pub fn drain_into(&mut self, window: &mut Window) {
        for (front, op) in self.ops.iter_mut().zip(&mut window.ops) {
            front.drain_into(&mut op.latency_ns);
        }
        for (front, (_, op)) in self.nodes.iter_mut().zip(&mut window.nodes) {
            front.drain_into(&mut op.latency_ns);
        }
    }
}

/// As [`OpStats::record`], the response time into `front`.
#[inline(always)]
fn record(op: &mut OpStats, front: &mut Front, response_ns: u64, service_ns: Option<u64>) {
    front.record(response_ns);
    op.record_besides_latency(response_ns, service_ns);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::super::latency::histogram;
    use super::*;

    #[test]
    fn every_bucket_holds_the_value_it_names() {
        let h = histogram();
        for i in 0..h.distinct_values() {
            let v = value_at(i);
            if v > MAX_LATENCY_NS {
                break;
            }
            assert_eq!(index_of(v), i, "value {v}");
            assert_eq!(h.lowest_equivalent(v), v, "the bucket's least value, index {i}");
        }
    }

    proptest! {
        /// The histogram a front drained into answers as the one every value was recorded in:
        /// count, least, greatest, mean and each bucket (`PartialEq` compares them all).
        #[test]
        fn a_drained_front_gives_the_histogram_a_direct_record_gives(
            values in prop::collection::vec(prop_oneof![0u64..5_000, 0u64..10_000_000, any::<u64>()], 1..400),
            drains in 1usize..4,
        ) {
            let (mut direct, mut drained, mut front) = (histogram(), histogram(), Front::default());
            for (n, &v) in values.iter().enumerate() {
                direct.saturating_record(v.max(1));
                front.record(v);
                if n % drains == 0 {
                    front.drain_into(&mut drained);
                }
            }
            front.drain_into(&mut drained);
            prop_assert_eq!(drained.len(), direct.len());
            prop_assert_eq!((drained.min(), drained.max()), (direct.min(), direct.max()));
            prop_assert_eq!(drained.mean(), direct.mean());
            prop_assert!(drained == direct);
        }
    }
}
