//! `respbench compare`'s verdicts: results taken with `--runs N` judged as ab judges rounds,
//! unpaired (the runs of A and of B were not interleaved), each result against the first; for
//! scenario results, each measured phase against the first's phase of the same name.

use std::path::PathBuf;
use std::process::ExitCode;

use super::error::AbError;
use super::{drawn_seed, settings};
use crate::cli::usage::{EXIT_FAILURE, usage_error};
use crate::report::ab::{self, AbDocument, Judging, Metric, Side};
use crate::report::document::{Document, ScenarioDocument, Tool};

/// The verdict flags `compare` takes (as ab's, for results already taken).
#[derive(Debug, Clone, clap::Args)]
pub struct VerdictFlags {
    /// Confidence of the set of verdicts (each figure's interval gets its share), in percent.
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
    /// Exit 1 when the second result (any of its phases) is slower than the first by more than
    /// PCT percent with the stated confidence.
    #[arg(long, value_parser = super::non_negative_percent, value_name = "PCT")]
    fail_on_regression: Option<f64>,
    /// Scenario results: judge only this phase (by name).
    #[arg(long, value_name = "NAME")]
    phase: Option<String>,
    /// Write the verdict (second result against the first) as JSON (docs/ab-schema.json).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the verdicts as Markdown.
    #[arg(long, value_name = "FILE")]
    markdown: Option<PathBuf>,
}

/// The verdicts of a comparison, with what could not be judged (a phase on one side only).
pub struct Verdicts {
    pub docs: Vec<AbDocument>,
    pub unmatched: Vec<String>,
}

impl VerdictFlags {
    /// Refuses what cannot be written for several results before anything is judged.
    pub fn check(&self, results: usize) -> Result<(), AbError> {
        if results > 2 && (self.json.is_some() || self.markdown.is_some() || self.fail_on_regression.is_some()) {
            return Err("--json, --markdown and --fail-on-regression judge two results: give exactly two".into());
        }
        Ok(())
    }

    /// `--json` or `--markdown` given: files of one verdict.
    pub fn writes_files(&self) -> bool {
        self.json.is_some() || self.markdown.is_some()
    }

    fn judging(&self, open_loop: bool) -> Judging {
        let bootstrap = self.method == super::MethodArg::Bootstrap;
        let seed = self.seed.unwrap_or_else(drawn_seed);
        Judging {
            settings: settings(self.confidence, self.noise, bootstrap, self.resamples, seed),
            paired: false,
            metric: self.judge_by.unwrap_or(if open_loop { Metric::P99 } else { Metric::Ops }),
        }
    }

    fn seed(&self, judging: &Judging) -> Option<u64> {
        match judging.settings.method {
            crate::report::ab::stats::Method::Bootstrap { seed, .. } => Some(seed),
            crate::report::ab::stats::Method::Exact => None,
        }
    }
}

/// One side from a result (or a scenario's phase): its runs, pooled figures and price.
fn side(name: &str, what: &str, doc: &Document, price: Option<(f64, String)>) -> Result<Side, AbError> {
    let (runs, pooled) = ab::from_document::runs_of(doc).map_err(|e| format!("{name}: {e}"))?;
    let source = format!("{what} ({} run{})", runs.len(), if runs.len() == 1 { "" } else { "s" });
    Ok(Side::new(name.to_string(), source, price, runs, pooled))
}

/// B against A, judged; `hint` says how to take more runs when too few make a verdict impossible.
fn verdict(a: Side, b: Side, docs: [&Document; 2], flags: &VerdictFlags, hint: &str) -> AbDocument {
    let judging = flags.judging(docs.iter().any(|d| d.configuration.rate_per_sec.is_some()));
    let mut doc = AbDocument {
        schema_version: ab::SCHEMA_VERSION,
        tool: Tool { name: "respbench".into(), version: env!("CARGO_PKG_VERSION").into() },
        kind: "compare".into(),
        started_unix_ms: docs[1].started_unix_ms,
        interrupted: docs[0].interrupted || docs[1].interrupted,
        seed: flags.seed(&judging),
        a,
        b,
        ..AbDocument::default()
    };
    ab::judge(&mut doc, &judging, flags.fail_on_regression);
    for c in doc.changes.iter_mut().filter(|c| c.too_few_runs) {
        if let Some(note) = c.note.as_mut() {
            note.push_str(&format!(" ({hint})"));
        }
    }
    doc
}

/// Each run result against the first.
pub fn of_runs(
    results: &[(String, Document)],
    prices: &[(String, f64)],
    flags: &VerdictFlags,
) -> Result<Verdicts, AbError> {
    if flags.phase.is_some() {
        return Err("--phase picks a phase of scenario results; these are results of runs".into());
    }
    let price = |name: &str| prices.iter().find(|(n, _)| n == name).map(|(_, usd)| (*usd, "USD".to_string()));
    let side_of = |(name, doc): &(String, Document)| side(name, name, doc, price(name));
    let first = side_of(&results[0])?;
    let mut docs = Vec::new();
    for other in &results[1..] {
        let pair = [&results[0].1, &other.1];
        docs.push(verdict(first.clone(), side_of(other)?, pair, flags, "take the results with --runs N"));
    }
    Ok(Verdicts { docs, unmatched: Vec::new() })
}

/// A scenario's measured phases that ran: (name, the run's result). Fills and warm-ups measure
/// nothing worth comparing; a capacity search's answer is one figure, not runs.
fn measured(doc: &ScenarioDocument) -> Vec<(&str, &Document)> {
    doc.phases
        .iter()
        .filter(|p| !matches!(p.kind.as_str(), "fill" | "warmup"))
        .filter_map(|p| Some((p.name.as_str(), p.result.as_ref()?.run()?)))
        .collect()
}

/// Each scenario result's measured phases against the first's phase of the same name.
pub fn of_phases(
    results: &[(String, ScenarioDocument)],
    prices: &[(String, f64)],
    flags: &VerdictFlags,
) -> Result<Verdicts, AbError> {
    let price = |name: &str, doc: &ScenarioDocument| match prices.iter().find(|(n, _)| n == name) {
        Some((_, usd)) => Some((*usd, "USD".to_string())),
        None => doc.scenario.price.as_ref().map(|p| (p.per_hour, p.currency.clone())),
    };
    let (first_name, first) = &results[0];
    let mut out = Verdicts { docs: Vec::new(), unmatched: Vec::new() };
    for (name, other) in &results[1..] {
        let theirs = measured(other);
        for (phase, a) in measured(first) {
            if flags.phase.as_deref().is_some_and(|p| p != phase) {
                continue;
            }
            let Some((_, b)) = theirs.iter().find(|(p, _)| *p == phase) else {
                out.unmatched.push(format!("phase {phase}: only in {first_name}, not in {name}"));
                continue;
            };
            let what = |file: &str| format!("{file}, phase {phase}");
            let (sa, sb) = (
                side(first_name, &what(first_name), a, price(first_name, first))?,
                side(name, &what(name), b, price(name, other))?,
            );
            let mut doc = verdict(sa, sb, [a, b], flags, "give the phase runs = N");
            doc.phase = Some(phase.to_string());
            out.docs.push(doc);
        }
        let ours = measured(first);
        for (phase, _) in theirs.iter().filter(|(p, _)| !ours.iter().any(|(q, _)| q == p)) {
            if flags.phase.as_deref().is_none_or(|p| p == *phase) {
                out.unmatched.push(format!("phase {phase}: only in {name}, not in {first_name}"));
            }
        }
    }
    if out.docs.is_empty() {
        let names = |doc: &ScenarioDocument| measured(doc).iter().map(|(p, _)| *p).collect::<Vec<_>>().join(", ");
        let wanted = flags.phase.as_ref().map_or(String::new(), |p| format!(" named '{p}'"));
        return Err(format!(
            "no measured phase{wanted} is in both results: {first_name} has [{}], {} has [{}]",
            names(first),
            results[1].0,
            names(&results[1].1)
        )
        .into());
    }
    if flags.json.is_some() && out.docs.len() > 1 {
        let phases: Vec<&str> = out.docs.iter().filter_map(|d| d.phase.as_deref()).collect();
        return Err(format!(
            "--json writes one verdict and {} phases are in both results ({}): pick one with --phase NAME",
            phases.len(),
            phases.join(", ")
        )
        .into());
    }
    Ok(out)
}

/// The verdict sections of `compare --html`: each verdict as the ab page shows it.
pub fn html_sections(verdicts: &Verdicts) -> String {
    let mut out = String::new();
    for (i, doc) in verdicts.docs.iter().enumerate() {
        let title = format!("Verdict: {}", ab::text::headline_subject(doc));
        out.push_str(&ab::html::verdict_section(doc, &format!("intervals-{}", i + 1), Some(&title)));
    }
    for line in &verdicts.unmatched {
        out.push_str(&format!("<p class=\"sub\">No verdict for {}</p>", crate::report::pages::chart::escape(line)));
    }
    out
}

/// Prints the verdicts, writes `--json` and `--markdown`, and gives the exit code: 1 when any
/// verdict found the regression `--fail-on-regression` asks about, 2 when one cannot be judged.
pub fn finish(verdicts: &Verdicts, flags: &VerdictFlags) -> ExitCode {
    let mut markdown = String::new();
    let mut text = String::new();
    for doc in &verdicts.docs {
        text.push('\n');
        text.push_str(&ab::text::render(doc));
        markdown.push_str(&ab::text::markdown(doc));
        markdown.push('\n');
    }
    if !verdicts.unmatched.is_empty() {
        text.push('\n');
    }
    for line in &verdicts.unmatched {
        text.push_str(&format!("No verdict for {line}\n"));
    }
    let given = [&flags.json, &flags.markdown].into_iter().flatten().map(PathBuf::as_path);
    crate::report::output::print_report(&text, given);
    let json = verdicts.docs.first().map(AbDocument::to_json).unwrap_or_default();
    let files = [(&flags.json, json), (&flags.markdown, markdown)];
    if !crate::report::output::write_each("respbench", files.iter().filter_map(|(p, t)| Some((p.as_deref()?, t)))) {
        return ExitCode::from(EXIT_FAILURE);
    }
    let judged =
        |d: &&AbDocument| d.changes.iter().find(|c| c.metric == d.judged_by).is_some_and(|c| c.change.is_some());
    if flags.fail_on_regression.is_some()
        && let Some(doc) = verdicts.docs.iter().find(|d| !judged(d))
    {
        return usage_error(&format!("--fail-on-regression cannot be judged: {}", doc.verdict_note()));
    }
    if verdicts.docs.iter().any(AbDocument::regressed) { ExitCode::from(EXIT_FAILURE) } else { ExitCode::SUCCESS }
}
