//! A TCP gate between a run and a real server, so that a test can look at a run held part-way
//! instead of racing it: a fast machine finishes 100,000 requests before the first scrape, a
//! held run cannot. Each connection's requests pass until it has sent `hold_after` bytes toward
//! the server; then that connection waits until the test opens the gate. Replies always pass.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// What the gate's connections share: whether it is open, and how many connections it holds.
#[derive(Default)]
struct State {
    open: bool,
    held: usize,
}

type Shared = Arc<(Mutex<State>, Condvar)>;

pub struct Gate {
    pub port: u16,
    state: Shared,
}

impl Gate {
    /// Listens on a free loopback port and forwards each connection to `server_port`.
    pub fn start(server_port: u16, hold_after: usize) -> Gate {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state: Shared = Arc::default();
        let shared = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming().map_while(Result::ok) {
                let server = TcpStream::connect(("127.0.0.1", server_port)).unwrap();
                forward_replies(&server, &client);
                let shared = shared.clone();
                std::thread::spawn(move || forward_requests(client, server, hold_after, &shared));
            }
        });
        Gate { port, state }
    }

    pub fn port_arg(&self) -> String {
        self.port.to_string()
    }

    /// Waits until at least one connection is held (its requests stopped at `hold_after`).
    pub fn wait_held(&self) {
        let (lock, turned) = &*self.state;
        let state = lock.lock().unwrap();
        let (state, timeout) = turned.wait_timeout_while(state, Duration::from_secs(60), |s| s.held == 0).unwrap();
        assert!(!timeout.timed_out() || state.held > 0, "no connection reached the gate in a minute");
    }

    /// Lets every connection, held or not, through from now on.
    pub fn open(&self) {
        let (lock, turned) = &*self.state;
        lock.lock().unwrap().open = true;
        turned.notify_all();
    }
}

/// Server to client, as it comes, until either side closes.
fn forward_replies(server: &TcpStream, client: &TcpStream) {
    let (mut from, mut to) = (server.try_clone().unwrap(), client.try_clone().unwrap());
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut from, &mut to);
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// Client to server: the first `hold_after` bytes, then (once the gate is open) the rest.
fn forward_requests(mut client: TcpStream, mut server: TcpStream, hold_after: usize, state: &Shared) {
    let mut allowance = hold_after;
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = match client.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let before = n.min(allowance);
        if server.write_all(&buf[..before]).is_err() {
            break;
        }
        allowance -= before;
        if before < n {
            hold(state);
            allowance = usize::MAX;
            if server.write_all(&buf[before..n]).is_err() {
                break;
            }
        }
    }
    let _ = server.shutdown(Shutdown::Write);
}

/// Counts this connection as held and waits until the gate opens.
fn hold(state: &Shared) {
    let (lock, turned) = &**state;
    let mut s = lock.lock().unwrap();
    if s.open {
        return;
    }
    s.held += 1;
    turned.notify_all();
    let _open = turned.wait_while(s, |s| !s.open).unwrap();
}
