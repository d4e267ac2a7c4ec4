//! What a specification asks for, as typed steps: the configuration parameters, the preload and
//! the client (each memtier command line built into a plan by the memtier front-end, then
//! pointed at the server respbench was given), the init commands and the keyspace check; or
//! the reason respbench does not run it. `--filter`, `--test-time` and `--scale` act here.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use super::clients::{self, Client};
use super::error::SpecError;
use super::schema::{self, MEMTIER, SpecFile, Tool};
use crate::cli::memtier::{Translated, translate};
use crate::cli::options::Output;
use crate::config::{ArgPart, Config, ReadFrom, ServerOptions, StopAfter, ValueSize};
use crate::report::memtier::stats::MemtierOutput;

/// One specification: what it is, and its steps or why respbench does not run it.
pub struct Spec {
    pub file: PathBuf,
    pub name: String,
    pub groups: Vec<String>,
    pub commands: Vec<String>,
    pub topologies: Vec<String>,
    pub priority: i64,
    pub steps: Result<Steps, SpecError>,
}

/// The steps of a specification, in the order they run.
pub struct Steps {
    pub parameters: Vec<(String, String)>,
    pub preload: Option<Step>,
    pub init: Vec<Vec<String>>,
    pub check: Option<Expected>,
    pub client: Step,
    /// `clientconfigs` as written (none for one `clientconfig`): the client step runs them
    /// together, as a role.
    pub clients: Vec<Tool>,
    /// What the run does differently from the tools of `clientconfigs`.
    pub notes: Vec<String>,
}

/// A memtier command line and the plan it builds.
pub struct Step {
    pub arguments: String,
    pub config: Config,
    pub output: Output,
    /// memtier's output options the line gives (its JSON's layout).
    pub memtier: MemtierOutput,
    /// Keys the line writes as given, before `--scale` (see [`written`]).
    pub unscaled: u64,
}

/// `dbconfig.check.keyspacelen`, and the figure expected after `--scale`.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Expected {
    pub written: u64,
    pub keys: u64,
}

/// How every plan is shaped: the server (respbench's own connection flags) and the shortening.
pub struct Shape {
    pub server: ServerOptions,
    pub cluster: Option<ReadFrom>,
    pub test_time: Option<Duration>,
    pub scale: f64,
}

/// Reads the file and builds its steps; `Err` is bad input (one line, exit 2), a refusal is
/// `Ok` with `steps: Err(reason)`.
pub fn build(file: PathBuf, shape: &Shape) -> Result<Spec, SpecError> {
    let spec = schema::load(&file)?;
    let parameters = schema::parameters(&spec.dbconfig.parameters).map_err(|e| format!("{}: {e}", file.display()))?;
    let init = schema::init_commands(&spec.dbconfig).map_err(|e| format!("{}: {e}", file.display()))?;
    if spec.clientconfig.is_none() && spec.clientconfigs.is_none() {
        return Err(
            format!("{}: clientconfig: expected a client configuration (tool, arguments)", file.display()).into()
        );
    }
    let steps = steps(&spec, parameters, init, shape);
    let SpecFile { name, groups, commands, topologies, priority, .. } = spec;
    Ok(Spec { file, name, groups, commands, topologies, priority, steps })
}

fn steps(
    spec: &SpecFile,
    parameters: Vec<(String, String)>,
    init: Vec<Vec<String>>,
    shape: &Shape,
) -> Result<Steps, SpecError> {
    if let Some(clients) = &spec.clientconfigs {
        clients::known(clients)?;
    } else if let Some(client) = &spec.clientconfig
        && client.tool != MEMTIER
    {
        return Err(format!("client tool {}: respbench stands in for {MEMTIER} only", client.tool).into());
    }
    let db = &spec.dbconfig;
    if let Some(preload) = &db.preload_tool
        && preload.tool != MEMTIER
    {
        return Err(format!("preload tool {}: respbench stands in for {MEMTIER} only", preload.tool).into());
    }
    if let Some(dataset) = &db.dataset {
        return Err(format!("dbconfig.dataset: loading an RDB file ({dataset}) is not supported").into());
    }
    let preload = db.preload_tool.as_ref().map(|t| step("dbconfig.preload_tool", t, shape, false)).transpose()?;
    let (client, clients, notes) = match (&spec.clientconfigs, &spec.clientconfig) {
        (Some(clients), _) => together(clients, shape)?,
        (None, Some(client)) => (step("clientconfig", client, shape, true)?, Vec::new(), Vec::new()),
        (None, None) => unreachable!("checked by build"),
    };
    let check = db.check.as_ref().map(|c| {
        // --scale shrinks the keys the preload writes; the keys the rest of the setup makes stay.
        let keys = match &preload {
            Some(p) if shape.scale < 1.0 && keyed(&p.config) => {
                c.keyspacelen.saturating_sub(p.unscaled) + written(&p.config)
            }
            _ => c.keyspacelen,
        };
        Expected { written: c.keyspacelen, keys }
    });
    Ok(Steps { parameters, preload, init, check, client, clients, notes })
}

/// `clientconfigs` run together: each memtier_benchmark line built into its plan, the tools
/// beside them read, all made one run with a role (`clients`); the step keeps the output
/// options of the memtier line the tools' runner exports.
fn together(tools: &[Tool], shape: &Shape) -> Result<(Step, Vec<Tool>, Vec<String>), SpecError> {
    let mut steps = Vec::with_capacity(tools.len());
    for (i, tool) in tools.iter().enumerate() {
        let memtier = tool.tool == MEMTIER;
        steps.push(memtier.then(|| step(&format!("clientconfigs[{i}]"), tool, shape, true)).transpose()?);
    }
    let clients: Vec<Client<'_>> = tools
        .iter()
        .zip(&steps)
        .map(|(tool, step)| Client { tool, memtier: step.as_ref().map(|s| s.config.clone()) })
        .collect();
    let made = clients::together(&clients)?;
    let Some(from) = steps.into_iter().nth(made.output_from).flatten() else {
        unreachable!("the output follows a memtier client")
    };
    let step = Step { config: made.config, unscaled: 0, ..from };
    Ok((step, tools.to_vec(), made.notes))
}

/// A memtier command line built by the memtier front-end, aimed at respbench's server and
/// shortened; a line the front-end refuses is refused with its reason.
fn step(field: &str, tool: &Tool, shape: &Shape, client: bool) -> Result<Step, SpecError> {
    let words = shlex::split(&tool.arguments)
        .ok_or_else(|| format!("{field}.arguments: the quotes are not balanced"))?
        .into_iter()
        .map(OsString::from)
        .collect::<Vec<_>>();
    let refused = |e: crate::cli::memtier::MemtierError| format!("{field}.arguments: {e}");
    let run = match translate(&words).map_err(refused)? {
        Translated::Run(run) => run,
        Translated::Print(_) => return Err(refused("they ask for help or the version, not a run".into()).into()),
    };
    let (mut config, output, memtier) = run.draft.into_plan().map_err(refused)?;
    config.server = shape.server.clone();
    config.cluster = shape.cluster;
    let unscaled = written(&config);
    if shape.scale < 1.0 {
        let keys = ((span(&config) as f64 * shape.scale).round() as u64).max(1);
        config.keys.max = config.keys.min + keys - 1;
        if let StopAfter::Requests(n) = config.stop {
            config.stop = StopAfter::Requests(((n as f64 * shape.scale).round() as u64).max(1));
        }
    }
    if let (true, Some(t)) = (client, shape.test_time) {
        config.stop = StopAfter::Duration(t);
    }
    Ok(Step { arguments: tool.arguments.clone(), config, output, memtier, unscaled })
}

/// Keys a writing plan leaves: for each key name its commands write (`session:__key__`,
/// `user:__key__:sessions`: one key per number of the range each), every key of the range, or
/// as many as that name's share of the requests when they are fewer (memtier's default of 10000
/// requests a client over its default range of ten million keys writes the first of them).
fn written(config: &Config) -> u64 {
    let weighted: Vec<_> = config.commands.iter().filter(|c| c.weight > 0).collect();
    let total: u64 = weighted.iter().map(|c| u64::from(c.weight)).sum::<u64>().max(1);
    // Each distinct key argument, with the weight of the commands that name it.
    let mut names: Vec<(&Vec<ArgPart>, u64)> = Vec::new();
    for c in &weighted {
        let name = c.args.get(1).unwrap_or(&c.args[0]);
        match names.iter_mut().find(|(n, _)| *n == name) {
            Some((_, weight)) => *weight += u64::from(c.weight),
            None => names.push((name, u64::from(c.weight))),
        }
    }
    let per_name = |weight: u64| match config.stop {
        StopAfter::Requests(n) => (n * weight / total).min(span(config)),
        StopAfter::AllKeys | StopAfter::Duration(_) => span(config),
    };
    if names.is_empty() { span(config) } else { names.iter().map(|(_, weight)| per_name(*weight)).sum() }
}

/// Every command of the plan names its key by `__key__` (one key per number of the range); a
/// preload that writes fields or members of one key (`HSET hash1 __key__ ...`) leaves as many
/// keys whatever `--scale` does to its range.
fn keyed(config: &Config) -> bool {
    config
        .commands
        .iter()
        .filter(|c| c.weight > 0)
        .all(|c| c.args.get(1).is_some_and(|arg| arg.iter().any(|part| matches!(part, ArgPart::Key))))
}

/// Keys in the plan's range.
fn span(config: &Config) -> u64 {
    config.keys.max.saturating_sub(config.keys.min) + 1
}

impl Step {
    /// The plan in a line: connections, length, the commands' shares, keys and values.
    pub fn describe(&self) -> String {
        let c = &self.config;
        let mut s = format!("{} connections on {} threads, pipeline {}", c.connections, c.threads.max(1), c.pipeline);
        let _ = match c.stop {
            StopAfter::Requests(n) => write!(s, ", {n} requests"),
            StopAfter::AllKeys => write!(s, ", every key once"),
            StopAfter::Duration(d) => write!(s, ", {} s", d.as_secs_f64()),
        };
        let total: u64 = c.commands.iter().map(|x| u64::from(x.weight)).sum();
        let shares: Vec<String> = c
            .commands
            .iter()
            .filter(|x| x.weight > 0)
            .map(|x| format!("{} {:.0} %", x.name, 100.0 * f64::from(x.weight) / total.max(1) as f64))
            .collect();
        let _ = write!(s, "; {}", shares.join(", "));
        let _ = write!(s, "; keys {}{}..{}", c.keys.prefix, c.keys.min, c.keys.max);
        let _ = match &c.values {
            ValueSize::Fixed(n) => write!(s, ", values {n} B"),
            ValueSize::Range { min, max } => write!(s, ", values {min}-{max} B"),
            ValueSize::List(l) => write!(s, ", values from a list of {} sizes", l.len()),
        };
        s
    }
}

/// `--filter`: by name pattern (`*` and `?`), tested group, tested command, topology or
/// priority. Values of one kind are alternatives; kinds must all match.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    names: Vec<String>,
    groups: Vec<String>,
    commands: Vec<String>,
    topologies: Vec<String>,
    priorities: Vec<(i64, i64)>,
}

impl Filter {
    /// `PATTERN`, `name=PATTERN`, `group=G`, `command=C`, `topology=T`, `priority=N`,
    /// `priority=A-B`, `priority=..B`, `priority=A..`.
    pub fn add(&mut self, text: &str) -> Result<(), SpecError> {
        let Some((kind, value)) = text.split_once('=') else {
            self.names.push(text.to_string());
            return Ok(());
        };
        let value = value.to_string();
        match kind {
            "name" => self.names.push(value),
            "group" => self.groups.push(value.to_lowercase()),
            "command" => self.commands.push(value.to_lowercase()),
            "topology" => self.topologies.push(value),
            "priority" => self.priorities.push(priority_range(&value)?),
            _ => {
                return Err(format!(
                    "--filter '{text}': expected PATTERN or name=, group=, command=, topology= or priority="
                )
                .into());
            }
        }
        Ok(())
    }

    pub fn admits(&self, spec: &Spec) -> bool {
        let stem = spec.file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let any = |wanted: &[String], have: &[String]| {
            wanted.is_empty() || wanted.iter().any(|w| have.iter().any(|h| h.to_lowercase() == *w))
        };
        (self.names.is_empty() || self.names.iter().any(|p| glob(p, &spec.name) || glob(p, &stem)))
            && any(&self.groups, &spec.groups)
            && any(&self.commands, &spec.commands)
            && (self.topologies.is_empty() || self.topologies.iter().any(|t| spec.topologies.contains(t)))
            && (self.priorities.is_empty() || self.priorities.iter().any(|&(a, b)| (a..=b).contains(&spec.priority)))
    }
}

fn priority_range(text: &str) -> Result<(i64, i64), SpecError> {
    let bad = || format!("--filter priority={text}: expected N, A-B, ..B or A..");
    let num = |s: &str, default: i64| if s.is_empty() { Ok(default) } else { s.trim().parse().map_err(|_| bad()) };
    if let Some((a, b)) = text.split_once("..").or_else(|| text.split_once('-')) {
        Ok((num(a, i64::MIN)?, num(b, i64::MAX)?))
    } else {
        let n = num(text, 0)?;
        Ok((n, n))
    }
}

/// `*` any run of characters, `?` one; the rest literally.
fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn preload(line: &str) -> Config {
        let words: Vec<OsString> = shlex::split(line).unwrap().into_iter().map(OsString::from).collect();
        let Translated::Run(run) = translate(&words).unwrap() else { panic!("a run") };
        run.draft.into_plan().unwrap().0
    }

    #[test]
    fn the_keys_a_preload_writes_count_each_key_name() {
        // One key name: the range, or the requests when fewer.
        assert_eq!(written(&preload("--ratio 1:0 --key-minimum 1 --key-maximum 100 -n allkeys -c 1 -t 1")), 100);
        assert_eq!(written(&preload("--ratio 1:0 --key-maximum 1000000 -n 50 -c 2 -t 1")), 100);
        // Three names a number each, as the session-storage playbooks write them.
        let three = "--command \"HSET session:__key__ f v\" --command-key-pattern=P \
                     --command \"SADD user:__key__:sessions s\" --command-key-pattern=P \
                     --command \"ZADD org:__key__:sessions 1 m\" --command-key-pattern=P \
                     --key-minimum=1 --key-maximum=1001 -n 3000 -c 1 -t 1";
        assert_eq!(written(&preload(three)), 3000);
    }

    #[test]
    fn globs_and_priorities() {
        assert!(glob("*hash*", "memtier_benchmark-1Mkeys-hash-hget"));
        assert!(glob("memtier?benchmark*", "memtier_benchmark-x"));
        assert!(!glob("*zset*", "memtier_benchmark-1Mkeys-hash-hget"));
        assert_eq!(priority_range("1-10").unwrap(), (1, 10));
        assert_eq!(priority_range("..5").unwrap(), (i64::MIN, 5));
        assert_eq!(priority_range("7").unwrap(), (7, 7));
        assert!(priority_range("x").is_err());
    }
}
