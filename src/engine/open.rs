//! The open phase: each worker thread opens its connections (a link per server node) before
//! the run starts, all at once through non-blocking dials (`dialer.rs`) so that TLS
//! handshakes and logins overlap, or one by one with memtier's connection-start jitter.

use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::time::Duration;

use super::dialer;
use super::msg::Msg;
use super::pacer::Pacer;
use super::prepared::Prepared;
use super::router::Router;
use super::worker::{self, Conn, Link, Opened};
use crate::config::{Config, ServerOptions};
use crate::net::{ConnectError, Session};
use crate::workload::RequestGen;

/// Opens connections one after the other with a random pause from `min..=max` between them
/// (memtier's `--thread-conn-start-{min,max}-jitter-micros`).
fn open_with_jitter<T>(
    range: std::ops::Range<usize>,
    (min, max): (Duration, Duration),
    seed: u64,
    open: impl Fn(usize) -> Result<T, ConnectError>,
) -> Result<Vec<T>, ConnectError> {
    let mut rng = crate::workload::rng::Rng::derive(seed ^ 0x6a69_7474, range.start as u64);
    let spread = max.saturating_sub(min).as_nanos() as u64;
    let first = range.start;
    range
        .map(|i| {
            if i > first {
                std::thread::sleep(min + Duration::from_nanos(rng.below(spread + 1)));
            }
            open(i)
        })
        .collect()
}

/// Opens worker `t`'s share of the connections: in cluster mode its own slot map and a link
/// per primary for each client; a staircase's later connections are opened at their step. A
/// failure (or a panic, which would leave the others waiting at the barrier) is sent to the
/// main thread as [`Msg::Failed`] and gives `None`. The sockets are then put under the worker's
/// I/O driver, so that registering thousands (and arming their receives) is not run time.
pub(super) fn open(config: &Config, prepared: &Prepared, t: usize, tx: &Sender<Msg>) -> Option<Opened> {
    let connect = || -> Result<(Vec<Conn>, Option<Router>), ConnectError> {
        let router = config.cluster.map(|read_from| Router::discover(&config.server, read_from)).transpose()?;
        let targets: Vec<(usize, ServerOptions)> = match &router {
            Some(r) => {
                (0..r.nodes.len()).filter(|&n| r.in_map(n) && !r.is_replica(n)).map(|n| (n, r.options_for(n))).collect()
            }
            None => vec![(0, config.server.clone())],
        };
        // valkey-benchmark's clients: connection i on one primary only, the i-th in turn.
        let bound = |i: usize| -> Option<usize> {
            config.extras.clients_bound_to_primaries.then(|| router.as_ref().and_then(|r| r.primary_at(i))).flatten()
        };
        let targets_of = |i: usize| -> Vec<&(usize, ServerOptions)> {
            targets.iter().filter(|(node, _)| bound(i).is_none_or(|home| home == *node)).collect()
        };
        let open_one = |i: usize| {
            let requests = RequestGen::new(Arc::clone(&prepared.workload), config, i);
            if !worker::join_delay(config, prepared.threads, i).is_zero() {
                // A staircase ramp connects it later, at its step.
                let mut conn = Conn::new(Vec::new(), requests, Pacer::Closed, config.quota(i));
                conn.home = bound(i);
                return Ok(conn);
            }
            let mut links = Vec::new();
            for (node, opts) in targets_of(i) {
                let io = Session::open_within(opts, config.faults.connect_timeout)?
                    .into_transport()
                    .map_err(|source| ConnectError::Io { target: opts.target.to_string(), source })?;
                if links.len() <= *node {
                    links.resize_with(node + 1, || None);
                }
                links[*node] = Some(Link::new(io, config.pipeline, prepared.max_request));
            }
            let mut conn = Conn::new(links, requests, Pacer::Closed, config.quota(i));
            conn.home = bound(i);
            Ok(conn)
        };
        let (first, last) =
            (t * config.connections / prepared.threads, (t + 1) * config.connections / prepared.threads);
        let conns = match config.conn_jitter {
            None => {
                // All at once, non-blocking: a link per node for each connection that joins now.
                let joins = |i: usize| worker::join_delay(config, prepared.threads, i).is_zero();
                let now: Vec<usize> = (first..last).filter(|&i| joins(i)).collect();
                let jobs: Vec<&ServerOptions> =
                    now.iter().flat_map(|&i| targets_of(i).into_iter().map(|(_, o)| o)).collect();
                let mut opened = dialer::open_all(&jobs, config.faults.connect_timeout)?.into_iter();
                let conn = |i: usize| {
                    let requests = RequestGen::new(Arc::clone(&prepared.workload), config, i);
                    let mut links = Vec::new();
                    if joins(i) {
                        for (node, _) in targets_of(i) {
                            let (io, rest) = opened.next().expect("a link per node of each connection");
                            let mut link = Link::new(io, config.pipeline, prepared.max_request);
                            link.prefill(&rest);
                            if links.len() <= *node {
                                links.resize_with(node + 1, || None);
                            }
                            links[*node] = Some(link);
                        }
                    }
                    let mut conn = Conn::new(links, requests, Pacer::Closed, config.quota(i));
                    conn.home = bound(i);
                    conn
                };
                (first..last).map(conn).collect()
            }
            Some(pause) => open_with_jitter(first..last, pause, config.seed, open_one)?,
        };
        Ok((conns, router))
    };
    let opened = std::panic::catch_unwind(std::panic::AssertUnwindSafe(connect)).unwrap_or_else(|_| {
        Err(ConnectError::Io {
            target: config.server.target.to_string(),
            source: std::io::Error::other("a worker thread failed while connecting (a bug: please report it)"),
        })
    });
    match opened {
        Ok((mut conns, router)) => {
            let driver = worker::drive_with(prepared.io, config.rate.is_some(), prepared.stamps, &mut conns);
            Some((conns, router, driver))
        }
        Err(e) => {
            let _ = tx.send(Msg::Failed(e));
            None
        }
    }
}
