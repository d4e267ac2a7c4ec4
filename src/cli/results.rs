//! Commands on saved results: `respbench report RESULT.json -o FILE.html` renders any format
//! from a result file, and `respbench compare A.json B.json ...` sets results side by side with
//! ratios to the first, optionally with prices to give throughput per dollar, and the verdict of
//! each against the first from their `--runs` (`cli::ab::compare`).

use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::ab;
use super::files::write;
use super::usage::{EXIT_FAILURE, parse_args, usage_error};
use crate::config::parse::InvalidValue;
use crate::report::document::{Document, Malformed, ResultFile, ScenarioDocument};
use crate::report::{self, pages::chart::escape};
use clap::Parser;

/// Renders reports from a saved result (`--json` of a run).
#[derive(Debug, Parser)]
#[command(name = "respbench report", version, max_term_width = 100)]
pub(crate) struct ReportArgs {
    /// The result file; several are set side by side in one table (ops per price from each
    /// scenario's [price]).
    #[arg(required = true, num_args = 1..)]
    results: Vec<PathBuf>,
    /// Write the HTML report here.
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    html: Option<PathBuf>,
    /// Write the summary as CSV.
    #[arg(long, value_name = "FILE")]
    csv: Option<PathBuf>,
    /// Write the time series as CSV.
    #[arg(long, value_name = "FILE")]
    csv_timeline: Option<PathBuf>,
    /// Write the summary as Markdown (printed when no output is named).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

/// Sets saved results side by side.
#[derive(Debug, Parser)]
#[command(name = "respbench compare", version, max_term_width = 100)]
pub(crate) struct CompareArgs {
    /// Result files; ratios are to the first.
    #[arg(required = true, num_args = 2..)]
    results: Vec<PathBuf>,
    /// Also write an HTML page with the timelines and spectra overlaid.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
    /// Hourly prices, NAME=USD_PER_HOUR,... (NAME: a result's label or file stem): adds ops/s per
    /// dollar of hourly price.
    #[arg(long, value_name = "NAME=USD,...")]
    price: Option<String>,
    /// Verdicts of each result against the first, from their --runs (unpaired rank test).
    #[command(flatten)]
    verdict: super::ab::compare::VerdictFlags,
}

pub(super) fn load(path: &Path) -> Result<ResultFile, Malformed> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    ResultFile::parse(&text, &path.display().to_string())
}

/// A run's result (or a merge's): a scenario's is refused, naming what takes it.
pub(super) fn load_run(path: &Path) -> Result<Document, Malformed> {
    match load(path)? {
        ResultFile::Run(doc) => Ok(*doc),
        ResultFile::Scenario(_) => Err(format!(
            "{} is a scenario's result: give the results of runs here (respbench report takes a scenario's)",
            path.display()
        )
        .into()),
    }
}

pub fn report_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: ReportArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if args.results.len() > 1 {
        return several(&args);
    }
    let named = report::output::named(&[
        ("--output", &args.html),
        ("--csv", &args.csv),
        ("--csv-timeline", &args.csv_timeline),
        ("--markdown", &args.markdown),
    ]);
    if let Err(msg) = report::output::check(&named) {
        return usage_error(&msg);
    }
    let doc = match load(&args.results[0]) {
        Ok(ResultFile::Run(d)) => d,
        Ok(ResultFile::Scenario(doc)) => return scenario_report(&args, &doc),
        Err(msg) => return usage_error(&msg),
    };
    let outputs = [
        (&args.html, report::pages::html::render as fn(&Document) -> String),
        (&args.csv, report::run::tables::csv_summary),
        (&args.csv_timeline, report::run::tables::csv_timeline),
        (&args.markdown, report::run::tables::markdown),
    ];
    if outputs.iter().all(|(p, _)| p.is_none()) {
        print!("{}", report::run::tables::markdown(&doc));
        return ExitCode::SUCCESS;
    }
    let files = outputs.iter().filter_map(|(path, render)| Some((path.as_deref()?, render(&doc))));
    if report::output::write_each("respbench", files) { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FAILURE) }
}

/// A scenario's result: its page (`-o`), else its table across phases as Markdown.
fn scenario_report(args: &ReportArgs, doc: &ScenarioDocument) -> ExitCode {
    if args.csv.is_some() || args.csv_timeline.is_some() || args.markdown.is_some() {
        return usage_error("a scenario's result renders as HTML (-o) or, without it, a Markdown table on stdout");
    }
    match &args.html {
        Some(path) => {
            if let Err(msg) = write(path, &report::pages::scenario_html::render(doc)) {
                eprintln!("respbench: {msg}");
                return ExitCode::from(EXIT_FAILURE);
            }
        }
        None => print!("{}", report::pages::scenario_html::markdown(doc)),
    }
    ExitCode::SUCCESS
}

/// Several results: the table across them on stdout, and as a page with `-o`.
fn several(args: &ReportArgs) -> ExitCode {
    if args.csv.is_some() || args.csv_timeline.is_some() || args.markdown.is_some() {
        return usage_error("several results render as one table: on stdout, and as HTML with -o");
    }
    let mut files = Vec::new();
    for path in &args.results {
        match load(path) {
            Ok(file) => {
                let label = match &file {
                    ResultFile::Run(doc) => doc.label.clone(),
                    ResultFile::Scenario(_) => None,
                };
                files.push((name_of(path, label.as_deref()), file));
            }
            Err(msg) => return usage_error(&msg),
        }
    }
    let rows = report::pages::scenario_compare::rows(&files);
    report::output::print_report(&report::pages::scenario_compare::text(&rows), args.html.as_deref());
    if let Some(path) = &args.html
        && let Err(msg) = write(path, &report::pages::scenario_compare::html(&rows, &files))
    {
        eprintln!("respbench: {msg}");
        return ExitCode::from(EXIT_FAILURE);
    }
    ExitCode::SUCCESS
}

/// A result's name: its label, else its file stem.
pub(super) fn name_of(path: &Path, label: Option<&str>) -> String {
    label
        .map(String::from)
        .unwrap_or_else(|| path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default())
}

/// `a=1.5,b=3` into (name, dollars per hour).
fn prices(spec: &str) -> Result<Vec<(String, f64)>, InvalidValue> {
    spec.split(',')
        .map(|item| -> Result<(String, f64), InvalidValue> {
            let (name, usd) = item
                .split_once('=')
                .ok_or_else(|| format!("expected NAME=USD_PER_HOUR,... such as a=1.5,b=3, got '{spec}'"))?;
            let usd: f64 = usd.trim().parse().map_err(|_| format!("'{usd}' in --price is not a price in dollars"))?;
            if !(usd > 0.0 && usd.is_finite()) {
                return Err(format!("'{item}' in --price: the price must be above 0").into());
            }
            Ok((name.trim().to_string(), usd))
        })
        .collect()
}

/// One row of the comparison.
struct Row {
    name: String,
    ops: f64,
    p50: f64,
    p99: f64,
    p999: f64,
    errors: u64,
    per_dollar: Option<f64>,
}

fn rows(results: &[(String, Document)], prices: &[(String, f64)]) -> Vec<Row> {
    results
        .iter()
        .map(|(name, doc)| {
            let t = &doc.totals;
            let ms = |us: f64| us / 1000.0;
            let ops = t.ops_per_sec;
            Row {
                name: name.clone(),
                ops,
                p50: ms(t.latency_us.p50_us),
                p99: ms(t.latency_us.p99_us),
                p999: ms(t.latency_us.p999_us),
                errors: t.errors,
                per_dollar: prices.iter().find(|(n, _)| n == name).map(|(_, usd)| ops / usd),
            }
        })
        .collect()
}

fn ratio(a: f64, first: f64) -> String {
    if first > 0.0 { format!("{:.2}", a / first) } else { "-".into() }
}

impl Row {
    /// The cells both tables show, formatted: result, ops/s, ratio, p50, ratio, p99, ratio,
    /// p99.9, ratio, errors, ops/s per $/h, ratio.
    fn cells(&self, first: &Row) -> [String; 12] {
        let (per_dollar, per_dollar_ratio) = match (self.per_dollar, first.per_dollar) {
            (Some(d), Some(f)) => (format!("{d:.0}"), ratio(d, f)),
            (Some(d), None) => (format!("{d:.0}"), "-".into()),
            _ => ("-".into(), "-".into()),
        };
        [
            self.name.clone(),
            format!("{:.0}", self.ops),
            ratio(self.ops, first.ops),
            format!("{:.3}", self.p50),
            ratio(self.p50, first.p50),
            format!("{:.3}", self.p99),
            ratio(self.p99, first.p99),
            format!("{:.3}", self.p999),
            ratio(self.p999, first.p999),
            self.errors.to_string(),
            per_dollar,
            per_dollar_ratio,
        ]
    }
}

const HEADERS: [&str; 12] = [
    "Result",
    "Ops/sec",
    "ratio",
    "p50 ms",
    "ratio",
    "p99 ms",
    "ratio",
    "p99.9 ms",
    "ratio",
    "Errors",
    "Ops/sec per $/h",
    "ratio",
];
/// Column widths of the text table (the first is left-aligned).
const WIDTHS: [usize; 12] = [20, 12, 8, 10, 8, 10, 8, 10, 8, 9, 18, 8];

fn text_table(rows: &[Row]) -> String {
    // The price columns only when some result has a price.
    let columns = if rows.iter().any(|r| r.per_dollar.is_some()) { 12 } else { 10 };
    let line = |cells: &[String]| -> String {
        let mut out = String::new();
        for (i, cell) in cells.iter().enumerate().take(columns) {
            let _ = if i == 0 {
                write!(out, "{cell:<w$}", w = WIDTHS[0])
            } else {
                write!(out, "{cell:>w$}", w = WIDTHS[i])
            };
        }
        out.push('\n');
        out
    };
    let mut out = line(&HEADERS.map(String::from));
    for r in rows {
        out.push_str(&line(&r.cells(&rows[0])));
    }
    out
}

fn html_table(rows: &[Row]) -> String {
    let mut out = String::from("<table><tr>");
    for header in HEADERS {
        let _ = write!(out, "<th>{header}</th>");
    }
    out.push_str("</tr>");
    for r in rows {
        out.push_str("<tr>");
        for cell in r.cells(&rows[0]) {
            let _ = write!(out, "<td>{}</td>", escape(&cell));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

pub fn compare_main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: CompareArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    if let Err(msg) = args.verdict.check(args.results.len()) {
        return usage_error(&msg);
    }
    let (mut runs, mut scenarios) = (Vec::new(), Vec::new());
    for path in &args.results {
        match load(path) {
            Ok(ResultFile::Run(doc)) => runs.push((name_of(path, doc.label.as_deref()), *doc)),
            Ok(ResultFile::Scenario(doc)) => scenarios.push((name_of(path, None), *doc)),
            Err(msg) => return usage_error(&msg),
        }
    }
    if !runs.is_empty() && !scenarios.is_empty() {
        return usage_error(&format!(
            "compare takes results of one kind: '{}' is a run's result and '{}' a scenario's",
            runs[0].0, scenarios[0].0
        ));
    }
    let names: Vec<&str> =
        runs.iter().map(|(n, _)| n.as_str()).chain(scenarios.iter().map(|(n, _)| n.as_str())).collect();
    let prices = match args.price.as_deref().map(prices).transpose() {
        Ok(p) => p.unwrap_or_default(),
        Err(msg) => return usage_error(&msg),
    };
    if let Some((unknown, _)) = prices.iter().find(|(n, _)| !names.contains(&n.as_str())) {
        return usage_error(&format!("--price names '{unknown}', which is none of the results ({})", names.join(", ")));
    }
    let verdicts = if runs.is_empty() {
        ab::compare::of_phases(&scenarios, &prices, &args.verdict)
    } else {
        ab::compare::of_runs(&runs, &prices, &args.verdict)
    };
    let verdicts = match verdicts {
        Ok(v) => v,
        Err(msg) => return usage_error(&msg),
    };
    let sections = ab::compare::html_sections(&verdicts);
    let page = if runs.is_empty() {
        let files: Vec<(String, ResultFile)> =
            scenarios.into_iter().map(|(n, d)| (n, ResultFile::Scenario(Box::new(d)))).collect();
        let rows = report::pages::scenario_compare::rows(&files);
        report::output::print_report(&report::pages::scenario_compare::text(&rows), args.html.as_deref());
        let body = report::pages::scenario_compare::body(&rows, &files) + &sections;
        report::pages::html::page("respbench comparison", &body)
    } else {
        let rows = rows(&runs, &prices);
        report::output::print_report(&text_table(&rows), args.html.as_deref());
        report::pages::html::render_compare(&runs, &html_table(&rows), &sections)
    };
    if let Some(path) = &args.html
        && let Err(msg) = write(path, &page)
    {
        eprintln!("respbench: {msg}");
        return ExitCode::from(EXIT_FAILURE);
    }
    ab::compare::finish(&verdicts, &args.verdict)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prices_parse_and_name_bad_values() {
        assert_eq!(prices("a=1.5,b=3").unwrap(), vec![("a".to_string(), 1.5), ("b".to_string(), 3.0)]);
        assert!(prices("a").unwrap_err().contains("NAME=USD"));
        assert!(prices("a=x").unwrap_err().contains("'x'"));
        assert!(prices("a=0").is_err());
    }
}
