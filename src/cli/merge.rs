//! `respbench merge A.json B.json ...`: the results of the shards of one run (several load
//! machines, `--shard`) as one result, merged exactly by `report::merge`, written as JSON and
//! HTML (and memtier_benchmark's JSON, `report::merge::memtier`) or printed as a summary.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::parse;
use super::results::{load_run, name_of};
use super::usage::{EXIT_FAILURE, EXIT_USAGE, parse_args, usage_error};
use crate::report::document::Malformed;
use crate::report::{self, merge};

/// Merges the results of a run's shards into one result.
#[derive(Debug, Parser)]
#[command(name = "respbench merge", version, max_term_width = 100)]
pub(crate) struct MergeArgs {
    /// The shards' result files (--json of each).
    #[arg(required = true, num_args = 2..)]
    results: Vec<PathBuf>,
    /// Write the merged result as JSON (a normal result: report and compare take it).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the HTML report of the merged result.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write the merged result as memtier_benchmark 2.3's JSON (its --json-out-file): whole-run
    /// figures, percentiles of every shard's samples.
    #[arg(long, value_name = "FILE")]
    memtier_json: Option<PathBuf>,
    /// The percentiles memtier's JSON gives, comma-separated (its --print-percentiles).
    #[arg(long, value_parser = parse::percentiles, default_value = "50,99,99.9", value_name = "LIST")]
    percentiles: parse::Percentiles,
    /// memtier's JSON: with --runs, each run's section as well (its --print-all-runs).
    #[arg(long, requires = "memtier_json")]
    print_all_runs: bool,
    /// memtier's JSON: no latency distribution blocks (its --hide-histogram).
    #[arg(long, requires = "memtier_json")]
    hide_histogram: bool,
    /// A name for the merged result in comparisons.
    #[arg(long)]
    label: Option<String>,
}

pub fn main(args: Vec<OsString>) -> ExitCode {
    let args: MergeArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let named = crate::report::output::named(&[
        ("--json", &args.json),
        ("--html", &args.html),
        ("--memtier-json", &args.memtier_json),
    ]);
    if let Err(msg) = crate::report::output::check(&named) {
        return usage_error(&msg);
    }
    let mut inputs = Vec::new();
    for path in &args.results {
        match load_run(path) {
            Ok(doc) => match interval_log_of(path, &doc) {
                Ok(log) => inputs.push(merge::Input { name: name_of(path, doc.label.as_deref()), doc, log }),
                Err(msg) => return usage_error(&msg),
            },
            Err(msg) => return usage_error(&msg),
        }
    }
    let merged = match merge::merge(&inputs, args.label.as_deref()) {
        Ok(m) => m,
        Err(msg) => {
            eprintln!("respbench merge: {msg}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    for w in &merged.warnings {
        eprintln!("respbench merge: warning: {w}");
    }
    let json = merged.doc.to_json();
    let options = merge::memtier::Options {
        percentiles: args.percentiles.0.clone(),
        print_all_runs: args.print_all_runs,
        hide_histogram: args.hide_histogram,
    };
    let memtier = match &args.memtier_json {
        Some(_) => match merge::memtier::render(&merged.doc, &options) {
            Ok(text) => text,
            Err(msg) => {
                eprintln!("respbench merge: {msg}");
                return ExitCode::from(EXIT_FAILURE);
            }
        },
        None => String::new(),
    };
    if args.json.is_none() && args.html.is_none() && args.memtier_json.is_none() {
        print!("{}", report::run::tables::markdown(&merged.doc));
        return ExitCode::SUCCESS;
    }
    let html = || report::pages::html::render(&merged.doc);
    let outputs = [(&args.json, Some(json)), (&args.html, None), (&args.memtier_json, Some(memtier))];
    let files = outputs.into_iter().filter_map(|(path, text)| Some((path.as_deref()?, text.unwrap_or_else(html))));
    if !report::output::write_each("respbench", files) {
        return ExitCode::from(EXIT_FAILURE);
    }
    ExitCode::SUCCESS
}

/// The intervals of the interval log a result names, read from its directory (none for a
/// result that keeps its intervals inline).
fn interval_log_of(
    path: &std::path::Path,
    doc: &crate::report::document::Document,
) -> Result<Vec<crate::report::document::interval_log::LoggedInterval>, Malformed> {
    let Some(name) = doc.histograms.interval_log.as_deref().filter(|_| doc.histograms.intervals.is_empty()) else {
        return Ok(Vec::new());
    };
    let log = path.parent().unwrap_or(std::path::Path::new("")).join(name);
    let bytes = std::fs::read(&log).map_err(|e| {
        format!(
            "cannot read {}, the interval log {} names ({e}): it cannot be merged exactly",
            log.display(),
            path.display()
        )
    })?;
    crate::report::document::interval_log::read(&bytes, &log.display().to_string())
}
