//! The HdrHistogram interval log (`--hdr-log`): the standard V2 format that HdrHistogram's own
//! tools read, one compressed histogram per interval and tag, values in microseconds.
//! `response` counts from the intended send time, `service` from the actual send.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};

use crate::engine::Progress;

/// Accumulates the log in memory, to be written atomically at the end.
pub struct HdrLog {
    lines: Vec<u8>,
    serializer: V2DeflateSerializer,
    base: Option<SystemTime>,
    histograms: Vec<(Duration, Duration, &'static str, Histogram<u64>)>,
}

impl Default for HdrLog {
    fn default() -> Self {
        HdrLog::new()
    }
}

impl HdrLog {
    pub fn new() -> HdrLog {
        HdrLog { lines: Vec::new(), serializer: V2DeflateSerializer::new(), base: None, histograms: Vec::new() }
    }

    /// Adds one completed interval: its total response and service histograms.
    pub fn add(&mut self, p: &Progress) {
        let run_start = UNIX_EPOCH + Duration::from_millis(p.started_unix_ms);
        let base = *self.base.get_or_insert(run_start);
        let start = run_start.duration_since(base).unwrap_or_default() + Duration::from_secs_f64(p.interval.start_secs);
        let length = Duration::from_secs_f64(p.interval.duration_secs);
        let total = p.window.total();
        self.histograms.push((start, length, "response", to_micros(&total.latency_ns)));
        self.histograms.push((start, length, "service", to_micros(total.service_histogram())));
        self.compact();
    }

    /// Serialises what has accumulated, so memory stays small on long runs.
    fn compact(&mut self) {
        let Some(base) = self.base else { return };
        let mut chunk = Vec::new();
        {
            let mut builder = IntervalLogWriterBuilder::new();
            builder.with_base_time(base).with_start_time(base).with_max_value_divisor(1000.0);
            let Ok(mut writer) = builder.begin_log_with(&mut chunk, &mut self.serializer) else { return };
            for (start, length, tag, h) in self.histograms.drain(..) {
                let _ = writer.write_histogram(&h, start, length, Tag::new(tag));
            }
        }
        if self.lines.is_empty() {
            self.lines = chunk;
        } else {
            // Keep the header once: later chunks contribute only their histogram lines.
            let body =
                chunk.split(|&b| b == b'\n').filter(|l| !l.is_empty() && !l.starts_with(b"#") && !l.starts_with(b"\""));
            for line in body {
                self.lines.extend_from_slice(line);
                self.lines.push(b'\n');
            }
        }
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.lines
    }
}

/// The same distribution in microseconds (the unit HdrHistogram tools expect from us).
pub(crate) fn to_micros(ns: &Histogram<u64>) -> Histogram<u64> {
    let mut us = Histogram::<u64>::new(3).expect("3 significant digits are valid");
    for v in ns.iter_recorded() {
        let _ = us.record_n(ns.median_equivalent(v.value_iterated_to()) / 1000, v.count_at_value());
    }
    us
}
