//! What a worker shows of its connections on the run's board (`engine::board`), for a crash
//! report: each link's state and requests in flight after the worker sent or read on it, and
//! its addresses when it connects.

use super::conn::Conn;
use super::state::Worker;
use crate::engine::LinkState;
use crate::net::Transport;

impl Worker<'_> {
    /// Takes this worker's slots on the board and shows the links it starts with.
    pub(super) fn show_all(&mut self, conns: &[Conn]) {
        let links = conns.iter().map(|c| c.links.len()).max().unwrap_or(1);
        let width = self.router.as_ref().map_or(1, |r| r.nodes.len()).max(links);
        self.shown = self.plan.board.part(self.plan.index, conns.len(), width);
        for (c, conn) in conns.iter().enumerate() {
            for (node, link) in conn.links.iter().enumerate() {
                if let Some(io) = link.as_ref().and_then(|l| l.io.as_ref()) {
                    self.show_socket(c, node, io);
                }
            }
            self.show(conn, c);
        }
    }

    /// Connection `c` changed (it sent, read, failed or reconnected): shows it, and queues it
    /// at its next send if paced.
    #[inline]
    pub(super) fn changed(&mut self, conn: &Conn, c: usize) {
        self.show(conn, c);
        self.requeue(conn, c);
    }

    /// Shows connection `c`'s links as they stand: a relaxed store per link.
    #[inline]
    pub(super) fn show(&self, conn: &Conn, c: usize) {
        let Some(part) = self.shown else { return };
        // A link past the board's width (a node the cluster gained after the start) is not on it.
        for (link, slot) in conn.links.iter().zip(part.row(c)) {
            let Some(link) = link else { continue };
            let state = match (&link.io, &link.dialing) {
                (Some(_), _) => LinkState::Connected,
                (None, Some(_)) => LinkState::Connecting,
                (None, None) => LinkState::Disconnected,
            };
            slot.show(state, link.inflight.len(), link.inflight.front().map(|r| r.command()));
        }
    }

    /// Link `node` of connection `c` is gone (its node left the cluster).
    pub(super) fn show_gone(&self, c: usize, node: usize) {
        if let Some(part) = self.shown {
            part.show(c, node, LinkState::Disconnected, 0, None);
        }
    }

    /// Link `node` of connection `c` connected over `io`: its addresses.
    pub(super) fn show_socket(&self, c: usize, node: usize, io: &Transport) {
        if let Some(part) = self.shown {
            part.connected(c, node, io.endpoints());
        }
    }
}
