//! Debian's Prometheus and Pushgateway as test fixtures: started on a free loopback port with
//! their state in a temporary directory, killed on drop; and what a Pushgateway holds.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::{free_port, wait_for};

/// A Prometheus or Pushgateway process on a free loopback port, killed on drop.
pub struct Daemon {
    child: Child,
    pub addr: String,
    _dir: tempfile::TempDir,
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `program`'s path on `PATH`, or `None` after printing why the test is skipped.
pub fn installed(program: &str) -> Option<String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file());
    if found.is_none() {
        eprintln!("skipped: {program} is not installed (scripts/install-deps.sh installs Debian's)");
    }
    found.map(|p| p.display().to_string())
}

impl Daemon {
    /// Starts `program` with `args(dir, addr)` and waits until its `/-/ready` answers 200.
    pub fn start(program: &str, args: impl Fn(&Path, &str) -> Vec<String>) -> Daemon {
        // Another test may take the port between the probe and the bind: try again then.
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let addr = format!("127.0.0.1:{}", free_port());
            let log = std::fs::File::create(dir.path().join("log")).unwrap();
            let child =
                Command::new(program).args(args(dir.path(), &addr)).stdout(Stdio::null()).stderr(log).spawn().unwrap();
            let mut d = Daemon { child, addr, _dir: dir };
            let mut ended = false;
            wait_for(&format!("{program} ready on {}", d.addr), Duration::from_secs(120), || {
                ended = d.child.try_wait().unwrap().is_some();
                ended || get(&d.addr, "/-/ready").is_some_and(|(status, _)| status == 200)
            });
            if !ended {
                return d;
            }
            let log = std::fs::read_to_string(d._dir.path().join("log")).unwrap_or_default();
            eprintln!("{program} ended at its start, trying another port: {log}");
        }
        panic!("{program} would not start");
    }

    /// A Prometheus scraping `target` (`HOST:PORT`) every second as job `job`.
    pub fn scraping(program: &str, job: &str, target: &str) -> Daemon {
        let config = format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: {job}\n    \
             static_configs:\n      - targets: ['{target}']\n"
        );
        Daemon::start(program, |dir, addr| {
            let file = dir.join("prometheus.yml");
            std::fs::write(&file, &config).unwrap();
            vec![
                format!("--config.file={}", file.display()),
                format!("--storage.tsdb.path={}", dir.join("data").display()),
                format!("--web.listen-address={addr}"),
            ]
        })
    }

    /// Prometheus's answer to the instant query `promql`, as JSON.
    pub fn query(&self, promql: &str) -> serde_json::Value {
        serde_json::from_str(&self.get(&format!("/api/v1/query?query={}", percent_encoded(promql)))).unwrap()
    }

    pub fn get(&self, path: &str) -> String {
        let (status, body) = get(&self.addr, path).unwrap_or_else(|| panic!("GET {path}: no answer"));
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }
}

/// `s` with every byte but letters, digits and `-._~` percent-encoded, for a URL's query.
fn percent_encoded(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// GET `path` over HTTP/1.1: the status and the body, or `None` when nothing answers.
pub fn get(addr: &str, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(addr).ok()?;
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").ok()?;
    let mut reply = String::new();
    s.read_to_string(&mut reply).ok()?;
    let (head, body) = reply.split_once("\r\n\r\n")?;
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(body) } else { body.into() };
    Some((status, body))
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        body = rest[n..].trim_start_matches("\r\n");
    }
    out
}

/// Starts Debian's Pushgateway (nothing persisted), or `None` when it is missing.
pub fn pushgateway() -> Option<Daemon> {
    let program = installed("prometheus-pushgateway")?;
    Some(Daemon::start(&program, |_, addr| vec![format!("--web.listen-address={addr}")]))
}

/// The gateway's `respbench_requests_total` samples of the group whose labels include
/// `group`, by command.
pub fn pushed_requests(gateway: &Daemon, group: &[&str]) -> Vec<(String, f64)> {
    let text = gateway.get("/metrics");
    let mut out = Vec::new();
    for line in text.lines().filter(|l| l.starts_with("respbench_requests_total{")) {
        let (labels, value) = line.rsplit_once(' ').unwrap();
        if group.iter().all(|g| labels.contains(g)) {
            let command = labels.split("command=\"").nth(1).unwrap().split('"').next().unwrap();
            out.push((command.to_string(), value.parse().unwrap()));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}
