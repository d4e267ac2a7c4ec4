//! When a connection may send its next request, and the time it was meant to be sent.
//! Latency is measured from that intended time, so a paced run cannot hide a stall.

use std::time::{Duration, Instant};

use crate::config::Config;
use crate::workload::rng::Rng;

/// A connection's send schedule.
#[derive(Debug, Clone)]
pub enum Pacer {
    /// Send whenever a pipeline slot is free; the intended time is the actual send time.
    Closed,
    /// A fixed arrival rate: one request every `gap` (constant), or with exponential gaps
    /// of mean `gap` (Poisson), starting at `next`.
    Rate { gap: Duration, poisson: bool, next: Instant, rng: Rng },
}

impl Pacer {
    /// If a request may go now, its intended send time.
    #[inline]
    pub fn due(&mut self, now: Instant) -> Option<Instant> {
        match self {
            Pacer::Closed => Some(now),
            Pacer::Rate { gap, poisson, next, rng } => {
                if *next > now {
                    return None;
                }
                let intended = *next;
                *next += if *poisson { gap.mul_f64(-(1.0 - rng.unit()).ln()) } else { *gap };
                Some(intended)
            }
        }
    }

    /// The sends a second this schedule asks for on average (none in closed loop).
    pub fn per_sec(&self) -> f64 {
        match self {
            Pacer::Closed => 0.0,
            Pacer::Rate { gap, .. } => 1.0 / gap.as_secs_f64(),
        }
    }

    /// When this connection next wants to send, if it waits on a clock at all.
    pub fn next_due(&self) -> Option<Instant> {
        match self {
            Pacer::Closed => None,
            Pacer::Rate { next, .. } => Some(*next),
        }
    }
}

/// Connection `index`'s schedule for a run whose measured phase starts at `start`.
/// Open-loop connections are staggered over one gap so that the arrivals of all connections
/// together are evenly spread rather than in bursts.
/// In a run of several roles, a connection keeps its group's rate among its group's connections.
pub fn for_connection(config: &Config, index: usize, start: Instant) -> Pacer {
    let (config, index) = config.group_of(index);
    let Some(rate) = config.rate else {
        return Pacer::Closed;
    };
    let conns = config.connections as f64;
    let gap = Duration::from_secs_f64(conns / rate.per_sec);
    let next = start + gap.mul_f64(index as f64 / conns);
    Pacer::Rate { gap, poisson: rate.poisson, next, rng: Rng::derive(config.seed ^ 0x7061_6365, index as u64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_loop_is_always_due_now() {
        let now = Instant::now();
        assert_eq!(Pacer::Closed.due(now), Some(now));
    }

    #[test]
    fn constant_rate_keeps_its_schedule_when_late() {
        let start = Instant::now();
        let gap = Duration::from_millis(10);
        let mut p = Pacer::Rate { gap, poisson: false, next: start, rng: Rng::derive(0, 0) };
        // Late by 25 ms: the three overdue sends keep their intended times.
        let late = start + Duration::from_millis(25);
        assert_eq!(p.due(late), Some(start));
        assert_eq!(p.due(late), Some(start + gap));
        assert_eq!(p.due(late), Some(start + 2 * gap));
        assert_eq!(p.due(late), None);
        assert_eq!(p.next_due(), Some(start + 3 * gap));
    }

    #[test]
    fn poisson_schedule_has_exponential_gaps() {
        // The intended times themselves, before any timer or network jitter.
        let start = Instant::now();
        let gap = Duration::from_micros(500);
        let mut p = Pacer::Rate { gap, poisson: true, next: start, rng: Rng::derive(11, 0) };
        let far = start + Duration::from_secs(3600);
        let times: Vec<Instant> = (0..20_000).map(|_| p.due(far).unwrap()).collect();
        let mut gaps: Vec<f64> = times.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((mean - 0.0005).abs() < 0.00001, "{mean}");
        gaps.sort_by(f64::total_cmp);
        let n = gaps.len() as f64;
        let ks = gaps
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let cdf = 1.0 - (-g / 0.0005).exp();
                (cdf - i as f64 / n).abs().max((cdf - (i + 1) as f64 / n).abs())
            })
            .fold(0.0, f64::max);
        // The 1 % critical value for n = 20,000 is 1.63 / sqrt(n) = 0.0115.
        assert!(ks < 0.0115, "KS distance {ks}");
    }
}
