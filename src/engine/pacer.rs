//! When a connection may send its next request, and the time it was meant to be sent.
//! Latency is measured from that intended time, so a paced run cannot hide a stall.

use std::time::{Duration, Instant};

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

    /// When this connection next wants to send, if it waits on a clock at all.
    pub fn next_due(&self) -> Option<Instant> {
        match self {
            Pacer::Closed => None,
            Pacer::Rate { next, .. } => Some(*next),
        }
    }
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
}
