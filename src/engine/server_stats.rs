//! The server seen from the inside while the load runs: `INFO` sampled once an interval over a
//! connection of its own (never one of the measured ones): CPU, memory, hits and misses,
//! evictions, expirations, clients and the server's own command rate.
//!
//! The sampler runs on the collector's thread, so each reading is bounded
//! ([`sample_timeout`]): a server that stalls INFO alone must not hold up the interval lines
//! or the run's end. A node that lets a reading time out gives no more samples this run (its
//! connection is out of step, and each retry would cost the bound again): its figures are
//! missing from then on, never made up.
//!
//! The same connection reads the server's own latency per command at the run's start and end
//! (`server_latency`).

use super::server_latency::NoFigures;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::server_latency::{self, Reading, ServerLatency};
use crate::config::ServerOptions;
use crate::net::{CallError, ConnectError, Session, Stream};

/// Longest the collector waits for one INFO reading during a run.
pub fn sample_timeout(interval: Duration) -> Duration {
    interval.min(Duration::from_secs(1)).max(Duration::from_millis(10))
}

/// Bounds every later read on `session` by `timeout`.
fn bound_reads(session: &Session, timeout: Duration) {
    let _ = match &session.stream {
        Stream::Tcp(s) => s.set_read_timeout(Some(timeout)),
        Stream::Unix(s) => s.set_read_timeout(Some(timeout)),
        Stream::Tls(s) => s.sock.set_read_timeout(Some(timeout)),
    };
}

/// Whether a bounded call failed by running out of time.
fn timed_out(e: &CallError) -> bool {
    matches!(e, CallError::Connect(ConnectError::Io { source, .. })
        if matches!(source.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

/// One bounded reading: `Err(true)` when it timed out, `Err(false)` for any other failure
/// (a dropped connection, a refusal, an unparsable reply).
fn read_bounded(session: &mut Session) -> Result<Info, bool> {
    match session.call(&[b"INFO"]) {
        Ok(reply) => Info::parse(&String::from_utf8_lossy(reply.text())).ok_or(false),
        Err(e) => Err(timed_out(&e)),
    }
}

/// Server CPU as a share of one core (1.0 = one core fully busy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ServerCpu {
    /// All of the server's threads.
    pub total: f64,
    /// The main (command-executing) thread, when the server reports it.
    pub main_thread: Option<f64>,
}

/// What the server did over a span: counters as differences, gauges as read at its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ServerSample {
    pub cpu: ServerCpu,
    pub used_memory_bytes: u64,
    pub fragmentation_ratio: f64,
    pub keyspace_hits: u64,
    pub keyspace_misses: u64,
    /// hits / (hits + misses); `None` when the span had no reads.
    pub hit_ratio: Option<f64>,
    pub evicted_keys: u64,
    pub expired_keys: u64,
    pub connected_clients: u64,
    /// Commands the server processed per second (all clients).
    pub ops_per_sec: f64,
    /// Keys in all databases.
    pub keys: u64,
}

/// One reading of `INFO`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Info {
    cpu_total: f64,
    cpu_main: Option<f64>,
    pub used_memory: u64,
    /// used_memory less what eviction does not count (replica output and AOF buffers): what
    /// maxmemory is compared with, and what a fill should measure.
    pub counted_memory: u64,
    pub maxmemory: u64,
    fragmentation: f64,
    hits: u64,
    misses: u64,
    pub evicted: u64,
    expired: u64,
    clients: u64,
    commands: u64,
    pub keys: u64,
    /// `aof_enabled:1`.
    pub aof: bool,
}

impl Info {
    /// Parses the default `INFO` text; `None` when it has no CPU section (not an INFO reply).
    pub fn parse(text: &str) -> Option<Info> {
        let mut info = Info::default();
        let (mut user, mut sys, mut user_main, mut sys_main) = (None, None, None, None);
        let mut not_counted = 0;
        for line in text.lines() {
            let Some((field, value)) = line.trim_end().split_once(':') else { continue };
            let float = || value.parse::<f64>().ok();
            let int = || value.parse::<u64>().unwrap_or(0);
            match field {
                "used_cpu_user" => user = float(),
                "used_cpu_sys" => sys = float(),
                "used_cpu_user_main_thread" => user_main = float(),
                "used_cpu_sys_main_thread" => sys_main = float(),
                "used_memory" => info.used_memory = int(),
                "maxmemory" => info.maxmemory = int(),
                "mem_not_counted_for_evict" => not_counted = int(),
                "mem_fragmentation_ratio" => info.fragmentation = float().unwrap_or(0.0),
                "keyspace_hits" => info.hits = int(),
                "keyspace_misses" => info.misses = int(),
                "evicted_keys" => info.evicted = int(),
                "expired_keys" => info.expired = int(),
                "connected_clients" => info.clients = int(),
                "total_commands_processed" => info.commands = int(),
                "aof_enabled" => info.aof = value == "1",
                db if db.starts_with("db") => {
                    // db0:keys=12,expires=0,avg_ttl=0
                    let keys = value.split(',').find_map(|kv| kv.strip_prefix("keys="));
                    info.keys += keys.and_then(|k| k.parse::<u64>().ok()).unwrap_or(0);
                }
                _ => {}
            }
        }
        info.counted_memory = info.used_memory.saturating_sub(not_counted);
        info.cpu_total = user? + sys?;
        info.cpu_main = user_main.zip(sys_main).map(|(u, s)| u + s);
        Some(info)
    }

    /// Reads `INFO` on `session`; `None` when refused or unparsable.
    pub fn read(session: &mut Session) -> Option<Info> {
        let reply = session.call(&[b"INFO"]).ok()?;
        Info::parse(&String::from_utf8_lossy(reply.text()))
    }
}

/// What changed from `prev` to `next` over `wall`.
fn sample(prev: &Info, next: &Info, wall: Duration) -> ServerSample {
    let secs = wall.as_secs_f64().max(1e-9);
    let per_sec = |a: f64, b: f64| ((b - a) / secs).max(0.0);
    let hits = next.hits.saturating_sub(prev.hits);
    let misses = next.misses.saturating_sub(prev.misses);
    ServerSample {
        cpu: ServerCpu {
            total: per_sec(prev.cpu_total, next.cpu_total),
            main_thread: prev.cpu_main.zip(next.cpu_main).map(|(a, b)| per_sec(a, b)),
        },
        used_memory_bytes: next.used_memory,
        fragmentation_ratio: next.fragmentation,
        keyspace_hits: hits,
        keyspace_misses: misses,
        hit_ratio: (hits + misses > 0).then(|| hits as f64 / (hits + misses) as f64),
        evicted_keys: next.evicted.saturating_sub(prev.evicted),
        expired_keys: next.expired.saturating_sub(prev.expired),
        connected_clients: next.clients,
        ops_per_sec: per_sec(prev.commands as f64, next.commands as f64),
        keys: next.keys,
    }
}

/// Samples one node's `INFO`; each sample covers the span since the previous one.
struct NodeSampler {
    session: Session,
    /// To reconnect after the server restarts.
    server: ServerOptions,
    first: Option<(Instant, Info)>,
    last: Option<(Instant, Info)>,
    /// Highest used_memory seen.
    pub peak_used_memory: u64,
    /// Bound on each reading.
    timeout: Duration,
    /// A reading timed out: no more samples from this node.
    stalled: bool,
    /// The server's latency and command counters at the run's start, or why not read.
    latency_start: Option<Result<Reading, NoFigures>>,
}

impl NodeSampler {
    /// `None` when the server cannot be reached or refuses INFO.
    fn open(server: &ServerOptions, timeout: Duration) -> Option<NodeSampler> {
        let mut session = Session::open(server).ok()?;
        Info::read(&mut session)?;
        bound_reads(&session, timeout);
        let server = server.clone();
        Some(NodeSampler {
            session,
            server,
            first: None,
            last: None,
            peak_used_memory: 0,
            timeout,
            stalled: false,
            latency_start: None,
        })
    }

    /// One reading within the bound; a timeout stalls the node for the rest of the run.
    fn read(&mut self) -> Result<Info, bool> {
        if self.stalled {
            return Err(true);
        }
        let read = read_bounded(&mut self.session);
        self.stalled = read == Err(true);
        read
    }

    /// Starts the measured span now.
    fn begin(&mut self) {
        if let Ok(info) = self.read() {
            let now = Instant::now();
            self.peak_used_memory = info.used_memory;
            self.first = Some((now, info));
            self.last = Some((now, info));
        }
        if !self.server.session.protocol.is_memcache() {
            self.latency_start = Some(self.read_latency());
        }
    }

    /// The server's own latency and command counters, within the bound; a timeout stalls the
    /// node as any reading's does. `Err` says why there is no reading.
    fn read_latency(&mut self) -> Result<Reading, NoFigures> {
        let late = |timeout| format!("the server did not answer INFO latencystats within {timeout:?}");
        if self.stalled {
            return Err(late(self.timeout).into());
        }
        match self.session.call(&server_latency::CALL) {
            Ok(reply) => Ok(Reading::parse(&String::from_utf8_lossy(reply.text()))),
            Err(CallError::Server(message)) => Err(server_latency::refused(&message).into()),
            Err(e) if timed_out(&e) => {
                self.stalled = true;
                Err(late(self.timeout).into())
            }
            Err(e) => Err(format!("INFO latencystats failed: {e}").into()),
        }
    }

    /// The span since the previous sample (or `begin`). After a dropped connection it logs in
    /// again; a restarted server's counters start over, so the spans start over from there.
    fn sample(&mut self) -> Option<ServerSample> {
        let info = match self.read() {
            Ok(info) => info,
            Err(true) => return None,
            Err(false) => {
                self.session = Session::open_within(&self.server, self.timeout.min(Duration::from_millis(500))).ok()?;
                bound_reads(&self.session, self.timeout);
                let info = self.read().ok()?;
                // A restarted server's counters start over: the run's share is unknown.
                self.latency_start = None;
                let now = Instant::now();
                self.first = Some((now, info));
                self.last = Some((now, info));
                return None;
            }
        };
        let now = Instant::now();
        self.peak_used_memory = self.peak_used_memory.max(info.used_memory);
        let span = self.last.map(|(at, prev)| sample(&prev, &info, now.duration_since(at)));
        self.last = Some((now, info));
        span
    }

    /// The whole span from `begin` to the last sample; `None` once stalled (the run's end was
    /// not read: a shorter span would pass for the whole run).
    fn overall(&self) -> Option<ServerSample> {
        if self.stalled {
            return None;
        }
        let ((t0, first), (t1, last)) = (self.first?, self.last?);
        (t1 > t0).then(|| sample(&first, &last, t1.duration_since(t0)))
    }
}

/// Samples the server's `INFO`: the one server, or every primary of a cluster, combined.
pub struct ServerSampler {
    nodes: Vec<NodeSampler>,
    /// Highest used_memory seen (summed over the nodes).
    pub peak_used_memory: u64,
}

impl ServerSampler {
    /// `None` when the server cannot be reached or refuses INFO. In cluster mode, every
    /// primary of the map is sampled.
    pub fn open(server: &ServerOptions, cluster: bool, timeout: Duration) -> Option<ServerSampler> {
        let targets: Vec<ServerOptions> = if cluster {
            let mut session = Session::open(server).ok()?;
            let shards = crate::net::cluster::shards(&mut session, server).ok()?;
            shards.iter().map(|s| s.primary.options(server)).collect()
        } else {
            vec![server.clone()]
        };
        let nodes: Vec<NodeSampler> = targets.iter().filter_map(|t| NodeSampler::open(t, timeout)).collect();
        (!nodes.is_empty()).then_some(ServerSampler { nodes, peak_used_memory: 0 })
    }

    pub fn begin(&mut self) {
        for n in &mut self.nodes {
            n.begin();
        }
        self.peak_used_memory = self.nodes.iter().map(|n| n.peak_used_memory).sum();
    }

    /// The span since the previous sample, combined over the nodes.
    pub fn sample(&mut self) -> Option<ServerSample> {
        let samples: Vec<ServerSample> = self.nodes.iter_mut().filter_map(NodeSampler::sample).collect();
        let used: u64 = self.nodes.iter().map(|n| n.last.map_or(0, |(_, i)| i.used_memory)).sum();
        self.peak_used_memory = self.peak_used_memory.max(used);
        combine(&samples)
    }

    /// Nodes whose INFO timed out during the run: their figures are missing from then on.
    pub fn stalled(&self) -> usize {
        self.nodes.iter().filter(|n| n.stalled).count()
    }

    pub fn overall(&self) -> Option<ServerSample> {
        combine(&self.nodes.iter().filter_map(NodeSampler::overall).collect::<Vec<_>>())
    }

    /// The server's own latency for the run's commands `names`, read now (the run's end) on
    /// every sampled node and set beside the reading at its start.
    pub fn latency(&mut self, names: &[String]) -> ServerLatency {
        let several = self.nodes.len() > 1;
        let mut problems = Vec::new();
        let mut figures = Vec::new();
        for n in &mut self.nodes {
            let node = n.server.target.to_string();
            let on = if several { format!(" on {node}") } else { String::new() };
            let start = n.latency_start.take();
            let label = several.then_some(node.as_str());
            let found = n.read_latency().and_then(|end| {
                let start = start.as_ref().and_then(|s| s.as_ref().ok());
                server_latency::node_figures(start, &end, names, (label, &mut problems))
            });
            // Said only beside figures: a node without any says its own reason.
            if let (Ok(_), Some(Err(why))) = (&found, &start) {
                problems.push(format!("the run's start was not read{on} ({why}): calls in the run unknown"));
            }
            figures.push((node, found));
        }
        server_latency::combine(figures, problems)
    }
}

/// Several nodes as one server: counts, rates, memory and keys add up; CPU is the busiest
/// node's (the one that limits); fragmentation is the mean.
fn combine(samples: &[ServerSample]) -> Option<ServerSample> {
    let (first, rest) = samples.split_first()?;
    if rest.is_empty() {
        return Some(*first);
    }
    let mut all = *first;
    for s in rest {
        all.cpu.total = all.cpu.total.max(s.cpu.total);
        all.cpu.main_thread = match (all.cpu.main_thread, s.cpu.main_thread) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        all.used_memory_bytes += s.used_memory_bytes;
        all.fragmentation_ratio += s.fragmentation_ratio;
        all.keyspace_hits += s.keyspace_hits;
        all.keyspace_misses += s.keyspace_misses;
        all.evicted_keys += s.evicted_keys;
        all.expired_keys += s.expired_keys;
        all.connected_clients += s.connected_clients;
        all.ops_per_sec += s.ops_per_sec;
        all.keys += s.keys;
    }
    all.fragmentation_ratio /= samples.len() as f64;
    let lookups = all.keyspace_hits + all.keyspace_misses;
    all.hit_ratio = (lookups > 0).then(|| all.keyspace_hits as f64 / lookups as f64);
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    const INFO: &str = "# Clients\r\nconnected_clients:7\r\n# Memory\r\nused_memory:1048576\r\nmaxmemory:0\r\n\
        mem_fragmentation_ratio:1.25\r\n# Persistence\r\naof_enabled:0\r\n# Stats\r\ntotal_commands_processed:100\r\n\
        keyspace_hits:30\r\nkeyspace_misses:10\r\nevicted_keys:0\r\nexpired_keys:2\r\n# CPU\r\nused_cpu_sys:1.5\r\n\
        used_cpu_user:2.0\r\nused_cpu_sys_main_thread:1.0\r\nused_cpu_user_main_thread:1.25\r\n# Keyspace\r\n\
        db0:keys=12,expires=0,avg_ttl=0\r\ndb3:keys=5,expires=1,avg_ttl=9\r\n";

    #[test]
    fn parses_info() {
        let info = Info::parse(INFO).unwrap();
        assert_eq!(info.cpu_total, 3.5);
        assert_eq!(info.cpu_main, Some(2.25));
        assert_eq!((info.used_memory, info.keys, info.clients), (1_048_576, 17, 7));
        assert!(Info::parse("nothing").is_none());
    }

    #[test]
    fn samples_are_differences_over_time() {
        let a = Info::parse(INFO).unwrap();
        let mut b = a;
        b.cpu_total += 0.5;
        b.hits += 90;
        b.misses += 10;
        b.commands += 1000;
        b.evicted += 3;
        let s = sample(&a, &b, Duration::from_secs(2));
        assert_eq!(s.cpu.total, 0.25);
        assert_eq!(s.hit_ratio, Some(0.9));
        assert_eq!(s.ops_per_sec, 500.0);
        assert_eq!(s.evicted_keys, 3);
        assert_eq!(sample(&a, &a, Duration::from_secs(1)).hit_ratio, None);
    }
}
