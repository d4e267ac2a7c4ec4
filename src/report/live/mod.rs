//! Live sinks: what a run reports while it is still running (the live line, StatsD, the metrics
//! endpoint and its Pushgateway pusher, the HDR interval log, the journal), fed interval by interval
//! through one trait.

pub mod endpoint;
pub mod hdrlog;
pub mod journal;
pub mod metrics;
mod prometheus;
pub mod push;
pub mod shape;
pub mod sink;
pub mod statsd;
