//! The one way into the engine. Every front-end and subcommand (native, memtier,
//! redis-/valkey-benchmark, `run FILE`, fill, capacity) turns its input into a [`Plan`] and
//! calls [`run`] with a [`RunContext`] and the live outputs ([`Sink`]s) it wants; the runs come
//! back in memory as a [`RunResult`]. Printing reports, writing files and the exit code stay
//! with the caller.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{notes::Notes, signals};
use crate::codec::Protocol;
use crate::config::Config;
use crate::engine::setup::{Setup, SetupError};
use crate::engine::{self, Checks, Outcome, RunState};
use crate::net::ConnectError;
use crate::report::live::metrics::Live;
use crate::report::live::sink::{LiveLine, Sink};

/// What a benchmark gives its caller: the exit code, and the result document when it ran.
pub(crate) struct Ran {
    pub code: std::process::ExitCode,
    pub document: Option<crate::report::document::Document>,
}

impl Ran {
    pub(crate) fn failed(code: std::process::ExitCode) -> Ran {
        Ran { code, document: None }
    }
}

/// What to run: a configuration, how many times (`--runs`), and whether the checks before the
/// run come first (their warnings said as `notes` says).
pub struct Plan<'a> {
    pub config: &'a Config,
    pub runs: usize,
    pub checks: Option<&'a Notes>,
}

impl<'a> Plan<'a> {
    /// One run of `config`, without the checks (a fill's pass, a capacity step, a
    /// redis-benchmark test).
    pub fn once(config: &'a Config) -> Plan<'a> {
        Plan { config, runs: 1, checks: None }
    }
}

/// What a run is handed by whoever runs it: the signal handling (the stop flag SIGINT sets,
/// and the crash report it tells its server) and the metrics endpoint it feeds, if any (its own
/// `--metrics-listen`, or a scenario's, a fill's or a search's).
#[derive(Clone)]
pub struct RunContext<'a> {
    pub stop: &'a signals::Stop,
    pub metrics: Option<Arc<Live>>,
    /// An output of the caller's is `-` (a scenario's `--json -`): the reports a person reads
    /// go to standard error, so that standard output carries that output alone.
    pub stdout_taken: bool,
}

impl<'a> RunContext<'a> {
    pub fn new(stop: &'a signals::Stop) -> RunContext<'a> {
        RunContext { stop, metrics: None, stdout_taken: false }
    }

    /// The place standard output stands for in a list of outputs when the context took it.
    pub fn stdout_taken(&self) -> Option<&'static std::path::Path> {
        self.stdout_taken.then(|| std::path::Path::new(crate::report::output::STDOUT))
    }

    /// The same context feeding `metrics` instead.
    pub fn with_metrics(&self, metrics: Option<Arc<Live>>) -> RunContext<'a> {
        RunContext { stop: self.stop, metrics, stdout_taken: self.stdout_taken }
    }
}

/// The runs, in order (fewer than planned after a stop signal), and the checks' warnings.
pub struct RunResult {
    pub warnings: Vec<String>,
    pub runs: Vec<Outcome>,
}

impl RunResult {
    /// The runs pooled into one outcome, the checks' warnings first.
    pub fn pooled(&self) -> Outcome {
        let mut pooled = Outcome::pool(self.runs.clone()).expect("at least one run");
        pooled.warnings.splice(0..0, self.warnings.iter().cloned());
        pooled
    }
}

/// Why a plan could not be run.
#[derive(Debug)]
pub enum RunError {
    /// The checks before the run could not reach or use the server.
    Checks(ConnectError),
    /// A run could not start (its connections could not be made ready).
    Run(ConnectError),
    /// A setup command (`--setup`) failed: nothing was measured.
    Setup(SetupError),
}

/// Runs the plan: the checks (if asked), then each run with every sink (the context's
/// metrics endpoint first: once the live line is out, a scrape sees the interval) hearing it.
pub fn run(plan: &Plan<'_>, cx: &RunContext<'_>, sinks: &mut [&mut dyn Sink]) -> Result<RunResult, RunError> {
    let config = plan.config;
    let checks = match plan.checks {
        Some(notes) => {
            let checks = engine::preflight(config).map_err(RunError::Checks)?;
            notes.warn("respbench", &checks.warnings);
            cx.stop.describe_server(&config.server);
            checks
        }
        None => Checks::default(),
    };
    let state = RunState::after_checks(&checks);
    // Setup once for all the runs, before their connections; what it changed is put back
    // however the runs end.
    let mut setup = Setup::run(config).map_err(RunError::Setup)?;
    let filled = setup.filled(config);
    let runs = runs(filled.as_ref().unwrap_or(config), plan, (cx, &state), sinks);
    setup.put_back();
    Ok(RunResult { warnings: checks.warnings, runs: runs? })
}

/// The plan's runs in order, each with every sink hearing it.
fn runs(
    config: &Config,
    plan: &Plan<'_>,
    (cx, state): (&RunContext<'_>, &RunState),
    sinks: &mut [&mut dyn Sink],
) -> Result<Vec<Outcome>, RunError> {
    let mut metrics = cx.metrics.clone();
    let mut runs = Vec::new();
    for run in 0..plan.runs {
        let mut all: Vec<&mut dyn Sink> = Vec::with_capacity(sinks.len() + 1);
        if let Some(m) = metrics.as_mut() {
            all.push(m);
        }
        all.extend(sinks.iter_mut().map(|s| &mut **s));
        for sink in all.iter_mut() {
            sink.run_started(run, config);
        }
        // Where the run's workers show their connections, for a bug report if it crashes.
        let board = Arc::new(engine::Board::for_run(config));
        cx.stop.show_connections(&board);
        let outcome = engine::run(config, state, &board, run, cx.stop, &mut |p| {
            for sink in all.iter_mut() {
                sink.interval(run, p);
            }
        });
        for sink in all.iter_mut() {
            sink.run_ended(run, outcome.as_ref().ok());
        }
        let outcome = outcome.map_err(RunError::Run)?;
        // The engine's notes, once per benchmark (its runs say the same).
        if let (Some(notes), 0) = (plan.checks, run) {
            notes.say("respbench", &outcome.notes);
        }
        runs.push(outcome);
        if cx.stop.load(Ordering::SeqCst) {
            break;
        }
    }
    Ok(runs)
}

/// One run of `config` with the live line on a terminal, pooled: a capacity step, a
/// redis-benchmark test.
pub fn measure(config: &Config, cx: &RunContext<'_>) -> Result<Outcome, ConnectError> {
    let mut line = LiveLine::new(1, false);
    match run(&Plan::once(config), cx, &mut [&mut line]) {
        Ok(result) => Ok(result.pooled()),
        Err(RunError::Checks(e) | RunError::Run(e)) => Err(e),
        Err(RunError::Setup(e)) => {
            let target = config.server.target.to_string();
            Err(ConnectError::Refused { target, command: "a --setup command".into(), message: e.0 })
        }
    }
}

/// The one line for a failure to run, with the fix when there is one.
pub fn failure_message(config: &Config, e: &RunError) -> String {
    match e {
        RunError::Checks(e) => {
            // memcached started with -S (SASL) does not answer the text protocols at all.
            let sasl = matches!(e, ConnectError::Silent { .. })
                && matches!(config.server.session.protocol, Protocol::MemcacheText | Protocol::MemcacheMeta);
            let hint = if sasl {
                "; a memcached started with -S (SASL) answers only the binary protocol: --protocol memcache-binary \
                 --authenticate USER:PASS"
            } else {
                ""
            };
            format!("{e}{hint}")
        }
        RunError::Run(e) => e.to_string(),
        RunError::Setup(e) => e.to_string(),
    }
}
