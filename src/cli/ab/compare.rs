//! `respbench compare`'s verdicts: results taken with `--runs N` judged as ab judges rounds,
//! unpaired (the runs of A and of B were not interleaved), each result against the first.

use std::path::PathBuf;
use std::process::ExitCode;

use super::{drawn_seed, finish, settings};
use crate::report::ab::{self, AbDocument, Judging, Metric, Side};
use crate::report::document::{Document, Tool};

/// The verdict flags `compare` takes (as ab's, for results already taken).
#[derive(Debug, Clone, clap::Args)]
pub struct VerdictFlags {
    /// Confidence of the verdicts' intervals, in percent.
    #[arg(long, default_value = "95", value_parser = super::percent_between_0_and_100, value_name = "PCT")]
    confidence: f64,
    /// A change smaller than this, in percent, is "no significant change".
    #[arg(long, default_value = "2", value_parser = super::non_negative_percent, value_name = "PCT")]
    noise: f64,
    /// exact: Mann-Whitney rank-sum test with the Hodges-Lehmann interval; bootstrap: seeded
    /// percentile bootstrap of the difference of mean log figures.
    #[arg(long, value_enum, default_value = "exact")]
    method: super::MethodArg,
    /// Bootstrap resamples.
    #[arg(long, default_value = "10000", value_parser = crate::cli::parse::positive, value_name = "N")]
    resamples: u64,
    /// The bootstrap's seed [default: drawn, and reported].
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// The figure the verdict goes by: ops, p50, p99, p99.9 [default: ops; p99 for results at a fixed --rate].
    #[arg(long, value_parser = Metric::parse, value_name = "FIGURE")]
    judge_by: Option<Metric>,
    /// Exit 1 when the second result is slower than the first by more than PCT percent with
    /// the stated confidence.
    #[arg(long, value_parser = super::non_negative_percent, value_name = "PCT")]
    fail_on_regression: Option<f64>,
    /// Write the verdict (second result against the first) as JSON (docs/ab-schema.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the verdict as Markdown.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

/// The verdict of each result against the first, printed after the side-by-side table; the
/// files and the exit code for the second against the first.
pub fn verdicts(
    results: &[(String, Document)],
    prices: &[(String, f64)],
    flags: &VerdictFlags,
) -> Result<ExitCode, String> {
    if results.len() > 2 && (flags.json.is_some() || flags.markdown.is_some() || flags.fail_on_regression.is_some()) {
        return Err("--json, --markdown and --fail-on-regression judge two results: give exactly two".into());
    }
    let bootstrap = flags.method == super::MethodArg::Bootstrap;
    let seed = flags.seed.unwrap_or_else(drawn_seed);
    let open_loop = results.iter().any(|(_, d)| d.configuration.rate_per_sec.is_some());
    let judging = Judging {
        settings: settings(flags.confidence, flags.noise, bootstrap, flags.resamples, seed),
        paired: false,
        metric: flags.judge_by.unwrap_or(if open_loop { Metric::P99 } else { Metric::Ops }),
    };
    let side = |(name, doc): &(String, Document)| -> Result<Side, String> {
        let (runs, pooled) = ab::from_document::runs_of(doc).map_err(|e| format!("{name}: {e}"))?;
        let price = prices.iter().find(|(n, _)| n == name).map(|(_, usd)| (*usd, "USD".to_string()));
        Ok(Side::new(name.clone(), format!("{name} ({} runs)", runs.len()), price, runs, pooled))
    };
    let first = side(&results[0])?;
    let mut code = ExitCode::SUCCESS;
    for other in &results[1..] {
        let mut doc = AbDocument {
            schema_version: ab::SCHEMA_VERSION,
            tool: Tool { name: "respbench".into(), version: env!("CARGO_PKG_VERSION").into() },
            kind: "compare".into(),
            started_unix_ms: other.1.started_unix_ms,
            interrupted: results[0].1.interrupted || other.1.interrupted,
            seed: bootstrap.then_some(seed),
            a: first.clone(),
            b: side(other)?,
            ..AbDocument::default()
        };
        ab::judge(&mut doc, &judging, flags.fail_on_regression);
        println!();
        code = finish(&doc, &flags.json, &flags.markdown, &None, false);
    }
    Ok(code)
}
