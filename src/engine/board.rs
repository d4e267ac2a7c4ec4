//! The run's connections as a crash report lists them (memtier's `thread= client= conn= ...`
//! lines): each worker shows, per link, whether it is up, its addresses, how many requests are
//! in flight on it and the oldest one's command, in a slot of its own that only it writes.
//!
//! The hot path pays one relaxed store per link when its worker has sent or read on it (a word
//! that packs state, requests in flight and the oldest one's command); addresses are stored
//! when a link connects. No lock, no allocation: the slots are made once, when the worker
//! starts, and read only by whoever reports a crash, which takes them as they stand.

use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// A run's connections, by worker thread.
#[derive(Debug)]
pub struct Board {
    /// One per worker thread, set once when it starts driving its connections.
    parts: Box<[OnceLock<Part>]>,
    /// The commands the requests in flight name (the run's rows).
    names: OnceLock<Vec<String>>,
}

/// One worker's slots: `width` per connection (one per server node), by connection.
#[derive(Debug)]
pub(super) struct Part {
    width: usize,
    slots: Box<[Slot]>,
}

/// One link's figures. Aligned to a cache line so that a worker's stores never share one with
/// another worker's (the slots of one part are written by one thread only).
#[derive(Debug, Default)]
#[repr(align(64))]
pub(super) struct Slot {
    /// `pending << 32 | oldest command + 1 (30 bits) << 2 | state`; 0: the link never existed.
    flight: AtomicU64,
    /// The link's local port + 1 (0: none, as on a unix socket).
    local: AtomicU64,
    /// The server's address: port and family (4 or 6; 0: none), then the IP's two halves.
    peer: [AtomicU64; 3],
}

/// Where a link stands, in memtier's three states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkState {
    Connecting,
    Connected,
    Disconnected,
}

const CONNECTING: u64 = 1;
const CONNECTED: u64 = 2;
const DISCONNECTED: u64 = 3;

/// One link as its worker last showed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    /// The worker thread, the connection within it, the link within the connection (its
    /// server node; 0 for a standalone server).
    pub thread: usize,
    pub client: usize,
    pub conn: usize,
    pub state: LinkState,
    pub server: Option<SocketAddr>,
    /// While connected; `None` on a unix socket.
    pub local_port: Option<u16>,
    /// Requests sent on it and not answered yet.
    pub pending: u32,
    /// The command of the oldest of them.
    pub oldest: Option<String>,
}

impl Board {
    /// An empty board for a run of `config` (its workers fill it as they start).
    pub fn for_run(config: &crate::config::Config) -> Board {
        let threads = config.worker_threads();
        Board { parts: (0..threads).map(|_| OnceLock::new()).collect(), names: OnceLock::new() }
    }

    /// Names the run's commands (the engine does, once it has compiled the workload).
    pub(super) fn name_commands(&self, names: &[String]) {
        let _ = self.names.set(names.to_vec());
    }

    /// Worker `t`'s slots for `clients` connections of `width` links each (made once: a
    /// second call gets the first's).
    pub(super) fn part(&self, t: usize, clients: usize, width: usize) -> Option<&Part> {
        let width = width.max(1);
        let make = || Part { width, slots: (0..clients * width).map(|_| Slot::default()).collect() };
        self.parts.get(t).map(|p| p.get_or_init(make))
    }

    /// Every link that has been shown, by thread, connection and link.
    pub fn shown(&self) -> Vec<Shown> {
        let names = self.names.get();
        let mut out = Vec::new();
        for (thread, part) in self.parts.iter().enumerate() {
            let Some(part) = part.get() else { continue };
            for (i, slot) in part.slots.iter().enumerate() {
                let flight = slot.flight.load(Ordering::Relaxed);
                let state = match flight & 3 {
                    CONNECTING => LinkState::Connecting,
                    CONNECTED => LinkState::Connected,
                    DISCONNECTED => LinkState::Disconnected,
                    _ => continue,
                };
                let oldest = ((flight as u32) >> 2).checked_sub(1).map(|command| {
                    names.and_then(|n| n.get(command as usize)).cloned().unwrap_or_else(|| command.to_string())
                });
                let local = slot.local.load(Ordering::Acquire);
                out.push(Shown {
                    thread,
                    client: i / part.width,
                    conn: i % part.width,
                    state,
                    server: slot.server(),
                    local_port: (local > 0 && state == LinkState::Connected).then(|| (local - 1) as u16),
                    pending: (flight >> 32) as u32,
                    oldest,
                });
            }
        }
        out
    }
}

impl Part {
    /// Connection `c`'s slots, one per link (none past the part's connections).
    #[inline]
    pub(super) fn row(&self, c: usize) -> &[Slot] {
        self.slots.get(c * self.width..(c + 1) * self.width).unwrap_or(&[])
    }

    /// Link `node` of connection `c` as it stands ([`Slot::show`]); a link past the part's
    /// width (a node the cluster gained after the start) is not on the board.
    pub(super) fn show(&self, c: usize, node: usize, state: LinkState, pending: usize, oldest: Option<usize>) {
        if let Some(slot) = self.row(c).get(node) {
            slot.show(state, pending, oldest);
        }
    }

    /// Link `node` of connection `c` connected: its own address and its server's (`None` on a
    /// unix socket).
    pub(super) fn connected(&self, c: usize, node: usize, endpoints: Option<(SocketAddr, SocketAddr)>) {
        let Some(slot) = self.row(c).get(node) else { return };
        let (local, (head, high, low)) = match endpoints {
            Some((local, peer)) => {
                let (family, ip) = match peer.ip() {
                    IpAddr::V4(ip) => (4, u128::from(u32::from(ip))),
                    IpAddr::V6(ip) => (6, u128::from(ip)),
                };
                (u64::from(local.port()) + 1, (u64::from(peer.port()) << 8 | family, (ip >> 64) as u64, ip as u64))
            }
            None => (0, (0, 0, 0)),
        };
        slot.peer[1].store(high, Ordering::Relaxed);
        slot.peer[2].store(low, Ordering::Relaxed);
        slot.peer[0].store(head, Ordering::Release);
        slot.local.store(local, Ordering::Release);
    }
}

impl Slot {
    /// Its link as it stands: its state, the requests in flight on it and the oldest one's
    /// command. One relaxed store, by the worker that owns it.
    #[inline]
    pub(super) fn show(&self, state: LinkState, pending: usize, oldest: Option<usize>) {
        let state = match state {
            LinkState::Connecting => CONNECTING,
            LinkState::Connected => CONNECTED,
            LinkState::Disconnected => DISCONNECTED,
        };
        let oldest = oldest.map_or(0, |command| (command as u64 + 1) & 0x3fff_ffff);
        self.flight.store((pending.min(u32::MAX as usize) as u64) << 32 | oldest << 2 | state, Ordering::Relaxed);
    }

    fn server(&self) -> Option<SocketAddr> {
        let head = self.peer[0].load(Ordering::Acquire);
        let ip =
            u128::from(self.peer[1].load(Ordering::Relaxed)) << 64 | u128::from(self.peer[2].load(Ordering::Relaxed));
        let port = (head >> 8) as u16;
        match head & 0xff {
            4 => Some(SocketAddr::new(IpAddr::V4((ip as u32).into()), port)),
            6 => Some(SocketAddr::new(IpAddr::V6(ip.into()), port)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(threads: usize) -> Board {
        Board { parts: (0..threads).map(|_| OnceLock::new()).collect(), names: OnceLock::new() }
    }

    #[test]
    fn a_link_shows_what_its_worker_stored() {
        let board = board(2);
        board.name_commands(&["SET".into(), "GET".into()]);
        let part = board.part(1, 2, 3).unwrap();
        let local: SocketAddr = "127.0.0.1:40000".parse().unwrap();
        let v6: SocketAddr = "[::1]:6380".parse().unwrap();
        part.connected(1, 2, Some((local, v6)));
        part.show(1, 2, LinkState::Connected, 16, Some(1));
        part.show(0, 0, LinkState::Disconnected, 0, None);
        part.show(0, 3, LinkState::Connected, 1, None); // beyond the width: not shown
        let shown = board.shown();
        assert_eq!(shown.len(), 2, "{shown:?}");
        assert_eq!(
            shown[1],
            Shown {
                thread: 1,
                client: 1,
                conn: 2,
                state: LinkState::Connected,
                server: Some(v6),
                local_port: Some(40000),
                pending: 16,
                oldest: Some("GET".into()),
            }
        );
        assert_eq!(
            (shown[0].client, shown[0].state, shown[0].server, shown[0].oldest.clone()),
            (0, LinkState::Disconnected, None, None)
        );
        // A second call keeps the first part.
        assert_eq!(board.part(1, 9, 9).unwrap().width, 3);
        assert!(board.part(2, 1, 1).is_none());
    }

    #[test]
    fn a_slot_has_a_cache_line_of_its_own() {
        assert_eq!(std::mem::align_of::<Slot>(), 64);
        assert_eq!(std::mem::size_of::<Slot>(), 64);
    }
}
