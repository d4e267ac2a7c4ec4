//! The figures memtier_benchmark's outputs are made of (rows Sets/Gets/Waits or one per
//! command, Totals, per-second series, rates), computed once from our measurements so that the
//! JSON, the text table and the per-command files all say the same thing.

use hdrhistogram::Histogram;

use crate::config::Config;
use crate::engine::Outcome;
use crate::stats::{CompactOp, OpStats};

/// memtier's output options, as the memtier front-end passes them on.
#[derive(Debug, Clone, Default)]
pub struct MemtierOutput {
    /// `--hide-histogram`: no `Request Latency Distribution` (nor its JSON blocks).
    pub hide_histogram: bool,
    /// `--print-all-runs`: each run's table and JSON section as well.
    pub print_all_runs: bool,
    /// `--command-stats-breakdown=line`: one row per `--command` instead of per command name.
    pub by_line: bool,
    /// `--hdr-file-prefix=PREFIX`.
    pub hdr_prefix: Option<String>,
    /// `--client-stats=PREFIX`: per-client CSV files.
    pub client_stats: Option<String>,
    /// `--realtime-latencies`: a block per tick (throughput, miss ratio, percentiles) in place
    /// of the progress line.
    pub realtime_latencies: bool,
    /// `--command-miss-tracking=off`: no hits and misses for `--command` rows.
    pub miss_tracking_off: bool,
    /// `--miss-rate-threshold=PCT` (memtier's default: 1.0).
    pub miss_rate_threshold: Option<f64>,
    /// memtier's options as its command line gave them (long name, last value; "yes" for a
    /// switch), for the configuration memtier reports.
    pub given: Vec<(String, String)>,
}

/// What memtier's command line said, which the plan no longer shows as such.
pub struct MemtierView<'a> {
    pub config: &'a Config,
    /// `--print-percentiles`, in percent, in the order given.
    pub percentiles: &'a [f64],
    pub out_file: Option<&'a str>,
    pub options: &'a MemtierOutput,
    /// `--command` was given: memtier's arbitrary-command layout (no Waits, no hit columns).
    pub arbitrary: bool,
}

impl MemtierView<'_> {
    /// The percentiles sorted, as memtier writes them in JSON.
    pub fn sorted_percentiles(&self) -> Vec<f64> {
        let mut p = self.percentiles.to_vec();
        p.sort_by(f64::total_cmp);
        p
    }
}

/// Per-second rates of one row.
#[derive(Debug, Clone, Copy, Default)]
pub struct RowRates {
    pub ops: f64,
    pub hits: f64,
    pub misses: f64,
    /// Transactions aborted (a null EXEC).
    pub aborts: f64,
    pub kb_rx: f64,
    pub kb_tx: f64,
}

impl RowRates {
    pub(crate) fn of(op: &OpStats, secs: f64) -> RowRates {
        let per = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        RowRates {
            ops: per(op.count),
            hits: per(op.hits),
            misses: per(op.misses),
            aborts: per(op.aborts),
            kb_rx: per(op.bytes_in) / 1024.0,
            kb_tx: per(op.bytes_out) / 1024.0,
        }
    }

    pub fn kb(&self) -> f64 {
        self.kb_rx + self.kb_tx
    }

    fn add(&mut self, o: &RowRates) {
        self.ops += o.ops;
        self.hits += o.hits;
        self.misses += o.misses;
        self.aborts += o.aborts;
        self.kb_rx += o.kb_rx;
        self.kb_tx += o.kb_tx;
    }

    fn divide(&mut self, n: f64) {
        self.ops /= n;
        self.hits /= n;
        self.misses /= n;
        self.aborts /= n;
        self.kb_rx /= n;
        self.kb_tx /= n;
    }
}

/// One row of memtier's table: a command (or several of the same name), or the totals.
#[derive(Debug, Clone)]
pub struct Row {
    /// memtier's block name: `Sets`, `Lpushs`, `Totals`.
    pub block: String,
    /// The command name as the latency distribution labels it: `SET`.
    pub name: String,
    pub op: OpStats,
    /// Per second, aligned with [`Section::seconds`], packed as the timeline keeps them.
    pub series: Vec<CompactOp>,
    pub rates: RowRates,
    /// Hits and misses are counted for it (memtier's Gets and Totals).
    pub reads: bool,
}

impl Row {
    /// Whether the row counts aborted transactions under `--transaction` (memtier 2.4's EXEC
    /// block and the totals).
    pub fn counts_aborts(&self) -> bool {
        self.block == "Totals" || self.name.eq_ignore_ascii_case("EXEC")
    }
}

/// One titled section: `ALL STATS`, `RUN #1 RESULTS`, `BEST RUN RESULTS`, ...
#[derive(Debug, Clone)]
pub struct Section {
    pub title: String,
    pub start_ms: u64,
    pub finish_ms: u64,
    pub interrupted: bool,
    pub rows: Vec<Row>,
    pub totals: Row,
    /// The seconds of the series (memtier's Time-Serie keys).
    pub seconds: Vec<u64>,
    /// Connections open per second, when the run varied them.
    pub active: Vec<Option<u64>>,
    pub connection_errors: u64,
    pub connection_errors_per_sec: f64,
    /// Cluster MOVED and ASK redirects per second.
    pub redirects_per_sec: (f64, f64),
}

/// How memtier lays out rows and sections, from its command line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Layout {
    /// `--command` was given: one row per command name (no Waits, no hit columns).
    pub arbitrary: bool,
    /// `--command-stats-breakdown=line`: one row per command line.
    pub by_line: bool,
    /// `--print-all-runs`: each run's section as well.
    pub print_all_runs: bool,
    /// `--command-miss-tracking=auto`: `--command` reads count their hits and misses.
    pub miss_tracking: bool,
}

impl MemtierView<'_> {
    pub fn layout(&self) -> Layout {
        Layout {
            arbitrary: self.arbitrary,
            by_line: self.options.by_line,
            print_all_runs: self.options.print_all_runs,
            miss_tracking: !self.options.miss_tracking_off,
        }
    }
}

/// The rows' command indices: by name (memtier's default) or one per command line.
pub(crate) fn groups(view: &MemtierView<'_>, o: &Outcome) -> Vec<(String, Vec<usize>)> {
    group(view.layout(), &o.command_names, &o.ops)
}

/// [`groups`] of any rows: names and their figures (a sequence's unit row is no row).
pub(crate) fn group(layout: Layout, names: &[String], ops: &[OpStats]) -> Vec<(String, Vec<usize>)> {
    let live: Vec<usize> = (0..names.len()).filter(|&i| !ops.get(i).is_some_and(|op| op.unit)).collect();
    if !layout.arbitrary {
        // memtier always shows Sets, Gets and Waits, empty or not; its SETRANGE (--data-offset)
        // counts as a set, its MGETs (--multi-key-get) and GETRANGEs as gets.
        let find =
            |want: &[&str]| live.iter().copied().filter(|&i| want.contains(&base_name(&names[i]))).collect::<Vec<_>>();
        return vec![
            ("SET".into(), find(&["SET", "SETRANGE"])),
            ("GET".into(), find(&["GET", "MGET", "GETRANGE"])),
            ("WAIT".into(), find(&["WAIT"])),
        ];
    }
    let mut out: Vec<(String, Vec<usize>)> = Vec::new();
    for i in live {
        let name = base_name(&names[i]).to_string();
        match out.iter_mut().find(|(n, _)| *n == name) {
            Some((_, members)) if !layout.by_line => members.push(i),
            _ => out.push((name, vec![i])),
        }
    }
    out
}

/// A command's name without the `#2` reports use to tell two of the same name apart
/// (memtier names both `SET`).
pub(crate) fn base_name(full: &str) -> &str {
    match full.rsplit_once('#') {
        Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => base,
        _ => full,
    }
}

fn merged(ops: &[OpStats], members: &[usize]) -> OpStats {
    let mut op = OpStats::default();
    for &i in members {
        if let Some(one) = ops.get(i) {
            op.merge(one);
        }
    }
    op
}

/// memtier's name for a command's block: `LPUSH` → `Lpushs`.
pub fn block_name(name: &str) -> String {
    let lower = name.to_ascii_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(first) => format!("{}{}s", first.to_ascii_uppercase(), chars.as_str()),
        None => "s".into(),
    }
}

/// One second (interval) of a run: its index, the connections open when the run varied them,
/// each command's figures and the totals.
pub struct Second<'a> {
    pub index: u64,
    pub active: Option<u64>,
    /// Borrowed from a merged result, decoded from a run's packed timeline.
    pub ops: std::borrow::Cow<'a, [CompactOp]>,
    pub total: CompactOp,
}

/// What a section is computed from: a run as the engine measured it ([`Measured::of`]) or as
/// a merged result holds it (`memtier_merge`).
pub struct Measured<'a> {
    /// The rows' names, as the result names its commands (`SET`, `SET#2`).
    pub names: &'a [String],
    /// Per name, over the run.
    pub ops: &'a [OpStats],
    pub total: OpStats,
    pub seconds: Vec<Second<'a>>,
    pub started_unix_ms: u64,
    /// The measured phase's length.
    pub elapsed: std::time::Duration,
    pub interrupted: bool,
    /// Connections that failed (memtier counts a connection error each time).
    pub connection_errors: u64,
    /// Cluster redirects followed.
    pub moved: u64,
    pub asked: u64,
}

impl Measured<'_> {
    pub fn of(o: &Outcome) -> Measured<'_> {
        Measured {
            names: &o.command_names,
            ops: &o.ops,
            total: o.total(),
            seconds: o
                .timeline
                .iter()
                .map(|i| Second { index: i.index, active: i.active_connections, ops: i.ops.into(), total: i.total })
                .collect(),
            started_unix_ms: o.started_unix_ms,
            elapsed: o.elapsed,
            interrupted: o.interrupted,
            connection_errors: o.outages.iter().map(|out| out.connections as u64).sum(),
            moved: o.moved,
            asked: o.asked,
        }
    }

    fn secs(&self) -> f64 {
        self.elapsed.as_secs_f64()
    }
}

impl Section {
    /// One run's section.
    pub fn of(view: &MemtierView<'_>, title: &str, o: &Outcome) -> Section {
        Section::build(view.layout(), title, &Measured::of(o))
    }

    /// One section of what `m` measured.
    pub fn build(layout: Layout, title: &str, m: &Measured<'_>) -> Section {
        let secs = m.secs();
        let mut rows = Vec::new();
        for (name, members) in group(layout, m.names, m.ops) {
            let op = merged(m.ops, &members);
            // A `--command` row is a read when its replies were counted as hits or misses.
            let reads = match layout.arbitrary {
                false => name == "GET",
                true => layout.miss_tracking && op.hits + op.misses > 0,
            };
            rows.push(Row {
                block: block_name(&name),
                rates: RowRates::of(&op, secs),
                series: m
                    .seconds
                    .iter()
                    .map(|s| CompactOp::merged(members.iter().filter_map(|&i| s.ops.get(i))))
                    .collect(),
                name,
                op,
                reads,
            });
        }
        let totals = Row {
            block: "Totals".into(),
            name: "Totals".into(),
            rates: RowRates::of(&m.total, secs),
            series: m.seconds.iter().map(|s| s.total.clone()).collect(),
            op: m.total.clone(),
            reads: true,
        };
        let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        Section {
            title: title.to_string(),
            start_ms: m.started_unix_ms,
            finish_ms: m.started_unix_ms + m.elapsed.as_millis() as u64,
            interrupted: m.interrupted,
            rows,
            totals,
            seconds: m.seconds.iter().map(|s| s.index).collect(),
            active: m.seconds.iter().map(|s| s.active).collect(),
            connection_errors: m.connection_errors,
            connection_errors_per_sec: per_sec(m.connection_errors),
            redirects_per_sec: (per_sec(m.moved), per_sec(m.asked)),
        }
    }

    /// memtier's `AGGREGATED AVERAGE RESULTS`: counts and histograms of all runs together,
    /// rates averaged over the runs; no per-second series (seconds of different runs).
    pub fn average(layout: Layout, runs: &[Measured<'_>], pooled: &Measured<'_>) -> Section {
        let title = format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len());
        let each: Vec<Section> = runs.iter().map(|m| Section::build(layout, "", m)).collect();
        let mut s = Section::build(layout, &title, pooled);
        let n = each.len().max(1) as f64;
        let rows = s.rows.iter_mut().chain(std::iter::once(&mut s.totals));
        for (i, row) in rows.enumerate() {
            let mut sum = RowRates::default();
            for run in &each {
                let r = if i < run.rows.len() { &run.rows[i] } else { &run.totals };
                sum.add(&r.rates);
            }
            sum.divide(n);
            row.rates = sum;
            row.series.clear();
        }
        s.seconds.clear();
        s.active.clear();
        s.start_ms = runs.first().map_or(0, |m| m.started_unix_ms);
        s.finish_ms = runs.last().map_or(0, |m| m.started_unix_ms + m.elapsed.as_millis() as u64);
        s.connection_errors_per_sec = each.iter().map(|r| r.connection_errors_per_sec).sum::<f64>() / n;
        let moved = each.iter().map(|r| r.redirects_per_sec.0).sum::<f64>() / n;
        s.redirects_per_sec = (moved, each.iter().map(|r| r.redirects_per_sec.1).sum::<f64>() / n);
        s
    }

    /// The rows then the totals.
    pub fn all_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().chain(std::iter::once(&self.totals))
    }
}

/// The sections memtier prints for these runs, in its order.
pub fn sections(view: &MemtierView<'_>, runs: &[Outcome], pooled: &Outcome) -> Vec<Section> {
    let measured: Vec<Measured<'_>> = runs.iter().map(Measured::of).collect();
    sections_of(view.layout(), &measured, &Measured::of(pooled))
}

/// [`sections`] of any runs: `ALL STATS` for one, else (each run,) the best, the worst and
/// their average.
pub fn sections_of(layout: Layout, runs: &[Measured<'_>], pooled: &Measured<'_>) -> Vec<Section> {
    if runs.len() <= 1 {
        return vec![Section::build(layout, "ALL STATS", runs.first().unwrap_or(pooled))];
    }
    let mut out = Vec::new();
    if layout.print_all_runs {
        for (i, m) in runs.iter().enumerate() {
            out.push(Section::build(layout, &format!("RUN #{} RESULTS", i + 1), m));
        }
    }
    // memtier compares whole ops/sec; the first of equals wins.
    let rate = |m: &Measured| (m.total.count as f64 / m.secs().max(1e-6)) as u64;
    let mut best = &runs[0];
    let mut worst = &runs[0];
    for m in &runs[1..] {
        if rate(m) > rate(best) {
            best = m;
        }
        if rate(m) < rate(worst) {
            worst = m;
        }
    }
    out.push(Section::build(layout, "BEST RUN RESULTS", best));
    out.push(Section::build(layout, "WORST RUN RESULTS", worst));
    out.push(Section::average(layout, runs, pooled));
    out
}

/// The histogram in microseconds, the unit memtier records in.
pub fn micros(ns: &Histogram<u64>) -> Histogram<u64> {
    crate::report::live::hdrlog::to_micros(ns)
}

/// memtier's latency distribution (HdrHistogram's percentile iteration, 10 ticks per half
/// distance): (latency in ms, percent) pairs. An empty histogram gives memtier's one line.
pub fn distribution(ns: &Histogram<u64>) -> Vec<(f64, f64)> {
    distribution_us(&micros(ns))
}

/// [`distribution`] of a histogram already in microseconds.
pub fn distribution_us(us: &Histogram<u64>) -> Vec<(f64, f64)> {
    if us.is_empty() {
        return vec![(0.0, 100.0)];
    }
    us.iter_quantiles(10)
        .map(|v| (us.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0, v.quantile_iterated_to() * 100.0))
        .collect()
}

/// Milliseconds from nanoseconds.
pub fn ms(ns: f64) -> f64 {
    ns / 1e6
}

/// The latency at `percent` in ms (memtier reads it from its microsecond histogram).
pub fn at_percentile(ns: &Histogram<u64>, percent: f64) -> f64 {
    if ns.is_empty() {
        return 0.0;
    }
    ms(ns.highest_equivalent(ns.value_at_quantile(percent / 100.0)) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_block_names() {
        assert_eq!(block_name("LPUSH"), "Lpushs");
        assert_eq!(block_name("SET"), "Sets");
    }

    #[test]
    fn distribution_ends_at_100_percent() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let d = distribution(&h);
        assert_eq!(d.first().unwrap().1, 0.0);
        assert_eq!(d.last().unwrap().1, 100.0);
        assert!(d.windows(2).all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1));
        let empty = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        assert_eq!(distribution(&empty), vec![(0.0, 100.0)]);
    }
}
