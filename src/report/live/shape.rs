//! How the live metrics page reads: whose metric names (respbench's, or memtier_benchmark's
//! exporter's under memtier's command line), the constant labels on every sample
//! (`--metrics-label`) and the latency histogram's bucket bounds (`--metrics-buckets`). Chosen
//! once, before the endpoint opens; the values themselves are the same either way.

use hdrhistogram::Histogram;
use prometheus_client::encoding::{EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

/// A sample's labels, name and value.
pub type Labels = Vec<(String, String)>;

message_error!(
    /// A `--metrics-label` or `--metrics-buckets` value that cannot be used.
    ShapeError
);

/// The most constant labels a page carries (memtier's limit too).
pub const MOST_LABELS: usize = 16;

/// Upper bounds of the default latency buckets, in seconds: 10 µs to 10 s.
pub const DEFAULT_BUCKETS: &[f64] = &[
    0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// Label names the page's own families use: a constant label by one of these names would give
/// a sample the same label twice.
const TAKEN: &[&str] = &["command", "kind", "thread", "part", "le", "version", "git_sha"];

/// Whose names the page's metrics carry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Names {
    /// `respbench_*`.
    #[default]
    Respbench,
    /// memtier_benchmark's exporter's `memtier_*`, and its stdout line when it listens.
    Memtier,
}

/// A constant label: `NAME=VALUE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsLabel {
    pub name: String,
    pub value: String,
}

/// Latency bucket bounds in seconds, strictly ascending.
#[derive(Debug, Clone, PartialEq)]
pub struct Buckets(pub Vec<f64>);

/// The layout of the page.
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    pub names: Names,
    pub labels: Vec<MetricsLabel>,
    pub buckets: Vec<f64>,
    /// The runs planned (`--runs`), for memtier's `memtier_configured_runs`.
    pub runs: usize,
}

impl Default for Shape {
    fn default() -> Shape {
        Shape { names: Names::Respbench, labels: Vec::new(), buckets: DEFAULT_BUCKETS.to_vec(), runs: 1 }
    }
}

/// `NAME=VALUE` with NAME a Prometheus label name (letters, digits and _, not starting with a
/// digit or __); `example` is what the error shows. Every label option reads its value here.
pub fn label_pair<'a>(s: &'a str, example: &str) -> Result<(&'a str, &'a str), ShapeError> {
    let Some((name, value)) = s.split_once('=') else {
        return Err(format!("expected NAME=VALUE such as {example}, got '{s}'").into());
    };
    let mut chars = name.chars();
    let valid = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid || name.starts_with("__") {
        return Err(
            format!("'{name}' is not a label name (letters, digits and _, not starting with a digit or __)").into()
        );
    }
    Ok((name, value))
}

/// `--metrics-label NAME=VALUE`: a Prometheus label name, not one the page's families use.
pub fn label(s: &str) -> Result<MetricsLabel, ShapeError> {
    let (name, value) = label_pair(s, "run=baseline")?;
    if TAKEN.contains(&name) {
        return Err(format!("'{name}' is a label the metrics carry already (taken: {})", TAKEN.join(", ")).into());
    }
    Ok(MetricsLabel { name: name.to_string(), value: value.to_string() })
}

/// At most [`MOST_LABELS`] labels, each name once.
pub fn check_labels(labels: &[MetricsLabel]) -> Result<(), ShapeError> {
    if labels.len() > MOST_LABELS {
        return Err(format!("{} constant metrics labels given: at most {MOST_LABELS}", labels.len()).into());
    }
    for (i, l) in labels.iter().enumerate() {
        if labels[..i].iter().any(|earlier| earlier.name == l.name) {
            return Err(format!("the metrics label '{}' is given twice", l.name).into());
        }
    }
    Ok(())
}

/// `--metrics-buckets 0.001,0.01,0.1`: seconds, above 0, finite, strictly ascending, at most 64.
pub fn buckets(s: &str) -> Result<Buckets, ShapeError> {
    let mut bounds = Vec::new();
    for word in s.split(',') {
        let bound = match word.trim().parse::<f64>() {
            Ok(b) if b > 0.0 && b.is_finite() => b,
            _ => return Err(format!("'{word}' is not a bucket bound (seconds above 0, such as 0.001)").into()),
        };
        if let Some(&last) = bounds.last()
            && bound <= last
        {
            return Err(format!("bucket bounds must ascend: '{word}' follows {last}").into());
        }
        bounds.push(bound);
    }
    if bounds.len() > 64 {
        return Err(format!("{} bucket bounds given: at most 64", bounds.len()).into());
    }
    Ok(Buckets(bounds))
}

impl Shape {
    /// A registry whose every sample carries the constant labels, its names under `prefix`.
    pub fn registry(&self, prefix: &str) -> Registry {
        let labels = self.labels.iter().map(|l| (l.name.clone().into(), l.value.clone().into()));
        Registry::with_prefix_and_labels(prefix, labels)
    }
}

/// A histogram's sum (seconds), count and per-bucket counts.
#[derive(Debug)]
pub struct Snapshot {
    sum: f64,
    count: u64,
    buckets: Vec<(f64, u64)>,
}

pub fn snapshot(h: &Histogram<u64>, sum_ns: u64, bounds: &[f64]) -> Snapshot {
    let mut buckets = Vec::with_capacity(bounds.len() + 1);
    let mut below = 0;
    for bound in bounds {
        let ns = (bound * 1e9) as u64;
        let upto = if h.is_empty() { 0 } else { h.count_between(0, ns) };
        buckets.push((*bound, upto.saturating_sub(below)));
        below = upto.max(below);
    }
    buckets.push((f64::MAX, h.len().saturating_sub(below)));
    Snapshot { sum: sum_ns as f64 / 1e9, count: h.len(), buckets }
}

/// Latency histograms by their labels, encoded from the HDR histograms the run keeps.
#[derive(Debug)]
pub struct Latency(pub Vec<(Labels, Snapshot)>);

impl EncodeMetric for Latency {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        for (labels, snap) in &self.0 {
            let mut family = encoder.encode_family(labels)?;
            family.encode_histogram::<NoLabelSet>(snap.sum, snap.count, &snap.buckets, None)?;
        }
        Ok(())
    }

    fn metric_type(&self) -> MetricType {
        MetricType::Histogram
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_buckets_name_what_is_wrong() {
        assert_eq!(label("run=a=b").unwrap(), MetricsLabel { name: "run".into(), value: "a=b".into() });
        assert!(label("run").unwrap_err().0.contains("NAME=VALUE"));
        assert!(label("9x=1").unwrap_err().0.contains("'9x' is not a label name"));
        assert!(label("__x=1").is_err());
        assert!(label("command=x").unwrap_err().0.contains("already"));
        let many: Vec<MetricsLabel> = (0..17).map(|i| label(&format!("l{i}=v")).unwrap()).collect();
        assert!(check_labels(&many[..16]).is_ok());
        assert!(check_labels(&many).unwrap_err().0.contains("at most 16"));
        assert!(check_labels(&[label("a=1").unwrap(), label("a=2").unwrap()]).unwrap_err().0.contains("twice"));
        assert_eq!(buckets("0.001, 0.01,1").unwrap(), Buckets(vec![0.001, 0.01, 1.0]));
        assert!(buckets("0.01,0.001").unwrap_err().0.contains("must ascend"));
        assert!(buckets("0.01,0.01").is_err());
        assert!(buckets("0,1").unwrap_err().0.contains("'0'"));
        assert!(buckets("x").is_err() && buckets("").is_err() && buckets("inf").is_err());
    }
}
