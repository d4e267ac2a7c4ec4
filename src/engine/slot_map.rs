//! Which node serves each hash slot, read once per request in cluster mode.
//!
//! The map is a table of 16384 entries (32 KB), but a cluster's slots lie in a few runs of
//! consecutive slots (3 for a cluster of 3 primaries made by `redis-cli --cluster create`).
//! A key's slot is random, and between two requests the kernel's path evicts the table from
//! the caches, so a lookup in the table is a cache miss per request (measured: at pipeline 1,
//! 37 % of the routing's samples stood on that load). While the map has at most [`RUNS`]
//! runs, a lookup counts the runs that end at or before the slot, in two cache lines, without
//! a branch; the table serves a map cut into more runs (a resharding).

use crate::net::cluster::SLOTS;

/// No node serves the slot.
pub const NONE: u16 = u16::MAX;

/// Most runs read without the table: their ends fill one cache line.
const RUNS: usize = 32;

#[derive(Debug, Clone)]
pub struct SlotMap {
    /// The node of each slot: the truth, from which the runs are made.
    table: Vec<u16>,
    /// The first slot after each run (`i16::MAX` past the last), when the map has at most
    /// [`RUNS`] runs: slot `s` is in run `ends.iter().filter(|&&e| s >= e).count()`.
    ends: [i16; RUNS],
    /// Each run's node.
    nodes: [u16; RUNS],
    compact: bool,
}

impl Default for SlotMap {
    fn default() -> SlotMap {
        let mut map = SlotMap { table: vec![NONE; SLOTS], ends: [i16::MAX; RUNS], nodes: [NONE; RUNS], compact: false };
        map.index();
        map
    }
}

impl SlotMap {
    /// The node serving `slot` (below 16384), or [`NONE`].
    #[inline]
    pub fn get(&self, slot: u16) -> u16 {
        if self.compact {
            // Slots are below 16384, so a signed comparison is exact (and vectorizes).
            let slot = slot as i16;
            let run = self.ends.iter().map(|&end| usize::from(slot >= end)).sum::<usize>();
            self.nodes[run % RUNS]
        } else {
            self.table[slot as usize % SLOTS]
        }
    }

    /// Sets slots `first..=last` (clipped to the slots there are); [`index`](Self::index)
    /// must follow before the next lookup.
    pub fn set_range(&mut self, first: u16, last: u16, node: u16) {
        let last = last.min(SLOTS as u16 - 1);
        if first <= last {
            self.table[first as usize..=last as usize].fill(node);
        }
    }

    /// Sets one slot (a redirect), its runs made again.
    pub fn set(&mut self, slot: u16, node: u16) {
        let slot = slot % SLOTS as u16;
        if self.table[slot as usize] != node {
            self.table[slot as usize] = node;
            self.index();
        }
    }

    /// No node serves any slot; [`index`](Self::index) must follow.
    pub fn clear(&mut self) {
        self.table.fill(NONE);
    }

    /// The slots `node` serves, in order.
    pub fn slots_of(&self, node: u16) -> impl Iterator<Item = u16> + '_ {
        (0..SLOTS as u16).filter(move |&s| self.table[s as usize] == node)
    }

    /// Makes the runs from the table: compact while there are at most [`RUNS`] of them.
    pub fn index(&mut self) {
        self.ends = [i16::MAX; RUNS];
        self.nodes = [NONE; RUNS];
        let mut run = 0;
        self.nodes[0] = self.table[0];
        for slot in 1..SLOTS {
            if self.table[slot] != self.table[slot - 1] {
                if run + 1 == RUNS {
                    self.compact = false;
                    return;
                }
                self.ends[run] = slot as i16;
                run += 1;
                self.nodes[run] = self.table[slot];
            }
        }
        self.compact = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agrees(map: &SlotMap) {
        for slot in 0..SLOTS as u16 {
            assert_eq!(map.get(slot), map.table[slot as usize], "slot {slot}");
        }
    }

    #[test]
    fn runs_and_table_agree_whatever_the_cut() {
        let mut map = SlotMap::default();
        assert!(map.compact);
        assert_eq!(map.get(0), NONE);
        map.set_range(0, 5460, 0);
        map.set_range(5461, 10922, 1);
        map.set_range(10923, 20000, 2);
        map.index();
        assert!(map.compact);
        agrees(&map);
        assert_eq!((map.get(0), map.get(5461), map.get(16383)), (0, 1, 2));
        // Single slots moved one by one: compact up to the last run that fits, the table after.
        for (i, slot) in (100..).step_by(300).take(20).enumerate() {
            map.set(slot, 7);
            assert_eq!(map.compact, 3 + 2 * (i + 1) <= RUNS, "after {} moves", i + 1);
            agrees(&map);
        }
        // Back to a few runs, back to compact.
        map.clear();
        map.set_range(0, 16383, 4);
        map.index();
        assert!(map.compact);
        agrees(&map);
        assert_eq!(map.slots_of(4).count(), SLOTS);
        assert_eq!(map.slots_of(7).count(), 0);
    }

    #[test]
    fn a_map_with_every_slot_its_own_run_still_answers() {
        let mut map = SlotMap::default();
        for slot in 0..SLOTS as u16 {
            map.set_range(slot, slot, slot % 5);
        }
        map.index();
        assert!(!map.compact);
        agrees(&map);
        // Unserved slots between served ones.
        map.clear();
        map.set_range(10, 20, 1);
        map.index();
        assert!(map.compact);
        assert_eq!((map.get(9), map.get(10), map.get(20), map.get(21)), (NONE, 1, 1, NONE));
        agrees(&map);
    }
}
