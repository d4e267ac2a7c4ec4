//! A benchmark specification file of the Redis project's `redis-benchmarks-specification`
//! (`test-suites/*.yml`, version 0.4), read into typed values. Fields the runner there uses for
//! containers (`run_image`, `resources`, `build-variants`, `exporter`) are read and not used.
//! Every way a file can be wrong is one line naming the file, the field and what was expected.

use std::path::Path;

use super::error::SpecError;
use serde::Deserialize;
use serde_norway::Value;

/// The one client tool respbench stands in for.
pub const MEMTIER: &str = "memtier_benchmark";

/// The specification versions this reader knows.
pub const KNOWN_VERSIONS: [&str; 1] = ["0.4"];

/// One specification file, as written.
#[derive(Debug, Clone, Deserialize)]
pub struct SpecFile {
    pub version: Value,
    pub name: String,
    pub dbconfig: DbConfig,
    #[serde(rename = "tested-groups", default)]
    pub groups: Vec<String>,
    #[serde(rename = "tested-commands", default)]
    pub commands: Vec<String>,
    #[serde(rename = "redis-topologies")]
    pub topologies: Vec<String>,
    pub priority: i64,
    pub clientconfig: Option<Tool>,
    pub clientconfigs: Option<Vec<Tool>>,
}

/// `dbconfig`: the server's state before the clients run.
#[derive(Debug, Clone, Deserialize)]
pub struct DbConfig {
    /// Configuration parameter name to value (strings or numbers in the files).
    #[serde(rename = "configuration-parameters", default)]
    pub parameters: serde_norway::Mapping,
    pub preload_tool: Option<Tool>,
    /// One command line, or a list of them (each a line, or a list of words).
    pub init_commands: Option<Value>,
    /// A Lua script (or a list of them) run with `EVAL script 0`.
    pub init_lua: Option<Value>,
    pub check: Option<Check>,
    /// An RDB file to load.
    pub dataset: Option<String>,
}

/// `dbconfig.check`.
#[derive(Debug, Clone, Deserialize)]
pub struct Check {
    pub keyspacelen: u64,
}

/// `clientconfig`, one of `clientconfigs`, or `dbconfig.preload_tool`.
#[derive(Debug, Clone, Deserialize)]
pub struct Tool {
    pub tool: String,
    pub arguments: String,
}

/// Reads and checks one file: its YAML, its version and every field's type.
pub fn load(path: &Path) -> Result<SpecFile, SpecError> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown}: cannot read: {e}"))?;
    let spec: SpecFile =
        serde_norway::from_str(&text).map_err(|e| format!("{shown}: {}", expected(&one_line(&e.to_string()))))?;
    let version = match &spec.version {
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        other => return Err(format!("{shown}: version: expected a number such as 0.4, got {}", kind(other)).into()),
    };
    if !KNOWN_VERSIONS.contains(&version.as_str()) {
        return Err(format!("{shown}: version: expected {}, got {version}", KNOWN_VERSIONS.join(" or ")).into());
    }
    parameters(&spec.dbconfig.parameters).map_err(|e| format!("{shown}: {e}"))?;
    init_commands(&spec.dbconfig).map_err(|e| format!("{shown}: {e}"))?;
    Ok(spec)
}

/// `dbconfig.configuration-parameters` as names and values, in the file's order. A value
/// written `'""'` (an empty argument on a server's command line) is the empty string.
pub fn parameters(map: &serde_norway::Mapping) -> Result<Vec<(String, String)>, SpecError> {
    let field = "dbconfig.configuration-parameters";
    map.iter()
        .map(|(k, v)| {
            let name =
                k.as_str().ok_or_else(|| format!("{field}: expected parameter names as strings, got {}", kind(k)))?;
            let value =
                scalar(v).ok_or_else(|| format!("{field}.{name}: expected a string or a number, got {}", kind(v)))?;
            let value = if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
                value[1..value.len() - 1].to_string()
            } else {
                value
            };
            Ok((name.to_string(), value))
        })
        .collect()
}

/// `dbconfig.init_commands` and `init_lua` as the commands to send, each a list of words: a
/// line with a double quote is split as a shell would (`"SETBIT" "users" "1" "1"`), one without
/// at white space, as the Redis project's runner does; each Lua script is `EVAL script 0`.
pub fn init_commands(db: &DbConfig) -> Result<Vec<Vec<String>>, SpecError> {
    let mut out = Vec::new();
    let field = "dbconfig.init_commands";
    let lines = match &db.init_commands {
        None => Vec::new(),
        Some(Value::Sequence(items)) => items.clone(),
        Some(one) => vec![one.clone()],
    };
    for (i, item) in lines.iter().enumerate() {
        let words = match item {
            Value::String(line) if line.contains('"') => shlex::split(line)
                .ok_or_else(|| format!("{field}[{i}]: expected a command line with balanced quotes, got {line}"))?,
            Value::String(line) => line.split_whitespace().map(str::to_string).collect(),
            Value::Sequence(words) => words
                .iter()
                .map(|w| scalar(w).ok_or_else(|| format!("{field}[{i}]: expected words as strings, got {}", kind(w))))
                .collect::<Result<_, _>>()?,
            other => {
                return Err(
                    format!("{field}[{i}]: expected a command line or a list of words, got {}", kind(other)).into()
                );
            }
        };
        if words.is_empty() {
            return Err(format!("{field}[{i}]: expected a command, got an empty line").into());
        }
        out.push(words);
    }
    let scripts = match &db.init_lua {
        None => Vec::new(),
        Some(Value::Sequence(items)) => items.clone(),
        Some(one) => vec![one.clone()],
    };
    for (i, script) in scripts.iter().enumerate() {
        let Value::String(text) = script else {
            return Err(
                format!("dbconfig.init_lua[{i}]: expected a Lua script as a string, got {}", kind(script)).into()
            );
        };
        out.push(vec!["EVAL".into(), text.clone(), "0".into()]);
    }
    Ok(out)
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(if *b { "yes" } else { "no" }.to_string()),
        _ => None,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "nothing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Sequence(_) => "a list",
        Value::Mapping(_) => "a mapping",
        Value::Tagged(_) => "a tagged value",
    }
}

/// A missing field's message with what the field holds.
fn expected(message: &str) -> String {
    const FIELDS: [(&str, &str); 10] = [
        ("version", "the specification version, 0.4"),
        ("name", "the specification's name"),
        ("dbconfig", "a mapping (configuration-parameters, preload_tool, init_commands, check)"),
        ("redis-topologies", "a list of topology names such as oss-standalone"),
        ("priority", "a whole number"),
        ("tool", "the tool's name, such as memtier_benchmark"),
        ("arguments", "the tool's command line"),
        ("keyspacelen", "the number of keys after the setup"),
        ("tested-groups", "a list of command groups"),
        ("tested-commands", "a list of commands"),
    ];
    let missing = message.split_once("missing field `").and_then(|(_, rest)| rest.split_once('`')).map(|(f, _)| f);
    match missing.and_then(|m| FIELDS.iter().find(|(f, _)| *f == m)) {
        Some((_, what)) => format!("{message}: expected {what}"),
        None => message.to_string(),
    }
}

/// The YAML reader's message on one line.
fn one_line(message: &str) -> String {
    message.split_whitespace().collect::<Vec<_>>().join(" ")
}
