//! Which node serves each hash slot, read once per request in cluster mode.
//!
//! The map is a table of 16384 entries (32 KB), but a cluster's slots lie in a few runs of
//! consecutive slots (3 for a cluster of 3 primaries made by `redis-cli --cluster create`).
//! A key's slot is random, and between two requests the kernel's path evicts the table from
//! the caches, so a lookup in the table is a cache miss per request (measured: at pipeline 1,
//! 37 % of the routing's samples stood on that load). While the map has at most [`RUNS`]
//! runs, a lookup counts the runs that end at or before the slot, in two cache lines, without
//! a branch (in one compare of [`FEW`] ends while the map has at most that many runs, as a
//! cluster of a few primaries does); the table serves a map cut into more runs (a resharding).

use crate::net::cluster::SLOTS;

/// No node serves the slot.
pub const NONE: u16 = u16::MAX;

/// Most runs read without the table: their ends fill one cache line.
const RUNS: usize = 32;

/// Runs whose ends one 16-byte compare covers.
const FEW: usize = 8;

/// How [`SlotMap::get`] finds a slot's node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lookup {
    /// At most [`FEW`] runs: the first ends only.
    Few,
    /// At most [`RUNS`] runs.
    Runs,
    /// More: the table.
    Table,
}

/// How many of `ends` are at or before `slot`. Slots are below 16384, so a signed comparison
/// is exact (and vectorizes).
#[inline(always)]
fn runs_before(ends: &[i16; RUNS], slot: u16) -> usize {
    ends.iter().map(|&end| usize::from(slot as i16 >= end)).sum::<usize>()
}

/// [`runs_before`] for at most [`FEW`] runs (the last end unused, `i16::MAX`): the ends are
/// in order, so three halvings find the count, each a compare and a conditional move.
#[inline(always)]
fn few_before(ends: &[i16; FEW], slot: u16) -> usize {
    let slot = slot as i16;
    let mut at = 0;
    for half in [4, 2, 1] {
        at += if ends[at + half - 1] <= slot { half } else { 0 };
    }
    at
}

#[derive(Debug, Clone)]
pub struct SlotMap {
    /// The node of each slot: the truth, from which the runs are made.
    table: Vec<u16>,
    /// The first slot after each run (`i16::MAX` past the last), when the map has at most
    /// [`RUNS`] runs: slot `s` is in run `ends.iter().filter(|&&e| s >= e).count()`.
    ends: [i16; RUNS],
    /// Each run's node.
    nodes: [u16; RUNS],
    lookup: Lookup,
}

impl Default for SlotMap {
    fn default() -> SlotMap {
        let mut map =
            SlotMap { table: vec![NONE; SLOTS], ends: [i16::MAX; RUNS], nodes: [NONE; RUNS], lookup: Lookup::Table };
        map.index();
        map
    }
}

impl SlotMap {
    /// The node serving `slot` (below 16384), or [`NONE`].
    #[inline]
    pub fn get(&self, slot: u16) -> u16 {
        match self.lookup {
            Lookup::Few => self.nodes[few_before(self.ends.first_chunk::<FEW>().expect("FEW <= RUNS"), slot)],
            Lookup::Runs => self.nodes[runs_before(&self.ends, slot) % RUNS],
            Lookup::Table => self.table[slot as usize % SLOTS],
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
                    self.lookup = Lookup::Table;
                    return;
                }
                self.ends[run] = slot as i16;
                run += 1;
                self.nodes[run] = self.table[slot];
            }
        }
        self.lookup = if run < FEW { Lookup::Few } else { Lookup::Runs };
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
        assert_eq!(map.lookup, Lookup::Few);
        assert_eq!(map.get(0), NONE);
        map.set_range(0, 5460, 0);
        map.set_range(5461, 10922, 1);
        map.set_range(10923, 20000, 2);
        map.index();
        assert_eq!(map.lookup, Lookup::Few);
        agrees(&map);
        assert_eq!((map.get(0), map.get(5461), map.get(16383)), (0, 1, 2));
        // Single slots moved one by one: compact up to the last run that fits, the table after.
        for (i, slot) in (100..).step_by(300).take(20).enumerate() {
            map.set(slot, 7);
            let runs = 3 + 2 * (i + 1);
            let lookup = if runs <= FEW {
                Lookup::Few
            } else if runs <= RUNS {
                Lookup::Runs
            } else {
                Lookup::Table
            };
            assert_eq!(map.lookup, lookup, "after {} moves", i + 1);
            agrees(&map);
        }
        // Back to a few runs, back to compact.
        map.clear();
        map.set_range(0, 16383, 4);
        map.index();
        assert_eq!(map.lookup, Lookup::Few);
        agrees(&map);
        assert_eq!(map.slots_of(4).count(), SLOTS);
        assert_eq!(map.slots_of(7).count(), 0);
    }

    #[test]
    fn a_few_runs_are_counted_as_the_full_walk_counts_them() {
        for runs in 1..=FEW {
            let mut map = SlotMap::default();
            let width = SLOTS / runs;
            for run in 0..runs {
                let last = if run + 1 == runs { SLOTS - 1 } else { (run + 1) * width - 1 };
                map.set_range((run * width) as u16, last as u16, run as u16);
            }
            map.index();
            assert_eq!(map.lookup, Lookup::Few, "{runs} runs");
            agrees(&map);
        }
    }

    #[test]
    fn a_map_with_every_slot_its_own_run_still_answers() {
        let mut map = SlotMap::default();
        for slot in 0..SLOTS as u16 {
            map.set_range(slot, slot, slot % 5);
        }
        map.index();
        assert_eq!(map.lookup, Lookup::Table);
        agrees(&map);
        // Unserved slots between served ones.
        map.clear();
        map.set_range(10, 20, 1);
        map.index();
        assert_eq!(map.lookup, Lookup::Few);
        assert_eq!((map.get(9), map.get(10), map.get(20), map.get(21)), (NONE, 1, 1, NONE));
        agrees(&map);
    }
}
