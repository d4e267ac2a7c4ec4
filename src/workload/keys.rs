//! Key number generators, one per (connection, key pattern): sequential, parallel slices,
//! uniform, gaussian and zipf.

use super::rng::{Rng, Zipf};
use crate::config::KeyPattern;

#[derive(Debug, Clone)]
enum Kind {
    /// Walk `lo..=hi` in order, wrapping.
    Walk,
    Uniform,
    Gaussian {
        median: f64,
        stddev: f64,
    },
    Zipf(Zipf),
}

/// Draws key numbers in `lo..=hi`.
#[derive(Debug, Clone)]
pub struct KeyGen {
    kind: Kind,
    lo: u64,
    hi: u64,
    next: u64,
}

impl KeyGen {
    /// A generator over `min..=max`; `slice` is this connection's own part (used by Parallel).
    pub fn new(pattern: KeyPattern, min: u64, max: u64, slice: Option<(u64, u64)>) -> KeyGen {
        let (lo, hi, kind) = match pattern {
            KeyPattern::Sequential => (min, max, Kind::Walk),
            // A connection with an empty slice (more connections than keys) walks the range.
            KeyPattern::Parallel => match slice {
                Some((lo, hi)) => (lo, hi, Kind::Walk),
                None => (min, max, Kind::Walk),
            },
            KeyPattern::Random => (min, max, Kind::Uniform),
            KeyPattern::Gaussian { median, stddev } => {
                let span = (max - min) as f64;
                let median = median.unwrap_or(min as f64 + span / 2.0);
                let stddev = stddev.unwrap_or(span / 6.0);
                (min, max, Kind::Gaussian { median, stddev })
            }
            KeyPattern::Zipf { exponent } => (min, max, Kind::Zipf(Zipf::new(max - min + 1, exponent))),
        };
        KeyGen { kind, lo, hi, next: lo }
    }

    /// The keys one pass of a walk (S, P) takes; `None` for a draw.
    pub fn walk_span(&self) -> Option<u64> {
        matches!(self.kind, Kind::Walk).then(|| (self.hi - self.lo).saturating_add(1))
    }

    #[inline(always)]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        match &self.kind {
            Kind::Walk => {
                let key = self.next;
                self.next = if key >= self.hi { self.lo } else { key + 1 };
                key
            }
            Kind::Uniform => self.lo + rng.below(self.hi - self.lo + 1),
            Kind::Gaussian { median, stddev } => loop {
                // Redraw outside the range rather than pile the tails onto its ends.
                let x = (median + stddev * rng.normal()).round();
                if x >= self.lo as f64 && x <= self.hi as f64 {
                    return x as u64;
                }
            },
            Kind::Zipf(z) => self.lo + z.sample(rng) - 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_walks_its_slice_and_wraps() {
        let mut rng = Rng::derive(0, 0);
        let mut g = KeyGen::new(KeyPattern::Parallel, 0, 99, Some((10, 12)));
        let keys: Vec<u64> = (0..5).map(|_| g.next(&mut rng)).collect();
        assert_eq!(keys, vec![10, 11, 12, 10, 11]);
    }

    #[test]
    fn gaussian_concentrates_around_the_median() {
        let mut rng = Rng::derive(0, 0);
        let pattern = KeyPattern::Gaussian { median: Some(500.0), stddev: Some(50.0) };
        let mut g = KeyGen::new(pattern, 0, 999, Some((0, 999)));
        let within: usize = (0..10_000).filter(|_| g.next(&mut rng).abs_diff(500) <= 50).count();
        // About 68 % within one standard deviation.
        assert!((6_500..7_100).contains(&within), "{within}");
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut rng = Rng::derive(0, 0);
        let mut g = KeyGen::new(KeyPattern::Random, 5, 7, Some((5, 7)));
        assert!((0..1000).all(|_| (5..=7).contains(&g.next(&mut rng))));
    }
}
