//! `respbench run FILE.toml`: runs a scenario's phases in order through the same code paths as
//! the command line (each phase compiled to typed plans by `compile` and `plan`), and keeps one
//! result for the whole scenario: every phase's result, the file's text and its SHA-256.

use std::ffi::OsString;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::{ArgAction, Parser};
use sha2::{Digest, Sha256};

use super::{Loaded, Overrides, Planned, Step, Tool, error::ScenarioError};
use crate::cli::parse;
use crate::cli::run::RunContext;
use crate::cli::usage::{EXIT_FAILURE, parse_args, usage_error};
use crate::report;
use crate::report::document::{Phase, PhaseResult, Price, ScenarioDocument, ScenarioInfo};

/// Runs a scenario file.
#[derive(Debug, Parser)]
#[command(name = "respbench run", version, disable_help_flag = true, max_term_width = 100)]
pub(crate) struct RunArgs {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,
    /// The scenario (TOML).
    #[arg(value_name = "FILE.toml", required_unless_present = "schema")]
    file: Option<PathBuf>,
    /// Print the scenario file's JSON Schema (for editors) and exit.
    #[arg(long)]
    schema: bool,
    /// Print each phase's command line instead of running it.
    #[arg(long)]
    dry_run: bool,
    /// The server's host, over the file's.
    #[arg(short = 'h', long)]
    host: Option<String>,
    /// The server's port, over the file's.
    #[arg(short = 'p', long)]
    port: Option<u16>,
    /// Multiplies key ranges, counts and durations, over the file's `scale`.
    #[arg(long)]
    scale: Option<f64>,
    /// The whole scenario's result: every phase's, the file and its SHA-256.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The scenario's HTML page: a section per phase and a table across them.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// One line per interval on stderr.
    #[arg(long)]
    progress: bool,
    /// Live OpenMetrics at http://ADDR/metrics over all phases.
    #[arg(long, value_name = "ADDR:PORT")]
    metrics_listen: Option<SocketAddr>,
    /// After the last phase, serve the final metrics until one scrape reads them, at most this long.
    #[arg(long, value_name = "D", value_parser = parse::duration)]
    metrics_linger: Option<Duration>,
    /// Push the live metrics of all phases to a Prometheus Pushgateway (`--metrics-push URL`).
    #[command(flatten)]
    push: super::flags::PushFlags,
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: RunArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let named = crate::report::output::named(&[("--json", &args.json), ("--html", &args.html)]);
    if let Err(msg) = crate::report::output::check(&named) {
        return usage_error(&msg);
    }
    if args.schema {
        print!("{}", super::schema::json_schema());
        return ExitCode::SUCCESS;
    }
    let Some(file) = &args.file else { return usage_error("respbench run needs a scenario file") };
    let loaded = match super::load(file) {
        Ok(l) => l,
        Err(msg) => return usage_error(&msg),
    };
    let overrides = Overrides { host: args.host.clone(), port: args.port, scale: args.scale };
    let steps = match loaded.compile(&overrides).and_then(|steps| check(&loaded, steps)) {
        Ok(s) => s,
        Err(msg) => return usage_error(&msg),
    };
    if args.dry_run {
        let mut out = std::io::stdout().lock();
        for step in &steps {
            let sub = match step.tool {
                Tool::Native => "",
                Tool::Fill => " fill",
                Tool::Capacity => " capacity",
            };
            // A closed pipe (`| head`) is not a failure.
            if writeln!(out, "# {}\nrespbench{sub} {}", step.label, step.shown()).is_err() {
                break;
            }
        }
        return ExitCode::SUCCESS;
    }
    let metrics = match report::live::push::open(args.metrics_listen, args.push.target(), Default::default()) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    let stop = crate::cli::signals::install_sigint();
    // Every phase, fill and capacity too, feeds the scenario's endpoint.
    let stdout_taken = named.iter().any(|(_, path)| report::output::is_stdout(path));
    let cx = RunContext { stop: &stop, metrics: metrics.clone(), stdout_taken };
    let mut phases = Vec::new();
    let mut code = ExitCode::SUCCESS;
    for (i, step) in steps.iter().enumerate() {
        eprintln!("respbench: phase {}/{}: {}", i + 1, steps.len(), step.label);
        let (result, ok) = run_step(step, args.progress, &cx);
        let tool = match step.tool {
            Tool::Fill => " fill",
            Tool::Capacity => " capacity",
            Tool::Native => "",
        };
        phases.push(Phase {
            name: step.label.clone(),
            kind: super::kind_name(step.kind).to_string(),
            command_line: format!("respbench{tool} {}", step.shown()),
            ok: ok == ExitCode::SUCCESS,
            result,
        });
        if stop.load(Ordering::SeqCst) {
            code = ExitCode::from(crate::cli::signals::interrupted_exit_code());
            break;
        }
        if ok != ExitCode::SUCCESS {
            eprintln!("respbench: phase '{}' failed: the scenario stops here", step.label);
            code = ok;
            break;
        }
    }
    let doc = ScenarioDocument {
        scenario: ScenarioInfo {
            file: file.display().to_string(),
            sha256: hex(&Sha256::digest(loaded.text.as_bytes())),
            text: loaded.text.clone(),
            price: loaded.scenario.price.as_ref().map(|price| {
                let price = price.get_ref();
                Price { per_hour: price.per_hour, currency: price.currency().to_string() }
            }),
        },
        phases,
    };
    let mut files = Vec::new();
    if let Some(path) = &args.json {
        files.push((path, doc.to_json()));
    }
    if let Some(path) = &args.html {
        files.push((path, report::pages::scenario_html::render(&doc)));
    }
    // Every file is tried: one that cannot be written does not cost the others.
    let mut unwritten = false;
    for (path, text) in files {
        if let Err(e) = report::output::write(path, text.as_bytes()) {
            eprintln!("respbench: {e}");
            unwritten = true;
        }
    }
    if unwritten {
        return ExitCode::from(EXIT_FAILURE);
    }
    if let Some(m) = &metrics {
        m.finish();
        m.linger(args.metrics_linger.unwrap_or_default());
    }
    code
}

/// Every step planned as the command line would plan it, before anything runs: a mistake in
/// the last phase must not cost the hour the first ones take. A mistake is said at its key.
fn check(loaded: &Loaded, steps: Vec<Step>) -> Result<Vec<Step>, ScenarioError> {
    for step in &steps {
        let checked = match step.planned() {
            Ok(Planned::Native(args)) => {
                let outputs = |(_, output): (_, crate::cli::options::Output)| {
                    report::output::check(&output.files()).map_err(|e| e.0)
                };
                args.into_config().map_err(|e| e.0).and_then(outputs).map_err(|msg| super::PlanError { key: None, msg })
            }
            Ok(_) => Ok(()),
            Err(e) => Err(e),
        };
        checked.map_err(|e| {
            let offset = e.key.and_then(|key| loaded.key_in_phase(step, key)).unwrap_or(step.span.start);
            super::locate(&loaded.path, &loaded.text, offset, &format!("phase '{}': {}", step.label, e.msg))
        })?;
    }
    Ok(steps)
}

/// Runs one step; its result, in memory (`None` when it made none), and its exit code.
fn run_step(step: &Step, progress: bool, cx: &RunContext<'_>) -> (Option<PhaseResult>, ExitCode) {
    match step.planned() {
        Ok(Planned::Native(args)) => match args.into_config() {
            Ok((config, mut output)) => {
                // The phase's result is the scenario's to write, not a file of its own.
                output.json = None;
                output.label = Some(step.label.clone());
                output.progress |= progress;
                let ran = crate::cli::native::main::execute(&config, &output, cx);
                (ran.document.map(|doc| PhaseResult::Run(Box::new(doc))), ran.code)
            }
            Err(msg) => (None, usage_error(&msg)),
        },
        Ok(Planned::Fill(args)) => {
            let (code, result) = crate::cli::fill::execute(*args, cx);
            (result.map(PhaseResult::Fill), code)
        }
        Ok(Planned::Capacity(args)) => {
            let (code, result) = crate::cli::capacity::execute(*args, cx);
            (result.map(PhaseResult::Capacity), code)
        }
        Err(e) => (None, usage_error(&e.msg)),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
