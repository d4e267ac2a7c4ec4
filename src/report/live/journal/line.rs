//! The journal's lines, as the writer appends them and `recover` reads them back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::engine::{Outage, ServerSample, ThreadCpu};
use crate::net::ServerInfo;
use crate::report::document::Document;
use crate::report::document::roles::RoleReport;
use crate::stats::{OpStats, RoleWindow};

/// What the header's `journal` field says.
pub const MAGIC: &str = "respbench journal";
/// Bumped when a line changes meaning; `recover` refuses other versions (2: the histograms
/// moved to the interval log).
pub const VERSION: u32 = 2;

/// One line of the journal.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "line", rename_all = "snake_case")]
pub(crate) enum Line {
    Header(Box<Header>),
    Interval(Box<IntervalLine>),
    RunEnded(Box<RunEnded>),
}

/// The first line: what the journal is, and the result's frame.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Header {
    pub journal: String,
    pub version: u32,
    /// The interval log's file name, in the journal's directory.
    pub interval_log: String,
    pub frame: Document,
}

/// One completed interval of one run, all workers merged.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct IntervalLine {
    pub run: usize,
    pub index: u64,
    pub start_secs: f64,
    pub duration_secs: f64,
    /// Wall-clock start of the run's measured phase.
    pub started_unix_ms: u64,
    /// On a run's first line only: what the server said it is, and the rows' names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerInfo>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command_names: Vec<String>,
    pub ops: Vec<OpLine>,
    /// Requests by what went wrong (`server:ERR`, `io`, ...).
    pub errors: BTreeMap<String, u64>,
    /// Connections' down spans in this interval, in seconds from the measured start.
    pub down_secs: Vec<(f64, f64)>,
    pub reconnect_attempts: u64,
    /// Connections lost by why (`io`, `timeout`, `protocol`).
    pub connections_lost: BTreeMap<String, u64>,
    pub successes: u64,
    pub nodes: Vec<(String, OpLine)>,
    pub moved: u64,
    pub asked: u64,
    pub window_connections: u64,
    pub server_sample: Option<ServerSample>,
    pub active_connections: Option<u64>,
    /// `--role`: what each role's listeners counted in the interval (the roles whose
    /// listeners count beside the requests: pub/sub roles).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleLine>,
}

/// A role's interval: its counts by name, and its own latency (at the interval log's
/// precision, encoded as the result's histograms are) with the latencies' exact sum.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RoleLine {
    pub name: String,
    pub kind: String,
    pub counts: BTreeMap<String, u64>,
    pub latency: Option<String>,
    pub latency_sum_ns: u64,
}

impl RoleLine {
    pub(super) fn of(name: &str, w: &RoleWindow) -> RoleLine {
        RoleLine {
            name: name.to_string(),
            kind: w.kind().to_string(),
            counts: w.counts().into_iter().map(|(k, n)| (k.to_string(), n)).collect(),
            latency: w.latency().map(|(_, h)| crate::report::document::histo::encode(h)),
            latency_sum_ns: w.latency_sum_ns(),
        }
    }
}

/// One row of an interval: its counters (its histograms are in the interval log).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct OpLine {
    pub count: u64,
    pub hits: u64,
    pub misses: u64,
    pub errors: u64,
    pub sent: u64,
    pub failed: u64,
    pub abandoned: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub latency_sum_ns: u64,
    pub unit: bool,
    /// Kernel timestamps on: the exact sums of the latency's parts (send lag, wire and server,
    /// receive lag), in nanoseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parts_sums_ns: Option<[u64; 3]>,
}

impl OpLine {
    pub(super) fn of(op: &OpStats) -> OpLine {
        OpLine {
            count: op.count,
            hits: op.hits,
            misses: op.misses,
            errors: op.errors,
            sent: op.sent,
            failed: op.failed,
            abandoned: op.abandoned,
            bytes_in: op.bytes_in,
            bytes_out: op.bytes_out,
            latency_sum_ns: op.latency_sum_ns,
            unit: op.unit,
            parts_sums_ns: op.parts.as_deref().map(|p| p.sums_ns),
        }
    }
}

/// What only a run's end knows.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default)]
pub(crate) struct RunEnded {
    pub run: usize,
    pub elapsed_secs: f64,
    pub interrupted: bool,
    pub client_threads: Vec<ThreadCpu>,
    pub server_stats: Option<ServerSample>,
    pub server_peak_memory: Option<u64>,
    pub warnings: Vec<String>,
    pub outages: Vec<Outage>,
    /// `--role`: each role as the run's end said it (`roles::ended`), and its latency
    /// histograms as the result's `histograms.roles` keeps them: `recover` takes a stream,
    /// queue or tracking role's figures from here (a pub/sub role's come from its intervals).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<RoleReport>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub role_histograms: BTreeMap<String, BTreeMap<String, String>>,
}
