//! The merged clock the shards' timelines are aligned on.

use super::input::Input;
use crate::report::document::Document;

/// The merged clock: the earliest start (ms), the seconds to the latest end, the interval.
pub(super) struct Clock {
    pub(super) base: u64,
    pub(super) secs: f64,
    pub(super) interval: f64,
}

impl Clock {
    pub(super) fn of(inputs: &[Input], warnings: &mut Vec<String>) -> Clock {
        let base = inputs.iter().map(|i| i.doc.started_unix_ms).min().unwrap_or(0);
        let end_ms = |d: &Document| d.started_unix_ms as f64 + d.duration_secs * 1000.0;
        let end = inputs.iter().map(|i| end_ms(&i.doc)).fold(base as f64, f64::max);
        let interval = inputs[0].doc.configuration.interval_secs.max(1e-3);
        let spread_ms = inputs.iter().map(|i| i.doc.started_unix_ms).max().unwrap_or(0) - base;
        if spread_ms as f64 > interval * 1000.0 {
            warnings.push(format!(
                "the shards' measured phases started up to {spread_ms} ms apart, more than one interval \
                 ({interval} s): start them together with --start-at"
            ));
        }
        Clock { base, secs: (end - base as f64) / 1000.0, interval }
    }

    /// How far after the merged start a result's measured phase began, in seconds.
    pub(super) fn offset(&self, doc: &Document) -> f64 {
        (doc.started_unix_ms as f64 - self.base as f64) / 1000.0
    }
}
