//! A run for the memtier front-end: memtier's stderr lines (`[RUN #1] Preparing benchmark
//! client...`, the per-second progress line, the files it saves), then its report and files,
//! in memtier's order, so that scripts that read memtier's output read ours.

use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{EXIT_FAILURE, Output, checks_before_the_run, open_statsd, signals};
use crate::config::Config;
use crate::engine::{self, Outcome};
use crate::report::memtier_stats::{MemtierOutput, MemtierView};
use crate::report::{self, memtier_clients, memtier_files, memtier_json, memtier_text};

pub fn execute(config: &Config, output: &Output, options: &MemtierOutput, stop: &AtomicBool) -> ExitCode {
    let warnings = match checks_before_the_run(config, &output.notes) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let mut statsd = match open_statsd(output) {
        Ok(s) => s,
        Err(code) => return code,
    };
    if let Some(o) = &output.statsd {
        eprintln!(
            "statsd: initialized, sending metrics to {}:{} with prefix '{}' run_label '{}'",
            o.host, o.port, o.prefix, o.run_label
        );
    }
    let (metrics, own_metrics) = match super::live_metrics(output) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let threads = config.threads.min(config.connections).max(1);
    let view = MemtierView {
        config,
        percentiles: &output.percentiles,
        out_file: output.out_file.as_deref().and_then(|p| p.to_str()),
        options,
        arbitrary: output.arbitrary,
    };
    if let Some(path) = &output.memtier_json {
        eprintln!("Json file {} created...", path.display());
    }
    match &output.out_file {
        Some(path) => eprintln!("Writing results to {}...", path.display()),
        None => eprintln!("Writing results to stdout"),
    }
    let mut runs: Vec<Outcome> = Vec::new();
    let mut files: Vec<(std::path::PathBuf, Vec<u8>)> = Vec::new();
    for run in 0..output.runs {
        let id = run + 1;
        eprintln!("[RUN #{id}] Preparing benchmark client...");
        eprintln!("[RUN #{id}] Launching threads now...");
        let mut progressed = memtier_text::Progressed::default();
        if let Some(s) = statsd.as_mut() {
            s.run_started(run, threads, config.connections / threads);
        }
        if let Some(m) = &metrics {
            m.run_started(config);
        }
        let mut observe = |p: &engine::Progress| {
            // Live outputs first: once the line is out, a scrape sees this interval.
            if let Some(m) = &metrics {
                m.interval(p);
            }
            eprint!("{}", progressed.line(&view, id, p));
            if let Some(s) = statsd.as_mut() {
                s.interval(p);
            }
        };
        let outcome = engine::run(config, run, stop, &mut observe);
        if let Some(s) = statsd.as_mut() {
            s.run_ended(run);
        }
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => {
                eprintln!("\nrespbench: {e}");
                return ExitCode::from(EXIT_FAILURE);
            }
        };
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
        if let Some(prefix) = &options.hdr_prefix {
            for (path, bytes, what) in memtier_files::hdr_files(&view, prefix, id, &outcome) {
                eprintln!("Writing {what} to {}...", path.display());
                files.push((path, bytes));
            }
        }
        if let Some(prefix) = &options.client_stats {
            files.extend(memtier_clients::client_files(&view, prefix, id, &outcome));
        }
        runs.push(outcome);
        if stop.load(Ordering::SeqCst) {
            break;
        }
    }
    let mut pooled = Outcome::pool(runs.clone()).expect("at least one run");
    pooled.warnings.splice(0..0, warnings);
    pooled.notes = output.notes.said.clone();
    let text = memtier_text::render(&view, &runs, &pooled);
    match &output.out_file {
        Some(path) => files.push((path.clone(), text.into_bytes())),
        None => {
            let mut stdout = std::io::stdout().lock();
            // A closed pipe (`| head`) is not a failure of the run.
            let _ = stdout.write_all(text.as_bytes());
            let _ = stdout.flush();
        }
    }
    if let Some(path) = &output.memtier_json {
        files.push((path.clone(), memtier_json::render(&view, &runs, &pooled).into_bytes()));
    }
    // respbench's own result beside memtier's outputs: what `respbench merge` adds up when
    // memtier command lines run as shards (memtier's JSON keeps no histograms to merge).
    if let Some(path) = &output.json {
        let run =
            report::Run { config, outcome: &pooled, label: output.label.as_deref(), percentiles: &output.percentiles };
        files.push((path.clone(), report::Format::render(&report::json::Json, &run).into_bytes()));
    }
    for (path, bytes) in &files {
        if let Err(e) = report::write_atomic(path, bytes) {
            eprintln!("respbench: cannot write {}: {e}", path.display());
            return ExitCode::from(EXIT_FAILURE);
        }
    }
    if let Some(path) = &output.memtier_json {
        eprintln!("Saving JSON output file: {}", path.display());
        eprintln!("Json file closed.");
    }
    if let (Some(m), true) = (&metrics, own_metrics) {
        m.finish();
        m.linger(output.scenario.metrics_linger.unwrap_or_default());
    }
    if pooled.interrupted {
        return ExitCode::from(signals::interrupted_exit_code());
    }
    // Unlike memtier (which exits 0 when every connection failed), a run in which nothing
    // succeeded is a failure: scripts must not take it for a measurement.
    if let Some(why) = super::exit::failure(config, &pooled, output) {
        eprintln!("respbench: {why}");
        return ExitCode::from(EXIT_FAILURE);
    }
    ExitCode::SUCCESS
}
