//! Cluster routing for one worker: the node each slot goes to (its primary, or a replica for
//! reads with `--read-from-replicas`), nodes numbered in the order this worker first saw them,
//! and the refresh after a redirect or a failure says the map is stale.

use std::time::Duration;

use super::slot_map::{NONE, SlotMap};
use crate::config::{ReadFrom, ServerOptions};
use crate::net::cluster::{self, NodeAddr, SLOTS, Shard};
use crate::net::{ConnectError, Session};

pub struct Router {
    /// Every node seen, by this worker's node number.
    pub nodes: Vec<NodeAddr>,
    /// The primary of each slot.
    slot_primary: SlotMap,
    /// Each primary's replicas, by node number.
    replicas_of: Vec<Vec<usize>>,
    /// Nodes in the current map (primaries and replicas).
    in_map: Vec<bool>,
    /// A hash tag landing on each primary, for `{tag}`, and its slot.
    tags: Vec<Option<(String, u16)>>,
    /// The nodes that have a tag (primaries serving slots), in order: `next_primary`'s turn.
    primaries: Vec<usize>,
    read_from: ReadFrom,
    seed: ServerOptions,
    turn: usize,
    /// A redirect or a failure said the map is out of date.
    pub stale: bool,
}

impl Router {
    /// Asks the seed node for the map; a node that serves no slot is an error
    /// ([`ConnectError::NoSlots`]), never a router with nowhere to send.
    pub fn discover(seed: &ServerOptions, read_from: ReadFrom) -> Result<Router, ConnectError> {
        let mut session = Session::open(seed)?;
        let shards = cluster::serving(&mut session, seed)?;
        Router::from_map(seed, read_from, shards)
    }

    /// A router over `shards`, which must serve at least one slot.
    fn from_map(seed: &ServerOptions, read_from: ReadFrom, shards: Vec<Shard>) -> Result<Router, ConnectError> {
        let mut router = Router {
            nodes: Vec::new(),
            slot_primary: SlotMap::default(),
            replicas_of: Vec::new(),
            in_map: Vec::new(),
            tags: Vec::new(),
            primaries: Vec::new(),
            read_from,
            seed: seed.clone(),
            turn: 0,
            stale: false,
        };
        if !router.apply(shards) {
            return Err(ConnectError::NoSlots { target: seed.target.to_string() });
        }
        Ok(router)
    }

    /// Reloads the map from the first node that answers (bounded waits). False if none did
    /// with a map that serves a slot: an empty map (a node that lost its cluster) leaves the
    /// one in use, whose nodes answer with redirects or errors, counted as such.
    pub fn refresh(&mut self) -> bool {
        let mut candidates: Vec<ServerOptions> =
            (0..self.nodes.len()).filter(|&n| self.in_map[n]).map(|n| self.options_for(n)).collect();
        candidates.push(self.seed.clone());
        for opts in candidates {
            let Ok(mut session) = Session::open_within(&opts, Duration::from_millis(300)) else { continue };
            if let Ok(shards) = cluster::shards(&mut session, &self.seed)
                && self.apply(shards)
            {
                self.stale = false;
                return true;
            }
        }
        false
    }

    /// Takes `shards` as the map. False, and the map unchanged, when they serve no slot.
    fn apply(&mut self, shards: Vec<Shard>) -> bool {
        let serves = |s: &Shard| s.ranges.iter().any(|&(start, end)| start <= end && (start as usize) < SLOTS);
        if !shards.iter().any(serves) {
            return false;
        }
        self.slot_primary.clear();
        self.in_map.fill(false);
        for r in self.replicas_of.iter_mut() {
            r.clear();
        }
        for shard in shards.into_iter().filter(serves) {
            let primary = self.node_id(&shard.primary);
            for &(start, end) in &shard.ranges {
                self.slot_primary.set_range(start, end, primary as u16);
            }
            self.in_map[primary] = true;
            let replicas: Vec<usize> = shard.replicas.iter().map(|r| self.node_id(r)).collect();
            for &r in &replicas {
                self.in_map[r] = true;
            }
            self.replicas_of[primary] = replicas;
        }
        self.slot_primary.index();
        let map = &self.slot_primary;
        let owned_by = |n: usize| map.slots_of(n as u16).next().is_some();
        let tag = |n: usize| {
            let tag = cluster::tag_for(|s| map.get(s) as usize == n)?;
            let slot = cluster::slot(tag.as_bytes());
            Some((tag, slot))
        };
        let tags: Vec<Option<(String, u16)>> =
            (0..self.nodes.len()).map(|n| if owned_by(n) { tag(n) } else { None }).collect();
        self.primaries = (0..tags.len()).filter(|&n| tags[n].is_some()).collect();
        self.tags = tags;
        true
    }

    /// This worker's number for `addr`, numbering it if new.
    pub fn node_id(&mut self, addr: &NodeAddr) -> usize {
        if let Some(n) = self.nodes.iter().position(|a| a == addr) {
            return n;
        }
        self.nodes.push(addr.clone());
        self.replicas_of.push(Vec::new());
        self.in_map.push(false);
        self.tags.push(None);
        self.nodes.len() - 1
    }

    /// Where a request for `slot` goes: its primary, or for a read a replica as
    /// `--read-from-replicas` says. `None` while no node serves the slot.
    #[inline]
    pub fn node_for(&mut self, slot: u16, read: bool) -> Option<usize> {
        let primary = self.slot_primary.get(slot);
        if primary == NONE {
            return None;
        }
        let primary = primary as usize;
        if !read || self.read_from == ReadFrom::No {
            return Some(primary);
        }
        let replicas = &self.replicas_of[primary];
        self.turn = self.turn.wrapping_add(1);
        match (self.read_from, replicas.len()) {
            (_, 0) => Some(primary),
            (ReadFrom::Yes, n) => Some(replicas[self.turn % n]),
            (_, n) => Some(if self.turn % (n + 1) == n { primary } else { replicas[self.turn % (n + 1)] }),
        }
    }

    /// A primary in turn, for commands without a key and for `{tag}`.
    pub fn next_primary(&mut self) -> Option<usize> {
        if self.primaries.is_empty() {
            return None;
        }
        self.turn = self.turn.wrapping_add(1);
        Some(self.primaries[self.turn % self.primaries.len()])
    }

    /// The `i`-th primary serving slots, turn by turn: where connection `i` is bound when
    /// connections are bound to primaries.
    pub fn primary_at(&self, i: usize) -> Option<usize> {
        (!self.primaries.is_empty()).then(|| self.primaries[i % self.primaries.len()])
    }

    /// The hash tag (`{n}`) that lands on primary `node`.
    pub fn tag(&self, node: usize) -> &[u8] {
        self.tags.get(node).and_then(|t| t.as_ref()).map_or(b"", |(t, _)| t.as_bytes())
    }

    /// Where a request whose key's hash tag is primary `node`'s goes: where the tag's slot
    /// is now (the node's own, unless a redirect moved the slot since the tag was chosen).
    #[inline]
    pub fn node_for_tag(&mut self, node: usize, read: bool) -> Option<usize> {
        let slot = self.tags.get(node)?.as_ref()?.1;
        self.node_for(slot, read)
    }

    /// After `-MOVED slot host:port`: the slot's new primary, until the next refresh.
    pub fn moved(&mut self, slot: u16, to: &NodeAddr) -> usize {
        let node = self.node_id(to);
        self.slot_primary.set(slot, node as u16);
        self.in_map[node] = true;
        self.stale = true;
        node
    }

    pub fn in_map(&self, node: usize) -> bool {
        self.in_map.get(node).copied().unwrap_or(false)
    }

    /// Whether `node` serves as a replica (its connections send READONLY).
    pub fn is_replica(&self, node: usize) -> bool {
        self.replicas_of.iter().any(|r| r.contains(&node))
    }

    /// How to log in to `node`: the seed's options with the node's address.
    pub fn options_for(&self, node: usize) -> ServerOptions {
        self.nodes[node].options(&self.seed)
    }
}

/// `MOVED 3999 127.0.0.1:6381` or `ASK ...`: the slot and where to go.
pub fn redirect(msg: &[u8]) -> Option<(u16, NodeAddr)> {
    let text = std::str::from_utf8(msg).ok()?;
    let mut words = text.split_whitespace();
    let _kind = words.next()?;
    let slot = words.next()?.parse().ok()?;
    let (host, port) = words.next()?.rsplit_once(':')?;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    Some((slot, NodeAddr { host: host.to_string(), port: port.parse().ok()? }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::tests::sample;

    fn node(port: u16) -> NodeAddr {
        NodeAddr { host: "127.0.0.1".into(), port }
    }

    fn shard(ranges: &[(u16, u16)], port: u16) -> Shard {
        Shard { ranges: ranges.to_vec(), primary: node(port), replicas: vec![node(port + 100)] }
    }

    fn router(shards: Vec<Shard>) -> Result<Router, ConnectError> {
        Router::from_map(&sample().server, ReadFrom::No, shards)
    }

    #[test]
    fn reads_redirects() {
        let (slot, to) = super::redirect(b"MOVED 3999 127.0.0.1:6381").unwrap();
        assert_eq!((slot, to.host.as_str(), to.port), (3999, "127.0.0.1", 6381));
        assert!(super::redirect(b"MOVED x").is_none());
    }

    #[test]
    fn a_map_serving_no_slot_is_an_error_naming_the_seed() {
        for shards in
            [vec![], vec![shard(&[], 7000)], vec![shard(&[(20000, 30000)], 7000)], vec![shard(&[(9, 3)], 7000)]]
        {
            let e = router(shards).err().expect("no router over an empty map");
            assert!(matches!(e, ConnectError::NoSlots { .. }), "{e}");
            assert_eq!(e.to_string().lines().count(), 1);
            assert!(e.to_string().starts_with("the cluster at 127.0.0.1:6379 serves no slots"), "{e}");
        }
    }

    #[test]
    fn slots_without_a_primary_route_to_a_serving_one() {
        // Half the slots have no primary in the map (a failed shard left out of CLUSTER SHARDS).
        let mut r = router(vec![shard(&[(0, 8191)], 7000)]).unwrap();
        assert_eq!(r.node_for(100, false), Some(0));
        assert_eq!(r.node_for(9000, false), None);
        // What the worker falls back to for such a key: a primary that serves slots.
        assert_eq!(r.next_primary(), Some(0));
        for n in 0..r.nodes.len() {
            let _ = r.options_for(n);
        }
    }

    #[test]
    fn a_map_that_empties_keeps_the_one_in_use() {
        let mut r = router(vec![shard(&[(0, 8191)], 7000), shard(&[(8192, 16383)], 7001)]).unwrap();
        assert!(!r.apply(vec![]));
        assert!(!r.apply(vec![shard(&[], 7002)]));
        assert_eq!((r.node_for(0, false), r.node_for(16383, false)), (Some(0), Some(2)));
        assert!(r.in_map(0) && r.in_map(2) && r.next_primary().is_some());
        // A MOVED to a node never seen numbers it, and every number handed out has options.
        let to = r.moved(5, &node(7009));
        assert_eq!(r.node_for(5, false), Some(to));
        for n in 0..r.nodes.len() {
            assert_eq!(r.options_for(n).target.to_string(), r.nodes[n].to_string());
        }
        // A map that serves slots again replaces it whole.
        assert!(r.apply(vec![shard(&[(0, 16383)], 7001)]));
        assert_eq!((r.node_for(0, false), r.node_for(5, false)), (Some(2), Some(2)));
        assert!(!r.in_map(0));
    }
}
