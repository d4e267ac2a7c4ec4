//! A run for the memtier front-end: memtier's stderr lines (`[RUN #1] Preparing benchmark
//! client...`, the per-second progress line, the files it saves), then its report and files,
//! in memtier's order, so that scripts that read memtier's output read ours.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cli::native::run::exit_code;
use crate::cli::options::Output;
use crate::cli::run::Ran;
use crate::cli::run::{self, Plan, RunContext};
use crate::cli::signals;
use crate::cli::usage::{EXIT_FAILURE, EXIT_USAGE};
use crate::config::Config;
use crate::engine::{Outcome, Progress};
use crate::net::ConnectError;
use crate::report::live::sink::Sink;
use crate::report::memtier::stats::{MemtierOutput, MemtierView};
use crate::report::{self, memtier};

/// memtier's live output: the lines around each run, its progress line, and the per-run files
/// (`--hdr-file-prefix`, `--client-stats`) gathered as each run ends.
struct MemtierLive<'v> {
    view: &'v MemtierView<'v>,
    options: &'v MemtierOutput,
    output: &'v Output,
    progressed: memtier::text::Progressed,
    /// `--realtime-latencies`' blocks, and whether stderr is a terminal they are drawn over.
    realtime: (memtier::realtime::Realtime, bool),
    files: Vec<(PathBuf, Vec<u8>)>,
}

impl MemtierLive<'_> {
    /// memtier's lines once the checks have passed, before the first run.
    fn banner(&self) {
        let output = self.output;
        if let Some(o) = &output.statsd {
            eprintln!(
                "statsd: initialized, sending metrics to {}:{} with prefix '{}' run_label '{}'",
                o.host, o.port, o.prefix, o.run_label
            );
        }
        if let Some(path) = &output.memtier_json {
            eprintln!("Json file {} created...", path.display());
        }
        match &output.out_file {
            Some(path) => eprintln!("Writing results to {}...", path.display()),
            // `--json-out-file -` took standard output: the report goes where this line says.
            None if output.takes_stdout() => eprintln!("Writing results to stderr"),
            None => eprintln!("Writing results to stdout"),
        }
    }
}

impl Sink for MemtierLive<'_> {
    fn run_started(&mut self, run: usize, _config: &Config) {
        if run == 0 {
            self.banner();
        }
        eprintln!("[RUN #{}] Preparing benchmark client...", run + 1);
        eprintln!("[RUN #{}] Launching threads now...", run + 1);
        self.progressed = memtier::text::Progressed::default();
        self.realtime.0 = memtier::realtime::Realtime::default();
    }

    fn interval(&mut self, run: usize, p: &Progress) {
        if self.options.realtime_latencies {
            let (realtime, terminal) = &mut self.realtime;
            eprint!("{}", realtime.block(run + 1, p, self.view.percentiles, *terminal));
        } else {
            eprint!("{}", self.progressed.line(self.view, run + 1, p));
        }
    }

    fn run_ended(&mut self, run: usize, outcome: Option<&Outcome>) {
        // A run that could not start: the caller says why.
        let Some(outcome) = outcome else { return };
        let id = run + 1;
        if outcome.interrupted {
            let by = match signals::stopped_by() {
                None | Some(libc::SIGINT) => "user (Ctrl+C)".to_string(),
                Some(sig) => signals::name(sig).to_string(),
            };
            eprint!(
                "\n[RUN #{id}] Interrupted by {by} after {:.1} secs, stopping threads...",
                outcome.elapsed.as_secs_f64()
            );
        }
        eprint!("\n\n");
        if let Some(prefix) = &self.options.hdr_prefix {
            for (path, bytes, what) in memtier::files::hdr_files(self.view, prefix, id, outcome) {
                eprintln!("Writing {what} to {}...", path.display());
                self.files.push((path, bytes));
            }
        }
        if let Some(prefix) = &self.options.client_stats {
            self.files.extend(memtier::clients::client_files(self.view, prefix, id, outcome));
        }
    }
}

pub fn execute(config: &Config, output: &Output, options: &MemtierOutput, cx: &RunContext<'_>) -> Ran {
    let mut around = match crate::cli::around::Around::open(output, cx) {
        Ok(around) => around,
        Err(code) => return Ran::failed(code),
    };
    let cx = around.context(cx);
    let view = MemtierView {
        config,
        percentiles: &output.percentiles,
        out_file: output.out_file.as_deref().and_then(|p| p.to_str()),
        options,
        arbitrary: output.arbitrary,
    };
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut live = MemtierLive {
        view: &view,
        options,
        output,
        progressed: Default::default(),
        realtime: (Default::default(), terminal),
        files: Vec::new(),
    };
    let mut sinks: Vec<&mut dyn Sink> = vec![&mut live];
    sinks.extend(around.sinks());
    let plan = Plan { config, runs: output.runs, checks: Some(&output.notes) };
    let result = match run::run(&plan, &cx, &mut sinks) {
        Ok(result) => result,
        Err(e) => {
            drop(sinks);
            let gap = if matches!(e, run::RunError::Checks(_)) { "" } else { "\n" };
            // memtier reports a run without any connection and exits 0; respbench exits 1.
            let why = run::failure_message(config, &e);
            eprintln!("{gap}respbench: exit status 1 where memtier_benchmark exits 0: {why}");
            around.close(output, false);
            // memtier 2.4 exits 2 when connecting and setup never reach the steady state in
            // time (--connection-stage-timeout), which respbench's connect budget bounds.
            let stage = matches!(
                e,
                run::RunError::Checks(ConnectError::Silent { .. })
                    | run::RunError::Run(ConnectError::Silent { .. } | ConnectError::NoReply { .. })
            );
            return Ran::failed(ExitCode::from(if stage { EXIT_USAGE } else { EXIT_FAILURE }));
        }
    };
    drop(sinks);
    let mut pooled = result.pooled();
    pooled.notes.splice(0..0, output.notes.said.iter().cloned());
    let interval_log = around.interval_log(output);
    for warning in memtier::text::miss_warnings(&view, &pooled) {
        eprintln!("{warning}");
    }
    let written = write_reports(&view, output, &result.runs, &pooled, (live.files, interval_log), cx.stdout_taken);
    around.close(output, written.is_ok());
    let document = match written {
        Ok(doc) => doc,
        Err(code) => return Ran::failed(code),
    };
    Ran { code: exit_code(config, output, &pooled), document }
}

/// memtier's report on stdout (or `--out-file`), its JSON, respbench's own result beside them
/// when asked, and the per-run files; the result document when it was made.
fn write_reports(
    view: &MemtierView<'_>,
    output: &Output,
    runs: &[Outcome],
    pooled: &Outcome,
    (mut files, interval_log): (Vec<(PathBuf, Vec<u8>)>, Option<String>),
    stdout_taken: bool,
) -> Result<Option<report::document::Document>, ExitCode> {
    let text = memtier::text::render(view, runs, pooled);
    match &output.out_file {
        Some(path) => files.push((path.clone(), text.into_bytes())),
        None => report::output::say_report(&text, stdout_taken || output.takes_stdout()),
    }
    if let Some(path) = &output.memtier_json {
        files.push((path.clone(), memtier::json::render(view, runs, pooled).into_bytes()));
    }
    // respbench's own result beside memtier's outputs: what `respbench merge` adds up when
    // memtier command lines run as shards (memtier's JSON keeps no histograms to merge), and
    // what a scenario keeps of a memtier phase.
    let config = view.config;
    let run = report::Run { config, outcome: pooled, label: output.label.as_deref(), percentiles: &output.percentiles };
    let mut document = report::run::json::document(&run);
    document.histograms.interval_log = interval_log;
    if let Some(path) = &output.json {
        files.push((path.clone(), document.to_json().into_bytes()));
    }
    if let Some(path) = &output.failed_keys {
        files.push((path.clone(), report::run::failed_keys::csv(pooled).into_bytes()));
    }
    // Every file is tried: one that cannot be written does not cost the others.
    let mut unwritten = false;
    for (path, bytes) in &files {
        if let Err(e) = report::output::write(path, bytes) {
            eprintln!("respbench: {e}");
            unwritten = true;
        }
    }
    if unwritten {
        return Err(ExitCode::from(EXIT_FAILURE));
    }
    if let Some(path) = &output.memtier_json {
        eprintln!("Saving JSON output file: {}", path.display());
        eprintln!("Json file closed.");
    }
    Ok(Some(document))
}
