//! Scenario files, the scenario front-end: a guide's whole procedure (fill, warm up, measure,
//! step, search) in one reviewed TOML file, and `--save-scenario`, which writes a command line
//! as one. Each phase compiles to steps whose settings are typed values on the flags' own types
//! (`compile`, `plan`), so the file can do whatever the flags can and the flags stay the one
//! source of truth; `run_file` runs the steps through the run API, `save` writes a plan back.

mod compile;
pub mod flags;
mod keys;
mod plan;
mod roles;
pub mod run_file;
pub mod save;
pub mod schema;

use std::path::{Path, PathBuf};

pub(crate) use plan::Planned;
pub use plan::{PlanError, Setting, Step, StepRole, Tool, Value};
pub use schema::{Kind, Phase, PhaseRole, Price, Scenario};

/// A scenario file as read: its text (kept in the result, with its hash) and its contents.
pub struct Loaded {
    pub path: PathBuf,
    pub text: String,
    pub scenario: Scenario,
}

/// A phase kind as the file spells it.
pub fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Fill => "fill",
        Kind::Warmup => "warmup",
        Kind::Run => "run",
        Kind::Steps => "steps",
        Kind::Capacity => "capacity",
    }
}

/// What `respbench run`'s own flags change: the server, and the scale.
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub scale: Option<f64>,
}

/// `FILE:LINE:COLUMN: key 'KEY': message` for a byte offset into the file.
pub fn locate(path: &Path, text: &str, offset: usize, msg: &str) -> String {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    let key = line_text
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_string())
        .filter(|k| !k.is_empty() && !k.starts_with('['))
        .or_else(|| {
            let t = line_text.trim();
            t.starts_with('[').then(|| t.trim_matches(['[', ']']).trim().to_string())
        });
    match key {
        Some(key) if !msg.contains(&format!("`{key}`")) => {
            format!("{}:{line}:{column}: key '{key}': {msg}", path.display())
        }
        _ => format!("{}:{line}:{column}: {msg}", path.display()),
    }
}

impl Loaded {
    /// Where in the phase of `step` its `key` is set (`pipeline` → the `pipeline = ` line).
    pub fn key_in_phase(&self, step: &Step, key: &str) -> Option<usize> {
        // The phase's lines: from its header to the next table.
        let rest = self.text.get(step.span.start..)?;
        let end = rest.match_indices("\n[").next().map_or(rest.len(), |(i, _)| i);
        let mut pos = 0;
        for line in rest[..end].lines() {
            if line.split_once('=').is_some_and(|(k, _)| k.trim() == key) {
                return Some(step.span.start + pos);
            }
            pos += line.len() + 1;
        }
        None
    }
}

/// Reads and checks a scenario file; every error is one line naming the file, line, column and key.
pub fn load(path: &Path) -> Result<Loaded, ScenarioError> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read scenario {}: {e}", path.display()))?;
    let scenario: Scenario = toml::from_str(&text).map_err(|e| {
        let msg = e.message().trim().replace('\n', " ");
        match e.span() {
            Some(span) => locate(path, &text, span.start, &msg),
            None => format!("{}: {msg}", path.display()),
        }
    })?;
    let loaded = Loaded { path: path.to_path_buf(), text, scenario };
    if loaded.scenario.phases.is_empty() {
        return Err(format!("{}: no [[phase]]: a scenario runs at least one phase", path.display()).into());
    }
    if let Some(price) = &loaded.scenario.price
        && !(price.get_ref().per_hour > 0.0 && price.get_ref().per_hour.is_finite())
    {
        let msg = format!("price per_hour {} must be a price above 0", price.get_ref().per_hour);
        return Err(loaded.at_key("per_hour", &msg).into());
    }
    if loaded.scenario.defaults.kind.is_some() {
        return Err(loaded.at_key("[defaults]", "'kind' belongs to a [[phase]], not to [defaults]").into());
    }
    Ok(loaded)
}

mod error;
#[cfg(test)]
// unsafe: one test sets an environment variable (set_var is unsafe in edition 2024).
#[allow(unsafe_code)]
mod tests;
pub use error::ScenarioError;
