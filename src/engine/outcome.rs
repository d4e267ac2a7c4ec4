//! What a run measured ([`Outcome`]), its timeline of [`Interval`]s and what the live line is
//! shown each interval ([`Progress`]): the engine's results, kept apart from how they are made.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::server_latency::ServerLatency;
use super::server_stats::ServerSample;
use super::telemetry::ThreadCpu;
use super::timeline::{Interval, Timeline};
use crate::net::ServerInfo;
use crate::stats::{ClientStats, ErrorCounts, OpStats, Window};

/// One run's headline figures, kept per run when `--runs` repeats the measured phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct RunFigures {
    pub duration_secs: f64,
    pub count: u64,
    pub ops_per_sec: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    /// From the run's own full histogram: what `respbench compare` judges p99.9 by, since the
    /// result keeps no per-run histogram (0 in results written before it was kept).
    pub p99_9_us: f64,
    pub errors: u64,
}

/// Everything a run measured.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Per command, over the whole run.
    pub ops: Vec<OpStats>,
    pub errors: ErrorCounts,
    /// Open loop: how late sends were against their schedule.
    pub send_lag_ns: Histogram<u64>,
    /// One entry per interval, packed (see [`Timeline`]).
    pub timeline: Timeline,
    /// The measured phase: from its start (after any warmup) to the last worker's stop.
    pub elapsed: Duration,
    pub interrupted: bool,
    /// Wall-clock start of the measured phase.
    pub started_unix_ms: u64,
    /// `None` when the server refused INFO.
    pub server: Option<ServerInfo>,
    pub command_names: Vec<String>,
    /// Per worker thread, over the run.
    pub client_threads: Vec<ThreadCpu>,
    /// The server over the measured phase, when INFO is allowed.
    pub server_stats: Option<ServerSample>,
    /// Highest used_memory sampled during the measured phase.
    pub server_peak_memory: Option<u64>,
    /// The server's own latency per command (`INFO latencystats`), or why there is none.
    pub server_latency: Option<ServerLatency>,
    /// Things the user should know about the run (checks before it, telemetry during it).
    pub warnings: Vec<String>,
    /// What respbench noted about how it ran the command line (a front-end's TLS
    /// verification, memtier's shared key sequence): set by the command line, not the engine.
    pub notes: Vec<String>,
    /// One entry per run (several with `--runs`).
    pub runs: Vec<RunFigures>,
    /// When connections were down (dropped, then reconnected or not), merged where they overlap.
    pub outages: Vec<Outage>,
    pub reconnect_attempts: u64,
    /// Connections (links) lost by why, apart from the requests they took with them.
    pub connections_lost: ErrorCounts,
    /// Cluster mode: per node, by address.
    pub nodes: Vec<(String, OpStats)>,
    /// Cluster redirects followed.
    pub moved: u64,
    pub asked: u64,
    /// Each connection's own figures (memtier's `--client-stats`), by connection; empty
    /// unless asked for.
    pub client_stats: Vec<ClientStats>,
    /// Kernel receive timestamps on: how far their mapping onto the run's clock may be off, at
    /// most, in nanoseconds (0 without them).
    pub clock_bound_ns: u64,
    /// Why the kernel refused receive timestamps, if it did.
    pub stamps_refused: Option<String>,
    /// Requests sent again (each time), and those answered in the end after it.
    pub retries: u64,
    pub retried_ops: u64,
    /// `--failed-keys`: the requests given up, oldest first, and how many more were not kept.
    pub failed_keys: Vec<FailedKey>,
    pub failed_keys_dropped: u64,
    /// Each role's own figures beside its requests (its rows of `ops`), by role, in the
    /// order the run plans them (`Config::role_plans`): empty without `--role`.
    pub roles: Vec<RoleOutcome>,
}

/// What one role's listeners measured beside its requests: only its kind's object is set.
#[derive(Debug, Clone, Default)]
pub struct RoleOutcome {
    pub name: String,
    /// A pub/sub role: what its messages did (`engine::pubsub`).
    pub messages: Option<crate::stats::Messages>,
    /// A role whose listeners count beside the requests: what they counted over the run
    /// (lossless), and per interval of the timeline.
    pub total: Option<crate::stats::RoleWindow>,
    pub series: Vec<crate::stats::RolePoint>,
    /// A tracking role: what its cached readers did (`engine::tracking`).
    pub tracking: Option<super::tracking::Figures>,
    /// A stream role: what its entries did (`engine::streams`).
    pub stream: Option<super::streams::StreamFigures>,
    /// A queue role: what its items did (`engine::queue`).
    pub queue: Option<super::queue::QueueFigures>,
}

/// A request given up (`--failed-keys`): when, its command (a row of the outcome's
/// `command_names`), its key (empty for a command without one), why, and how often it was
/// sent again before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedKey {
    pub unix_us: u64,
    pub command: usize,
    pub key: Vec<u8>,
    pub status: String,
    pub retries: u16,
}

/// A span in which at least one connection was down, in seconds from the measured start.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Outage {
    pub run: usize,
    pub start_secs: f64,
    pub end_secs: f64,
    /// Connections that went down in it.
    pub connections: usize,
}

impl Outage {
    /// Merges connections' down spans that overlap (or touch) into outages, sorted.
    pub fn merge(run: usize, start: Instant, spans: Vec<(Instant, Instant)>) -> Vec<Outage> {
        let mut out = Vec::new();
        for span in spans {
            Outage::absorb(&mut out, run, start, span);
        }
        out
    }

    /// Adds one down span to outages merged so far (sorted, none touching another): the
    /// collector merges spans as they come, so a long run with connections dropping keeps its
    /// outages, not every span (25 a second under a `CLIENT KILL` loop).
    pub fn absorb(outages: &mut Vec<Outage>, run: usize, start: Instant, (from, to): (Instant, Instant)) {
        let secs = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
        let mut joined = Outage { run, start_secs: secs(from), end_secs: secs(to), connections: 1 };
        // Those it overlaps or touches are consecutive: the outages are disjoint and sorted.
        let first = outages.partition_point(|o| o.end_secs < joined.start_secs);
        let last = outages.partition_point(|o| o.start_secs <= joined.end_secs);
        for o in outages.drain(first..last.max(first)) {
            joined.start_secs = joined.start_secs.min(o.start_secs);
            joined.end_secs = joined.end_secs.max(o.end_secs);
            joined.connections += o.connections;
        }
        outages.insert(first, joined);
    }
}

impl Outcome {
    /// Role `name`'s own figures, if the run measured any.
    pub fn role(&self, name: &str) -> Option<&RoleOutcome> {
        self.roles.iter().find(|r| r.name == name)
    }

    /// Role `name`'s own figures, made empty when the run has none yet.
    pub fn role_mut(&mut self, name: &str) -> &mut RoleOutcome {
        match self.roles.iter().position(|r| r.name == name) {
            Some(i) => &mut self.roles[i],
            None => {
                self.roles.push(RoleOutcome { name: name.to_string(), ..RoleOutcome::default() });
                self.roles.last_mut().expect("just pushed")
            }
        }
    }

    pub fn total(&self) -> OpStats {
        crate::stats::total(&self.ops)
    }

    /// How much of the response time's p99 the client added (nanoseconds) and its share of
    /// p99, over all commands, when the latency was decomposed: the one figure the warning,
    /// the verdict, the text line and `capacity` use.
    pub fn client_share(&self) -> Option<ClientShare> {
        let total = self.total();
        let (client_ns, share) = total.parts.as_deref()?.client_share(&total.latency_ns, 0.99)?;
        Some(ClientShare { client_ns, p99_ns: total.latency_ns.value_at_quantile(0.99), share })
    }

    /// The bottleneck verdict and its explanation, which names the client's share of p99 when
    /// it is over `threshold` (a fraction): however idle its threads, that client delay is in
    /// the figures.
    pub fn verdict(&self, threshold: f64) -> (super::telemetry::Bottleneck, String) {
        let (verdict, mut detail) = super::telemetry::verdict(&self.client_threads, self.server_stats.map(|s| s.cpu));
        if let Some(s) = self.client_share().filter(|s| s.share > threshold) {
            detail.push_str(&format!(
                "; the client added {} of p99 ({:.0} %, over {:.0} %)",
                human_ns(s.client_ns),
                s.share * 100.0,
                threshold * 100.0
            ));
        }
        (verdict, detail)
    }
    pub fn figures(&self) -> RunFigures {
        let total = self.total();
        let secs = self.elapsed.as_secs_f64();
        let latency = total.latency();
        RunFigures {
            duration_secs: secs,
            count: total.count,
            ops_per_sec: if secs > 0.0 { total.count as f64 / secs } else { 0.0 },
            p50_us: latency.p50_us,
            p99_us: latency.p99_us,
            p99_9_us: latency.p999_us,
            errors: total.errors,
        }
    }

    /// Pools repeated runs: counts and histograms add up, timelines follow one another,
    /// and `runs` keeps each run's own figures for the spread.
    pub fn pool(mut outcomes: Vec<Outcome>) -> Option<Outcome> {
        let mut pooled = outcomes.remove(0);
        for next in outcomes {
            for (mine, theirs) in pooled.ops.iter_mut().zip(&next.ops) {
                mine.merge(theirs);
            }
            pooled.errors.merge(&next.errors);
            pooled.send_lag_ns.add(&next.send_lag_ns).expect("same bounds");
            pooled.timeline.extend(&next.timeline);
            pooled.elapsed += next.elapsed;
            pooled.interrupted |= next.interrupted;
            pooled.client_threads.extend(next.client_threads);
            pooled.outages.extend(next.outages);
            pooled.reconnect_attempts += next.reconnect_attempts;
            pooled.connections_lost.merge(&next.connections_lost);
            pooled.moved += next.moved;
            pooled.client_stats.extend(next.client_stats);
            pooled.asked += next.asked;
            pooled.retries += next.retries;
            pooled.retried_ops += next.retried_ops;
            pooled.failed_keys.extend(next.failed_keys);
            pooled.failed_keys_dropped += next.failed_keys_dropped;
            pooled.clock_bound_ns = pooled.clock_bound_ns.max(next.clock_bound_ns);
            pooled.stamps_refused = pooled.stamps_refused.or(next.stamps_refused);
            for (name, op) in next.nodes {
                match pooled.nodes.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, mine)) => mine.merge(&op),
                    None => pooled.nodes.push((name, op)),
                }
            }
            // The last run's server figures stand for the pool, with the CPU averaged.
            pooled.server_stats = match (pooled.server_stats, next.server_stats) {
                (Some(a), Some(mut b)) => {
                    b.cpu.total = (a.cpu.total + b.cpu.total) / 2.0;
                    b.cpu.main_thread = a.cpu.main_thread.zip(b.cpu.main_thread).map(|(x, y)| (x + y) / 2.0);
                    b.keyspace_hits += a.keyspace_hits;
                    b.keyspace_misses += a.keyspace_misses;
                    b.evicted_keys += a.evicted_keys;
                    b.expired_keys += a.expired_keys;
                    let reads = b.keyspace_hits + b.keyspace_misses;
                    b.hit_ratio = (reads > 0).then(|| b.keyspace_hits as f64 / reads as f64);
                    Some(b)
                }
                (a, b) => a.or(b),
            };
            pooled.server_peak_memory = pooled.server_peak_memory.max(next.server_peak_memory);
            pooled.server_latency = match (pooled.server_latency.take(), next.server_latency) {
                (Some(a), Some(b)) => Some(a.then(b)),
                (a, b) => b.or(a),
            };
            for w in next.warnings {
                if !pooled.warnings.contains(&w) {
                    pooled.warnings.push(w);
                }
            }
            for n in next.notes {
                if !pooled.notes.contains(&n) {
                    pooled.notes.push(n);
                }
            }
            pooled.runs.extend(next.runs);
        }
        Some(pooled)
    }
}

/// What the live line shows, once an interval.
#[derive(Debug, Clone)]
pub struct Progress<'a> {
    pub interval: &'a Interval,
    /// The interval's measurements at full precision (the timeline keeps them packed).
    pub window: &'a Window,
    /// Wall-clock start of this run's measured phase.
    pub started_unix_ms: u64,
    /// The same start on the monotonic clock, which the window's down spans are on.
    pub start: Instant,
    pub elapsed: Duration,
    pub total_ops: u64,
    pub total_errors: u64,
    /// Fraction of the planned work done, when the run is counted or timed.
    pub done: Option<f64>,
    pub time_left: Option<Duration>,
    /// What the server said it is (INFO), when it answered.
    pub server: Option<&'a ServerInfo>,
    /// The names of the window's rows (the commands, then a sequence's unit row).
    pub command_names: &'a [String],
    /// The run's roles whose listeners count beside the requests (a pub/sub role's), each with
    /// what they counted in the interval: empty without such a role.
    pub roles: &'a [RoleInterval<'a>],
}

/// One role's listeners' interval, as the live outputs see it.
#[derive(Debug, Clone)]
pub struct RoleInterval<'a> {
    pub name: &'a str,
    /// The role's first row of the window (a pub/sub role's PUBLISH).
    pub row: usize,
    pub window: crate::stats::RoleWindow,
}

/// The client's part of p99 (see [`Outcome::client_share`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClientShare {
    pub client_ns: u64,
    pub p99_ns: u64,
    /// `client_ns / p99_ns`, 0 to 1.
    pub share: f64,
}

impl ClientShare {
    /// The warning, in the words, when the share is over `threshold` (a fraction).
    pub fn warning(&self, threshold: f64) -> Option<String> {
        (self.share > threshold).then(|| {
            format!(
                "p99 includes {} of client delay ({:.0} %): the client is part of what was measured; add threads \
                 or load machines",
                human_ns(self.client_ns),
                self.share * 100.0
            )
        })
    }
}

/// A duration for people: microseconds below a millisecond, else milliseconds.
fn human_ns(ns: u64) -> String {
    if ns < 1_000_000 { format!("{:.0} µs", ns as f64 / 1e3) } else { format!("{:.1} ms", ns as f64 / 1e6) }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::Outage;

    /// The outages of `spans` by a sweep over them sorted: what absorbing them must give.
    fn swept(run: usize, start: Instant, mut spans: Vec<(Instant, Instant)>) -> Vec<Outage> {
        spans.sort();
        let secs = |t: Instant| t.saturating_duration_since(start).as_secs_f64();
        let mut out: Vec<Outage> = Vec::new();
        for (from, to) in spans {
            match out.last_mut() {
                Some(last) if secs(from) <= last.end_secs => {
                    last.end_secs = last.end_secs.max(secs(to));
                    last.connections += 1;
                }
                _ => out.push(Outage { run, start_secs: secs(from), end_secs: secs(to), connections: 1 }),
            }
        }
        out
    }

    /// Spans absorbed one by one, in any order, make the outages a sweep of them all sorted makes.
    #[test]
    fn outages_absorbed_one_by_one_are_those_merged_at_once() {
        let start = Instant::now() + Duration::from_secs(1);
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..200 {
            let spans: Vec<(Instant, Instant)> = (0..next(40))
                .map(|_| {
                    // Some before the start (seconds saturate at 0), some touching end to end.
                    let from = start - Duration::from_millis(200) + Duration::from_millis(next(3000) / 10 * 10);
                    (from, from + Duration::from_millis(next(300) / 10 * 10))
                })
                .collect();
            let mut absorbed = Vec::new();
            for &span in &spans {
                Outage::absorb(&mut absorbed, 1, start, span);
            }
            assert_eq!(absorbed, swept(1, start, spans.clone()), "{spans:?}");
            assert_eq!(Outage::merge(1, start, spans.clone()), absorbed);
        }
    }
}
