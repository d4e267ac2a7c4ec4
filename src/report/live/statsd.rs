//! Live metrics for dashboards, as memtier_benchmark 2.3 sends them: StatsD gauges and timings
//! over UDP (one `prefix.label.name:value|type` packet per metric), sent once an interval by
//! the collector, never by the workers; and Graphite event annotations (an HTTP POST to
//! `/events/`) when each run starts and ends. Sending never blocks the run for long: UDP is
//! fire and forget, and a Graphite that does not answer gets one warning and no more posts.
//!
//! Written here rather than with cadence: dashboards built on memtier match its packets byte
//! for byte (`latency_ms:0.123|ms` with three decimals, percentiles with six), and cadence's
//! typed metrics format values their own way (timers in whole milliseconds). The Graphite POST
//! is one bounded request per run with nothing to read back, which an HTTP client crate would
//! not make simpler.

use std::io::Write;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::time::Duration;

use super::push::PushError;
use crate::engine::Progress;
use crate::report::document::role_figures::Figure;

/// Where the metrics go (`--statsd-host` and friends).
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    pub host: String,
    pub port: u16,
    pub prefix: String,
    pub run_label: String,
    pub graphite_port: u16,
}

/// Longest a Graphite event may take to connect or send.
const GRAPHITE_TIMEOUT: Duration = Duration::from_secs(2);

pub struct Statsd {
    socket: UdpSocket,
    /// `prefix.label.`, sanitised as memtier does.
    prefix: String,
    label: String,
    host: String,
    graphite: Option<SocketAddr>,
    percentiles: Vec<f64>,
    /// This run so far.
    bytes: u64,
    latency_ns_sum: f64,
    replies: u64,
    connection_errors: u64,
    /// The run's roles as planned (`--role`), for their figures at its end.
    roles: Vec<crate::report::document::roles::RoleReport>,
}

impl Statsd {
    /// Resolves the host and opens the UDP socket.
    pub fn open(options: &Options, percentiles: &[f64]) -> Result<Statsd, PushError> {
        let resolve = |port: u16| {
            (options.host.as_str(), port)
                .to_socket_addrs()
                .ok()
                .and_then(|mut a| a.next())
                .ok_or_else(|| format!("--statsd-host: cannot resolve '{}'", options.host))
        };
        let target = resolve(options.port)?;
        let bind: SocketAddr = if target.is_ipv4() { ([0, 0, 0, 0], 0).into() } else { ([0u16; 8], 0).into() };
        let socket = UdpSocket::bind(bind).and_then(|s| s.connect(target).map(|()| s));
        let socket = socket.map_err(|e| format!("--statsd-host {}: cannot open a UDP socket: {e}", options.host))?;
        socket.set_nonblocking(true).map_err(|e| format!("--statsd-host: {e}"))?;
        let label = sanitise(&options.run_label, "_-");
        let label = if label.is_empty() { "default".to_string() } else { label };
        let prefix = sanitise(&options.prefix, "_-.");
        let prefix = if prefix.is_empty() { format!("{label}.") } else { format!("{prefix}.{label}.") };
        Ok(Statsd {
            socket,
            prefix,
            label,
            host: options.host.clone(),
            graphite: resolve(options.graphite_port).ok(),
            percentiles: percentiles.to_vec(),
            bytes: 0,
            latency_ns_sum: 0.0,
            replies: 0,
            connection_errors: 0,
            roles: Vec::new(),
        })
    }

    /// A run begins (`run` counts from 0): memtier's "Benchmark Started" event.
    pub fn run_started(&mut self, run: usize, config: &crate::config::Config) {
        let threads = config.worker_threads();
        let connections_per_thread = config.connections / threads;
        self.roles = crate::report::document::roles::planned(config);
        self.bytes = 0;
        self.latency_ns_sum = 0.0;
        self.replies = 0;
        self.connection_errors = 0;
        let data = format!("threads={threads} connections={connections_per_thread} run={}", run + 1);
        self.event("Benchmark Started", &data, "memtier,start");
    }

    /// One completed interval: memtier's gauges and timings.
    pub fn interval(&mut self, p: &Progress) {
        let window = &p.window;
        let total = window.total();
        let secs = p.interval.duration_secs;
        let elapsed = p.elapsed.as_secs_f64();
        let per_sec = |n: f64, over: f64| if over > 0.0 { n / over } else { 0.0 };
        let bytes = total.bytes_in + total.bytes_out;
        self.bytes += bytes;
        let mean_ns = if total.count > 0 { total.latency_ns.mean() } else { 0.0 };
        self.latency_ns_sum += mean_ns * total.count as f64;
        self.replies += total.count;
        // memtier counts connection errors, not the requests they took with them.
        self.connection_errors += window.connections_lost.total();
        self.gauge("ops_sec", per_sec(total.count as f64, secs) as i64);
        self.gauge("ops_sec_avg", per_sec(p.total_ops as f64, elapsed) as i64);
        self.gauge("bytes_sec", per_sec(bytes as f64, secs) as i64);
        self.gauge("bytes_sec_avg", per_sec(self.bytes as f64, elapsed) as i64);
        self.send("latency_ms", &format!("{:.3}", mean_ns / 1e6), "ms");
        let avg_ms = if self.replies > 0 { self.latency_ns_sum / self.replies as f64 / 1e6 } else { 0.0 };
        self.send("latency_avg_ms", &format!("{avg_ms:.3}"), "ms");
        self.gauge("connections", window.active_connections as i64);
        self.send("progress_pct", &format!("{:.6}", p.done.unwrap_or(0.0) * 100.0), "g");
        if self.connection_errors > 0 {
            self.gauge("connection_errors", self.connection_errors as i64);
        }
        if total.count > 0 {
            for &pct in &self.percentiles {
                let ms = total.latency_ns.value_at_quantile(pct / 100.0) as f64 / 1e6;
                // memtier's names: latency_p50, latency_p99_9 (the percentile as %g, '.' as '_').
                let name = format!("latency_p{}", format!("{pct}").replace('.', "_"));
                self.send(&name, &format!("{ms:.6}"), "g");
            }
        }
        for r in p.roles {
            self.role(r.name, &r.window, window.ops.get(r.row).map_or(0, |op| op.count - op.errors));
        }
    }

    /// `--role`: the role's interval, as gauges beside memtier's: `role.NAME.published`,
    /// `role.NAME.delivered`, `role.NAME.duplicated`, `role.NAME.out_of_order` (this interval's
    /// counts) and `role.NAME.delivery_p50_ms`, `_p99_ms`, `_p99_9_ms` when something arrived.
    fn role(&mut self, name: &str, w: &crate::stats::RoleWindow, published: u64) {
        let at = format!("role.{}", sanitise(name, "-_"));
        self.gauge(&format!("{at}.published"), published as i64);
        for (figure, n) in w.counts() {
            self.gauge(&format!("{at}.{figure}"), n as i64);
        }
        if let Some((what, h)) = w.latency().filter(|(_, h)| !h.is_empty()) {
            for (pct, tag) in [(50.0, "p50"), (99.0, "p99"), (99.9, "p99_9")] {
                let ms = h.value_at_quantile(pct / 100.0) as f64 / 1e6;
                self.send(&format!("{at}.{what}_{tag}_ms"), &format!("{ms:.6}"), "g");
            }
        }
    }

    /// A run ended with roles: each role's figures over the run (`RoleReport::figures`) that
    /// its intervals did not send, as `role.NAME.FIGURE` gauges: a pub/sub role's `lost` and
    /// `expected_deliveries`; every figure of the other kinds (`role.NAME.consumed`,
    /// `role.NAME.end_to_end_p99_ms`, `role.NAME.stale_reads`, ...).
    pub fn roles_ended(&mut self, outcome: &crate::engine::Outcome) {
        for role in crate::report::document::roles::ended(&self.roles, outcome) {
            let at = format!("role.{}", sanitise(&role.name, "-_"));
            let window = outcome.role(&role.name).and_then(|r| r.total.as_ref());
            let sent_live = |figure: &str, value: Figure| {
                let Some(w) = window else { return false };
                match value {
                    Figure::Ms { latency, .. } => w.latency().is_some_and(|(what, _)| what == latency),
                    _ => figure == "published" || w.counts().iter().any(|(name, _)| *name == figure),
                }
            };
            for (figure, value) in role.figures() {
                if sent_live(&figure, value) {
                    continue;
                }
                match value {
                    Figure::Count(n) | Figure::Level(n) => self.gauge(&format!("{at}.{figure}"), n as i64),
                    other => self.send(&format!("{at}.{figure}"), &format!("{:.6}", other.value()), "g"),
                }
            }
        }
    }

    /// A run ended: memtier's "Benchmark Completed" event, and the rates back to zero so the
    /// graphs show the run is over.
    pub fn run_ended(&mut self, run: usize) {
        self.event("Benchmark Completed", &format!("run={}", run + 1), "memtier,end");
        for name in ["ops_sec", "ops_sec_avg", "bytes_sec", "bytes_sec_avg", "progress_pct"] {
            self.gauge(name, 0);
        }
    }

    fn gauge(&self, name: &str, value: i64) {
        self.send(name, &value.to_string(), "g");
    }

    /// One metric, one datagram; a full socket buffer drops it (StatsD is lossy by design).
    fn send(&self, name: &str, value: &str, kind: &str) {
        let packet = format!("{}{name}:{value}|{kind}", self.prefix);
        let _ = self.socket.send(packet.as_bytes());
    }

    /// A Graphite event annotation; the first failure warns once and turns events off.
    fn event(&mut self, what: &str, data: &str, tags: &str) {
        let Some(addr) = self.graphite else { return };
        let body = format!(r#"{{"what":"{what}","tags":"{tags},run:{}","data":"{data}"}}"#, self.label);
        let request = format!(
            "POST /events/ HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.host,
            addr.port(),
            body.len()
        );
        let sent = TcpStream::connect_timeout(&addr, GRAPHITE_TIMEOUT).and_then(|mut stream| {
            stream.set_write_timeout(Some(GRAPHITE_TIMEOUT))?;
            stream.write_all(request.as_bytes())
        });
        if let Err(e) = sent {
            eprintln!(
                "respbench: warning: cannot post Graphite events to {}:{} ({e}): no run annotations",
                self.host,
                addr.port()
            );
            self.graphite = None;
        }
    }
}

/// Characters other than ASCII letters, digits and `keep` become '_', as memtier does.
fn sanitise(text: &str, keep: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || keep.contains(c) { c } else { '_' }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_sanitised_like_memtiers() {
        assert_eq!(sanitise("my run/1", "_-"), "my_run_1");
        assert_eq!(sanitise("a.b c", "_-."), "a.b_c");
        let options = Options {
            host: "127.0.0.1".into(),
            port: 8125,
            prefix: "".into(),
            run_label: "x y".into(),
            graphite_port: 8080,
        };
        assert_eq!(Statsd::open(&options, &[]).unwrap().prefix, "x_y.");
    }
}
