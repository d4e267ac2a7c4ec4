//! One specification run against the server: its topology matched, the configuration
//! parameters read and set, the preload, the init commands, the keyspace check, the client,
//! then the parameters put back (unless `--keep-config`). The server is talked to over plain
//! control connections for everything but the preload and the client, which are engine runs.

use std::process::ExitCode;

use super::error::SpecError;
use super::plan::{Spec, Steps};
use super::summary::{CheckFigures, Parameter, SpecResult, Verdict};
use crate::cli::exit;
use crate::cli::run::{self, Plan, RunContext};
use crate::config::Config;
use crate::net::{CallError, ServerInfo, Session};
use crate::report::document::Document;
use crate::report::live::sink::LiveLine;
use crate::report::memtier::stats::MemtierView;
use crate::report::{self, memtier};
use crate::resp::value::{self, Value};

/// The server's control connections: the one given, and in cluster mode every primary.
pub struct Server {
    sessions: Vec<Session>,
    pub info: Option<ServerInfo>,
    pub topology: Topology,
}

impl Server {
    pub fn open(config: &Config) -> Result<Server, SpecError> {
        let mut seed = Session::open(&config.server).map_err(|e| e.to_string())?;
        let info = ServerInfo::query(&mut seed);
        let mut sessions = vec![seed];
        if config.cluster.is_some() {
            let shards = crate::net::cluster::shards(&mut sessions[0], &config.server).map_err(|e| e.to_string())?;
            sessions = shards
                .iter()
                .map(|s| Session::open(&s.primary.options(&config.server)).map_err(|e| e.to_string()))
                .collect::<Result<_, _>>()?;
        }
        let mut server = Server { sessions, info, topology: Topology::default() };
        server.topology = server.read_topology();
        Ok(server)
    }

    fn read_topology(&mut self) -> Topology {
        let cluster = (self.sessions.len() > 1 || self.info_field("cluster", "cluster_enabled") == Some(1))
            .then_some(self.sessions.len());
        let replicas = self.info_field("replication", "connected_slaves").unwrap_or(0);
        let io_threads = self.config_get("io-threads").ok().flatten().and_then(|v| v.parse().ok()).unwrap_or(1);
        let aof = self.config_get("appendonly").ok().flatten().as_deref() == Some("yes")
            && self.config_get("appendfsync").ok().flatten().as_deref() == Some("everysec");
        Topology { cluster, replicas, io_threads, aof }
    }

    fn info_field(&mut self, section: &str, field: &str) -> Option<u64> {
        let reply = self.sessions[0].call(&[b"INFO", section.as_bytes()]).ok()?;
        let text = String::from_utf8_lossy(reply.text()).into_owned();
        text.lines().find_map(|l| l.strip_prefix(field)?.strip_prefix(':')?.trim().parse().ok())
    }

    /// `CONFIG GET name` on the first node: `None` when the server has no such parameter.
    pub fn config_get(&mut self, name: &str) -> Result<Option<String>, SpecError> {
        let reply = self.sessions[0].call(&[b"CONFIG", b"GET", name.as_bytes()]).map_err(|e| e.to_string())?;
        let pairs = match value::parse(&reply.0) {
            Some(Value::Array(items)) => items,
            _ => return Err(format!("CONFIG GET {name}: the reply is not a list").into()),
        };
        Ok(pairs.chunks(2).find(|p| p[0].as_str() == Some(name)).and_then(|p| p.get(1)?.as_str().map(str::to_string)))
    }

    /// `CONFIG SET name value` on every node.
    fn config_set(&mut self, name: &str, value: &str) -> Result<(), SpecError> {
        for session in &mut self.sessions {
            session.call(&[b"CONFIG", b"SET", name.as_bytes(), value.as_bytes()]).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// One init command, to the first node.
    fn send(&mut self, words: &[String]) -> Result<(), SpecError> {
        let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        match self.sessions[0].call(&args) {
            Ok(_) => Ok(()),
            Err(CallError::Server(msg)) => Err(msg.into()),
            Err(e) => Err(e.to_string().into()),
        }
    }

    /// `FLUSHALL` on every node.
    pub fn flush(&mut self) -> Result<(), SpecError> {
        for session in &mut self.sessions {
            session.call(&[b"FLUSHALL"]).map_err(|e| format!("FLUSHALL: {e}"))?;
        }
        Ok(())
    }

    /// Keys in every database of every node (`INFO keyspace`).
    pub fn keys(&mut self) -> Result<u64, SpecError> {
        let mut total = 0;
        for session in &mut self.sessions {
            let reply = session.call(&[b"INFO", b"keyspace"]).map_err(|e| format!("INFO keyspace: {e}"))?;
            let text = String::from_utf8_lossy(reply.text()).into_owned();
            total += text
                .lines()
                .filter(|l| l.starts_with("db"))
                .filter_map(|l| l.split_once("keys=")?.1.split(',').next()?.trim().parse::<u64>().ok())
                .sum::<u64>();
        }
        Ok(total)
    }
}

/// What the server is, in the terms of the specifications' `redis-topologies`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Topology {
    /// Cluster mode with this many primaries.
    pub cluster: Option<usize>,
    pub replicas: u64,
    pub io_threads: u64,
    /// `appendonly yes` with `appendfsync everysec`.
    pub aof: bool,
}

impl Topology {
    /// A topology name (`oss-standalone-02-io-threads`, `oss-cluster-3-primaries`, ...) read;
    /// `None` for a name respbench does not know (`-rdb` asks for a replica's disk transfer,
    /// which respbench cannot see).
    pub fn parse(name: &str) -> Option<Topology> {
        let mut t = Topology { io_threads: 1, ..Topology::default() };
        let rest = if let Some(rest) = name.strip_prefix("oss-standalone") {
            rest
        } else {
            let rest = name.strip_prefix("oss-cluster-")?;
            let (n, rest) = rest.split_once("-primaries")?;
            t.cluster = Some(n.parse().ok()?);
            rest
        };
        let words: Vec<&str> = rest.split('-').filter(|w| !w.is_empty()).collect();
        let mut i = 0;
        while i < words.len() {
            match (words[i], words.get(i + 1), words.get(i + 2)) {
                (n, Some(&"replicas"), _) => t.replicas = n.parse().ok()?,
                (n, Some(&"io"), Some(&"threads")) => {
                    t.io_threads = n.parse().ok()?;
                    i += 1;
                }
                ("aof", Some(&"everysec"), _) => t.aof = true,
                _ => return None,
            }
            i += 2;
        }
        Some(t)
    }

    /// The name a specification would give this server.
    pub fn name(&self) -> String {
        let mut s = match self.cluster {
            Some(n) => format!("oss-cluster-{n}-primaries"),
            None => "oss-standalone".into(),
        };
        if self.replicas > 0 {
            s += &format!("-{:02}-replicas", self.replicas);
        }
        if self.io_threads > 1 {
            s += &format!("-{:02}-io-threads", self.io_threads);
        }
        if self.aof {
            s += "-aof-everysec";
        }
        s
    }
}

/// How specifications are run.
pub struct Options<'a> {
    pub keep_config: bool,
    pub flushall: bool,
    pub out_dir: Option<&'a std::path::Path>,
    /// `--runs`: each client this many times (or as many as its own `--run-count` says).
    pub runs: usize,
}

/// Runs one specification; what it gives for the summary, and the files to write.
pub fn run_spec(
    spec: &Spec,
    steps: &Steps,
    server: &mut Server,
    options: &Options<'_>,
    cx: &RunContext<'_>,
) -> (SpecResult, Vec<(std::path::PathBuf, String)>) {
    let mut result = SpecResult::new(spec);
    let Some(topology) = spec.topologies.iter().find(|t| Topology::parse(t).as_ref() == Some(&server.topology)) else {
        result.verdict = Verdict::Skipped;
        result.reason = Some(format!(
            "the server is {}; the specification runs on {}",
            server.topology.name(),
            spec.topologies.join(", ")
        ));
        return (result, Vec::new());
    };
    result.topology = Some(topology.clone());
    // The old values first: a parameter the server lacks skips the specification untouched.
    for (name, value) in &steps.parameters {
        match server.config_get(name) {
            Ok(Some(old)) => result.parameters.push(Parameter { name: name.clone(), value: value.clone(), old }),
            Ok(None) => return skipped(result, format!("the server has no configuration parameter {name}")),
            Err(e) => return failed(result, format!("CONFIG GET {name}: {e}")),
        }
    }
    if options.flushall
        && let Err(e) = server.flush()
    {
        return failed(result, e.to_string());
    }
    let mut set = Vec::new();
    let mut outcome = Err(SpecError(String::new()));
    for p in &result.parameters {
        eprintln!("respbench: {}: CONFIG SET {} '{}' (was '{}')", spec.name, p.name, p.value, p.old);
        if let Err(e) = server.config_set(&p.name, &p.value) {
            outcome = Err(SpecError(format!("CONFIG SET {} '{}': {e}", p.name, p.value)));
            break;
        }
        set.push(p.clone());
    }
    if set.len() == result.parameters.len() {
        outcome = setup_and_run(spec, steps, server, &mut result, (options.runs, cx));
    }
    put_back(spec, server, &set, options.keep_config);
    match outcome {
        Ok((doc, memtier_json)) => {
            let files = options.out_dir.map(|dir| files(dir, &result.name, &doc, memtier_json)).unwrap_or_default();
            result.files = files.iter().map(|(p, _)| p.display().to_string()).collect();
            (result, files)
        }
        Err(why) => failed(result, why.0),
    }
}

fn skipped(mut result: SpecResult, why: String) -> (SpecResult, Vec<(std::path::PathBuf, String)>) {
    result.verdict = Verdict::Skipped;
    result.reason = Some(why);
    (result, Vec::new())
}

fn failed(mut result: SpecResult, why: String) -> (SpecResult, Vec<(std::path::PathBuf, String)>) {
    result.verdict = Verdict::Failed;
    result.reason = Some(why);
    (result, Vec::new())
}

/// The parameters set, put back (or kept, said either way).
fn put_back(spec: &Spec, server: &mut Server, set: &[Parameter], keep: bool) {
    if set.is_empty() {
        return;
    }
    let names: Vec<String> = set.iter().map(|p| p.name.clone()).collect();
    if keep {
        eprintln!("respbench: {}: configuration kept (--keep-config): {}", spec.name, names.join(", "));
        return;
    }
    for p in set.iter().rev() {
        if let Err(e) = server.config_set(&p.name, &p.old) {
            eprintln!("respbench: {}: cannot put {} back to '{}': {e}", spec.name, p.name, p.old);
        }
    }
    eprintln!("respbench: {}: configuration put back: {}", spec.name, names.join(", "));
}

/// The preload, the init commands, the check and the client: respbench's result document and
/// memtier's JSON, or why the specification stopped.
fn setup_and_run(
    spec: &Spec,
    steps: &Steps,
    server: &mut Server,
    result: &mut SpecResult,
    (runs, cx): (usize, &RunContext<'_>),
) -> Result<(Document, String), SpecError> {
    if let Some(preload) = &steps.preload {
        eprintln!("respbench: {}: preload: {}", spec.name, preload.describe());
        let outcome = run::measure(&preload.config, cx).map_err(|e| format!("preload: {e}"))?;
        if let Some(why) = exit::failure(&preload.config, &outcome, &preload.output) {
            return Err(format!("preload: {why}").into());
        }
        result.preload_ops = Some(crate::stats::total(&outcome.ops).count);
    }
    for (i, words) in steps.init.iter().enumerate() {
        server.send(words).map_err(|e| format!("init command {} ({}): {e}", i + 1, shown(words)))?;
    }
    if let Some(expected) = steps.check {
        let found = server.keys()?;
        let passed = found == expected.keys;
        result.check = Some(CheckFigures { expected: expected.keys, written: expected.written, found, passed });
        if !passed {
            return Err(format!("keyspace check: expected {} keys, the server holds {found}", expected.keys).into());
        }
    }
    if steps.clients.is_empty() {
        eprintln!("respbench: {}: client: {}", spec.name, steps.client.describe());
    }
    for role in super::clients::describe(&steps.client.config) {
        eprintln!("respbench: {}: {role}", spec.name);
    }
    for note in &steps.notes {
        eprintln!("respbench: {}: note: {note}", spec.name);
    }
    client(steps, result, runs, cx)
}

/// The client run: respbench's document and memtier's JSON of it.
fn client(
    steps: &Steps,
    result: &mut SpecResult,
    runs: usize,
    cx: &RunContext<'_>,
) -> Result<(Document, String), SpecError> {
    let step = &steps.client;
    let (config, output) = (&step.config, &step.output);
    let mut runs = runs.max(output.runs);
    let mut notes = steps.notes.clone();
    if runs > 1 && !config.extras.roles.is_empty() {
        // As `--runs` with `--role`: a role's messages are counted over one run.
        notes.push(format!("one run, not {runs}: a role's messages are counted over one run"));
        eprintln!("respbench: {}: note: one run, not {runs}: a role's messages are counted over one run", result.name);
        runs = 1;
    }
    let mut line = LiveLine::new(runs, false);
    let plan = Plan { config, runs, checks: Some(&output.notes) };
    let ran = run::run(&plan, cx, &mut [&mut line]).map_err(|e| run::failure_message(config, &e))?;
    let mut pooled = ran.pooled();
    // What the run does differently from the tools of `clientconfigs`, in its JSON's notes.
    pooled.notes.splice(0..0, notes);
    result.roles = role_figures(&pooled);
    let run = report::Run { config, outcome: &pooled, label: Some(&result.name), percentiles: &output.percentiles };
    let doc = report::run::json::document(&run);
    let view = MemtierView {
        config,
        percentiles: &output.percentiles,
        out_file: None,
        options: &step.memtier,
        arbitrary: output.arbitrary,
    };
    let memtier_json = memtier::json::render(&view, &ran.runs, &pooled);
    result.requests = Some(doc.totals.count);
    result.errors = Some(doc.totals.errors + doc.totals.failed);
    if let Some(why) = exit::failure(config, &pooled, output) {
        // Replies that were errors are not the specification's throughput: no figures.
        return Err(why.into());
    }
    result.ops_per_sec = Some(doc.totals.ops_per_sec);
    result.p50_ms = Some(doc.totals.latency_us.p50_us / 1000.0);
    result.p99_ms = Some(doc.totals.latency_us.p99_us / 1000.0);
    result.verdict = Verdict::Ran;
    Ok((doc, memtier_json))
}

/// Each role's delivery figures in a line (a run of `clientconfigs`).
fn role_figures(outcome: &crate::engine::Outcome) -> Vec<String> {
    let mut lines = Vec::new();
    for role in &outcome.roles {
        if let Some(m) = &role.messages {
            lines.push(format!(
                "pubsub: {} published, {} delivered of {} expected, {} lost, {} duplicated, {} out of order",
                m.published, m.delivered, m.expected_deliveries, m.lost, m.duplicated, m.out_of_order
            ));
        }
        if let Some(t) = &role.tracking {
            lines.push(format!(
                "tracking: {} invalidations, {} reads ({} local), {} stale reads",
                t.invalidations, t.reads, t.local_hits, t.stale_reads
            ));
        }
        if let Some(s) = &role.stream {
            lines
                .push(format!("stream: {} produced, {} consumed, {} unconsumed", s.produced, s.consumed, s.unconsumed));
        }
        if let Some(q) = &role.queue {
            lines.push(format!("queue: {} produced, {} consumed, {} unconsumed", q.produced, q.consumed, q.unconsumed));
        }
    }
    lines
}

fn shown(words: &[String]) -> String {
    let line = words.join(" ");
    if line.chars().count() > 60 { format!("{}...", line.chars().take(60).collect::<String>()) } else { line }
}

/// One specification's files: respbench's JSON, HTML and Markdown, and memtier's JSON.
fn files(dir: &std::path::Path, name: &str, doc: &Document, memtier_json: String) -> Vec<(std::path::PathBuf, String)> {
    vec![
        (dir.join(format!("{name}.json")), doc.to_json()),
        (dir.join(format!("{name}.html")), report::pages::html::render(doc)),
        (dir.join(format!("{name}.md")), report::run::tables::markdown(doc)),
        (dir.join(format!("{name}.memtier.json")), memtier_json),
    ]
}

/// The exit code of a whole run: non-zero when a specification failed or none ran.
pub fn exit_code(results: &[SpecResult], dry_run: bool) -> ExitCode {
    let failed = results.iter().any(|r| r.verdict == Verdict::Failed);
    let ran = results.iter().any(|r| r.verdict == Verdict::Ran);
    if failed || (!ran && !dry_run) { ExitCode::from(crate::cli::usage::EXIT_FAILURE) } else { ExitCode::SUCCESS }
}
