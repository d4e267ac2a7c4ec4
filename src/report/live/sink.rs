//! Live outputs as sinks: what a run reports while it runs (the live line, `--progress`,
//! memtier's progress line, StatsD, the metrics endpoint, the HDR interval log, the journal) hears the same
//! three events through one trait, so the run API hands a run the sinks it needs instead of
//! each caller wiring its own callbacks into the engine.

use std::io::IsTerminal;
use std::sync::Arc;

use super::hdrlog::HdrLog;
use super::journal::Journal;
use super::metrics::Live;
use super::statsd::Statsd;
use crate::config::Config;
use crate::engine::{Outcome, Progress};
use crate::report::run::text::live_line;

/// A live output of a run. `run` numbers the run among `--runs`, from 0.
pub trait Sink {
    /// Run `run` is about to connect and start.
    fn run_started(&mut self, _run: usize, _config: &Config) {}
    /// One completed interval of run `run`.
    fn interval(&mut self, _run: usize, _progress: &Progress) {}
    /// Run `run` ended: its outcome, or `None` when it could not be run.
    fn run_ended(&mut self, _run: usize, _outcome: Option<&Outcome>) {}
}

/// `--metrics-listen`: counters that grow across runs (and a scenario's phases).
impl Sink for Arc<Live> {
    fn run_started(&mut self, _run: usize, config: &Config) {
        Live::run_started(self, config);
    }

    fn interval(&mut self, _run: usize, progress: &Progress) {
        Live::interval(self, progress);
    }

    fn run_ended(&mut self, _run: usize, outcome: Option<&Outcome>) {
        if let Some(outcome) = outcome {
            Live::run_ended(self, outcome);
        }
    }
}

/// `--statsd-host`: memtier's gauges, and its start and end events.
impl Sink for Statsd {
    fn run_started(&mut self, run: usize, config: &Config) {
        Statsd::run_started(self, run, config);
    }

    fn interval(&mut self, _run: usize, progress: &Progress) {
        Statsd::interval(self, progress);
    }

    fn run_ended(&mut self, run: usize, outcome: Option<&Outcome>) {
        if let Some(outcome) = outcome {
            self.roles_ended(outcome);
        }
        Statsd::run_ended(self, run);
    }
}

/// The journal (`FILE.journal` beside `--json FILE`): every completed interval on disk as it
/// completes, so that a run killed outright can be recovered.
impl Sink for Journal {
    fn run_started(&mut self, run: usize, config: &Config) {
        self.started(run, config);
    }

    fn interval(&mut self, run: usize, progress: &Progress) {
        Journal::interval(self, run, progress);
    }

    fn run_ended(&mut self, run: usize, outcome: Option<&Outcome>) {
        if let Some(outcome) = outcome {
            self.ended(run, outcome);
        }
    }
}

/// `--hdr-log`: every interval's histograms, written when the benchmark ends.
impl Sink for HdrLog {
    fn interval(&mut self, _run: usize, progress: &Progress) {
        self.add(progress);
    }
}

/// respbench's live line on stderr: redrawn in place on a terminal, or one line per interval
/// with `--progress` (each prefixed `run i/n` when there are several runs).
pub struct LiveLine {
    runs: usize,
    progress: bool,
    terminal: bool,
}

impl LiveLine {
    /// The line for `runs` runs; `progress`: one line per interval, terminal or not.
    pub fn new(runs: usize, progress: bool) -> LiveLine {
        LiveLine { runs, progress, terminal: std::io::stderr().is_terminal() }
    }
}

impl Sink for LiveLine {
    fn interval(&mut self, run: usize, p: &Progress) {
        let prefix = if self.runs > 1 { format!("run {}/{} ", run + 1, self.runs) } else { String::new() };
        if self.progress {
            eprintln!("{prefix}{}", live_line(p));
        } else if self.terminal {
            eprint!("\r\x1b[2K{prefix}{}", live_line(p));
        }
    }

    fn run_ended(&mut self, _run: usize, _outcome: Option<&Outcome>) {
        if self.terminal && !self.progress {
            eprint!("\r\x1b[2K");
        }
    }
}
