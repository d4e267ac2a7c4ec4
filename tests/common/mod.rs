//! Test fixtures: real redis-server processes on free loopback ports, stopped on drop, and
//! helpers to run the respbench binary and ask the server what happened (via redis-cli).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    pub port: u16,
    pub dir: tempfile::TempDir,
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
        Server::start_with(&[], extra)
    }

    /// Like [`start`](Self::start), pinned to one core with taskset.
    pub fn start_pinned(core: &str, extra: &[&str]) -> Server {
        Server::start_with(&["taskset", "-c", core], extra)
    }

    fn start_with(wrapper: &[&str], extra: &[&str]) -> Server {
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
            argv.push("redis-server".into());
            argv.extend(args);
            let child = spawn(&argv);
            let mut server = Server { port, dir, child, argv };
            if server.wait_ready() {
                return server;
            }
        }
        panic!("redis-server did not start");
    }

    fn wait_ready(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return false;
            }
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", self.port)) {
                // PONG, or NOAUTH from a server with a password: either way it is serving.
                let mut reply = [0u8; 16];
                if s.write_all(b"PING\r\n").is_ok() && s.read(&mut reply).is_ok_and(|n| n > 0) {
                    return true;
                }
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

    /// Starts the server again with the same command line, on the same port.
    pub fn start_again(&mut self) {
        for _ in 0..50 {
            self.child = spawn(&self.argv);
            if self.wait_ready() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("redis-server did not start again on port {}", self.port);
    }

    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("redis.sock")
    }

    pub fn port_arg(&self) -> String {
        self.port.to_string()
    }

    /// Runs redis-cli against this server; returns its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let out = Command::new("redis-cli").args(["-p", &self.port_arg()]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// Like [`cli`](Self::cli), authenticated.
    pub fn cli_auth(&self, password: &str, args: &[&str]) -> String {
        let out = Command::new("redis-cli")
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
        .expect("redis-server is installed (make test installs it)")
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

impl Server {
    /// Waits until the server has executed at least `n` calls of `command`.
    pub fn wait_calls(&self, command: &str, n: u64) {
        wait_for(&format!("{n} {command} calls on port {}", self.port), Duration::from_secs(60), || {
            self.calls(command) >= n
        });
    }
}

/// A respbench run in the background whose stderr is read line by line as it comes, so that
/// a test can act when the run reaches a point (`--progress` prints one line per interval).
pub struct Watched {
    child: Child,
    lines: std::sync::mpsc::Receiver<String>,
    stderr: Vec<String>,
    /// Intervals the run has reported so far.
    intervals: usize,
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
        Watched { child, lines, stderr: Vec::new(), intervals: 0 }
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
            let mut buf = Vec::new();
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
