//! respbench's own run: its live outputs handed to the run API as sinks, then its report on
//! stdout and its files, all built from the one result document, which comes back to the
//! caller (a scenario keeps it as the phase's result).

use std::process::ExitCode;

use crate::cli::options::Output;
use crate::cli::run::Ran;
use crate::cli::run::{self, Plan, RunContext};
use crate::cli::usage::{EXIT_FAILURE, EXIT_USAGE};
use crate::cli::{exit, signals};
use crate::config::Config;
use crate::engine::Outcome;
use crate::report::document::Document;
use crate::report::live::hdrlog::HdrLog;
use crate::report::live::sink::LiveLine;
use crate::report::{self, Format, Run};

/// The run itself and its reports.
pub fn execute(config: &Config, output: &Output, cx: &RunContext<'_>) -> Ran {
    let mut around = match crate::cli::around::Around::open(output, cx) {
        Ok(around) => around,
        Err(code) => return Ran::failed(code),
    };
    let cx = around.context(cx);
    let mut hdr_log = output.hdr_log.as_ref().map(|_| HdrLog::new());
    let mut line = LiveLine::new(output.runs, output.progress);
    let mut sinks = around.sinks();
    if let Some(log) = hdr_log.as_mut() {
        sinks.push(log);
    }
    sinks.push(&mut line);
    let plan = Plan { config, runs: output.runs, checks: Some(&output.notes) };
    let result = match run::run(&plan, &cx, &mut sinks) {
        Ok(result) => result,
        Err(e) => {
            drop(sinks);
            eprintln!("respbench: {}", run::failure_message(config, &e));
            around.close(output, false);
            // A role the server refuses is the command line's to fix.
            let usage = matches!(e, run::RunError::Run(crate::net::ConnectError::Role { .. }));
            return Ran::failed(ExitCode::from(if usage { EXIT_USAGE } else { EXIT_FAILURE }));
        }
    };
    drop(sinks);
    let mut outcome = result.pooled();
    outcome.notes.splice(0..0, output.notes.said.iter().cloned());
    let interval_log = around.interval_log(output);
    let written = write_reports(config, output, &outcome, hdr_log, interval_log, cx.stdout_taken);
    around.close(output, written.is_ok());
    let document = match written {
        Ok(doc) => doc,
        Err(code) => return Ran::failed(code),
    };
    Ran { code: exit_code(config, output, &outcome), document: Some(document) }
}

/// The report on stdout (or `--out-file`) and every file asked for, each built from the result
/// document alone, as `respbench report` builds it; the document.
fn write_reports(
    config: &Config,
    output: &Output,
    outcome: &Outcome,
    hdr_log: Option<HdrLog>,
    interval_log: Option<String>,
    stdout_taken: bool,
) -> Result<Document, ExitCode> {
    let run = Run { config, outcome, label: output.label.as_deref(), percentiles: &output.percentiles };
    let text =
        if output.quiet { report::run::text::Summary.render(&run) } else { report::run::text::Table.render(&run) };
    let mut files: Vec<(&std::path::Path, Vec<u8>)> = Vec::new();
    match &output.out_file {
        Some(path) => files.push((path, text.into_bytes())),
        None => report::output::say_report(&text, stdout_taken || output.takes_stdout()),
    }
    let mut doc = report::run::json::document(&run);
    doc.histograms.interval_log = interval_log;
    if let Some(path) = &output.json {
        files.push((path, doc.to_json().into_bytes()));
    }
    for (path, render) in [
        (&output.html, report::pages::html::render as fn(&Document) -> String),
        (&output.csv, report::run::tables::csv_summary),
        (&output.csv_timeline, report::run::tables::csv_timeline),
        (&output.markdown, report::run::tables::markdown),
    ] {
        if let Some(path) = path {
            files.push((path, render(&doc).into_bytes()));
        }
    }
    if let Some(path) = &output.failed_keys {
        files.push((path, report::run::failed_keys::csv(outcome).into_bytes()));
    }
    if let (Some(path), Some(log)) = (&output.hdr_log, hdr_log) {
        files.push((path, log.into_bytes()));
    }
    // Every file is tried: one that cannot be written does not cost the others.
    let mut unwritten = false;
    for (path, bytes) in files {
        if let Err(e) = report::output::write(path, &bytes) {
            eprintln!("respbench: {e}");
            unwritten = true;
        }
    }
    if unwritten { Err(ExitCode::from(EXIT_FAILURE)) } else { Ok(doc) }
}

/// The exit code of a run whose results are out.
pub(crate) fn exit_code(config: &Config, output: &Output, outcome: &Outcome) -> ExitCode {
    if outcome.interrupted {
        return ExitCode::from(signals::interrupted_exit_code());
    }
    // Results are printed and written either way, but a script must not take a run in which
    // nothing succeeded (or, when asked, too much failed) for a measurement. (Unlike memtier,
    // which exits 0 when every connection failed.)
    if let Some(why) = exit::failure(config, outcome, output) {
        if output.memtier_front_end {
            // After memtier's own report, whose harnesses read the exit status: say why it is not 0.
            eprintln!("respbench: exit status 1 where memtier_benchmark exits 0: {why}");
        } else {
            eprintln!("respbench: {why}");
        }
        return ExitCode::from(EXIT_FAILURE);
    }
    ExitCode::SUCCESS
}
