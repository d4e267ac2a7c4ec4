//! A scenario's result (`respbench run FILE.toml --json`): the file, its SHA-256 and price, and
//! each phase with its own result: a run's document, a capacity search's answer, or what a
//! phase of another kind wrote (a fill's report), kept as it was written.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::result::Document;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioDocument {
    pub scenario: ScenarioInfo,
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScenarioInfo {
    pub file: String,
    pub sha256: String,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub price: Option<Price>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Price {
    pub per_hour: f64,
    pub currency: String,
}

impl Default for Price {
    fn default() -> Price {
        Price { per_hour: 0.0, currency: "USD".into() }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phase {
    pub name: String,
    pub kind: String,
    pub command_line: String,
    pub ok: bool,
    /// `None` when the phase wrote no result.
    pub result: Option<PhaseResult>,
}

/// What one phase wrote.
#[derive(Debug, Clone, PartialEq)]
pub enum PhaseResult {
    /// A run's result (it has `totals`).
    Run(Box<Document>),
    /// A capacity search's (it has `capacity`).
    Capacity(CapacityResult),
    /// A fill's (it has `keys` and `key_prefix`).
    Fill(FillResult),
    /// Anything else, as written.
    Other(serde_json::Value),
}

impl PhaseResult {
    /// The run's document, when the phase was a run.
    pub fn run(&self) -> Option<&Document> {
        match self {
            PhaseResult::Run(doc) => Some(doc),
            _ => None,
        }
    }

    /// A capacity search's answer, when it found one.
    pub fn capacity_per_sec(&self) -> Option<f64> {
        match self {
            PhaseResult::Capacity(c) => c.capacity.requests_per_sec,
            _ => None,
        }
    }
}

impl Serialize for PhaseResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PhaseResult::Run(doc) => doc.serialize(s),
            PhaseResult::Capacity(c) => c.serialize(s),
            PhaseResult::Fill(f) => f.serialize(s),
            PhaseResult::Other(v) => v.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for PhaseResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<PhaseResult, D::Error> {
        use serde::de::Error;
        // Which kind of result a phase wrote is told by its one distinguishing key.
        let value = serde_json::Value::deserialize(d)?;
        let has = |key: &str| value.get(key).is_some();
        if has("totals") {
            Ok(PhaseResult::Run(Box::new(serde_json::from_value(value).map_err(D::Error::custom)?)))
        } else if has("capacity") {
            Ok(PhaseResult::Capacity(serde_json::from_value(value).map_err(D::Error::custom)?))
        } else if has("keys") && has("key_prefix") {
            Ok(PhaseResult::Fill(serde_json::from_value(value).map_err(D::Error::custom)?))
        } else {
            Ok(PhaseResult::Other(value))
        }
    }
}

/// What a fill did: `respbench fill --json`, and a scenario's fill phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FillResult {
    pub key_prefix: String,
    pub key_min: u64,
    pub key_max: u64,
    pub keys: u64,
    pub value_bytes: usize,
    pub target_bytes: Option<u64>,
    pub memory_bytes: Option<u64>,
    pub bytes_per_key: Option<f64>,
    pub used_memory_before: Option<u64>,
    pub used_memory_after: Option<u64>,
    pub evicted_keys: u64,
    pub elapsed_secs: f64,
    pub interrupted: bool,
}

/// `respbench capacity --json`: the objective, every step and the answer.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CapacityResult {
    pub capacity: Capacity,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Capacity {
    pub slo: Slo,
    pub steps: Vec<CapacityStep>,
    /// The highest rate that held; `None` when none did.
    pub requests_per_sec: Option<f64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Slo {
    pub percentile: f64,
    pub bound_us: f64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CapacityStep {
    pub requested_per_sec: f64,
    pub achieved_per_sec: f64,
    pub latency_us: f64,
    pub errors: u64,
    pub held: bool,
    /// How much of the step's p99 the client added, as a share (kernel timestamps on; open
    /// loop has them by default): a step whose latency is the client's is no measure of the
    /// server's capacity.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_share_of_p99: Option<f64>,
}

impl ScenarioDocument {
    /// The text `respbench run --json` writes.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plain data serialises") + "\n"
    }
}
