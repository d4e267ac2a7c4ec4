//! memtier_benchmark's text outputs for the memtier front-end: the report on stdout (run
//! information, one table per section, the latency distribution) and the per-second progress
//! line on stderr, laid out column for column as memtier 2.3 prints them.

use std::fmt::Write;

use super::stats::{MemtierView, Row, Section, at_percentile, distribution, ms, sections};
use crate::config::StopAfter;
use crate::engine::{Outcome, Progress};

/// The whole report: run information, then each section's table and distribution.
pub fn render(view: &MemtierView<'_>, runs: &[Outcome], pooled: &Outcome) -> String {
    let c = view.config;
    let threads = c.threads.max(1);
    let mut out = String::new();
    let _ = writeln!(out, "{:<9} Threads", threads);
    let _ = writeln!(out, "{:<9} Connections per thread", c.connections / threads);
    match c.stop {
        StopAfter::Duration(d) => {
            let _ = writeln!(out, "{:<9} Seconds", d.as_secs());
        }
        _ => {
            let per_client = c.planned_requests().unwrap_or(0) / c.connections.max(1) as u64;
            let _ = writeln!(out, "{:<9} Requests per client", per_client);
        }
    }
    for section in sections(view, runs, pooled) {
        table(view, &section, &mut out);
        if !view.options.hide_histogram {
            histogram(view, &section, &mut out);
        }
    }
    out
}

/// A cell: text (`---`, a name) or a figure with its decimals.
enum Cell {
    Text(String),
    Num(f64, usize),
}

struct Column {
    width: usize,
    header: String,
    cells: Vec<Cell>,
}

/// memtier's header for a percentile column: `p50`, `p99.9`, `p99.99` (at most 3 decimals).
pub fn percentile_label(p: f64) -> String {
    // memtier counts the decimals in single precision; so do we, for the same labels.
    let mut digits = 0;
    let mut frac = (p as f32).abs().fract();
    while frac.abs() > 0.001 && digits < 3 {
        frac *= 10.0;
        digits += 1;
        frac -= frac.trunc();
    }
    format!("p{p:.digits$} Latency")
}

fn table(view: &MemtierView<'_>, s: &Section, out: &mut String) {
    let rows: Vec<&Row> = s.all_rows().collect();
    let default_mix = !view.arbitrary;
    // Waits (and any row without replies) show `---` where memtier has no figure.
    let empty = |r: &Row| r.op.latency_ns.is_empty();
    let name_width =
        if view.arbitrary { view.config.commands.iter().map(|c| c.name.len()).max().unwrap_or(0) } else { 0 };
    let mut cols = vec![Column {
        width: name_width.max(6) + 1,
        header: "Type".into(),
        cells: rows.iter().map(|r| Cell::Text(r.block.clone())).collect(),
    }];
    let num = |width: usize, header: &str, f: &dyn Fn(&Row) -> Option<f64>, places: usize| Column {
        width,
        header: header.to_string(),
        cells: rows.iter().map(|r| f(r).map_or(Cell::Text("---".into()), |v| Cell::Num(v, places))).collect(),
    };
    cols.push(num(12, "Ops/sec", &|r| Some(r.rates.ops), 2));
    if view.config.extras.transaction {
        cols.push(num(12, "Aborts/sec", &|r| r.counts_aborts().then_some(r.rates.aborts), 2));
    }
    if default_mix {
        // memtier shows the run's hits and misses on Gets and Totals alike.
        let t = s.totals.rates;
        cols.push(num(12, "Hits/sec", &|r| r.reads.then_some(t.hits), 2));
        cols.push(num(12, "Misses/sec", &|r| r.reads.then_some(t.misses), 2));
    }
    // `--command` runs keep memtier 2.3's columns; their hits and misses are in the JSON.
    // The default mix shows `---` for a command without replies (memtier's Waits).
    let shown = |r: &Row| !(default_mix && empty(r) && r.block != "Totals");
    let mean = |r: &Row| shown(r).then(|| if empty(r) { 0.0 } else { ms(r.op.latency_ns.mean()) });
    cols.push(num(15, "Avg. Latency", &mean, 5));
    for &p in view.percentiles {
        let at = |r: &Row| shown(r).then(|| at_percentile(&r.op.latency_ns, p));
        cols.push(num(15, &percentile_label(p), &at, 5));
    }
    cols.push(num(12, "KB/sec", &|r| if default_mix && r.block == "Waits" { None } else { Some(r.rates.kb()) }, 2));

    out.push_str("\n\n");
    out.push_str(&s.title);
    out.push('\n');
    out.push_str(&"=".repeat(cols.iter().map(|c| c.width + 1).sum()));
    out.push('\n');
    for (i, c) in cols.iter().enumerate() {
        if i == 0 {
            let _ = write!(out, "{:<w$} ", c.header, w = c.width);
        } else {
            let _ = write!(out, "{:>w$} ", c.header, w = c.width);
        }
    }
    out.push('\n');
    for c in &cols {
        out.push_str(&"-".repeat(c.width + 1));
    }
    out.push('\n');
    for row in 0..rows.len() {
        for (i, c) in cols.iter().enumerate() {
            let _ = match &c.cells[row] {
                Cell::Text(t) if i == 0 => write!(out, "{:<w$} ", t, w = c.width),
                Cell::Text(t) => write!(out, "{:>w$} ", t, w = c.width),
                Cell::Num(v, places) => write!(out, "{:>w$.p$} ", v, w = c.width, p = *places),
            };
        }
        out.push('\n');
    }
}

fn histogram(view: &MemtierView<'_>, s: &Section, out: &mut String) {
    let _ = write!(
        out,
        "\n\nRequest Latency Distribution\n{:<6} {:>12} {:>12}\n{}\n",
        "Type",
        "<= msec   ",
        "Percent",
        "-".repeat(72)
    );
    for (i, row) in s.rows.iter().enumerate() {
        for (msec, percent) in distribution(&row.op.latency_ns) {
            let _ = writeln!(out, "{:<6} {:>8.3} {:>12.3}", row.name, msec, percent);
        }
        // memtier closes every block but the default mix's last (WAIT).
        if view.arbitrary || i + 1 < s.rows.len() {
            out.push_str("---\n");
        }
    }
}

/// memtier's size: `0.00KB`, `7.80MB`, `1.20GB`.
pub(super) fn size(bytes: f64) -> String {
    const K: f64 = 1024.0;
    if bytes >= K * K * K {
        format!("{:.2}GB", bytes / (K * K * K))
    } else if bytes >= K * K {
        format!("{:.2}MB", bytes / (K * K))
    } else {
        format!("{:.2}KB", bytes / K)
    }
}

/// memtier 2.4's warnings after the run: each `--command` read whose misses are above
/// `--miss-rate-threshold` percent of its hits and misses (above none at 0).
pub fn miss_warnings(view: &MemtierView<'_>, pooled: &Outcome) -> Vec<String> {
    if !view.arbitrary || view.options.miss_tracking_off {
        return Vec::new();
    }
    let threshold = view.options.miss_rate_threshold.unwrap_or(1.0);
    let section = Section::of(view, "ALL STATS", pooled);
    let rate = |r: &Row| 100.0 * r.op.misses as f64 / (r.op.hits + r.op.misses).max(1) as f64;
    section
        .rows
        .iter()
        .filter(|r| r.reads && r.op.misses > 0 && rate(r) > threshold)
        .map(|r| {
            format!(
                "WARNING: {} miss rate {:.2}% ({} of {} reads) is above --miss-rate-threshold {threshold}%",
                r.name,
                rate(r),
                r.op.misses,
                r.op.hits + r.op.misses
            )
        })
        .collect()
}

/// What the progress line needs over the run so far.
#[derive(Debug, Default)]
pub struct Progressed {
    bytes: u64,
    latency_ns: u64,
    ops: u64,
    retries: u64,
    retried_ops: u64,
}

impl Progressed {
    /// memtier's per-second line (ends with `\r`, as memtier rewrites it in place).
    pub fn line(&mut self, view: &MemtierView<'_>, run: usize, p: &Progress) -> String {
        let c = view.config;
        let w = p.window.total();
        self.bytes += w.bytes_in + w.bytes_out;
        self.latency_ns += w.latency_sum_ns;
        self.ops += w.count;
        let secs = p.elapsed.as_secs_f64();
        let cur_secs = p.interval.duration_secs;
        let per = |n: f64, s: f64| if s > 0.0 { n / s } else { 0.0 };
        let done = p.done.unwrap_or(0.0).min(1.0);
        let threads = if done >= 1.0 { 0 } else { c.threads.max(1) };
        let avg_latency = if self.ops > 0 { ms(self.latency_ns as f64 / self.ops as f64) } else { 0.0 };
        let cur_latency = if w.count > 0 { ms(w.latency_sum_ns as f64 / w.count as f64) } else { 0.0 };
        // memtier 2.4 with --retry-on-error: the errors and retries so far, and this second's.
        self.retries += p.window.retries;
        self.retried_ops += p.window.retried_ops;
        let retries = if c.faults.retry_errors {
            format!(
                ", errors {} (+{}) retries {} (+{}) retried_ops {}",
                p.total_errors, w.errors, self.retries, p.window.retries, self.retried_ops
            )
        } else {
            String::new()
        };
        format!(
            "[RUN #{run} {:.0}%, {:>3} secs] {:>2} threads {:>2} conns: {:>11} ops, {:>7} (avg: {:>7}) ops/sec, \
             {}/sec (avg: {}/sec), {:>5.2} (avg: {:>5.2}) msec latency{retries}\r",
            done * 100.0,
            secs as u64,
            threads,
            c.connections / c.threads.max(1),
            p.total_ops,
            per(w.count as f64, cur_secs) as u64,
            per(p.total_ops as f64, secs) as u64,
            size(per((w.bytes_in + w.bytes_out) as f64, cur_secs)),
            size(per(self.bytes as f64, secs)),
            cur_latency,
            avg_latency,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_labels_and_sizes() {
        assert_eq!(percentile_label(50.0), "p50 Latency");
        assert_eq!(percentile_label(99.9), "p99.9 Latency");
        // memtier's single-precision count makes 99.99 three decimals.
        assert_eq!(percentile_label(99.99), "p99.990 Latency");
        assert_eq!(size(0.0), "0.00KB");
        assert_eq!(size(8.0 * 1024.0 * 1024.0), "8.00MB");
    }
}
