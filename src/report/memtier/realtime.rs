//! `--realtime-latencies`: memtier_benchmark's block per tick on stderr in place of its one
//! progress line: the throughput (this tick's and the run's average), the bytes, the miss ratio,
//! then the `--print-percentiles` of this tick (`inst`) and of the run so far (`overall`),
//! three percentiles a line. Appended one block after another; on a terminal each block is
//! drawn over the last.

use std::fmt::Write;

use hdrhistogram::Histogram;

use super::stats::ms;
use crate::engine::Progress;

/// Percentiles on one latency line, as memtier wraps them.
const PER_LINE: usize = 3;

/// What the blocks need over the run so far; on the collector's thread, one merge per tick.
#[derive(Debug, Default)]
pub struct Realtime {
    bytes: u64,
    hits: u64,
    misses: u64,
    overall: Option<Histogram<u64>>,
    /// Lines of the last block drawn on a terminal (to draw the next over it).
    drawn: usize,
}

impl Realtime {
    /// The block for one completed interval of run `run` (from 1); `terminal`: stderr is one.
    pub fn block(&mut self, run: usize, p: &Progress, percentiles: &[f64], terminal: bool) -> String {
        let w = p.window.total();
        self.bytes += w.bytes_in + w.bytes_out;
        (self.hits, self.misses) = (self.hits + w.hits, self.misses + w.misses);
        let overall = self.overall.get_or_insert_with(|| Histogram::new_from(&w.latency_ns));
        let _ = overall.add(&w.latency_ns);
        let (secs, cur_secs) = (p.elapsed.as_secs_f64(), p.interval.duration_secs);
        let per = |n: f64, s: f64| if s > 0.0 { n / s } else { 0.0 };
        let ratio = |miss: u64, hit: u64| if miss + hit > 0 { 100.0 * miss as f64 / (miss + hit) as f64 } else { 0.0 };
        let done = p.done.unwrap_or(0.0).clamp(0.0, 1.0);
        let tag = format!("[RUN #{run} {:>3.0}% {:>3}s]", done * 100.0, secs as u64);
        let mut lines = vec![format!(
            "{tag} throughput {} (avg: {}) ops/sec   {}/sec (avg: {}/sec)   miss {:.2}% (avg: {:.2}%)",
            per(w.count as f64, cur_secs) as u64,
            per(p.total_ops as f64, secs) as u64,
            super::text::size(per((w.bytes_in + w.bytes_out) as f64, cur_secs)),
            super::text::size(per(self.bytes as f64, secs)),
            ratio(w.misses, w.hits),
            ratio(self.misses, self.hits),
        )];
        let overall = self.overall.as_ref().expect("set above");
        for (row, h) in [("inst", &w.latency_ns), ("overall", overall)] {
            let chunks: Vec<&[f64]> = percentiles.chunks(PER_LINE).collect();
            for (i, chunk) in chunks.iter().enumerate() {
                let mut line = format!("{tag} latency [{row:<8}]");
                for q in *chunk {
                    let value = if h.is_empty() {
                        "-".to_string()
                    } else {
                        format!("{:.3}", ms(h.value_at_quantile(q / 100.0) as f64))
                    };
                    let _ = write!(line, "  p{q} {value}");
                }
                if row == "overall" && i + 1 == chunks.len() {
                    line.push_str(" ms");
                }
                lines.push(line);
            }
        }
        let mut out = String::new();
        if terminal && self.drawn > 0 {
            // Up over the last block; each line erased to its end as it is written.
            let _ = write!(out, "\x1b[{}A\r", self.drawn);
        }
        for line in &lines {
            out.push_str(line);
            if terminal {
                out.push_str("\x1b[K");
            }
            out.push('\n');
        }
        self.drawn = if terminal { lines.len() } else { 0 };
        out
    }
}
