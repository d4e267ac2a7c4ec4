//! `--metrics-push URL`: the live metrics pushed to a Prometheus Pushgateway, for batch jobs
//! (Slurm, Kubernetes Jobs) that no Prometheus can scrape in time. The same values the endpoint
//! serves (`metrics::Live`), rendered by its own encoder and converted to the Prometheus text
//! format the Pushgateway reads, are PUT after every interval and once at the end. A thread of
//! its own, at the lowest priority, does the rendering and the HTTP; the run only bumps a
//! counter: newer values replace any push still waiting (one slot, never a queue), each push is
//! bounded by timeouts, and a failure is a warning said once, never the run's failure.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use base64::Engine as _;

use super::metrics::{Follower, Live};

message_error!(
    /// A push target that cannot be read or reached.
    PushError from super::metrics::ServeError, super::shape::ShapeError
);

/// The job name when `--metrics-push-job` is not given.
pub const DEFAULT_JOB: &str = "respbench";
/// Bounds of one push: connecting, then writing the body and reading the reply.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const IO_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the end of a run waits for its final push (one push may be under way before it).
const FINAL_WAIT: Duration = Duration::from_secs(15);

/// A Pushgateway's address, as `--metrics-push` gives it: `http://HOST[:PORT][/PREFIX]`.
#[derive(Debug, Clone, PartialEq)]
pub struct PushUrl {
    host: String,
    port: u16,
    /// A route prefix (the gateway behind a path), without a trailing `/`.
    prefix: String,
    /// As the user wrote it, for messages.
    shown: String,
}

/// `--metrics-push URL`'s parser.
pub fn url(s: &str) -> Result<PushUrl, PushError> {
    let bad = |why: &str| format!("expected a Pushgateway URL such as http://pushgateway:9091, got '{s}': {why}");
    let rest = match s.split_once("://") {
        Some(("http", rest)) => rest,
        Some((scheme, _)) => return Err(bad(&format!("only http:// is supported, not {scheme}://")).into()),
        None => return Err(bad("no http://").into()),
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => {
            (host, port.parse::<u16>().map_err(|_| bad(&format!("'{port}' is not a port")))?)
        }
        _ => (authority, 80),
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    if host.is_empty() {
        return Err(bad("no host").into());
    }
    if path.contains(['?', '#']) {
        return Err(bad("a query or fragment is not a route prefix").into());
    }
    Ok(PushUrl { host: host.to_string(), port, prefix: path.trim_end_matches('/').to_string(), shown: s.to_string() })
}

/// A grouping label, `--metrics-push-label NAME=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct PushLabel {
    pub name: String,
    pub value: String,
}

/// `--metrics-push-label`'s parser: a Prometheus label name other than `job`, `=`, any value.
pub fn label(s: &str) -> Result<PushLabel, PushError> {
    let (name, value) = super::shape::label_pair(s, "instance=node1")?;
    if name == "job" {
        return Err("the job label is --metrics-push-job's, not a --metrics-push-label".into());
    }
    Ok(PushLabel { name: name.to_string(), value: value.to_string() })
}

/// Where the pushes go: the gateway and the group (job and grouping labels) they replace.
#[derive(Debug, Clone)]
pub struct PushTarget {
    url: PushUrl,
    /// `/PREFIX/metrics/job/JOB[/NAME/VALUE...]`, each value encoded.
    path: String,
}

impl PushTarget {
    pub fn new(url: PushUrl, job: Option<&str>, labels: &[PushLabel]) -> PushTarget {
        let mut path = format!("{}/metrics", url.prefix);
        let job = job.unwrap_or(DEFAULT_JOB);
        for (name, value) in std::iter::once(("job", job)).chain(labels.iter().map(|l| (&*l.name, &*l.value))) {
            segment(&mut path, name, value);
        }
        PushTarget { url, path }
    }

    /// The URL the pushes go to.
    pub fn shown(&self) -> String {
        format!("http://{}:{}{}", self.url.host, self.url.port, self.path)
    }
}

/// Appends `/NAME/VALUE` to a grouping key: a value with a `/` (or empty) goes in base64url
/// (`NAME@base64/...`, the gateway's own escape), any other byte outside the unreserved set
/// percent-encoded.
fn segment(path: &mut String, name: &str, value: &str) {
    if value.is_empty() || value.contains('/') {
        let encoded = base64::engine::general_purpose::URL_SAFE.encode(value);
        let encoded = if encoded.is_empty() { "=".to_string() } else { encoded };
        let _ = write!(path, "/{name}@base64/{encoded}");
        return;
    }
    let _ = write!(path, "/{name}/");
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            path.push(b as char);
        } else {
            let _ = write!(path, "%{b:02X}");
        }
    }
}

/// The live metrics a run asks for: served at `listen`, pushed to `push`, both, or none.
pub fn open(
    listen: Option<SocketAddr>,
    push: Option<PushTarget>,
    shape: super::shape::Shape,
) -> Result<Option<Arc<Live>>, PushError> {
    let live = match (listen, &push) {
        (None, None) => return Ok(None),
        (Some(addr), _) => Live::serve(addr, shape)?,
        (None, Some(_)) => Live::unserved(shape),
    };
    if let Some(target) = push {
        eprintln!("respbench: metrics pushed to {} each interval", target.shown());
        live.followed_by(Box::new(Pusher::start(target, Arc::downgrade(&live))?));
    }
    Ok(Some(live))
}

/// The push thread's handle, held by the `Live` it pushes.
pub struct Pusher {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Pusher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pusher")
    }
}

struct Shared {
    slot: Mutex<Slot>,
    changed: Condvar,
}

/// Pushes asked for (`wanted`) and pushes whose values cover them (`done`): the thread renders
/// the values when it takes the slot, so one push answers every ask before it.
#[derive(Default)]
struct Slot {
    wanted: u64,
    done: u64,
    /// Whether the last push got there.
    last_ok: bool,
}

impl Pusher {
    /// Starts the thread that pushes `live`'s values to `target`; it ends with `live`.
    pub fn start(target: PushTarget, live: Weak<Live>) -> Result<Pusher, PushError> {
        let shared = Arc::new(Shared { slot: Mutex::new(Slot::default()), changed: Condvar::new() });
        let theirs = Arc::clone(&shared);
        std::thread::Builder::new()
            .name("metrics-push".into())
            .spawn(move || push_loop(&target, &live, &theirs))
            .map_err(|e| format!("--metrics-push: cannot start its thread: {e}"))?;
        Ok(Pusher { shared })
    }

    fn ask(&self) -> u64 {
        let mut slot = self.shared.lock();
        slot.wanted += 1;
        self.shared.changed.notify_all();
        slot.wanted
    }
}

impl Follower for Pusher {
    /// New values: push them when the thread is free (never waits for it).
    fn updated(&self) {
        self.ask();
    }

    /// The final values: pushes them and waits until they are pushed or a push could not be,
    /// at most [`FINAL_WAIT`]; whether they got there.
    fn finished(&self) -> bool {
        let asked = self.ask();
        let deadline = Instant::now() + FINAL_WAIT;
        let mut slot = self.shared.lock();
        while slot.done < asked {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                eprintln!("respbench: warning: --metrics-push: the final values were not pushed within {FINAL_WAIT:?}");
                return false;
            }
            slot = self.shared.changed.wait_timeout(slot, left).map_or_else(|e| e.into_inner().0, |(g, _)| g);
        }
        slot.last_ok
    }
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The push thread: waits for an ask, renders the values then, pushes them; the first failure
/// is said once.
fn push_loop(target: &PushTarget, live: &Weak<Live>, shared: &Shared) {
    crate::engine::yield_to_the_load();
    let mut warned = false;
    loop {
        let taken = {
            let mut slot = shared.lock();
            while slot.done == slot.wanted {
                slot = shared.changed.wait(slot).unwrap_or_else(|e| e.into_inner());
            }
            slot.wanted
        };
        let Some(text) = live.upgrade().map(|l| l.text()) else { return };
        let sent = put(target, &prometheus_text(&text));
        if let Err(e) = &sent
            && !warned
        {
            warned = true;
            eprintln!(
                "respbench: warning: --metrics-push {}: {e}; the run goes on (later failures are not said)",
                target.shown()
            );
        }
        let mut slot = shared.lock();
        slot.done = taken;
        slot.last_ok = sent.is_ok();
        shared.changed.notify_all();
    }
}

/// One HTTP/1.1 PUT of `body` (replacing the group's metrics), within the timeouts.
fn put(target: &PushTarget, body: &str) -> Result<(), PushError> {
    let host = &target.url.host;
    let addrs =
        (host.as_str(), target.url.port).to_socket_addrs().map_err(|e| format!("cannot resolve {host}: {e}"))?;
    let mut last = format!("{host} has no address");
    let mut stream = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(e) => last = format!("cannot connect to {addr}: {e}"),
        }
    }
    let mut stream = stream.ok_or(last)?;
    stream.set_write_timeout(Some(IO_TIMEOUT)).and_then(|()| stream.set_read_timeout(Some(IO_TIMEOUT))).ok();
    let authority = if host.contains(':') { format!("[{host}]") } else { host.clone() };
    let head = format!(
        "PUT {} HTTP/1.1\r\nHost: {authority}:{}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        target.path,
        target.url.port,
        body.len()
    );
    stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.write_all(body.as_bytes()))
        .map_err(|e| format!("sending: {e}"))?;
    // The status line and a little of the body (the gateway says why it refused), no more.
    let mut reply = Vec::new();
    let read = stream.take(4096).read_to_end(&mut reply);
    let reply = String::from_utf8_lossy(&reply);
    let status = reply.lines().next().unwrap_or("");
    match status.split_whitespace().nth(1) {
        Some(code) if code.starts_with('2') => Ok(()),
        Some(_) => {
            let why = reply.split_once("\r\n\r\n").map_or("", |(_, b)| b.trim());
            Err(format!("the gateway answered {status}{}{why}", if why.is_empty() { "" } else { ": " }).into())
        }
        None => Err(format!("no HTTP reply{}", read.err().map(|e| format!(" ({e})")).unwrap_or_default()).into()),
    }
}

/// The endpoint's OpenMetrics text as the Prometheus text format (0.0.4) the Pushgateway
/// parses: a counter family is named with its `_total` as its samples are, and the `# UNIT`
/// and `# EOF` lines, which that format lacks, go.
pub fn prometheus_text(openmetrics: &str) -> String {
    let counters: Vec<&str> =
        openmetrics.lines().filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter")).collect();
    let mut out = String::with_capacity(openmetrics.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let meta = ["# HELP ", "# TYPE "].into_iter().find_map(|p| Some((p, line.strip_prefix(p)?)));
        match meta {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                let suffix = if counters.contains(&name) { "_total" } else { "" };
                let _ = writeln!(out, "{prefix}{name}{suffix} {tail}");
            }
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_labels_are_checked() {
        let u = url("http://gw.example:9091/prefix/").unwrap();
        assert_eq!((u.host.as_str(), u.port, u.prefix.as_str()), ("gw.example", 9091, "/prefix"));
        assert_eq!(url("http://[::1]:9091").unwrap().host, "::1");
        assert_eq!(url("http://gw").unwrap().port, 80);
        assert!(url("https://gw:9091").unwrap_err().contains("only http://"));
        assert!(url("gw:9091").unwrap_err().contains("no http://"));
        assert!(url("http://gw:x").unwrap_err().contains("'x' is not a port"));
        assert!(label("job=x").is_err());
        assert!(label("1a=x").is_err());
        assert!(label("novalue").is_err());
        assert_eq!(label("instance=a=b").unwrap().value, "a=b");
    }

    #[test]
    fn the_group_is_encoded_as_the_gateway_reads_it() {
        let labels = [label("instance=node 1").unwrap(), label("path=/a/b").unwrap(), label("empty=").unwrap()];
        let t = PushTarget::new(url("http://gw:9091").unwrap(), None, &labels);
        assert_eq!(t.path, "/metrics/job/respbench/instance/node%201/path@base64/L2EvYg==/empty@base64/=");
    }

    #[test]
    fn counters_take_their_total_name() {
        let om = "# HELP respbench_requests Replies.\n# TYPE respbench_requests counter\n\
                  respbench_requests_total{command=\"GET\"} 5\n# TYPE respbench_rate gauge\nrespbench_rate 1.0\n\
                  # UNIT respbench_x seconds\n# EOF\n";
        assert_eq!(
            prometheus_text(om),
            "# HELP respbench_requests_total Replies.\n# TYPE respbench_requests_total counter\n\
             respbench_requests_total{command=\"GET\"} 5\n# TYPE respbench_rate gauge\nrespbench_rate 1.0\n"
        );
    }
}
