//! Measurements: per-command latency histograms and counters that a worker fills for one
//! interval at a time, merged across threads once an interval, and summarised for reports.

mod clients;
mod compact;
mod deliveries;
mod errors;
mod front;
mod latency;
mod op;
mod packed;
mod parts;
// unsafe: mallopt has no safe wrapper; the block says why it is sound.
#[allow(unsafe_code)]
mod recycle;
mod role_latency;
mod spread;
mod window;

pub use clients::{ClientStats, RowSecond};
pub use compact::{COMPACT_DIGITS, Recorded, Summarized, coarse, widen};
pub use deliveries::{Deliveries, Messages, Publishes, RolePoint, RoleWindow};
pub use errors::{ErrorCounts, ErrorKind, Loss, UnknownErrorKind};
pub use front::{Front, Fronts};
pub use latency::LatencySummary;
pub(crate) use latency::histogram;
pub use op::{CompactOp, OpStats, total};
pub(crate) use packed::{Reader, Writer};
pub use parts::{LatencyParts, Parts, split};
pub use recycle::map_large_blocks;
pub use role_latency::{Latencies, name as latency_name};
pub use spread::Spread;
pub use window::Window;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_adds_counts_and_histograms() {
        let mut a = Window::new(2, None);
        let mut b = Window::new(2, None);
        a.ops[0].count = 2;
        a.ops[0].record(1_000, Some(1_000));
        a.ops[0].record(3_000, Some(3_000));
        b.ops[0].count = 1;
        b.ops[0].record(2_000, Some(1_000));
        b.errors.add_server(b"ERR");
        b.errors.add_server(b"ERR");
        b.errors.add(ErrorKind::Io, 1);
        a.merge(&b);
        assert_eq!(a.ops[0].count, 3);
        assert_eq!(a.total().latency_ns.len(), 3);
        let lat = a.ops[0].latency();
        assert!((lat.mean_us - 2.0).abs() < 0.01, "{lat:?}");
        assert_eq!(a.errors.total(), 3);
        assert_eq!(a.errors.sorted()[0], (ErrorKind::Server("ERR".into()), 2));
        let (mut first, mut later) = (ErrorCounts::default(), ErrorCounts::default());
        later.keep_first_reply(b"ERR later");
        first.keep_first_reply(b"ERR max number of clients reached");
        first.keep_first_reply(b"ERR again");
        first.merge(&later);
        assert_eq!(first.first_reply(), Some("ERR max number of clients reached"));
        let (mut lost, mut later) = (ErrorCounts::default(), ErrorCounts::default());
        later.keep_first_loss(Loss::Closed);
        lost.merge(&later);
        lost.keep_first_loss(Loss::Os(libc::ECONNRESET));
        assert_eq!(lost.first_loss(), Some(Loss::Closed));
    }

    #[test]
    fn huge_latencies_are_clamped_not_lost() {
        let mut op = OpStats::default();
        op.record(u64::MAX, Some(u64::MAX));
        op.record(0, None);
        assert_eq!(op.latency_ns.len(), 2);
    }
}
