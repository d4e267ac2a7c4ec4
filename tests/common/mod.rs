//! Test fixtures: real redis-server (or valkey-server) processes on free loopback ports, stopped
//! on drop, and helpers to run the respbench binary and ask the server what happened (via its
//! cli).

#![allow(dead_code)]

pub mod capture;
pub mod gate;
pub mod prom;
pub mod proxy;
pub mod roles;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The Redis-protocol servers the tests start: Debian's redis-server, and valkey-server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Redis,
    Valkey,
}

impl Kind {
    /// The server's program.
    pub fn server(self) -> &'static str {
        match self {
            Kind::Redis => "redis-server",
            Kind::Valkey => "valkey-server",
        }
    }

    /// The command-line client that comes with it.
    pub fn cli(self) -> &'static str {
        match self {
            Kind::Redis => "redis-cli",
            Kind::Valkey => "valkey-cli",
        }
    }
}

/// Declares, for each `fn NAME(kind: Kind)` named, one test per server: `NAME::redis` and
/// `NAME::valkey`, so that a failure names the server it failed against.
#[macro_export]
macro_rules! on_each_server {
    ($($name:ident),* $(,)?) => {$(
        mod $name {
            #[test]
            fn redis() {
                super::$name($crate::common::Kind::Redis)
            }

            #[test]
            fn valkey() {
                super::$name($crate::common::Kind::Valkey)
            }
        }
    )*};
}

pub struct Server {
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub kind: Kind,
    child: Child,
    /// The command line that started it, to start it again.
    argv: Vec<String>,
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Server {
    /// Starts `redis-server` with `extra` arguments appended to a no-persistence config.
    pub fn start(extra: &[&str]) -> Server {
        Server::start_with(Kind::Redis, &[], extra)
    }

    /// Like [`start`](Self::start), the server `kind`.
    pub fn start_as(kind: Kind, extra: &[&str]) -> Server {
        Server::start_with(kind, &[], extra)
    }

    /// Like [`start`](Self::start), pinned to one core with taskset.
    pub fn start_pinned(core: &str, extra: &[&str]) -> Server {
        Server::start_with(Kind::Redis, &["taskset", "-c", core], extra)
    }

    fn start_with(kind: Kind, wrapper: &[&str], extra: &[&str]) -> Server {
        // Another test may take the port between our probe and the bind: retry a few times.
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let socket = dir.path().join("redis.sock");
            let mut args: Vec<String> = [
                "--port",
                &port.to_string(),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--unixsocket",
                socket.to_str().unwrap(),
                "--dir",
                dir.path().to_str().unwrap(),
                "--logfile",
                "redis.log",
            ]
            .iter()
            .map(|s| s.to_string())
            .collect();
            args.extend(extra.iter().map(|s| s.to_string()));
            let mut argv: Vec<String> = wrapper.iter().map(|s| s.to_string()).collect();
            argv.push(kind.server().into());
            argv.extend(args);
            let child = spawn(&argv);
            let mut server = Server { port, dir, kind, child, argv };
            if server.wait_ready() {
                return server;
            }
        }
        panic!("{} did not start", kind.server());
    }

    fn wait_ready(&mut self) -> bool {
        trait ReadWrite: Read + Write {}
        impl<T: Read + Write> ReadWrite for T {}
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            // PONG, or NOAUTH from a server with a password: either way it is serving. The
            // socket in this server's own directory answers only if this server bound its port
            // too (another test's server may hold the port after a probe race).
            let answers = |mut s: Box<dyn ReadWrite>| {
                let mut reply = [0u8; 16];
                s.write_all(b"PING\r\n").is_ok() && s.read(&mut reply).is_ok_and(|n| n > 0)
            };
            let tcp = TcpStream::connect(("127.0.0.1", self.port)).is_ok_and(|s| answers(Box::new(s)));
            if tcp && std::os::unix::net::UnixStream::connect(self.socket()).is_ok_and(|s| answers(Box::new(s))) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    /// SIGKILLs the server (no shutdown, no goodbye to clients).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGKILLs the server while requests wait unread in its sockets: it is stopped first, and
    /// killed once a client's request has reached it. A server killed idle, every reply sent,
    /// would leave its clients no request to lose.
    pub fn kill_with_requests_unread(&mut self) {
        // SAFETY: kill(2) on the server's own process, which this value owns.
        unsafe { libc::kill(self.pid() as i32, libc::SIGSTOP) };
        wait_for(&format!("a request unread on port {}", self.port), Duration::from_secs(60), || self.holds_unread());
        self.kill();
    }

    /// Whether bytes wait unread in a socket the server accepted (/proc/net/tcp: the receive
    /// queue of a connection whose local port is the server's).
    fn holds_unread(&self) -> bool {
        let tcp = std::fs::read_to_string("/proc/net/tcp").unwrap();
        tcp.lines().skip(1).any(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local = f[1].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            let queued = f[4].split(':').nth(1).and_then(|q| u64::from_str_radix(q, 16).ok());
            local == Some(self.port) && f[3] == "01" && queued > Some(0)
        })
    }

    /// Starts the server again with the same command line, on the same port.
    pub fn start_again(&mut self) {
        for _ in 0..50 {
            self.child = spawn(&self.argv);
            if self.wait_ready() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{} did not start again on port {}", self.kind.server(), self.port);
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
    }

    pub fn port_arg(&self) -> String {
        self.port.to_string()
    }

    /// Runs the server's cli (redis-cli, valkey-cli) against it; returns its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new(self.kind.cli()).args(["-p", &self.port_arg()]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Like [`cli`](Self::cli), authenticated.
    pub fn cli_auth(&self, password: &str, args: &[&str]) -> String {
        let out = Command::new(self.kind.cli())
            .args(["-p", &self.port_arg(), "--no-auth-warning", "-a", password])
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A field of INFO, as a number.
    pub fn info_u64(&self, section: &str, field: &str) -> u64 {
        let info = self.cli(&["INFO", section]);
        info.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")))
            .unwrap_or_else(|| panic!("INFO {section} has no {field}"))
            .trim()
            .parse()
            .unwrap()
    }

    /// Calls of a command from INFO commandstats.
    pub fn calls(&self, command: &str) -> u64 {
        let info = self.cli(&["INFO", "commandstats"]);
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    }

    pub fn dbsize(&self) -> u64 {
        self.cli(&["DBSIZE"]).parse().unwrap()
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

fn spawn(argv: &[String]) -> Child {
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("{} is installed (make deps installs it): {e}", argv[0]))
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The commands the server's MONITOR stream shows while `args` run, as (server timestamp in
/// seconds, line), waiting until `n` GETs or SETs have been seen or the stream goes quiet.
pub fn monitored(server: &Server, args: &[&str], n: usize) -> Vec<(f64, String)> {
    use std::io::{BufRead, BufReader};
    let mut monitor =
        Command::new("redis-cli").args(["-p", &server.port_arg(), "MONITOR"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(monitor.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "OK");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if line.contains("\"GET\"") || line.contains("\"SET\"") {
                let stamp: f64 = line.split(' ').next().unwrap().parse().unwrap();
                let _ = tx.send((stamp, line));
            }
        }
    });
    run_ok(server, args);
    // MONITOR trails the replies a little: wait for the stream to catch up.
    let mut seen = Vec::new();
    while seen.len() < n {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(item) => seen.push(item),
            Err(_) => break,
        }
    }
    let _ = monitor.kill();
    let _ = monitor.wait();
    seen
}

/// The respbench binary under test.
pub fn respbench() -> Command {
    Command::new(env!("CARGO_BIN_EXE_respbench"))
}

/// Runs respbench against `server` with `args`; returns the output.
pub fn run(server: &Server, args: &[&str]) -> Output {
    respbench().args(["-p", &server.port_arg()]).args(args).output().unwrap()
}

/// Like [`run`], asserting success, with stderr shown on failure.
pub fn run_ok(server: &Server, args: &[&str]) -> Output {
    let out = run(server, args);
    assert!(out.status.success(), "respbench {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    out
}

/// A scenario file in `dir`: 500 keys, SET:GET 1:1 over 2 connections on one thread, a fill
/// and then a run phase of each request count in `runs`.
pub fn fill_then_run_scenario(dir: &Path, runs: &[&str]) -> std::path::PathBuf {
    let mut toml = String::from(
        "[keyspaces.k]\nmax = 499\n[mixes.m]\nset = 1\nget = 1\nkeyspace = \"k\"\n\
         [defaults]\nmix = \"m\"\nconnections = 2\nthreads = 1\n[[phase]]\nkind = \"fill\"\n",
    );
    for requests in runs {
        toml += &format!("[[phase]]\nkind = \"run\"\nrequests = \"{requests}\"\n");
    }
    let file = dir.join("s.toml");
    std::fs::write(&file, toml).unwrap();
    file
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Polls `check` until it holds. The timeout only bounds a failure (then the test panics
/// naming `what`): a test waits for the event it needs, never for a length of time.
pub fn wait_for(what: &str, timeout: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !check() {
        assert!(Instant::now() < deadline, "gave up after {timeout:?} waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Holds the kernel's receive timestamping on, once it stamps packets: the kernel switches it
/// on by a work queue a while after the first socket asks (seconds on a loaded machine), which
/// the run's own keeper waits for only so long. A test that counts the replies a run
/// decomposed holds this first, so it waits for the event rather than racing it.
pub fn stamping_on() -> respbench::net::driver::stamp::Keeper {
    let (keeper, stamped) = respbench::net::driver::stamp::Keeper::start(Duration::from_secs(60)).unwrap();
    assert!(stamped, "the kernel stamped no packet in 60 s");
    keeper
}

impl Server {
    /// Waits until the server has executed at least `n` calls of `command`.
    pub fn wait_calls(&self, command: &str, n: u64) {
        wait_for(&format!("{n} {command} calls on port {}", self.port), Duration::from_secs(60), || {
            self.calls(command) >= n
        });
    }
}

/// A cluster of `kind` servers on loopback: `primaries` primaries with `replicas` replicas each
/// (each node started with cluster mode on and `extra`), joined by the kind's cli
/// (`--cluster create`), returned once every node says the cluster is ok and every replica is in
/// sync with its primary.
pub fn cluster(kind: Kind, primaries: usize, replicas: usize, extra: &[&str]) -> Vec<Server> {
    let mut args = vec!["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"];
    args.extend_from_slice(extra);
    let nodes: Vec<Server> = (0..primaries * (1 + replicas)).map(|_| Server::start_as(kind, &args)).collect();
    let addrs: Vec<String> = nodes.iter().map(|n| format!("127.0.0.1:{}", n.port)).collect();
    let out = Command::new(kind.cli())
        .args(["--cluster", "create"])
        .args(&addrs)
        .args(["--cluster-replicas", &replicas.to_string(), "--cluster-yes"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "cluster create: {}", String::from_utf8_lossy(&out.stdout));
    // Every node's map lists every node online: respbench reads the map from CLUSTER SHARDS
    // and leaves out a replica whose health is not yet `online` (a primary learns a replica's
    // replication offset from its pings, after the sync).
    let all_online = |shards: &str| {
        let lines: Vec<&str> = shards.lines().collect();
        let health: Vec<&str> = lines.windows(2).filter(|w| w[0] == "health").map(|w| w[1]).collect();
        health.len() == nodes.len() && health.iter().all(|&h| h == "online")
    };
    let settled = || {
        nodes.iter().all(|n| n.cli(&["CLUSTER", "INFO"]).contains("cluster_state:ok"))
            && nodes.iter().all(|n| {
                let info = n.cli(&["INFO", "replication"]);
                info.contains("role:master") || info.contains("master_link_status:up")
            })
            && nodes.iter().all(|n| all_online(&n.cli(&["CLUSTER", "SHARDS"])))
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !settled() {
        assert!(Instant::now() < deadline, "the {} cluster did not settle", kind.server());
        std::thread::sleep(Duration::from_millis(50));
    }
    nodes
}

/// A respbench run in the background whose stderr is read line by line as it comes, so that
/// a test can act when the run reaches a point (`--progress` prints one line per interval).
pub struct Watched {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: Vec<String>,
    /// Intervals the run has reported so far.
    intervals: usize,
    /// Standard output read before the end (`stdout_line`).
    stdout_read: Vec<u8>,
}

/// A `--progress` line: one completed interval.
fn is_interval(line: &str) -> bool {
    line.contains("ops/s now")
}

impl Watched {
    /// Starts `command` with stdout and stderr piped.
    pub fn spawn(mut command: Command) -> Watched {
        use std::io::{BufRead, BufReader};
        let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Watched { child, lines, stderr: Vec::new(), intervals: 0, stdout_read: Vec::new() }
    }

    /// Waits until `n` more stderr lines have satisfied `wanted`; panics if the run ends first
    /// or after a minute.
    pub fn wait_lines(&mut self, n: usize, wanted: impl Fn(&str) -> bool) {
        let mut seen = 0;
        while seen < n {
            match self.lines.recv_timeout(Duration::from_secs(60)) {
                Ok(line) => seen += usize::from(self.keep(line, &wanted)),
                Err(_) => panic!("the run ended or stalled before {n} such lines: {}", self.stderr.join("\n")),
            }
        }
    }

    fn keep(&mut self, line: String, wanted: impl Fn(&str) -> bool) -> bool {
        let hit = wanted(&line);
        self.intervals += usize::from(is_interval(&line));
        self.stderr.push(line);
        hit
    }

    /// Waits until the run has reported `n` completed intervals since it started (it needs
    /// `--progress`).
    pub fn wait_intervals(&mut self, n: usize) {
        let more = n.saturating_sub(self.intervals);
        self.wait_lines(more, is_interval);
    }

    /// Waits until `n` whole intervals have passed after this call: lines already on their way
    /// tell of earlier intervals, and the next one ends the interval under way.
    pub fn wait_fresh_intervals(&mut self, n: usize) {
        while let Ok(line) = self.lines.try_recv() {
            self.keep(line, |_| false);
        }
        self.wait_lines(n + 1, is_interval);
    }

    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Reads standard output up to the next line that satisfies `wanted` (a byte at a time, so
    /// that nothing after it is taken from `finish`); panics if the output ends first.
    pub fn stdout_line(&mut self, wanted: impl Fn(&str) -> bool) -> String {
        let out = self.child.stdout.as_mut().unwrap();
        let mut line = Vec::new();
        loop {
            let mut byte = [0u8];
            assert_eq!(out.read(&mut byte).unwrap(), 1, "standard output ended: {:?}", String::from_utf8_lossy(&line));
            self.stdout_read.push(byte[0]);
            if byte[0] != b'\n' {
                line.push(byte[0]);
                continue;
            }
            let text = String::from_utf8_lossy(&line).into_owned();
            if wanted(&text) {
                return text;
            }
            line.clear();
        }
    }

    /// The stderr lines read so far.
    pub fn lines(&self) -> &[String] {
        &self.stderr
    }

    /// Sends `signal` to the run.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) with a pid we spawned and have not reaped.
        unsafe { libc::kill(self.child.id() as i32, signal) };
    }

    /// Waits for the run to end; its stderr is every line read, before and after.
    pub fn finish(mut self) -> Output {
        let stdout = {
            let mut buf = std::mem::take(&mut self.stdout_read);
            self.child.stdout.take().unwrap().read_to_end(&mut buf).unwrap();
            buf
        };
        let status = self.child.wait().unwrap();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(10)) {
            self.stderr.push(line);
        }
        let mut stderr = self.stderr.join("\n").into_bytes();
        stderr.push(b'\n');
        Output { status, stdout, stderr }
    }
}

/// A memcached on a free loopback port, stopped on drop. Its `stats` are read over the text
/// protocol, or over the binary one after SASL PLAIN for a server started with SASL.
pub struct Memcached {
    pub port: u16,
    pub dir: tempfile::TempDir,
    child: Child,
    /// The SASL user and password it was started with.
    sasl: Option<(String, String)>,
}

impl Memcached {
    /// Starts memcached with `extra` arguments (`-m 8`, ...).
    pub fn start(extra: &[&str]) -> Memcached {
        Memcached::start_with(extra, None, plain)
    }

    /// Starts memcached with SASL (-S), one user in a sasldb written with saslpasswd2.
    pub fn start_sasl(user: &str, password: &str) -> Memcached {
        Memcached::start_with(&["-S"], Some((user, password)), plain)
    }

    /// Starts memcached with `listen(port)`'s listener options (a TLS port beside the plain
    /// one, `port`, that the helper reads stats on).
    pub fn start_listening(extra: &[&str], listen: impl Fn(u16) -> Vec<String>) -> Memcached {
        Memcached::start_with(extra, None, listen)
    }

    fn start_with(extra: &[&str], sasl: Option<(&str, &str)>, listen: impl Fn(u16) -> Vec<String>) -> Memcached {
        for _ in 0..5 {
            let dir = tempfile::tempdir().unwrap();
            let port = free_port();
            let mut cmd = Command::new("memcached");
            cmd.args(["-u", "root", "-U", "0"]).args(listen(port)).args(extra);
            if let Some((user, password)) = sasl {
                let db = dir.path().join("sasldb");
                let mut passwd = Command::new("saslpasswd2")
                    .args(["-p", "-a", "memcached", "-c", "-f", db.to_str().unwrap(), user])
                    .stdin(Stdio::piped())
                    .spawn()
                    .expect("saslpasswd2 is installed (make deps installs sasl2-bin)");
                passwd.stdin.take().unwrap().write_all(password.as_bytes()).unwrap();
                assert!(passwd.wait().unwrap().success());
                let conf = format!("mech_list: plain\nsasldb_path: {}\n", db.display());
                std::fs::write(dir.path().join("memcached.conf"), conf).unwrap();
                cmd.env("SASL_CONF_PATH", dir.path());
            }
            let child = cmd
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("memcached is installed (make deps installs it)");
            let sasl = sasl.map(|(u, p)| (u.to_string(), p.to_string()));
            let mut server = Memcached { port, dir, child, sasl };
            if server.wait_ready() {
                return server;
            }
        }
        panic!("memcached did not start");
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    pub fn port_arg(&self) -> String {
        self.port.to_string()
    }

    /// Sends text-protocol `request` on a fresh connection and reads until `END\r\n`.
    pub fn text(&self, request: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut reply = Vec::new();
        let mut chunk = [0u8; 65536];
        while !reply.ends_with(b"END\r\n") {
            let n = s.read(&mut chunk).unwrap();
            assert!(n > 0, "memcached closed the connection after {request:?}");
            reply.extend_from_slice(&chunk[..n]);
        }
        String::from_utf8_lossy(&reply).into_owned()
    }

    /// Every `stats` figure, by name.
    pub fn stats(&self) -> std::collections::HashMap<String, String> {
        let pairs: Vec<(String, String)> = match &self.sasl {
            None => self
                .text("stats\r\n")
                .lines()
                .filter_map(|l| l.strip_prefix("STAT "))
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            Some((user, password)) => binary_stats(self.port, user, password),
        };
        pairs.into_iter().collect()
    }

    /// One `stats` figure, as a number.
    pub fn stat(&self, name: &str) -> u64 {
        let stats = self.stats();
        stats.get(name).unwrap_or_else(|| panic!("memcached's stats have no {name}")).parse().unwrap()
    }

    /// The keys it holds (`lru_crawler metadump all`), sorted.
    pub fn keys(&self) -> Vec<String> {
        let dump = self.text("lru_crawler metadump all\r\n");
        let mut keys: Vec<String> = dump
            .lines()
            .filter_map(|l| l.strip_prefix("key="))
            .map(|l| l.split(' ').next().unwrap().to_string())
            .collect();
        keys.sort();
        keys
    }
}

/// memcached's listener: loopback, `port`.
fn plain(port: u16) -> Vec<String> {
    vec!["-l".into(), "127.0.0.1".into(), "-p".into(), port.to_string()]
}

/// A binary request packet.
fn binary_packet(opcode: u8, key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut p = vec![0x80, opcode];
    p.extend_from_slice(&(key.len() as u16).to_be_bytes());
    p.extend_from_slice(&[0; 4]);
    p.extend_from_slice(&((key.len() + value.len()) as u32).to_be_bytes());
    p.extend_from_slice(&[0; 12]);
    p.extend_from_slice(key);
    p.extend_from_slice(value);
    p
}

/// Reads one binary reply packet: (opcode, status, key, value).
fn binary_reply(s: &mut TcpStream) -> (u8, u16, Vec<u8>, Vec<u8>) {
    let mut h = [0u8; 24];
    s.read_exact(&mut h).unwrap();
    let keylen = u16::from_be_bytes([h[2], h[3]]) as usize;
    let body = u32::from_be_bytes([h[8], h[9], h[10], h[11]]) as usize;
    let mut b = vec![0u8; body];
    s.read_exact(&mut b).unwrap();
    let extlen = h[4] as usize;
    (h[1], u16::from_be_bytes([h[6], h[7]]), b[extlen..extlen + keylen].to_vec(), b[extlen + keylen..].to_vec())
}

/// `stats` over the binary protocol, after SASL PLAIN.
fn binary_stats(port: u16, user: &str, password: &str) -> Vec<(String, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let plain = [b"\0", user.as_bytes(), b"\0", password.as_bytes()].concat();
    s.write_all(&binary_packet(0x21, b"PLAIN", &plain)).unwrap();
    assert_eq!(binary_reply(&mut s).1, 0, "SASL login for stats");
    s.write_all(&binary_packet(0x10, b"", b"")).unwrap();
    let mut pairs = Vec::new();
    loop {
        let (_, _, key, value) = binary_reply(&mut s);
        if key.is_empty() {
            return pairs;
        }
        pairs.push((String::from_utf8_lossy(&key).into_owned(), String::from_utf8_lossy(&value).into_owned()));
    }
}

impl Drop for Memcached {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
