//! Where each request goes: onto its link's write buffer and in-flight queue, or, in cluster
//! mode, held for its link while that link's pipeline is full.
//!
//! In cluster mode the pipeline depth is each link's: a connection keeps `--pipeline` units in
//! flight on every node's link, as memtier_benchmark keeps a whole pipeline per shard
//! connection and valkey-benchmark per client bound to a primary (`-c 50 -P 16` over 3
//! primaries keeps 2,400 requests in flight). A connection draws units while some link has
//! room; one whose key lands on a full link is held for that link, in order, and joins its
//! pipeline when replies free room, so each link's reads are answered by one write of a
//! whole pipeline, as on a standalone server. Held requests are bounded per link
//! ([`held_max`]); they are not sent yet, so they are neither counted nor timed until they
//! join the pipeline (a closed loop's start its time from then). A request whose key is known
//! by its number is held as that number (32 bytes, [`Held`]) and encoded when it joins; only
//! one routed by its encoded key is held as bytes.

use std::ops::Range;
use std::time::Instant;

use super::conn::Conn;
use super::conn::{Held, InFlight, Link};
use super::state::Worker;
use crate::engine::router::Router;
use crate::net::cluster;
use crate::resp::{self, Out};
use crate::stats::ClientStats;

/// Most requests held for one link: a few pipelines, so that a link whose replies come first
/// finds a whole pipeline waiting, while the others' draws are kept rather than refused.
pub(super) fn held_max(pipeline: usize) -> usize {
    4 * pipeline.max(4)
}

/// The `{tag}` of node `node` (a unit's primary), or none.
fn tag_of(router: Option<&Router>, node: Option<usize>) -> &[u8] {
    match (router, node) {
        (Some(router), Some(n)) => router.tag(n),
        _ => b"",
    }
}

impl Conn {
    /// Whether another unit may be drawn: the pipeline has room (standalone), or some link
    /// has room and no link holds its most (cluster mode).
    #[inline]
    pub(super) fn room(&self, pipeline: usize) -> bool {
        if !self.per_node {
            return self.units_in_flight < pipeline;
        }
        // One walk of the links: some link with room, none holding its most.
        let most = held_max(pipeline);
        let mut room = false;
        for link in self.links.iter().flatten() {
            if link.held.len() >= most {
                return false;
            }
            room |= link.units < pipeline && link.held.is_empty();
        }
        room
    }

    /// Drops what is held and never sent (the run is ending): not counted, never on the wire.
    pub(super) fn drop_held(&mut self) {
        for link in self.links.iter_mut().flatten() {
            self.units_in_flight -= link.held.iter().filter(|r| r.ends_unit()).count();
            link.held.clear();
            link.wbuf.truncate(link.sendable_end());
            link.held_len = 0;
        }
    }
}

impl Worker<'_> {
    /// Encodes one command onto the link it belongs to, or holds it for a full link (cluster
    /// mode). Returns that link's node, and whether the command was held.
    #[inline(always)]
    pub(super) fn queue(
        &mut self,
        conn: &mut Conn,
        c: usize,
        command: usize,
        (tag_node, intended, queued): (Option<usize>, Instant, Instant),
        now: Instant,
    ) -> (usize, bool) {
        if self.router.is_some() {
            return self.queue_routed(conn, c, (command, intended, queued), tag_node, now);
        }
        let entry = InFlight::new(command, intended, queued, now);
        // A standalone server: its one link, which never holds (the pipeline is the connection's).
        let Conn { links, requests, client_stats, .. } = conn;
        let link = links[0].as_mut().expect("a link to the server");
        let before = link.wbuf.len();
        requests.encode(command, &mut link.wbuf);
        let len = link.wbuf.len() - before;
        self.account(link, client_stats.as_deref_mut(), 0, entry, before..before + len, now);
        (0, false)
    }

    /// Cluster mode's [`queue`](Self::queue): the key is drawn and routed before the command
    /// is encoded, straight into its link's buffer, where its key's slot follows from its
    /// number, or where its key's hash tag is a primary's `{tag}`, that tag's slot; else the
    /// command is encoded aside and routed by the key read back from it.
    #[inline(always)]
    fn queue_routed(
        &mut self,
        conn: &mut Conn,
        c: usize,
        (command, intended, queued): (usize, Instant, Instant),
        tag_node: Option<usize>,
        now: Instant,
    ) -> (usize, bool) {
        let Some(router) = self.router.as_mut() else { return (0, false) };
        let read = self.plan.reads[command];
        let drawn = conn.requests.draw_routed(command);
        let tagged = drawn.is_none() && tag_node.is_some() && conn.requests.tag_keyed(command);
        let routed = match (&drawn, tag_node) {
            (Some(key), _) => router.node_for(key.slot, read),
            (None, Some(n)) if tagged => router.node_for_tag(n, read),
            _ => self.encode_aside(conn, command, tag_node),
        };
        let Some(router) = self.router.as_mut() else { return (0, false) };
        let node = routed.or(tag_node).or_else(|| router.next_primary()).unwrap_or(0);
        if !conn.links.get(node).is_some_and(Option::is_some) {
            self.ensure_link(conn, c, node, now);
        }
        let Conn { links, scratch, requests, client_stats, per_node, pipeline, .. } = conn;
        let link = links[node].as_mut().expect("a link for every routed node");
        let hold = *per_node && (link.units >= *pipeline || !link.held.is_empty());
        // A full link holds it; a key known by its number is encoded only when it joins.
        if let (true, Some(key)) = (hold, &drawn) {
            link.held.push_back(Held::key(key.key, command, intended, tag_node));
            return (node, true);
        }
        let before = link.wbuf.len();
        let tag = tag_of(self.router.as_ref(), tag_node);
        match &drawn {
            Some(key) => requests.encode_routed(command, key, &mut link.wbuf, tag),
            None if tagged => {
                requests.encode_tagged(command, &mut link.wbuf, tag);
            }
            None => link.wbuf.extend_from_slice(scratch),
        }
        let len = link.wbuf.len() - before;
        // Else its bytes wait at the buffer's tail, behind what may be written.
        if hold {
            link.held_len += len;
            link.held.push_back(Held::encoded(len, command, intended));
            return (node, true);
        }
        let entry = InFlight::new(command, intended, queued, now);
        self.account(link, client_stats.as_deref_mut(), node, entry, before..before + len, now);
        (node, false)
    }

    /// [`queue_routed`](Self::queue_routed)'s general case, out of its hot code: the command
    /// encoded into `conn.scratch`, and the node its key read back from there goes to.
    #[cold]
    #[inline(never)]
    fn encode_aside(&mut self, conn: &mut Conn, command: usize, tag_node: Option<usize>) -> Option<usize> {
        let router = self.router.as_mut()?;
        conn.scratch.clear();
        let tag = tag_of(Some(router), tag_node);
        conn.requests.encode_tagged(command, &mut conn.scratch, tag);
        // A transaction's commands all go where its unit goes (`fill_and_flush`).
        let transaction = conn.requests.workload().transaction();
        let key = self.plan.key_args[command].filter(|_| !transaction);
        let key = key.and_then(|k| resp::nth_arg(&conn.scratch, k));
        key.and_then(|k| router.node_for(cluster::slot(k), self.plan.reads[command]))
    }

    /// Puts a request whose bytes are `link.wbuf`'s `bytes` in flight: journaled if asked,
    /// counted as sent when measured.
    #[inline(always)]
    fn account(
        &mut self,
        link: &mut Link,
        client_stats: Option<&mut ClientStats>,
        node: usize,
        entry: InFlight,
        bytes: Range<usize>,
        now: Instant,
    ) {
        let len = bytes.len();
        if self.journal {
            // Values kept by reference are copied piece by piece; else one copy of the bytes.
            if link.wbuf.has_spans() {
                link.wbuf.pieces_in(bytes).for_each(|piece| link.journal.extend(piece));
            } else {
                link.journal.extend(&link.wbuf.bytes()[bytes]);
            }
        }
        let command = entry.command();
        let measured = entry.intended >= self.plan.measure_from;
        link.units += usize::from(entry.ends_unit);
        link.inflight.push_back(InFlight { len: if self.journal { len as u32 } else { 0 }, ..entry });
        link.unwritten += 1;
        if measured {
            self.window.ops[command].sent += 1;
            self.window.ops[command].bytes_out += len as u64;
            if let Some(stats) = client_stats {
                stats.sent(command, len as u64, now);
            }
            if let Some((_, per_node)) = self.window.nodes.get_mut(node) {
                per_node.bytes_out += len as u64;
            }
        }
    }

    /// Moves held requests into their links' pipelines as far as each has room: one held as
    /// its key's number is encoded now, ahead of any held bytes; for one encoded when drawn
    /// the mark between what may be written and what is held moves past it, the bytes stay.
    /// A closed loop's request is timed from now, when it could first be sent; a paced one
    /// keeps its schedule, and waited for room from now.
    pub(super) fn release_held(&mut self, conn: &mut Conn, now: Instant) {
        let pipeline = conn.pipeline;
        for node in 0..conn.links.len() {
            let Conn { links, requests, scratch, client_stats, .. } = &mut *conn;
            let Some(link) = links[node].as_mut() else { continue };
            while link.units < pipeline
                && let Some(held) = link.held.pop_front()
            {
                let from = link.sendable_end();
                let len = match held.encoded_len() {
                    Some(len) => {
                        link.held_len -= len;
                        len
                    }
                    None => {
                        let command = held.command();
                        let tag = tag_of(self.router.as_ref(), held.tag_node());
                        if link.held_len == 0 {
                            requests.encode_key(command, held.key_or_len, &mut link.wbuf, tag);
                        } else {
                            scratch.clear();
                            requests.encode_key(command, held.key_or_len, scratch, tag);
                            link.push_sendable(scratch);
                        }
                        link.sendable_end() - from
                    }
                };
                let measured = held.intended >= self.plan.measure_from;
                let intended = if !self.paced && measured { now } else { held.intended };
                let entry = InFlight {
                    ends_unit: held.ends_unit(),
                    lag_due: held.lag_due(),
                    ..InFlight::new(held.command(), intended, now, now)
                };
                self.account(link, client_stats.as_deref_mut(), node, entry, from..from + len, now);
            }
        }
    }

    /// A link whose node left the map: what it held goes to the links its keys now route to
    /// (held again if those are full). Nothing was sent, so nothing is lost.
    pub(super) fn reroute_held(&mut self, conn: &mut Conn, c: usize, mut link: Link, now: Instant) {
        let mut offset = link.sendable_end();
        let mut bytes = Vec::new();
        while let Some(held) = link.held.pop_front() {
            let command = held.command();
            let slot = match held.encoded_len() {
                Some(len) => {
                    bytes.clear();
                    link.wbuf.pieces_in(offset..offset + len).for_each(|piece| bytes.extend_from_slice(piece));
                    offset += len;
                    let key = self.plan.key_args[command].and_then(|k| resp::nth_arg(&bytes, k));
                    key.map(cluster::slot)
                }
                None => conn.requests.key_slot(command, held.key_or_len),
            };
            let node = self.router.as_mut().and_then(|router| {
                let routed = slot.and_then(|slot| router.node_for(slot, self.plan.reads[command]));
                routed.or_else(|| router.next_primary())
            });
            if let Some(node) = node {
                self.ensure_link(conn, c, node, now);
            }
            match node.and_then(|n| conn.links[n].as_mut()) {
                Some(to) => {
                    if held.encoded_len().is_some() {
                        to.wbuf.extend_from_slice(&bytes);
                        to.held_len += bytes.len();
                    }
                    to.held.push_back(held);
                }
                // Nowhere to go (no node serves a slot): it leaves the run unsent.
                None => conn.units_in_flight -= usize::from(held.ends_unit()),
            }
        }
    }
}
