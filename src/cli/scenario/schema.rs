//! The scenario file's types: what `respbench run FILE.toml` reads (serde, unknown keys refused)
//! and what the editors' JSON Schema (`docs/scenario-schema.json`) is generated from, so the two
//! cannot drift apart.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toml::Spanned;

/// A whole benchmark procedure: where, what, and the phases run in order.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// What this scenario is for (the guide it follows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Multiplies key numbers (a range's first key, its count of keys, median and stddev),
    /// request counts, durations and byte memory targets (0.001 runs a guide small against a
    /// local server); `respbench run --scale` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// The server.
    #[serde(default)]
    pub target: Target,
    /// What the target costs per hour: `respbench report A.json B.json` then shows operations
    /// per unit of currency (ops/s × 3600 / per_hour) beside each file's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<Price>")]
    pub price: Option<Spanned<Price>>,
    /// Named key ranges and how keys are drawn from them.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub keyspaces: BTreeMap<String, Keyspace>,
    /// Named value-size distributions.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, Values>,
    /// Named command mixes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub mixes: BTreeMap<String, Mix>,
    /// Settings every phase starts from (a phase's own settings win).
    #[serde(default, skip_serializing_if = "Phase::is_empty")]
    pub defaults: Phase,
    /// The phases, run in order.
    #[serde(rename = "phase", default)]
    #[schemars(with = "Vec<Phase>")]
    pub phases: Vec<Spanned<Phase>>,
}

/// The server and how to log in. Secrets are never written inline: by environment variable or
/// file only.
#[derive(Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Target {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// A unix socket instead of host and port.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub tls: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cacert: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sni: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub tls_skip_verify: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub cluster: bool,
    #[serde(default, skip_serializing_if = "is_false")]
    pub resp3: bool,
    /// ACL user name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// The environment variable holding the password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub password_env: Option<Spanned<String>>,
    /// A file holding the password (its first line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub password_file: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db: Option<u32>,
}

/// The target's price per hour (an instance's on-demand price, say), for ops per dollar.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// The price of one hour of the target, in `currency`: 0.126 for an instance at
    /// $0.126 an hour. Above 0.
    pub per_hour: f64,
    /// The currency of `per_hour`, as the report labels it (default "USD").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub currency: Option<String>,
}

impl Price {
    pub fn currency(&self) -> &str {
        self.currency.as_deref().unwrap_or("USD")
    }
}

/// How keys are drawn from a keyspace.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Distribution {
    /// In order, wrapping around.
    Sequential,
    /// Uniformly at random.
    Random,
    /// Normal around `median` (default the middle) with `stddev`.
    Gaussian,
    /// Zipf: the lowest key number is the most popular.
    Zipf,
    /// Each connection walks its own slice in order.
    Parallel,
}

impl Distribution {
    pub fn letter(self) -> char {
        match self {
            Distribution::Sequential => 'S',
            Distribution::Random => 'R',
            Distribution::Gaussian => 'G',
            Distribution::Zipf => 'Z',
            Distribution::Parallel => 'P',
        }
    }

    pub fn from_letter(c: char) -> Option<Distribution> {
        Some(match c {
            'S' => Distribution::Sequential,
            'R' => Distribution::Random,
            'G' => Distribution::Gaussian,
            'Z' => Distribution::Zipf,
            'P' => Distribution::Parallel,
            _ => return None,
        })
    }
}

/// A key range: `prefix` and a number from `min` to `max`.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Keyspace {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<Distribution>,
    /// Gaussian: the centre (default the middle of the range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median: Option<f64>,
    /// Gaussian: the spread (default a sixth of the range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stddev: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zipf_exponent: Option<f64>,
}

/// Value sizes: one of `size`, `range` or `list`.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Values {
    /// A fixed size: 32, "1k".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    /// Uniform sizes: "32-1024".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    /// Weighted sizes: "32:7,1024:3".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
}

/// A command mix: SET and GET weights, or commands with weights (not both).
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Mix {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub get: Option<u32>,
    /// The keyspace SET and GET draw from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub keyspace: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<MixCommand>,
}

/// One command of a mix, with placeholders (`__key__`, `__data__`, ...).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixCommand {
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub keyspace: Option<Spanned<String>>,
}

/// What a phase does.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Write every key of the keyspace once, or up to `memory_target`.
    Fill,
    /// Load whose results are kept apart from the comparison.
    Warmup,
    /// A measured run, closed loop or at `rate`, by `requests` or `duration`.
    Run,
    /// One run per entry of `rates` or of `connection_steps`.
    Steps,
    /// The highest rate that meets `slo` (respbench capacity).
    Capacity,
}

/// A phase, or (as `[defaults]`) the settings every phase starts from. Any respbench flag not
/// named here goes in `args`.
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Phase {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<Kind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Run the phase this many times in a row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeat: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub mix: Option<Spanned<String>>,
    /// The keyspace, when there is no mix (or for a fill).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub keyspace: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub values: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u32>,
    /// Total requests ("100k" accepted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<String>,
    /// "30s", "5m", "250ms".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Open loop: requests per second in total.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// "constant" or "poisson".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    /// Load kept out of every figure before the measured part: "5s".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<u32>,
    /// Fill: a share of maxmemory ("75%") or a size ("2gb").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_target: Option<String>,
    /// Fill: the server's memory when it hides maxmemory ("3gb").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Steps: the rates, one run each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<u64>,
    /// Steps: the connection counts, one run each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub connection_steps: Vec<u32>,
    /// Capacity: the objective, "p99=1ms".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_rate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision: Option<f64>,
    /// Further respbench flags, as on the command line.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The run's roles (`[[phase.role]]`), client groups of one run (`--role`); the phase's
    /// own mix does not run beside them unless a mix role names it.
    #[serde(rename = "role", default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<PhaseRole>,
}

/// A role of a phase's run: a kind (`pubsub`, `stream`, `queue`, `tracking`) with its
/// `settings`, or a `mix` with its own run keys (a mix, keyspace and values named above, and
/// its connections, threads, pipeline and rate).
#[derive(Debug, Default, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PhaseRole {
    pub name: String,
    /// pubsub, stream, queue, tracking or mix.
    pub kind: String,
    /// A kind's settings, as `--role NAME:KIND:SETTINGS` takes them: "channels=10,subscribers=5,rate=1000".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<String>,
    /// A mix role: the mix it runs (from `[mixes]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub mix: Option<Spanned<String>>,
    /// A mix role without a mix: its keyspace (from `[keyspaces]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub keyspace: Option<Spanned<String>>,
    /// A mix role: its value sizes (from `[values]`; one size beside other roles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<String>")]
    pub values: Option<Spanned<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pipeline: Option<u32>,
    /// A mix role in open loop: its requests per second (closed loop without it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<u64>,
    /// "constant" or "poisson".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrival: Option<String>,
    /// Any role: how far into the measured run its requests begin, as in "1s" (with the run
    /// without it); its listeners open before the run all the same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
}

impl Phase {
    pub fn is_empty(&self) -> bool {
        toml::to_string(self).map_or(true, |s| s.trim().is_empty())
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// The JSON Schema of the scenario file, for editors.
pub fn json_schema() -> String {
    let schema = schemars::schema_for!(Scenario);
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serialises");
    text.push('\n');
    text
}
