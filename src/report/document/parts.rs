//! The parts of a result document: the plan it ran, the rows it measured, the machine and the
//! server around it.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{Bottleneck, Outage, ServerSample, ThreadCpu};
use crate::stats::{LatencySummary, Spread};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

/// The run's plan as the result records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Configuration {
    pub target: String,
    pub connections: usize,
    pub threads: usize,
    pub pipeline: usize,
    /// The I/O path the workers took: `io_uring` or `epoll`.
    pub io: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    pub all_keys: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_secs: Option<f64>,
    pub commands: Vec<CommandConfig>,
    pub key_prefix: String,
    pub key_min: u64,
    pub key_max: u64,
    pub value_size: ValueSizeConfig,
    pub random_data: bool,
    pub expiry_range_secs: Option<(u64, u64)>,
    pub seed: u64,
    pub interval_secs: f64,
    pub user: Option<String>,
    pub db: Option<u32>,
    pub rate_per_sec: Option<f64>,
    pub arrival: Option<String>,
    pub warmup_secs: f64,
    pub runs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<RampConfig>,
    /// `--transaction`: each rotation of the commands was one unit on one key.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub transaction: bool,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RampConfig {
    pub start: usize,
    pub step: usize,
    pub step_duration_secs: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CommandConfig {
    pub name: String,
    pub weight: u32,
    /// memtier's letter: S, R, G, Z or P.
    pub key_pattern: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ValueSizeConfig {
    Fixed(usize),
    Range { min: usize, max: usize },
    List(Vec<(usize, u32)>),
}

impl Default for ValueSizeConfig {
    fn default() -> ValueSizeConfig {
        ValueSizeConfig::Fixed(0)
    }
}

/// How latency was measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Measurement {
    pub latency_from: String,
    pub latency_to: String,
    pub mode: String,
    pub histogram: String,
    pub description: String,
    /// Kernel receive timestamps decomposed the latency (`latency_parts_us`): how far their
    /// mapping from the kernel's wall clock onto the run's monotonic clock may be off, at most.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock_offset_bound_us: Option<f64>,
}

/// One row's figures: a command, the totals, a cluster node or an interval.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct OpSummary {
    pub count: u64,
    pub ops_per_sec: f64,
    pub hits: u64,
    pub misses: u64,
    pub hits_per_sec: f64,
    pub misses_per_sec: f64,
    /// Transactions the server aborted (EXEC answered with a null array), apart from misses
    /// and errors; absent when there were none.
    #[serde(skip_serializing_if = "is_zero")]
    pub aborts: u64,
    #[serde(skip_serializing_if = "is_zero_f64")]
    pub aborts_per_sec: f64,
    pub errors: u64,
    /// Requests sent in the measured phase: `count` (replies, error replies included) +
    /// `failed` (no reply: by kind in `errors`) + `abandoned` (in flight when a stop signal
    /// ended the run). Absent (0) in results written before requests were accounted.
    pub sent: u64,
    pub failed: u64,
    pub abandoned: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub kb_per_sec: f64,
    pub latency_us: LatencySummary,
    pub service_us: LatencySummary,
    /// The response-time percentile spectrum, for totals and per command (not per interval).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_spectrum_us: Option<Vec<(f64, f64)>>,
    /// Where the time went, from kernel receive timestamps; absent when the run kept no
    /// decomposition (timestamps off, a unix socket, a kernel that refused them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency_parts_us: Option<LatencyPartsSummary>,
}

/// A row's latency decomposed. The server's own percentiles, where the server
/// reports them, sit beside `wire_and_server` (as `server`), never inside it: what remains of
/// `wire_and_server` is the network's and the kernels'.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LatencyPartsSummary {
    /// Replies decomposed (those that came with a kernel receive time).
    pub count: u64,
    /// The client's send lag: from the intended time (or when a pipeline slot freed, if later)
    /// to the send.
    pub send_lag: LatencySummary,
    /// From the send to the kernel's receive of the reply's last bytes.
    pub wire_and_server: LatencySummary,
    /// The client's receive lag: from the kernel's receive to the reply parsed.
    pub receive_lag: LatencySummary,
    /// How much of the response time's p99 the client added: p99 minus the p99 the response
    /// times have with the client's parts taken out.
    pub client_of_p99: f64,
    /// `client_of_p99` as a share of p99 (0 to 1).
    pub client_share_of_p99: f64,
}

/// One interval of the time series.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Point {
    pub run: usize,
    pub index: u64,
    pub start_secs: f64,
    pub duration_secs: f64,
    #[serde(flatten)]
    pub totals: OpSummary,
    pub commands: BTreeMap<String, u64>,
    pub server: Option<ServerSample>,
    pub active_connections: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ShardPart {
    pub index: u32,
    pub count: u32,
    pub source: String,
    /// The run's --seed; the shard draws its streams from `stream_seed`.
    pub seed: u64,
    pub stream_seed: u64,
    pub total_requests: Option<u64>,
    pub total_rate_per_sec: Option<u64>,
    pub key_part: Option<(u64, u64)>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Start {
    pub requested_unix_ms: f64,
    /// Measured-phase start minus the requested instant, in milliseconds (positive: late).
    pub offset_ms: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Cluster {
    pub nodes: BTreeMap<String, OpSummary>,
    pub moved: u64,
    pub asked: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Faults {
    pub outages: Vec<Outage>,
    pub reconnect_attempts: u64,
    /// Connections lost (closed by the server, broken, timed out), counted apart from the
    /// requests they took with them (those are in `errors`, by kind).
    pub connections_lost: u64,
    /// The same by why: `io` (closed or broken), `timeout`, `protocol`.
    pub connections_lost_by_kind: BTreeMap<String, u64>,
    pub seconds_without_success: Vec<IntervalRef>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct IntervalRef {
    pub run: usize,
    pub index: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Client {
    pub threads: Vec<ThreadCpu>,
    pub machine: Machine,
}

/// The machine respbench ran on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Machine {
    pub hostname: String,
    pub cores: usize,
    pub os: String,
    pub arch: String,
}

impl Machine {
    pub fn this() -> Machine {
        // The kernel's host name (what gethostname(2) returns), without unsafe code.
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
        Machine {
            hostname: hostname.trim_end().to_string(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ServerTelemetry {
    #[serde(flatten)]
    pub sample: ServerSample,
    pub peak_used_memory_bytes: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Verdict {
    pub verdict: Bottleneck,
    pub detail: String,
}

impl Verdict {
    /// The verdict as the result writes it (`client-bound`, ...).
    pub fn name(&self) -> String {
        match serde_json::to_value(self.verdict) {
            Ok(serde_json::Value::String(name)) => name,
            _ => String::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Repetition {
    pub ops_per_sec: Spread,
    pub p99_us: Spread,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero_f64(n: &f64) -> bool {
    *n == 0.0
}
