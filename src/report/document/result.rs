//! One run's result (or several shards' merged) as a whole, and the text `--json` writes.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::histo::Histograms;
use super::parts::*;
use crate::engine::{RunFigures, ServerCpu, ServerLatency};
use crate::net::ServerInfo;
use crate::report::Delivery;

/// One run's result (or several shards' merged).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Document {
    pub schema_version: u32,
    /// A name for this result in comparisons (`--label`); the file's stem when absent.
    pub label: Option<String>,
    pub tool: Tool,
    pub server: Option<ServerInfo>,
    pub started_unix_ms: u64,
    pub interrupted: bool,
    pub configuration: Configuration,
    pub measurement: Measurement,
    pub duration_secs: f64,
    pub totals: OpSummary,
    pub commands: BTreeMap<String, OpSummary>,
    pub errors: BTreeMap<String, u64>,
    /// Open loop only.
    pub rate: Option<Delivery>,
    pub client: Client,
    pub server_cpu: Option<ServerCpu>,
    pub server_telemetry: Option<ServerTelemetry>,
    /// The server's own latency per command (`INFO latencystats`), or why there is none;
    /// absent from results written before it was read.
    pub server_latency: Option<ServerLatency>,
    pub warnings: Vec<String>,
    /// respbench's notes on how it ran the command line (said on stderr by the native CLI, by
    /// a front-end only with `--notes`); absent from results written before notes were kept.
    pub notes: Vec<String>,
    pub bottleneck: Verdict,
    pub runs: Vec<RunFigures>,
    pub repetition: Option<Repetition>,
    pub faults: Faults,
    pub cluster: Option<Cluster>,
    pub time_series: Vec<Point>,
    /// `--shard`: this process's part of a run spread over several load machines.
    pub shard: Option<ShardPart>,
    /// `--start-at`: the instant asked for and how far from it the measured phase began.
    pub start: Option<Start>,
    /// Every histogram, lossless, so that shards merge exactly (`respbench merge`).
    pub histograms: Histograms,
    /// Set by `respbench merge` only: the results merged into this one.
    pub merged_from: Option<Vec<MergedFrom>>,
    /// Set by `respbench recover` only: the result was built from the journal of a run that
    /// did not end (absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered: Option<Recovery>,
    /// `--role`: each role's plan and figures (absent without roles).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<super::roles::RoleReport>,
}

/// Where a recovered result came from and how far the journal went.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Recovery {
    /// The journal read.
    pub journal: String,
    /// Completed intervals journaled (over every run).
    pub intervals: u64,
    /// When the last journaled interval ended: seconds into its run, and wall clock.
    pub last_interval_end_secs: f64,
    pub last_interval_end_unix_ms: u64,
    /// A last line cut short (the kill or a power loss came while it was written) was left out.
    pub cut_line: bool,
}

impl Document {
    /// The summary rows: each command (by name), then the totals.
    pub fn rows(&self) -> Vec<(&str, &OpSummary)> {
        let mut rows: Vec<(&str, &OpSummary)> = self.commands.iter().map(|(k, v)| (k.as_str(), v)).collect();
        rows.push(("Totals", &self.totals));
        rows
    }

    /// The text respbench writes for `--json`: pretty, but each `time_series` point on one
    /// line with its figures at 6 significant digits (a point per interval is most of a long
    /// run's file: pretty and at full float precision it took ~1.4 KB, compact ~0.6 KB).
    pub fn to_json(&self) -> String {
        let mut value = serde_json::to_value(self).expect("plain data serialises");
        let points = value.get_mut("time_series").map(serde_json::Value::take);
        let points = match points {
            Some(serde_json::Value::Array(points)) if !points.is_empty() => points,
            _ => {
                let mut text = serde_json::to_string_pretty(self).expect("plain data serialises");
                text.push('\n');
                return text;
            }
        };
        value["time_series"] = serde_json::Value::Array(Vec::new());
        let text = serde_json::to_string_pretty(&value).expect("plain data serialises");
        let lines: Vec<String> = points
            .into_iter()
            .map(|mut p| {
                round_floats(&mut p);
                format!("    {}", serde_json::to_string(&p).expect("plain data serialises"))
            })
            .collect();
        let series = format!("\n  \"time_series\": [\n{}\n  ]", lines.join(",\n"));
        let mut text = text.replacen("\n  \"time_series\": []", &series, 1);
        text.push('\n');
        text
    }
}

/// `point` as the JSON keeps it, every float at 6 significant digits: what a run renders from
/// memory is then what `respbench report` renders from its JSON.
pub fn as_kept(point: Point) -> Point {
    let mut v = serde_json::to_value(&point).expect("plain data serialises");
    round_floats(&mut v);
    serde_json::from_value(v).unwrap_or(point)
}

/// Every float in `v` at 6 significant digits (integers stay as they are).
fn round_floats(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Number(n) if n.is_f64() => {
            let x = n.as_f64().unwrap_or_default();
            if x != 0.0 && x.is_finite() {
                let scale = 10f64.powi(5 - x.abs().log10().floor() as i32);
                let rounded = (x * scale).round() / scale;
                if let Some(r) = serde_json::Number::from_f64(rounded) {
                    *n = r;
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(round_floats),
        serde_json::Value::Object(map) => map.values_mut().for_each(round_floats),
        _ => {}
    }
}

/// One result merged into a `respbench merge` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct MergedFrom {
    /// The result's label, else its file stem.
    pub name: String,
    /// I/N, null for a result that was not a shard.
    pub shard: Option<String>,
    pub started_unix_ms: u64,
    pub duration_secs: f64,
    pub start_offset_ms: Option<f64>,
    pub hostname: String,
    pub count: u64,
}
