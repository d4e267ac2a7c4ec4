//! `respbench merge A.json B.json ...`: the results of the shards of one run (several load
//! machines, `--shard`) as one result, merged exactly by `report::merge`, written as JSON and
//! HTML or printed as a summary.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::results::{load, name_of, write};
use super::{EXIT_FAILURE, EXIT_USAGE, parse_args, usage_error};
use crate::report::{self, merge};

/// Merges the results of a run's shards into one result.
#[derive(Debug, Parser)]
#[command(name = "respbench merge", version, max_term_width = 100)]
struct MergeArgs {
    /// The shards' result files (--json of each).
    #[arg(required = true, num_args = 2..)]
    results: Vec<PathBuf>,
    /// Write the merged result as JSON (a normal result: report and compare take it).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the HTML report of the merged result.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// A name for the merged result in comparisons.
    #[arg(long)]
    label: Option<String>,
}

pub fn main(args: Vec<OsString>) -> ExitCode {
    let args: MergeArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let mut inputs = Vec::new();
    for path in &args.results {
        match load(path) {
            Ok(doc) => inputs.push(merge::Input { name: name_of(path, &doc), doc }),
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
    let mut json = serde_json::to_string_pretty(&merged.doc).expect("plain data serialises");
    json.push('\n');
    let outputs = [(&args.json, json), (&args.html, String::new())];
    if outputs.iter().all(|(p, _)| p.is_none()) {
        print!("{}", report::tables::markdown(&merged.doc));
        return ExitCode::SUCCESS;
    }
    for (path, text) in outputs {
        let Some(path) = path else { continue };
        let text = if text.is_empty() { report::html::render(&merged.doc) } else { text };
        if let Err(msg) = write(path, &text) {
            eprintln!("respbench: {msg}");
            return ExitCode::from(EXIT_FAILURE);
        }
    }
    ExitCode::SUCCESS
}
