//! The journal: each completed interval of a run appended to `FILE.journal` as one JSON line
//! and flushed to disk (`fdatasync`) as it is written, so that a run killed outright (SIGKILL:
//! a batch system's time limit, the OOM killer) loses at most the interval under way. A run
//! that ends writes its files and removes the journal; `respbench recover` builds the result
//! of one that did not from it (`journal/read.rs`), through the same result document.
//!
//! The lines: a header with the result's frame (the plan, as `json::frame` makes it) and the name
//! of the interval log, then per completed interval its counts, errors by kind and outages, and per
//! run that ended what only its end knows (CPU per thread, the server over the run, each role's
//! figures and latency histograms). The interval's histograms go to the interval log (`FILE.hlog`,
//! `report::document::interval_log`), written and flushed just before its journal line, so that a
//! journaled interval's histograms are always on disk; the interval log stays after the run (the
//! result names it), the journal goes. A thread of its own, at a low priority (nice 10), encodes
//! and writes both, so that the run's workers never wait for it. The journal says nothing on
//! stderr: a problem writing it is kept for the caller to say in its own words (a front-end's
//! stderr carries only its tool's lines).

mod line;
mod read;

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use self::line::{Header, IntervalLine, Line, OpLine, RoleLine, RunEnded};
pub use self::line::{MAGIC, VERSION};
pub use self::read::{Recovered, recover};
use crate::config::Config;
use crate::engine::{Outcome, Progress, ServerSample};
use crate::net::ServerInfo;
use crate::report::document::interval_log::LogWriter;
use crate::stats::{RoleWindow, Window};

/// The journal of a run being written: a live output (`report::live::sink::Sink`).
pub struct Journal {
    path: PathBuf,
    /// The interval log beside it.
    log_path: PathBuf,
    label: Option<String>,
    /// The last run whose first interval was handed to the writer.
    named: Option<usize>,
    /// The writer thread's inbox; `None` once it is closed.
    tx: Option<mpsc::Sender<Work>>,
    /// The writer thread, which hands back what it wrote when its inbox closes.
    writer: Option<std::thread::JoinHandle<Writer>>,
    /// What the writer did, once it has finished.
    done: Option<Writer>,
    /// The run's roles as planned (`--role`), for their figures at its end.
    roles: Vec<crate::report::document::roles::RoleReport>,
}

/// What the writer thread is handed: a line made already, or an interval to encode.
enum Work {
    Line(Line),
    Interval(Box<Pending>),
}

/// An interval as the run handed it over, its histograms at the interval log's precision, for
/// the writer to encode.
struct Pending {
    run: usize,
    first: bool,
    interval: Interval,
    window: Window,
    started_unix_ms: u64,
    start: std::time::Instant,
    server: Option<ServerInfo>,
    /// The rows' names (the interval log tags every row by its name).
    names: Vec<String>,
    /// The run's roles whose listeners count beside the requests, each with what they
    /// counted in the interval.
    roles: Vec<(String, RoleWindow)>,
}

/// The writer thread's side: the files, and what happened to them.
struct Writer {
    path: PathBuf,
    /// `None` once writing failed (the run goes on without it).
    file: Option<File>,
    /// The interval log, and its encoder; `None` once writing failed.
    log: Option<(File, LogWriter)>,
    intervals: u64,
    problem: Option<String>,
}

impl Writer {
    /// Writes until the inbox closes. It runs at a low priority (nice 10): encoding an
    /// interval's histograms and waiting for the disk must not take a core from the run's
    /// workers (on a busy machine that would delay their sends and show in the figures), yet
    /// it must keep up, or the intervals it has still to write pile up in memory. Handed
    /// coarse histograms, an interval costs it little; nice 10 still gets about a tenth of a
    /// core all others want (the scheduler's weights: nice 19 would get 1.5 %).
    fn run(mut self, rx: mpsc::Receiver<Work>) -> Writer {
        crate::engine::lower_priority(10);
        for work in rx {
            match work {
                Work::Line(line) => self.append(&line),
                Work::Interval(p) => {
                    self.log(&p);
                    self.append(&Line::Interval(Box::new(p.line())));
                    self.intervals += u64::from(self.file.is_some());
                }
            }
        }
        self
    }

    /// Appends the interval's histograms to the interval log and flushes them to the disk,
    /// before its journal line is written: a journaled interval's histograms are on disk.
    fn log(&mut self, p: &Pending) {
        let Some((file, log)) = self.log.as_mut() else { return };
        let i = &p.interval;
        let bytes = log.interval(p.run, p.started_unix_ms, (i.start_secs, i.duration_secs), &p.names, &p.window);
        if let Err(e) = file.write_all(&bytes).and_then(|()| file.sync_data()) {
            self.problem = Some(format!("cannot write the interval log beside {}: {e}", self.path.display()));
            // Journal lines without their histograms could not be recovered: both stop.
            self.log = None;
            self.file = None;
        }
    }

    /// Appends one line in one write and flushes it to the disk before returning.
    fn append(&mut self, line: &Line) {
        let Some(file) = self.file.as_mut() else { return };
        let mut bytes = serde_json::to_vec(line).expect("plain data serialises");
        bytes.push(b'\n');
        if let Err(e) = file.write_all(&bytes).and_then(|()| file.sync_data()) {
            self.problem = Some(format!("cannot write the journal {}: {e}", self.path.display()));
            self.file = None;
        }
    }
}

impl Pending {
    /// The interval's line: counts, errors, outages and every histogram, encoded.
    fn line(&self) -> IntervalLine {
        let (i, w) = (&self.interval, &self.window);
        let secs = |t: std::time::Instant| t.saturating_duration_since(self.start).as_secs_f64();
        IntervalLine {
            run: self.run,
            index: i.index,
            start_secs: i.start_secs,
            duration_secs: i.duration_secs,
            started_unix_ms: self.started_unix_ms,
            server: if self.first { self.server.clone() } else { None },
            command_names: if self.first { self.names.clone() } else { Vec::new() },
            ops: w.ops.iter().map(OpLine::of).collect(),
            errors: w.errors.sorted().into_iter().map(|(k, n)| (k.to_string(), n)).collect(),
            down_secs: w.down.iter().map(|&(from, to)| (secs(from), secs(to))).collect(),
            reconnect_attempts: w.reconnect_attempts,
            connections_lost: w.connections_lost.sorted().into_iter().map(|(k, n)| (k.to_string(), n)).collect(),
            successes: w.successes,
            nodes: w.nodes.iter().map(|(n, op)| (n.clone(), OpLine::of(op))).collect(),
            moved: w.moved,
            asked: w.asked,
            window_connections: w.active_connections,
            server_sample: i.server,
            active_connections: i.active_connections,
            roles: self.roles.iter().map(|(name, w)| RoleLine::of(name, w)).collect(),
        }
    }
}

/// What a pending interval keeps of the timeline's entry (its place and the server's figures).
struct Interval {
    index: u64,
    start_secs: f64,
    duration_secs: f64,
    server: Option<ServerSample>,
    active_connections: Option<u64>,
}

impl Journal {
    /// Where the journal of an output file goes: beside it, `.journal` added.
    pub fn path_for(output: &Path) -> PathBuf {
        let mut name = output.as_os_str().to_owned();
        name.push(".journal");
        PathBuf::from(name)
    }

    /// Where the interval log of an output file goes: beside it, `.hlog` added.
    pub fn log_path_for(output: &Path) -> PathBuf {
        let mut name = output.as_os_str().to_owned();
        name.push(".hlog");
        PathBuf::from(name)
    }

    /// The interval log's file name (in the journal's directory).
    pub fn log_name(&self) -> String {
        self.log_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// Creates the journal at `path`, the interval log at `log_path` and their writer thread. A
    /// journal already there (a run killed before this one) is kept as `PATH.prev` (and its
    /// interval log as `LOG.prev`), so a rerun does not destroy what `recover` could still
    /// read; the second value says so.
    pub fn create(path: PathBuf, log_path: PathBuf, label: Option<&str>) -> std::io::Result<(Journal, Option<String>)> {
        let mut kept = None;
        let prev_of = |p: &Path| {
            let mut prev = p.as_os_str().to_owned();
            prev.push(".prev");
            PathBuf::from(prev)
        };
        if path.exists() {
            let prev = prev_of(&path);
            if log_path.exists() {
                std::fs::rename(&log_path, prev_of(&log_path))?;
            }
            std::fs::rename(&path, &prev)?;
            kept = Some(format!(
                "{} was there (a run that did not end?): kept as {} for `respbench recover`",
                path.display(),
                prev.display()
            ));
        }
        let file = File::options().write(true).create_new(true).open(&path)?;
        let log = File::create(&log_path)?;
        // The file's directory entry, once: without it a power loss could lose the whole file.
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        File::open(dir)?.sync_all()?;
        let (tx, rx) = mpsc::channel();
        let writer = Writer {
            path: path.clone(),
            file: Some(file),
            log: Some((log, LogWriter::new())),
            intervals: 0,
            problem: None,
        };
        let writer = std::thread::Builder::new().name("respbench-journal".into()).spawn(move || writer.run(rx))?;
        let journal = Journal {
            path,
            log_path,
            label: label.map(String::from),
            named: None,
            tx: Some(tx),
            writer: Some(writer),
            done: None,
            roles: Vec::new(),
        };
        Ok((journal, kept))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the writer to write everything it was handed (once; later calls return at once).
    fn finish(&mut self) -> &Writer {
        self.tx = None;
        if let Some(writer) = self.writer.take() {
            self.done = writer.join().ok();
        }
        self.done.get_or_insert_with(|| Writer {
            path: self.path.clone(),
            file: None,
            log: None,
            intervals: 0,
            problem: Some(format!("the journal {} stopped being written", self.path.display())),
        })
    }

    /// Intervals written (everything handed over written first).
    pub fn intervals(&mut self) -> u64 {
        self.finish().intervals
    }

    /// Why the journal stopped being written, if it did (everything handed over written first).
    pub fn problem(&mut self) -> Option<&str> {
        self.finish().problem.as_deref()
    }

    /// The run ended and its files are written: the journal goes.
    pub fn remove(mut self) -> std::io::Result<()> {
        self.finish();
        self.done = None;
        std::fs::remove_file(&self.path)
    }

    fn send(&mut self, work: Work) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(work);
        }
    }

    /// The header, before the first run.
    pub(crate) fn started(&mut self, run: usize, config: &Config) {
        self.roles = crate::report::document::roles::planned(config);
        if run == 0 {
            let frame = crate::report::run::json::frame(config, self.label.as_deref());
            let interval_log = self.log_name();
            let header = Header { journal: MAGIC.into(), version: VERSION, interval_log, frame };
            self.send(Work::Line(Line::Header(Box::new(header))));
        }
    }

    /// One completed interval, handed to the writer with its histograms made coarse (the
    /// precision the log keeps; the encoding is the writer's).
    pub(crate) fn interval(&mut self, run: usize, p: &Progress) {
        let first = self.named != Some(run);
        self.named = Some(run);
        let i = p.interval;
        let pending = Pending {
            run,
            first,
            interval: Interval {
                index: i.index,
                start_secs: i.start_secs,
                duration_secs: i.duration_secs,
                server: i.server,
                active_connections: i.active_connections,
            },
            // At the log's precision already: a writer behind holds ~12x less per interval.
            window: p.window.coarse(),
            started_unix_ms: p.started_unix_ms,
            start: p.start,
            server: if first { p.server.cloned() } else { None },
            names: p.command_names.to_vec(),
            roles: p.roles.iter().map(|r| (r.name.to_string(), r.window.coarse())).collect(),
        };
        self.send(Work::Interval(Box::new(pending)));
    }

    /// A run ended: what only its end knows.
    pub(crate) fn ended(&mut self, run: usize, outcome: &Outcome) {
        let mut roles = crate::report::document::roles::ended(&self.roles, outcome);
        // The intervals are journaled each in its own line already.
        roles.iter_mut().for_each(|r| r.over_time.clear());
        let line = RunEnded {
            role_histograms: crate::report::document::roles::histograms(&roles),
            roles,
            run,
            elapsed_secs: outcome.elapsed.as_secs_f64(),
            interrupted: outcome.interrupted,
            client_threads: outcome.client_threads.clone(),
            server_stats: outcome.server_stats,
            server_peak_memory: outcome.server_peak_memory,
            warnings: outcome.warnings.clone(),
            outages: outcome.outages.clone(),
        };
        self.send(Work::Line(Line::RunEnded(Box::new(line))));
    }
}
