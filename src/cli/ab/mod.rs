//! `respbench ab`: is B faster than A? Two targets (or one with two settings) in interleaved,
//! warmed-up rounds, then each figure's change with its interval and a verdict
//! (`report::ab`), written as text, JSON, Markdown and HTML; `--fail-on-regression` for CI.

pub(super) mod compare;
mod error;
mod rounds;
mod sides;
pub use error::AbError;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;

use super::parse;
use super::run::RunContext;
use super::usage::{EXIT_FAILURE, parse_args, usage_error};
use crate::config::parse::InvalidValue;
use crate::report::ab::stats::{Method, Settings};
use crate::report::ab::{self, AbDocument, Judging, Metric, Side};
use crate::report::document::Tool;

/// Interleaved A/B rounds with paired statistics and a verdict.
#[derive(Debug, Parser)]
#[command(name = "respbench ab", version, max_term_width = 100)]
pub(crate) struct AbArgs {
    /// Side A's respbench flags, as one word: --a "-h host1 -p 7000 -c 20 --ratio 1:0".
    #[arg(long = "a", value_name = "FLAGS", allow_hyphen_values = true, required_unless_present = "a_file")]
    a: Option<String>,
    /// Side B's respbench flags (as --a).
    #[arg(long = "b", value_name = "FLAGS", allow_hyphen_values = true, required_unless_present = "b_file")]
    b: Option<String>,
    /// Side A as a scenario file with one measured phase (its [price] is A's price).
    #[arg(long, value_name = "FILE.toml", conflicts_with = "a")]
    a_file: Option<PathBuf>,
    /// Side B as a scenario file (as --a-file).
    #[arg(long, value_name = "FILE.toml", conflicts_with = "b")]
    b_file: Option<PathBuf>,
    /// A role both sides run, as respbench's --role (NAME:KIND:SETTINGS; NAME:mix is each
    /// side's own mix); given again, each is a client group of every round.
    #[arg(long, value_parser = crate::config::role::parse, value_name = "NAME:KIND:SETTINGS")]
    role: Vec<crate::config::role::Role>,
    /// Round pairs: each one A round and one B round, in an order drawn per pair.
    #[arg(long, default_value = "10", value_parser = parse::positive, value_name = "N")]
    rounds: u64,
    /// The measured length of every round.
    #[arg(long, default_value = "2s", value_parser = parse::duration, value_name = "D")]
    round_duration: Duration,
    /// Load before every round, kept out of its figures (0: none, as a side with a pub/sub,
    /// stream, queue or tracking role needs).
    #[arg(long, default_value = "1s", value_parser = warmup_or_none, value_name = "D")]
    warmup: Duration,
    /// Confidence of the set of four verdicts (each figure's interval at its Bonferroni share), in percent.
    #[arg(long, default_value = "95", value_parser = percent_between_0_and_100, value_name = "PCT")]
    confidence: f64,
    /// A change smaller than this, in percent, is "no significant change".
    #[arg(long, default_value = "2", value_parser = non_negative_percent, value_name = "PCT")]
    noise: f64,
    /// exact: Wilcoxon signed-rank test with the Hodges-Lehmann interval; bootstrap: seeded
    /// percentile bootstrap of the mean log ratio over round pairs.
    #[arg(long, value_enum, default_value = "exact")]
    method: MethodArg,
    /// Bootstrap resamples.
    #[arg(long, default_value = "10000", value_parser = parse::positive, value_name = "N")]
    resamples: u64,
    /// Seed of the round order and the bootstrap [default: drawn, and reported].
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// The figure the headline verdict and --fail-on-regression go by: ops, p50, p99, p99.9
    /// [default: ops; p99 when a side runs at a fixed --rate].
    #[arg(long, value_parser = Metric::parse, value_name = "FIGURE")]
    judge_by: Option<Metric>,
    /// Exit 1 when B is slower than A by more than PCT percent with the stated confidence
    /// (the whole interval beyond it).
    #[arg(long, value_parser = non_negative_percent, value_name = "PCT")]
    fail_on_regression: Option<f64>,
    /// A's price per hour (ops/sec per price in the outputs); overrides a scenario's [price].
    #[arg(long, value_parser = parse_price, value_name = "PRICE")]
    a_price: Option<f64>,
    /// B's price per hour.
    #[arg(long, value_parser = parse_price, value_name = "PRICE")]
    b_price: Option<f64>,
    /// The currency of --a-price and --b-price.
    #[arg(long, default_value = "USD")]
    currency: String,
    /// Write the comparison as JSON (schema: docs/ab-schema.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the comparison as Markdown (a pull-request comment).
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
    /// Write a self-contained HTML page with both distributions and each change's interval.
    #[arg(long, value_name = "FILE")]
    html: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum MethodArg {
    Exact,
    Bootstrap,
}

/// A warm-up's length, or `0` for none.
fn warmup_or_none(s: &str) -> Result<Duration, InvalidValue> {
    if s.trim() == "0" { Ok(Duration::ZERO) } else { parse::duration(s) }
}

fn percent_between_0_and_100(s: &str) -> Result<f64, InvalidValue> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v > 0.0 && v < 100.0 => Ok(v),
        _ => Err(format!("expected a percentage above 0 and below 100 such as 95, got '{s}'").into()),
    }
}

fn non_negative_percent(s: &str) -> Result<f64, InvalidValue> {
    match s.trim().trim_end_matches('%').parse::<f64>() {
        Ok(v) if v >= 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("expected a percentage of 0 or more such as 2, got '{s}'").into()),
    }
}

fn parse_price(s: &str) -> Result<f64, InvalidValue> {
    match s.trim().parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        _ => Err(format!("expected a price per hour above 0 such as 0.126, got '{s}'").into()),
    }
}

/// The comparison settings both `ab` and `compare` take.
pub(super) fn settings(confidence_pct: f64, noise_pct: f64, bootstrap: bool, resamples: u64, seed: u64) -> Settings {
    let method = if bootstrap { Method::Bootstrap { resamples: resamples as usize, seed } } else { Method::Exact };
    Settings { confidence: confidence_pct / 100.0, noise: noise_pct / 100.0, method }
}

/// A seed from the clock when none is given (reported, so the order can be run again).
pub(super) fn drawn_seed() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

pub fn main(args: Vec<OsString>) -> ExitCode {
    let args: AbArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let named =
        crate::report::output::named(&[("--json", &args.json), ("--markdown", &args.markdown), ("--html", &args.html)]);
    if let Err(msg) = crate::report::output::check(&named) {
        return usage_error(&msg);
    }
    let side = |flag: &str, letter: &str, flags: &Option<String>, file: &Option<PathBuf>| {
        let side = match (flags, file) {
            (Some(flags), _) => sides::from_flags(flag, letter, flags, &args.role),
            (None, Some(path)) => sides::from_file(&format!("{flag}-file"), path, &args.role),
            (None, None) => Err(AbError(format!("give {flag} FLAGS or {flag}-file FILE.toml"))),
        }?;
        side.counted_whole(flag, args.warmup)?;
        Ok::<_, AbError>(side)
    };
    let (mut a, mut b) = match (side("--a", "A", &args.a, &args.a_file), side("--b", "B", &args.b, &args.b_file)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return usage_error(&e),
    };
    for (side, price) in [(&mut a, args.a_price), (&mut b, args.b_price)] {
        if let Some(p) = price {
            side.price = Some((p, args.currency.clone()));
        }
    }
    let seed = args.seed.unwrap_or_else(drawn_seed);
    let open_loop = a.config.rate.is_some() || b.config.rate.is_some();
    let judging = Judging {
        settings: settings(args.confidence, args.noise, args.method == MethodArg::Bootstrap, args.resamples, seed),
        paired: true,
        metric: args.judge_by.unwrap_or(if open_loop { Metric::P99 } else { Metric::Ops }),
    };
    let stop = super::signals::install_sigint();
    let cx = RunContext::new(&stop);
    let configs = [a.round(args.round_duration, args.warmup), b.round(args.round_duration, args.warmup)];
    let started_unix_ms = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64);
    let pairs = args.rounds as usize;
    let mut progress = |r: &rounds::Rounds| eprintln!("{}", progress_line(r, pairs, &a, &b, &judging));
    let rounds = match rounds::run([&configs[0], &configs[1]], pairs, seed, &cx, &mut progress) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("respbench: {e}");
            return ExitCode::from(EXIT_FAILURE);
        }
    };
    let mut doc = AbDocument {
        schema_version: ab::SCHEMA_VERSION,
        tool: Tool { name: "respbench".into(), version: env!("CARGO_PKG_VERSION").into() },
        kind: "ab".into(),
        started_unix_ms,
        interrupted: rounds.interrupted,
        seed: Some(seed),
        order: rounds.order.clone(),
        round_secs: Some(args.round_duration.as_secs_f64()),
        warmup_secs: Some(args.warmup.as_secs_f64()),
        a: Side::new(a.label, a.source, a.price, rounds.figures[0].clone(), rounds.pooled(0)),
        b: Side::new(b.label, b.source, b.price, rounds.figures[1].clone(), rounds.pooled(1)),
        warnings: rounds.warnings.clone(),
        ..AbDocument::default()
    };
    ab::judge(&mut doc, &judging, args.fail_on_regression);
    finish(&doc, &args.json, &args.markdown, &args.html, rounds.interrupted)
}

/// Prints the text report, writes the files and gives the exit code.
fn finish(
    doc: &AbDocument,
    json: &Option<PathBuf>,
    markdown: &Option<PathBuf>,
    html: &Option<PathBuf>,
    interrupted: bool,
) -> ExitCode {
    let given = [json, markdown, html].into_iter().flatten().map(PathBuf::as_path);
    crate::report::output::print_report(&ab::text::render(doc), given);
    let files = [(json, doc.to_json()), (markdown, ab::text::markdown(doc)), (html, ab::html::render(doc))];
    let files = files.into_iter().filter_map(|(path, text)| Some((path.as_deref()?, text)));
    if !crate::report::output::write_each("respbench", files) {
        return ExitCode::from(EXIT_FAILURE);
    }
    let unjudged = doc.changes.iter().find(|c| c.metric == doc.judged_by).is_none_or(|c| c.change.is_none());
    if interrupted {
        ExitCode::from(130)
    } else if doc.regression.is_some() && unjudged {
        usage_error(&format!("--fail-on-regression cannot be judged: {}", doc.verdict_note()))
    } else if doc.regressed() {
        ExitCode::from(EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    }
}

/// `respbench ab: pair 3/10 (AB): A 120456 ops/s, B 98012 ops/s; so far B -18.6 % [-20.1 %, -17.0 %]`.
fn progress_line(r: &rounds::Rounds, pairs: usize, a: &sides::Side, b: &sides::Side, judging: &Judging) -> String {
    let done = r.pairs();
    let last = |side: usize| r.figures[side].last().map_or(0.0, |f| f.ops_per_sec);
    let mut doc = AbDocument {
        a: Side { label: a.label.clone(), rounds: r.figures[0].clone(), ..Side::default() },
        b: Side { label: b.label.clone(), rounds: r.figures[1].clone(), ..Side::default() },
        ..AbDocument::default()
    };
    ab::judge(&mut doc, judging, None);
    let estimate = match doc.changes.iter().find(|c| c.metric == doc.judged_by) {
        Some(c) if c.change.is_some() => {
            format!("so far B {} {} by {}", ab::text::change_cell(c), ab::text::interval_cell(c), c.metric)
        }
        _ => "too few pairs for an interval yet".into(),
    };
    format!(
        "respbench ab: pair {done}/{pairs} ({}): A {:.0} ops/s, B {:.0} ops/s; {estimate}",
        r.order.last().map_or("", String::as_str),
        last(0),
        last(1)
    )
}
