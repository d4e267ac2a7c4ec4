//! The journal from the command line: a run's journal opened beside its first output file and
//! removed once its files are written (`open`, `close`), and `respbench recover FILE.journal`,
//! which builds the result of a run that did not end from its journal and writes it with the
//! writers every result goes through.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

use super::files::write;
use super::options::Output;
use super::parse;
use super::usage::{EXIT_FAILURE, EXIT_USAGE, parse_args, usage_error};
use crate::report::document::{Document, Malformed};
use crate::report::live::journal::{self, Journal};
use crate::report::merge::MergeError;
use crate::report::{self, merge};

/// The journal of a run whose outputs need the whole run (`--json`, else `--html`, `--csv`,
/// `--csv-timeline`, `--markdown`): `FILE.journal` beside the first of them that is a regular
/// file or a new path (never beside `-` or a FIFO or device). A journal that cannot be made is
/// said as the run's warnings are (not under a front-end's name) and the run goes on without it.
pub(crate) fn open(output: &Output) -> Option<Journal> {
    let outputs =
        [&output.json, &output.html, &output.csv, &output.csv_timeline, &output.markdown, &output.memtier_json];
    let mut named = outputs.into_iter().flatten().peekable();
    named.peek()?;
    let Some(first) = named.find(|path| report::output::takes_neighbours(path)) else {
        let why = "no journal: it is kept only beside an output that is a regular file, and every output here is \
                   standard output or a special file; a kill would lose this run";
        output.notes.warn("respbench", &[why.to_string()]);
        return None;
    };
    let path = Journal::path_for(first);
    match Journal::create(path.clone(), Journal::log_path_for(first), output.label.as_deref()) {
        Ok((journal, kept)) => {
            output.notes.warn("respbench", &kept.into_iter().collect::<Vec<_>>());
            Some(journal)
        }
        Err(e) => {
            let why = format!("cannot write the journal {}: {e}; a kill would lose this run", path.display());
            output.notes.warn("respbench", &[why]);
            None
        }
    }
}

/// After the run: a journal whose run's files were written (`written`) goes; one that holds
/// intervals of a run whose files were not stays for `respbench recover`, and says so.
pub(crate) fn close(journal: Option<Journal>, output: &Output, written: bool) {
    let Some(mut journal) = journal else { return };
    let mut said: Vec<String> = journal.problem().map(String::from).into_iter().collect();
    let path = journal.path().display().to_string();
    if !written && journal.intervals() == 0 {
        // Nothing measured and nothing written: the interval log has nothing to keep either.
        let _ = std::fs::remove_file(journal.log_path());
    }
    if written || journal.intervals() == 0 {
        if let Err(e) = journal.remove() {
            said.push(format!("cannot remove the journal {path}: {e}"));
        }
    } else {
        said.push(format!("the journal {path} keeps what was measured: respbench recover {path} --json FILE"));
    }
    output.notes.warn("respbench", &said);
}

/// Builds the result of a run that did not end (killed, out of time) from its journal.
#[derive(Debug, Parser)]
#[command(name = "respbench recover", version, max_term_width = 100)]
pub(crate) struct RecoverArgs {
    /// The journal a run left beside its first output file (`FILE.journal`).
    journal: PathBuf,
    /// Write the result as JSON (marked interrupted, with `recovered`).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the HTML report.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Write the summary table as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the per-interval time series as CSV.
    #[arg(long, value_name = "FILE")]
    csv_timeline: Option<PathBuf>,
    /// Write the summary as a Markdown table.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Write the result as memtier_benchmark 2.3's JSON (its --json-out-file).
    #[arg(long, value_name = "FILE")]
    memtier_json: Option<PathBuf>,
    /// The percentiles memtier's JSON gives, comma-separated (its --print-percentiles).
    #[arg(long, value_parser = parse::percentiles, default_value = "50,99,99.9", value_name = "LIST")]
    percentiles: parse::Percentiles,
}

/// One output's text, or why it has none.
type Render<'a> = dyn Fn() -> Result<String, MergeError> + 'a;

pub fn main(args: Vec<OsString>) -> ExitCode {
    let args: RecoverArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let named = crate::report::output::named(&[
        ("--json", &args.json),
        ("--html", &args.html),
        ("--csv", &args.csv),
        ("--csv-timeline", &args.csv_timeline),
        ("--markdown", &args.markdown),
        ("--memtier-json", &args.memtier_json),
    ]);
    if let Err(msg) = crate::report::output::check(&named) {
        return usage_error(&msg);
    }
    let what = args.journal.display().to_string();
    let text = match std::fs::read(&args.journal) {
        // Bytes, not text: a power loss can leave a last line cut inside a character.
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => return usage_error(&format!("cannot read {what}: {e}")),
    };
    // The interval log the journal's header names, in the journal's directory (`NAME.prev`
    // beside a journal a later run kept as `.prev`).
    let dir = args.journal.parent().map(std::path::Path::to_path_buf).unwrap_or_default();
    let prev = args.journal.extension().is_some_and(|e| e == "prev");
    let read_log = |name: &str| {
        let name = if prev { format!("{name}.prev") } else { name.to_string() };
        let path = dir.join(&name);
        let shown = path.display().to_string();
        std::fs::read(&path)
            .map(|bytes| (bytes, shown.clone()))
            .map_err(|e| Malformed(format!("cannot read the interval log {shown} that {what} names: {e}")))
    };
    let recovered = match journal::recover(&text, &what, &read_log) {
        Ok(r) => r,
        Err(msg) => {
            // The input is what is wrong: a file that is no journal, or one with nothing in it.
            eprintln!("respbench recover: {msg}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let doc = recovered.doc;
    let given = [&args.json, &args.html, &args.csv, &args.csv_timeline, &args.markdown, &args.memtier_json];
    report::output::print_report(&format!("{}\n", summary(&doc)), given.into_iter().flatten().map(PathBuf::as_path));
    let memtier = || {
        let options = merge::memtier::Options {
            percentiles: args.percentiles.0.clone(),
            print_all_runs: false,
            hide_histogram: false,
        };
        merge::memtier::render(&doc, &options)
    };
    let outputs: [(&Option<PathBuf>, &Render); 6] = [
        (&args.json, &|| Ok(doc.to_json())),
        (&args.html, &|| Ok(report::pages::html::render(&doc))),
        (&args.csv, &|| Ok(report::run::tables::csv_summary(&doc))),
        (&args.csv_timeline, &|| Ok(report::run::tables::csv_timeline(&doc))),
        (&args.markdown, &|| Ok(report::run::tables::markdown(&doc))),
        (&args.memtier_json, &memtier),
    ];
    if outputs.iter().all(|(path, _)| path.is_none()) {
        print!("{}", report::run::tables::markdown(&doc));
    }
    let mut written = true;
    for (path, render) in outputs {
        let Some(path) = path else { continue };
        let failed = match render() {
            Ok(text) => write(path, &text).err().map(|e| e.to_string()),
            Err(e) => Some(e.to_string()),
        };
        if let Some(msg) = failed {
            eprintln!("respbench recover: {msg}");
            written = false;
        }
    }
    if written { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FAILURE) }
}

/// The one line that says what was recovered: interrupted, how far, and every request.
fn summary(doc: &Document) -> String {
    let r = doc.recovered.as_ref().expect("a recovered result");
    let at = jiff::Timestamp::from_millisecond(r.last_interval_end_unix_ms as i64)
        .map_or_else(|_| "?".to_string(), |t| t.to_string());
    let t = &doc.totals;
    format!(
        "INTERRUPTED run recovered from {}: intervals {}, the last ending {:.2} s into the run ({at}){}; \
         {} requests sent = {} replies + {} failed + {} abandoned",
        r.journal,
        r.intervals,
        r.last_interval_end_secs,
        if r.cut_line { "; a last line cut short was left out" } else { "" },
        t.sent,
        t.count,
        t.failed,
        t.abandoned,
    )
}
