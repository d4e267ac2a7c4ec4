//! memtier_benchmark's per-run files for the memtier front-end: `--hdr-file-prefix`'s
//! percentile distributions and HdrHistogram logs, named and laid out as memtier writes them.

use std::path::PathBuf;

use std::fmt::Write;

use hdrhistogram::Histogram;

use super::stats::{MemtierView, Row, Section, micros};
use crate::engine::Outcome;
use crate::stats::OpStats;

/// `--hdr-file-prefix`: (path, contents, what memtier says it writes) per file: the whole
/// run, then each command with replies, as a percentile table (`.txt`) and an HdrHistogram
/// log (`.hgrm`), in memtier's order and names.
pub fn hdr_files(view: &MemtierView<'_>, prefix: &str, run: usize, o: &Outcome) -> Vec<(PathBuf, Vec<u8>, String)> {
    let section = Section::of(view, "", o);
    let start = o.started_unix_ms;
    let end = start + o.elapsed.as_millis() as u64;
    let mut picks: Vec<(String, String, &OpStats)> =
        vec![("Full Run".into(), format!("{prefix}_FULL_RUN_{run}"), &section.totals.op)];
    // memtier writes GET before SET, then the --command ones.
    let mut rows: Vec<&Row> = section.rows.iter().collect();
    if !view.arbitrary {
        rows.sort_by_key(|r| r.name != "GET");
    }
    for row in rows {
        picks.push((row.name.clone(), format!("{prefix}_{}_command_run_{run}", row.name), &row.op));
    }
    let mut out = Vec::new();
    for (what, stem, op) in picks {
        if op.latency_ns.is_empty() {
            continue;
        }
        let us = micros(&op.latency_ns);
        let title = format!("{what} command HDR latency histogram results");
        out.push((PathBuf::from(format!("{stem}.txt")), percentiles_text(&us).into_bytes(), title.clone()));
        out.push((
            PathBuf::from(format!("{stem}.hgrm")),
            log_text(&us, &title, start, end).into_bytes(),
            format!("{title} in HistogramLogProcessor format"),
        ));
    }
    out
}

/// HdrHistogram's classic percentile table (`hdr_percentiles_print`), microseconds shown as
/// milliseconds, as many decimals as the histogram has significant digits.
fn percentiles_text(us: &Histogram<u64>) -> String {
    let mut out = format!("{:>12} {:>12} {:>12} {:>12}\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    let places = us.sigfig() as usize;
    let mut total = 0u64;
    for v in us.iter_quantiles(10) {
        total += v.count_since_last_iteration();
        let value = us.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0;
        let q = v.quantile_iterated_to();
        let inverted = 1.0 / (1.0 - q);
        let inverted = if inverted.is_finite() { format!("{inverted:>12.2}") } else { format!("{:>12}", "inf") };
        let _ = writeln!(out, "{value:>12.places$} {q:>12.6} {:>12} {inverted}", total);
    }
    let sub_buckets = (2 * 10u64.pow(u32::from(us.sigfig()))).next_power_of_two();
    let _ = write!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]\n#[Max     = {:>12.3}, Total count    = {:>12}]\n\
         #[Buckets = {:>12}, SubBuckets     = {:>12}]\n",
        us.mean() / 1000.0,
        us.stdev() / 1000.0,
        us.max() as f64 / 1000.0,
        us.len(),
        us.buckets(),
        sub_buckets,
    );
    out
}

/// An HdrHistogram log (format 1.2) with one interval: the whole run.
fn log_text(us: &Histogram<u64>, title: &str, start_ms: u64, end_ms: u64) -> String {
    let secs = |ms: u64| format!("{}.{:03}", ms / 1000, ms % 1000);
    format!(
        "#[{title}]\n#[Histogram log format version 1.2]\n#[StartTime: {} (seconds since epoch), {}]\n\
         \"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n{},{},{:.1},{}\n",
        secs(start_ms),
        date(start_ms / 1000),
        secs(start_ms),
        secs(end_ms),
        us.max() as f64,
        super::json::compressed(us),
    )
}

/// memtier's `%a %b %X %Z %Y` in UTC: `Mon Nov 11:26:17 GMT 2026`.
fn date(unix: u64) -> String {
    match jiff::Timestamp::from_second(i64::try_from(unix).unwrap_or(i64::MAX)) {
        Ok(t) => t.strftime("%a %b %H:%M:%S GMT %Y").to_string(),
        Err(_) => format!("{unix} s after 1970"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_dates() {
        // 1795433177 is the fixture's StartTime.
        assert_eq!(date(1_795_433_177), "Mon Nov 11:26:17 GMT 2026");
        assert_eq!(date(0), "Thu Jan 00:00:00 GMT 1970");
    }
}
