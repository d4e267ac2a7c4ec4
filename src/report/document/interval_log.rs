//! The interval log: every completed interval's histograms in the HdrHistogram interval log
//! format (the ecosystem's own: `HistogramLogProcessor` and the other HdrHistogram libraries
//! read it), written beside the result as the run goes (`FILE.hlog` beside `--json FILE`) so
//! that neither the process's memory nor the JSON grows with them. `respbench merge` and
//! `respbench recover` read it back (a user's input to them, never a run's own hand-off).
//!
//! One line per histogram, values in nanoseconds at [`COMPACT_DIGITS`] significant digits,
//! tagged `NAME/KIND`: `NAME` a command (its name with `,`, space, `/` and line breaks made
//! `_`), `*` the totals (written only with a sequence's unit row: otherwise they are the sum
//! of the commands) or `@` the run's schedule (`@/send_lag`, open loop); `KIND` one of
//! [`KINDS`]. A `service` equal to its `response` (closed loop) is left out. Runs after the
//! first (`--runs`) prefix their tags with `runN/` (N from 1). An interval's lines share one
//! start time; intervals follow in order, and the i-th interval of a run in the log is its
//! i-th in the result's `time_series` or the journal.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

use hdrhistogram::Histogram;
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, IntervalLogWriterBuilder, LogEntry, Tag};

use super::Malformed;
use crate::stats::{COMPACT_DIGITS, LatencyParts, OpStats, Window, coarse, widen};

/// What each histogram of a row is: response and service time, then the latency's parts.
pub const KINDS: [&str; 6] = ["response", "service", "send_lag", "wire_and_server", "receive_lag", "without_client"];
/// The tag's name for the totals, and for the run's schedule (the send lag of open loop).
pub const TOTALS: &str = "*";
pub const SCHEDULE: &str = "@";

/// A command's name as a tag holds it.
pub fn tag_name(name: &str) -> String {
    name.chars().map(|c| if matches!(c, ',' | ' ' | '\r' | '\n' | '/') { '_' } else { c }).collect()
}

/// Writes the log: its header once, then each interval's lines as bytes to append.
pub struct LogWriter {
    serializer: V2DeflateSerializer,
    base_ms: Option<u64>,
}

impl Default for LogWriter {
    fn default() -> Self {
        LogWriter::new()
    }
}

impl LogWriter {
    pub fn new() -> LogWriter {
        LogWriter { serializer: V2DeflateSerializer::new(), base_ms: None }
    }

    /// The header: what the log is, and its start (the first run's measured start) as the
    /// base every line's start is counted from.
    fn header(&mut self, base_ms: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let base = UNIX_EPOCH + Duration::from_millis(base_ms);
        let mut builder = IntervalLogWriterBuilder::new();
        builder
            .add_comment(&format!(
                "respbench interval log: values in nanoseconds, {COMPACT_DIGITS} significant digits; \
                 tags NAME/KIND (NAME a command, * the totals, @ the schedule; KIND {})",
                KINDS.join(", ")
            ))
            .with_start_time(base)
            .with_base_time(base);
        let _ = builder.begin_log_with(&mut out, &mut self.serializer);
        out.extend_from_slice(
            b"\"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n",
        );
        out
    }

    /// One completed interval of run `run` (whose measured phase began at `started_unix_ms`),
    /// `start_secs` into it: its lines (after the header, for the log's first interval).
    pub fn interval(
        &mut self,
        run: usize,
        started_unix_ms: u64,
        (start_secs, duration_secs): (f64, f64),
        names: &[String],
        window: &Window,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        let base_ms = match self.base_ms {
            Some(ms) => ms,
            None => {
                out = self.header(started_unix_ms);
                *self.base_ms.insert(started_unix_ms)
            }
        };
        let prefix = if run == 0 { String::new() } else { format!("run{run}/") };
        let mut entries: Vec<(String, &Histogram<u64>)> = Vec::new();
        for (name, op) in names.iter().zip(&window.ops) {
            row(&mut entries, &format!("{prefix}{}", tag_name(name)), op);
        }
        let total;
        if window.ops.iter().any(|op| op.unit) {
            total = window.total();
            row(&mut entries, &format!("{prefix}{TOTALS}"), &total);
        }
        if !window.send_lag_ns.is_empty() {
            entries.push((format!("{prefix}{SCHEDULE}/send_lag"), &window.send_lag_ns));
        }
        let offset_ms = started_unix_ms.saturating_sub(base_ms) as f64 / 1000.0;
        let start = Duration::from_secs_f64((offset_ms + start_secs).max(0.0));
        let length = Duration::from_secs_f64(duration_secs.max(0.0));
        // Divisor 1 and no start or base time: the builder writes no header, only the lines.
        if let Ok(mut writer) = IntervalLogWriterBuilder::new().begin_log_with(&mut out, &mut self.serializer) {
            for (tag, h) in entries {
                // The journal hands its windows at this precision already (`Window::coarse`).
                let h = if h.sigfig() == COMPACT_DIGITS { Cow::Borrowed(h) } else { Cow::Owned(coarse(h)) };
                let _ = writer.write_histogram(&h, start, length, Tag::new(&tag));
            }
        }
        out
    }
}

/// A row's histograms with their tags (`name` with its run's prefix): response, the service
/// when it has its own, the parts when it kept any.
fn row<'a>(entries: &mut Vec<(String, &'a Histogram<u64>)>, name: &str, op: &'a OpStats) {
    entries.push((format!("{name}/response"), &op.latency_ns));
    if !op.service_ns.is_empty() {
        entries.push((format!("{name}/service"), &op.service_ns));
    }
    if let Some(p) = op.parts.as_deref().filter(|p| !p.wire_ns.is_empty()) {
        let parts = [&p.send_lag_ns, &p.wire_ns, &p.receive_lag_ns, &p.without_client_ns];
        for (kind, h) in KINDS[2..].iter().zip(parts).filter(|(_, h)| !h.is_empty()) {
            entries.push((format!("{name}/{kind}"), h));
        }
    }
}

/// One row's histograms in one interval, as the log holds them (compact precision).
#[derive(Debug, Clone, Default)]
pub struct RowHistograms {
    pub by_kind: BTreeMap<String, Histogram<u64>>,
}

impl RowHistograms {
    /// Puts this row's histograms into `op` (in the full-precision layout, so that they add
    /// to any other): response and service times and, when the log has them, the parts, whose
    /// exact sums are `parts_sums_ns` (the log keeps none; `None`: from the histograms' means).
    pub fn fill(&self, op: &mut OpStats, parts_sums_ns: Option<[u64; 3]>) {
        let get = |kind: &str| self.by_kind.get(kind).map(widen);
        op.latency_ns = get("response").unwrap_or_else(|| OpStats::default().latency_ns);
        op.service_ns = get("service").unwrap_or_else(|| OpStats::default().service_ns);
        if let Some(wire) = get("wire_and_server") {
            let mut parts = LatencyParts { wire_ns: wire, ..LatencyParts::default() };
            for (kind, h) in [("send_lag", &mut parts.send_lag_ns), ("receive_lag", &mut parts.receive_lag_ns)] {
                if let Some(got) = get(kind) {
                    *h = got;
                }
            }
            if let Some(got) = get("without_client") {
                parts.without_client_ns = got;
            }
            let mean_sum = |h: &Histogram<u64>| (h.mean() * h.len() as f64).round() as u64;
            parts.sums_ns = parts_sums_ns.unwrap_or_else(|| {
                [mean_sum(&parts.send_lag_ns), mean_sum(&parts.wire_ns), mean_sum(&parts.receive_lag_ns)]
            });
            op.parts = Some(Box::new(parts));
        }
    }

    pub fn has(&self, kind: &str) -> bool {
        self.by_kind.contains_key(kind)
    }
}

/// One interval of one run as the log holds it.
#[derive(Debug, Clone, Default)]
pub struct LoggedInterval {
    pub run: usize,
    /// Seconds from the log's base (the first run's start) to the interval's start.
    pub start_secs: f64,
    pub duration_secs: f64,
    /// By tag name: commands ([`tag_name`]), [`TOTALS`] when written, [`SCHEDULE`] (open loop).
    pub rows: BTreeMap<String, RowHistograms>,
}

impl LoggedInterval {
    /// The row of command `name`.
    pub fn command(&self, name: &str) -> Option<&RowHistograms> {
        self.rows.get(&tag_name(name))
    }

    /// The totals: as written, else the commands' sum (less `unit` rows, which `is_unit` names).
    pub fn totals(&self, is_unit: impl Fn(&str) -> bool) -> RowHistograms {
        if let Some(t) = self.rows.get(TOTALS) {
            return t.clone();
        }
        let mut sum = RowHistograms::default();
        let commands = self.rows.iter().filter(|(n, _)| *n != SCHEDULE && !is_unit(n));
        // The service is the response where a row has none: the sum's must be too.
        let open_loop = self.rows.values().any(|r| r.has("service"));
        for (_, row) in commands {
            for kind in KINDS {
                let h = match (row.by_kind.get(kind), kind) {
                    (Some(h), _) => h,
                    (None, "service") if open_loop => match row.by_kind.get("response") {
                        Some(h) => h,
                        None => continue,
                    },
                    _ => continue,
                };
                match sum.by_kind.get_mut(kind) {
                    Some(mine) => {
                        let _ = mine.add(h);
                    }
                    None => drop(sum.by_kind.insert(kind.to_string(), h.clone())),
                }
            }
        }
        sum
    }

    /// The schedule's send lag (open loop), in the full-precision layout.
    pub fn send_lag(&self) -> Option<Histogram<u64>> {
        self.rows.get(SCHEDULE).and_then(|r| r.by_kind.get("send_lag")).map(widen)
    }
}

/// The intervals of a log's text, in order (`what` names it in errors). A last line cut short
/// (the run was killed while writing it) is left out.
pub fn read(text: &[u8], what: &str) -> Result<Vec<LoggedInterval>, Malformed> {
    let whole = text.iter().rposition(|&b| b == b'\n').map_or(&text[..0], |end| &text[..=end]);
    let mut out: Vec<LoggedInterval> = Vec::new();
    for entry in IntervalLogIterator::new(whole) {
        let entry = entry.map_err(|e| format!("{what} is not an interval log ({e:?})"))?;
        let LogEntry::Interval(line) = entry else { continue };
        let tag = line.tag().map(|t| t.as_str()).unwrap_or_default();
        let (head, kind) =
            tag.rsplit_once('/').ok_or_else(|| format!("{what}: a line tagged '{tag}', not NAME/KIND"))?;
        let (run, name) = match head.split_once('/') {
            Some((run, name)) => {
                let n = run.strip_prefix("run").and_then(|n| n.parse::<usize>().ok());
                (n.ok_or_else(|| format!("{what}: a line tagged '{tag}', not runN/NAME/KIND"))?, name)
            }
            None => (0, head),
        };
        let start_secs = line.start_timestamp().as_secs_f64();
        let h = super::histo::decode(line.encoded_histogram()).map_err(|e| format!("{what}: {e}"))?;
        let same = out.last().is_some_and(|last| last.run == run && (last.start_secs - start_secs).abs() < 1e-4);
        if !same {
            out.push(LoggedInterval {
                run,
                start_secs,
                duration_secs: line.duration().as_secs_f64(),
                rows: BTreeMap::new(),
            });
        }
        let last = out.last_mut().expect("just pushed");
        last.rows.entry(name.to_string()).or_default().by_kind.insert(kind.to_string(), h);
    }
    Ok(out)
}

/// The log's intervals by run, each run's in order.
pub fn by_run(intervals: Vec<LoggedInterval>) -> BTreeMap<usize, Vec<LoggedInterval>> {
    let mut runs: BTreeMap<usize, Vec<LoggedInterval>> = BTreeMap::new();
    for i in intervals {
        runs.entry(i.run).or_default().push(i);
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_goes_through_the_log_and_comes_back() {
        let names = vec!["GET".to_string(), "SET x".to_string()];
        let mut w = Window::with_parts(2, None, true);
        for i in 1..=500u64 {
            w.ops[0].record(i * 1_000, Some(i * 900));
            w.ops[1].record(i * 3_000, Some(i * 2_000));
            let p = crate::stats::Parts { send_lag_ns: i * 10, wire_ns: i * 800, receive_lag_ns: i * 90 };
            w.ops[0].parts.as_mut().unwrap().record(p, Some(i * 850));
            w.send_lag_ns.record(i * 7).unwrap();
        }
        let mut log = LogWriter::new();
        let mut text = log.interval(0, 1_000, (0.0, 1.0), &names, &w);
        text.extend(log.interval(0, 1_000, (1.0, 1.0), &names, &w));
        text.extend(log.interval(1, 5_000, (0.0, 0.5), &names, &Window::new(2, None)));
        let back = read(&text, "test").unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!((back[1].run, back[1].start_secs, back[2].run, back[2].start_secs), (0, 1.0, 1, 4.0));
        let get = back[0].command("GET").unwrap();
        assert_eq!(get.by_kind["response"], coarse(&w.ops[0].latency_ns));
        let mut op = OpStats::default();
        get.fill(&mut op, Some([1, 2, 3]));
        let parts = op.parts.as_deref().unwrap();
        assert_eq!((parts.count(), parts.sums_ns), (500, [1, 2, 3]));
        assert_eq!(parts.without_client_ns.len(), 500);
        assert!(back[0].command("SET x").unwrap().has("service"));
        let totals = back[0].totals(|_| false);
        assert_eq!(totals.by_kind["response"].len(), 1000);
        assert_eq!(back[0].send_lag().unwrap().len(), 500);
        // A cut last line is left out; the rest reads.
        let cut = &text[..text.len() - 10];
        assert_eq!(read(cut, "cut").unwrap().len(), 3);
    }
}
