//! One load machine's part of a run spread over several (`--shard I/N`): which keys it walks,
//! its share of a total request count and rate, and its own random streams. Kept apart so the
//! splitting rules live in one place and are tested on their own.

use super::extras::Shard;
use super::parse::InvalidValue;
use super::{Config, KeyPattern, StopAfter};

/// `total` split over `count` parts: part `index`'s share, the remainder spread over the first
/// parts so the shares add up to `total` exactly.
pub fn share(total: u64, index: u32, count: u32) -> u64 {
    total / u64::from(count) + u64::from(u64::from(index) < total % u64::from(count))
}

/// Part `index` of `count` of `min..=max`, contiguous, the parts disjoint and covering it.
pub fn part(min: u64, max: u64, index: u32, count: u32) -> Option<(u64, u64)> {
    let span = u128::from(max - min) + 1;
    let lo = u128::from(min) + span * u128::from(index) / u128::from(count);
    let next = u128::from(min) + span * (u128::from(index) + 1) / u128::from(count);
    (next > lo).then(|| (lo as u64, (next - 1) as u64))
}

/// The seed shard `index` draws its streams from: the run's seed for a single shard, else a
/// mix of both, so no two shards (and no two connections anywhere) share a stream.
pub fn seed_for(seed: u64, index: u32, count: u32) -> u64 {
    if count <= 1 {
        return seed;
    }
    let mut z = seed ^ (u64::from(index) + 1).wrapping_mul(0xd1b5_4a32_d192_ed03);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Config {
    /// Turns the whole plan into shard `index` of `count`'s part of it. Errors name what
    /// cannot be split (a total smaller than the number of shards).
    pub fn into_shard(&mut self, index: u32, count: u32, source: &str) -> Result<(), InvalidValue> {
        let total_requests = match self.stop {
            StopAfter::Requests(n) => Some(n),
            _ => None,
        };
        if let Some(n) = total_requests {
            if n < u64::from(count) {
                return Err(
                    format!("-n {n} cannot be split over {count} shards: give at least {count} requests").into()
                );
            }
            self.stop = StopAfter::Requests(share(n, index, count));
        }
        let total_rate = self.rate.map(|r| r.per_sec as u64);
        if let (Some(rate), Some(r)) = (total_rate, self.rate.as_mut()) {
            if rate < u64::from(count) {
                return Err(format!(
                    "--rate {rate} cannot be split over {count} shards: give at least {count} per second"
                )
                .into());
            }
            r.per_sec = share(rate, index, count) as f64;
        }
        if self.stop == StopAfter::AllKeys && self.keys.len() < u64::from(count) {
            return Err(format!(
                "-n allkeys over {} keys cannot be split over {count} shards: widen --key-min/--key-max",
                self.keys.len()
            )
            .into());
        }
        let keys = part(self.keys.min, self.keys.max, index, count);
        self.extras.shard =
            Some(Shard { index, count, source: source.to_string(), seed: self.seed, total_requests, total_rate, keys });
        self.seed = seed_for(self.seed, index, count);
        Ok(())
    }

    /// The keys `-n allkeys` and the sequential patterns walk: this shard's part, or all.
    pub fn walked_keys(&self) -> (u64, u64) {
        match &self.extras.shard {
            Some(s) => s.keys.unwrap_or((self.keys.min, self.keys.max)),
            None => (self.keys.min, self.keys.max),
        }
    }

    /// The key range a command with `pattern` draws from: the shard's part for the walks.
    pub fn keys_for(&self, pattern: KeyPattern) -> (u64, u64) {
        match pattern {
            KeyPattern::Sequential | KeyPattern::Parallel => self.walked_keys(),
            _ => (self.keys.min, self.keys.max),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_exactly() {
        for (total, count) in [(10, 3), (7, 7), (100_000, 2), (5, 4), (1_000_001, 16)] {
            assert_eq!((0..count).map(|i| share(total, i, count)).sum::<u64>(), total);
        }
    }

    #[test]
    fn parts_are_disjoint_and_cover_the_range() {
        for (min, max, count) in [(1, 100_000, 2), (0, 9, 3), (5, 5, 1), (1, 100, 7), (0, u64::MAX - 1, 5)] {
            let parts: Vec<(u64, u64)> = (0..count).filter_map(|i| part(min, max, i, count)).collect();
            assert_eq!(parts[0].0, min);
            assert_eq!(parts.last().unwrap().1, max);
            for w in parts.windows(2) {
                assert_eq!(w[0].1 + 1, w[1].0);
            }
        }
        assert_eq!(part(1, 100_000, 1, 2), Some((50_001, 100_000)));
    }

    #[test]
    fn shards_get_distinct_seeds() {
        let seeds: std::collections::BTreeSet<u64> = (0..64).map(|i| seed_for(7, i, 64)).collect();
        assert_eq!(seeds.len(), 64);
        assert_eq!(seed_for(7, 0, 1), 7);
    }

    #[test]
    fn a_shard_takes_its_part_of_allkeys() {
        let mut c = crate::config::tests::sample();
        c.stop = StopAfter::AllKeys;
        c.keys.max = 10;
        c.into_shard(1, 2, "--shard").unwrap();
        assert_eq!(c.walked_keys(), (6, 10));
        assert_eq!(c.planned_requests(), Some(5));
        assert_eq!((0..3).map(|i| c.quota(i).unwrap()).sum::<u64>(), 5);
        assert_eq!(c.slice(0), Some((6, 6)));
    }
}
