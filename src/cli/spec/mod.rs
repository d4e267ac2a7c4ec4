//! `respbench spec PATH...`: runs the Redis project's benchmark specifications
//! (`redis-benchmarks-specification`, `test-suites/*.yml`) as they are written, against the
//! server given by respbench's own connection flags. `schema.rs` reads a file, `plan.rs` builds
//! its steps (memtier command lines through the memtier front-end's plan) or the reason it is
//! refused, `clients.rs` makes `clientconfigs` one run with a role (the tools beside memtier
//! read by `tools.rs`), `exec.rs` runs them, `summary.rs` is the summary in its formats.

mod clients;
mod compare;
mod error;
mod exec;
mod plan;
mod schema;
mod summary;
mod tools;
pub use error::SpecError;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use super::options::Args;
use super::parse;
use super::run::RunContext;
use super::usage::{EXIT_FAILURE, EXIT_USAGE, parse_args, usage_error};
use crate::report;
use plan::{Filter, Shape, Spec};
use summary::{SpecResult, Summary, Verdict};

/// Runs benchmark specification files (redis-benchmarks-specification's YAML) against the server.
#[derive(Debug, Parser)]
#[command(name = "respbench spec", version, disable_help_flag = true, max_term_width = 100)]
pub(crate) struct SpecArgs {
    /// Specification files, or directories of them (their *.yml and *.yaml files).
    #[arg(required = true, value_name = "PATH", help_heading = "Specifications")]
    paths: Vec<PathBuf>,
    /// Run only these: a name pattern (* and ?), or name=PATTERN, group=G, command=C,
    /// topology=T, priority=N (or A-B, ..B, A..). Repeat: one kind's values are alternatives,
    /// different kinds must all match.
    #[arg(long, value_name = "FILTER", help_heading = "Specifications")]
    filter: Vec<String>,
    /// Run each client this long instead of what its arguments say (30s, 2m).
    #[arg(long, value_parser = parse::duration, value_name = "D", help_heading = "Specifications")]
    test_time: Option<Duration>,
    /// Shrink every key range and request count to this fraction (0.01); the keyspace check
    /// expects the preload's share of keys shrunk alike.
    #[arg(long, value_parser = parse::fraction, default_value = "1", value_name = "F", help_heading = "Specifications")]
    scale: f64,
    /// Print each specification's steps (configuration, preload, init commands, check, client)
    /// without connecting.
    #[arg(long, help_heading = "Specifications")]
    dry_run: bool,
    /// Leave the configuration parameters a specification set (they are put back by default).
    #[arg(long, help_heading = "Specifications")]
    keep_config: bool,
    /// FLUSHALL before each specification's preload (the keyspace check counts every key).
    #[arg(long, help_heading = "Specifications")]
    flushall: bool,
    /// Write each specification's results (respbench's JSON, HTML and Markdown, memtier's JSON)
    /// and the summary (summary.json, summary.md, summary.html) here.
    #[arg(long, value_name = "DIR", help_heading = "Specifications")]
    output_dir: Option<PathBuf>,
    #[command(flatten)]
    run: Args,
}

pub fn main(args: Vec<OsString>) -> ExitCode {
    if args.get(1).is_some_and(|a| a == "compare") {
        let rest = args[2..].iter().cloned();
        return compare::main(std::iter::once(OsString::from("respbench spec compare")).chain(rest).collect());
    }
    let args: SpecArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut filter = Filter::default();
    for f in &args.filter {
        if let Err(msg) = filter.add(f) {
            return usage_error(&msg);
        }
    }
    let (config, _) = match args.run.clone_connection().into_config() {
        Ok(c) => c,
        Err(msg) => return usage_error(&msg),
    };
    let shape =
        Shape { server: config.server.clone(), cluster: config.cluster, test_time: args.test_time, scale: args.scale };
    let files = match spec_files(&args.paths) {
        Ok(f) => f,
        Err(msg) => return usage_error(&msg),
    };
    // Every file is read and planned before anything is sent; a bad one is left out, and the
    // run ends with exit 2.
    let mut specs = Vec::new();
    let mut bad = 0;
    for file in files {
        match plan::build(file, &shape) {
            Ok(spec) if filter.admits(&spec) => specs.push(spec),
            Ok(_) => {}
            Err(msg) => {
                eprintln!("respbench spec: {msg}");
                bad += 1;
            }
        }
    }
    if args.dry_run {
        dry_run(&specs);
        return if bad > 0 { ExitCode::from(EXIT_USAGE) } else { ExitCode::SUCCESS };
    }
    if specs.is_empty() {
        if bad > 0 {
            return ExitCode::from(EXIT_USAGE);
        }
        return usage_error("no specification matches the paths and filters given");
    }
    let stop = super::signals::install_sigint();
    let code = run_all(&args, &config, specs, &RunContext::new(&stop));
    if bad > 0 {
        // The others ran; the files above were not read, nothing was sent for them.
        eprintln!(
            "respbench spec: {bad} file(s) could not be read as specifications (above): nothing was sent for them"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    code
}

impl Args {
    /// The connection flags only (host, port, socket, login, TLS, cluster): what a
    /// specification's plans are pointed at.
    fn clone_connection(&self) -> Args {
        let mut a = Args::default();
        a.host = self.host.clone();
        a.port = self.port;
        a.socket = self.socket.clone();
        a.password = self.password.clone();
        a.password_file = self.password_file.clone();
        a.user = self.user.clone();
        a.db = self.db;
        a.uri = self.uri.clone();
        a.resp3 = self.resp3;
        a.cluster = self.cluster;
        a.read_from_replicas = self.read_from_replicas;
        a.connect_timeout = self.connect_timeout;
        a.tls = self.tls;
        a.cacert = self.cacert.clone();
        a.cert = self.cert.clone();
        a.key = self.key.clone();
        a.sni = self.sni.clone();
        a.tls_skip_verify = self.tls_skip_verify;
        a.tls_skip_hostname = self.tls_skip_hostname;
        a.tls_versions = self.tls_versions.clone();
        a.tls_ciphers = self.tls_ciphers.clone();
        a
    }
}

/// The files named, directories read for their `*.yml` and `*.yaml` (sorted; the exporter
/// defaults file `defaults.yml` is not a specification).
fn spec_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SpecError> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            let entries = std::fs::read_dir(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let mut found: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yml" | "yaml")))
                .filter(|p| p.file_name().is_some_and(|n| n != "defaults.yml"))
                .collect();
            found.sort();
            out.extend(found);
        } else if path.exists() {
            out.push(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()).into());
        }
    }
    Ok(out)
}

/// `--dry-run`: each specification's steps, or why it is refused, and the refusals counted.
fn dry_run(specs: &[Spec]) {
    let mut refused: Vec<(&str, &Spec)> = Vec::new();
    for spec in specs {
        println!("{} ({})", spec.name, spec.file.display());
        println!(
            "  priority {}; groups: {}; commands: {}; topologies: {}",
            spec.priority,
            spec.groups.join(", "),
            spec.commands.join(", "),
            spec.topologies.join(", ")
        );
        let steps = match &spec.steps {
            Ok(steps) => steps,
            Err(why) => {
                println!("  refused: {why}");
                refused.push((why, spec));
                continue;
            }
        };
        if !steps.parameters.is_empty() {
            let set: Vec<String> = steps.parameters.iter().map(|(k, v)| format!("{k} '{v}'")).collect();
            println!(
                "  configuration: CONFIG SET {} (each read first with CONFIG GET, put back after)",
                set.join(", ")
            );
        }
        if let Some(p) = &steps.preload {
            println!("  preload: memtier_benchmark {}", p.arguments.trim());
            println!("    {}", p.describe());
        }
        for words in &steps.init {
            let line: Vec<String> =
                words.iter().map(|w| shlex::try_quote(w).map_or(w.clone(), |q| q.into_owned())).collect();
            println!("  init: {}", line.join(" "));
        }
        if let Some(c) = &steps.check {
            let scaled =
                if c.keys != c.written { format!(" ({} as written, scaled)", c.written) } else { String::new() };
            println!("  check: {} keys in INFO keyspace{scaled}", c.keys);
        }
        if steps.clients.is_empty() {
            println!("  client: memtier_benchmark {}", steps.client.arguments.trim());
            println!("    {}", steps.client.describe());
        }
        for tool in &steps.clients {
            println!("  client: {} {}", tool.tool, tool.arguments.trim());
        }
        for role in clients::describe(&steps.client.config) {
            println!("    {role}");
        }
        for note in &steps.notes {
            println!("    note: {note}");
        }
    }
    println!("{} specifications: {} planned, {} refused", specs.len(), specs.len() - refused.len(), refused.len());
    for (why, spec) in refused {
        println!("refused: {}: {why}", spec.file.file_name().map_or_else(String::new, |n| n.to_string_lossy().into()));
    }
}

/// Runs the specifications in order, a line as each ends, the table and the summary files at
/// the end.
fn run_all(args: &SpecArgs, config: &crate::config::Config, specs: Vec<Spec>, cx: &RunContext<'_>) -> ExitCode {
    let mut server = match exec::Server::open(config) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("respbench spec: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    if let Some(dir) = &args.output_dir
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        eprintln!("respbench spec: cannot create {}: {e}", dir.display());
        return ExitCode::from(EXIT_FAILURE);
    }
    let options = exec::Options {
        keep_config: args.keep_config,
        flushall: args.flushall,
        out_dir: args.output_dir.as_deref(),
        runs: args.run.runs.max(1) as usize,
    };
    let started_unix_ms =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let mut results: Vec<SpecResult> = Vec::new();
    let count = specs.len();
    for (i, spec) in specs.iter().enumerate() {
        let result = match &spec.steps {
            Err(why) => {
                SpecResult { verdict: Verdict::Refused, reason: Some(why.to_string()), ..SpecResult::new(spec) }
            }
            Ok(steps) => {
                let (result, files) = exec::run_spec(spec, steps, &mut server, &options, cx);
                if !write_files(&files) {
                    return ExitCode::from(EXIT_FAILURE);
                }
                result
            }
        };
        println!("{}", result.line(i + 1, count));
        results.push(result);
        if cx.stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    let summary = Summary {
        tool: format!("respbench {}", env!("CARGO_PKG_VERSION")),
        started_unix_ms,
        server: server.info.clone(),
        topology: Some(server.topology.name()),
        test_time_secs: args.test_time.map(|d| d.as_secs_f64()),
        scale: args.scale,
        specs: results,
    };
    println!();
    print!("{}", summary.table());
    if let Some(dir) = &args.output_dir {
        let files = vec![
            (dir.join("summary.json"), summary.to_json()),
            (dir.join("summary.md"), summary.markdown()),
            (dir.join("summary.html"), summary.html()),
        ];
        if !write_files(&files) {
            return ExitCode::from(EXIT_FAILURE);
        }
    }
    exec::exit_code(&summary.specs, false)
}

/// Every file `spec` writes goes through here (the one output writer: each tried, a failure
/// said with its path); whether all were written.
fn write_files(files: &[(PathBuf, String)]) -> bool {
    report::output::write_each("respbench spec", files.iter().map(|(path, text)| (path.as_path(), text)))
}
