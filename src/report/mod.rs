//! Turning a finished run into something to read or keep: every format implements
//! [`Format`], and files are written through [`output`], so an interrupted run never leaves half a file.

pub mod ab;
pub mod document;
pub mod live;
pub mod memtier;
pub mod merge;
pub mod output;
pub mod pages;
pub mod run;
#[cfg(test)]
mod timeline_outputs;

use crate::config::Config;
use crate::engine::Outcome;
use crate::stats::OpStats;

/// A finished run: the plan and what was measured.
pub struct Run<'a> {
    pub config: &'a Config,
    pub outcome: &'a Outcome,
    /// `--label`: how comparisons name this result.
    pub label: Option<&'a str>,
    /// The latency percentiles the text table shows, in percent.
    pub percentiles: &'a [f64],
}

/// The percentiles shown unless `--percentiles` says otherwise (memtier's default too).
pub const DEFAULT_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// One output format.
pub trait Format {
    fn render(&self, run: &Run) -> String;
}

/// How latency was measured, in words: printed with every report.
pub fn method(config: &Config) -> &'static str {
    if config.pacing() == crate::config::role_plan::Pacing::Mixed {
        return "mixed: each role is paced as its own; a role at a rate follows a schedule of intended send times \
                and its latency is from each request's intended send time (no coordinated omission); a role in \
                closed loop sends when a pipeline slot frees and its latency is from the moment a request is queued \
                for sending; both to the moment its reply is read (each role's mode is in its row)";
    }
    match config.rate {
        None => {
            "closed loop: each connection sends when a pipeline slot frees; latency per request from \
             the moment it is queued for sending to the moment its reply is read"
        }
        Some(_) => {
            "open loop: each connection follows a schedule of intended send times; response time per \
             request from its intended send time (stalls included, no coordinated omission), service \
             time from its actual send, both to the moment its reply is read"
        }
    }
}

/// A send counts as late when it left this long after its intended time.
pub use crate::engine::LATE_NS as LATE_SEND_NS;

/// Open-loop delivery: what was asked, what was done, and how late the sends were.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Delivery {
    pub requested_per_sec: f64,
    pub achieved_per_sec: f64,
    pub arrival: String,
    pub sends: u64,
    /// Sends that left more than `late_threshold_us` after their intended time.
    pub late_sends: u64,
    /// Of those, the ones late by the client's own doing: over the threshold after their
    /// connection was free to send them (their intended time, or the reply that freed a slot
    /// of a full pipeline), from the decomposed send lag (kernel timestamps on; absent without).
    /// The rest waited for replies: the server's pace, or too few connections or too short a
    /// pipeline for the rate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub late_sends_own: Option<u64>,
    pub late_threshold_us: f64,
    pub send_lag_us: crate::stats::LatencySummary,
    /// The paced workers' wake-ups that came over `late_threshold_us` after their time, all
    /// threads together, and the latest of them (`client.threads` has each thread's): the
    /// machine ran the client late, and the sends due meanwhile left late with it.
    pub late_wakeups: u64,
    pub late_wakeup_max_ms: f64,
}

impl Delivery {
    pub fn of(config: &Config, outcome: &Outcome) -> Option<Delivery> {
        let rate = config.rate?;
        let requested_per_sec = config.requested_per_sec(outcome.elapsed).unwrap_or(rate.per_sec);
        Some(Delivery { requested_per_sec, ..Delivery::planned(rate) }.measured(outcome))
    }

    /// What was asked, before anything is measured.
    pub fn planned(rate: crate::config::Rate) -> Delivery {
        Delivery {
            requested_per_sec: rate.per_sec,
            arrival: if rate.poisson { "poisson" } else { "constant" }.into(),
            late_threshold_us: LATE_SEND_NS as f64 / 1000.0,
            ..Delivery::default()
        }
    }

    /// What was asked (`self`) and what `outcome` delivered.
    pub fn measured(self, outcome: &Outcome) -> Delivery {
        let lag = &outcome.send_lag_ns;
        let secs = outcome.elapsed.as_secs_f64();
        let total = outcome.total();
        let late = |h: &hdrhistogram::Histogram<u64>| h.len() - h.count_between(0, LATE_SEND_NS);
        Delivery {
            achieved_per_sec: if secs > 0.0 { total.count as f64 / secs } else { 0.0 },
            sends: lag.len(),
            late_sends: late(lag),
            late_sends_own: total.parts.map(|p| late(&p.send_lag_ns)),
            send_lag_us: crate::stats::LatencySummary::of(lag),
            ..self
        }
        .woken(&outcome.client_threads)
    }

    /// With the late wake-ups of `threads` (every thread of the run).
    pub fn woken(self, threads: &[crate::engine::ThreadCpu]) -> Delivery {
        Delivery {
            late_wakeups: threads.iter().map(|t| t.late_wakeups).sum(),
            late_wakeup_max_ms: threads.iter().map(|t| t.late_wakeup_max_ms).fold(0.0, f64::max),
            ..self
        }
    }

    /// The late wake-ups in words ("" without any): they say a late send was the machine's.
    pub fn wakeups_said(&self) -> String {
        if self.late_wakeups == 0 {
            return String::new();
        }
        format!(
            "; the machine woke the client {} time{} over {:.0} ms after its time, at worst {:.1} ms late",
            self.late_wakeups,
            if self.late_wakeups == 1 { "" } else { "s" },
            self.late_threshold_us / 1000.0,
            self.late_wakeup_max_ms
        )
    }

    /// Under 98 % of the requested rate got replies.
    pub fn rate_missed(&self) -> bool {
        self.achieved_per_sec < 0.98 * self.requested_per_sec
    }

    /// Over 1 % of sends left later than the threshold after their intended time.
    pub fn sends_late(&self) -> bool {
        self.late_sends * 100 > self.sends
    }

    /// One warning per shortfall, each worded by what was measured: the rate achieved, or the
    /// lateness of sends (a run can deliver the whole rate in bursts, every send late).
    pub fn warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.rate_missed() {
            out.push(format!(
                "WARNING: the requested rate was not delivered: {:.0}/s achieved of {:.0}/s requested ({:.1}%).",
                self.achieved_per_sec,
                self.requested_per_sec,
                100.0 * self.achieved_per_sec / self.requested_per_sec
            ));
        }
        if self.sends_late() {
            let (late, sends, ms) = (self.late_sends, self.sends, self.late_threshold_us / 1000.0);
            let pct = 100.0 * late as f64 / sends.max(1) as f64;
            out.push(match self.late_sends_own {
                // Late for want of replies, not of the client's time: say whose the delay was.
                Some(own) if own * 100 <= sends => format!(
                    "WARNING: the schedule was not kept: {late} of {sends} sends ({pct:.1}%) left over {ms:.0} ms after \
                     their intended time, {own} of them by the client's own delay: the rest waited for the reply before \
                     them on their connection (the server's pace, or too few connections or too short a pipeline for \
                     the rate; latency still counts from the intended time)."
                ),
                own => format!(
                    "WARNING: the client did not keep the schedule: {late} of {sends} sends ({pct:.1}%) left over {ms:.0} \
                     ms after their intended time{}{} (latency still counts from the intended time).",
                    own.map(|own| format!(", {own} of them with their connection free to send")).unwrap_or_default(),
                    self.wakeups_said()
                ),
            });
        }
        out
    }
}

/// Rates of one command (or the total) over `secs`.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    pub ops_per_sec: f64,
    pub hits_per_sec: f64,
    pub misses_per_sec: f64,
    pub kb_per_sec: f64,
}

impl Rates {
    pub fn of<H>(op: &OpStats<H>, secs: f64) -> Rates {
        let per = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
        Rates {
            ops_per_sec: per(op.count),
            hits_per_sec: per(op.hits),
            misses_per_sec: per(op.misses),
            kb_per_sec: per(op.bytes_in + op.bytes_out) / 1024.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(achieved_per_sec: f64, late_sends: u64) -> Delivery {
        Delivery {
            requested_per_sec: 1000.0,
            achieved_per_sec,
            arrival: "constant".into(),
            sends: 1000,
            late_sends,
            late_sends_own: None,
            late_threshold_us: 1000.0,
            ..Delivery::default()
        }
    }

    #[test]
    fn delivery_warnings_say_what_was_measured() {
        assert!(delivery(1000.0, 0).warnings().is_empty());
        // The whole rate, but sent late: the rate is not what is wrong.
        let late = delivery(1000.0, 50).warnings();
        assert_eq!(late.len(), 1);
        assert!(late[0].contains("50 of 1000 sends (5.0%)") && !late[0].contains("not delivered"), "{late:?}");
        let short = delivery(900.0, 0).warnings();
        assert_eq!(short.len(), 1);
        assert!(short[0].contains("not delivered: 900/s achieved of 1000/s requested (90.0%)"), "{short:?}");
        assert_eq!(delivery(900.0, 50).warnings().len(), 2);
    }

    #[test]
    fn late_sends_say_whose_delay_they_were() {
        // Most waited for replies on a full pipeline: not the client's doing.
        let waited = Delivery { late_sends_own: Some(3), ..delivery(1000.0, 50) }.warnings();
        assert!(waited[0].contains("the schedule was not kept: 50 of 1000 sends (5.0%)"), "{waited:?}");
        assert!(waited[0].contains("3 of them by the client's own delay") && !waited[0].contains("the client did not"));
        // Over 1 % late with the connection free to send: the client's.
        let own = Delivery { late_sends_own: Some(40), ..delivery(1000.0, 50) }.warnings();
        assert!(
            own[0].contains("the client did not keep the schedule")
                && own[0].contains("40 of them with their connection free")
        );
    }

    #[test]
    fn late_wake_ups_are_named_with_the_client_s_own_late_sends() {
        let threads = [
            crate::engine::ThreadCpu { late_wakeups: 2, late_wakeup_max_ms: 8.5, ..Default::default() },
            crate::engine::ThreadCpu { late_wakeups: 1, late_wakeup_max_ms: 3.0, ..Default::default() },
        ];
        let own = Delivery { late_sends_own: Some(40), ..delivery(1000.0, 50) }.woken(&threads);
        assert_eq!((own.late_wakeups, own.late_wakeup_max_ms), (3, 8.5));
        let said = own.warnings();
        assert!(said[0].contains("the machine woke the client 3 times over 1 ms after its time, at worst 8.5 ms late"));
        assert!(!delivery(1000.0, 50).warnings()[0].contains("woke"));
    }
}
