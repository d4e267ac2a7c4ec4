//! respbench's result as one owned type: what `--json` writes (key for key, in order) and what
//! every other output reads back (HTML, CSV, Markdown, `merge`, `report`, `compare`, memtier's
//! files of a merged result). Fields missing from an older file take their defaults, so results
//! of schema version 1 written before a field was added still load. docs/json-schema.json is
//! checked against this type by tests/json_schema.rs.

mod error;
pub use error::Malformed;
pub mod histo;
pub mod interval_log;
mod parts;
mod result;
pub mod role_figures;
pub mod roles;
mod roles_queue;
pub mod scenario;

use serde::Deserialize;

pub use self::parts::*;
pub use self::result::{Document, MergedFrom, Recovery, as_kept};
pub use self::scenario::{
    Capacity, CapacityResult, CapacityStep, FillResult, Phase, PhaseResult, Price, ScenarioDocument, ScenarioInfo, Slo,
};

/// Bumped whenever a field changes meaning or disappears; additions keep the version.
pub const SCHEMA_VERSION: u32 = 1;

/// A saved result file: one run's (or a merge's) result, or a scenario's.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultFile {
    Run(Box<Document>),
    Scenario(Box<ScenarioDocument>),
}

/// What tells a result file's kind: a scenario's has `scenario` and a list of `phases`, a
/// run's has `tool.name` "respbench" and a numeric `schema_version`.
#[derive(Deserialize)]
struct Kind {
    scenario: Option<serde_json::Value>,
    phases: Option<Vec<serde_json::Value>>,
    tool: Option<serde_json::Value>,
    schema_version: Option<serde_json::Value>,
}

impl ResultFile {
    /// Reads a result file's text; `Err` says why it is none (`what` names it).
    pub fn parse(text: &str, what: &str) -> Result<ResultFile, Malformed> {
        let value: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("{what} is not a respbench result (invalid JSON: {e})"))?;
        let invalid = |e: serde_json::Error| format!("{what} is not a respbench result ({e})");
        let kind: Kind = serde_json::from_value(value.clone()).map_err(invalid)?;
        if kind.scenario.is_some() && kind.phases.is_some() {
            return Ok(ResultFile::Scenario(Box::new(serde_json::from_value(value).map_err(invalid)?)));
        }
        let ours = kind.tool.as_ref().and_then(|t| t.get("name")).and_then(|n| n.as_str()) == Some("respbench");
        if !ours || kind.schema_version.as_ref().and_then(|v| v.as_u64()).is_none() {
            return Err(
                format!("{what} is not a respbench result (no tool.name \"respbench\" and schema_version)").into()
            );
        }
        Ok(ResultFile::Run(Box::new(serde_json::from_value(value).map_err(invalid)?)))
    }

    /// The name comparisons give it: its label, else `stem` (the file's stem).
    pub fn name(&self, stem: &str) -> String {
        match self {
            ResultFile::Run(doc) => doc.label.clone().unwrap_or_else(|| stem.to_string()),
            ResultFile::Scenario(_) => stem.to_string(),
        }
    }
}

/// The JSON Schema of the result as [`Document`] writes it, which tests/json_schema.rs checks
/// docs/json-schema.json (written for people, with descriptions) against.
pub fn json_schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().for_serialize().into_generator();
    generator.into_root_schema_for::<Document>().to_value()
}
