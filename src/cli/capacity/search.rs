//! The capacity search: double the rate while a step holds, then bisect between the last rate
//! that held and the first that missed, each step one open-loop run through the run API and
//! a miss tried twice before it counts.

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::cli::parse;
use crate::cli::run::{self, RunContext};
use crate::config::Config;
use crate::config::parse::InvalidValue;
use crate::engine::Outcome;

/// A latency objective: `p99=1ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// Percentile, 0 to 100.
    pub percentile: f64,
    pub bound: Duration,
}

/// Parses `pNN[.N]=DURATION` (`p99=1ms`, `p99.9=500us`, `p50=0.2ms`).
pub fn slo(s: &str) -> Result<Slo, InvalidValue> {
    let bad = || format!("expected a percentile and a bound such as p99=1ms or p99.9=500us, got '{s}'");
    let (p, bound) = s.split_once('=').ok_or_else(bad)?;
    let percentile: f64 = p.trim().strip_prefix(['p', 'P']).ok_or_else(bad)?.parse().map_err(|_| bad())?;
    if !(percentile > 0.0 && percentile < 100.0) {
        return Err(format!("'{s}': the percentile must be above 0 and below 100").into());
    }
    let bound = match bound.trim().strip_suffix("us") {
        Some(us) => Duration::from_secs_f64(us.parse::<f64>().map_err(|_| bad())? / 1e6),
        None => parse::duration(bound).map_err(|_| bad())?,
    };
    if bound.is_zero() {
        return Err(bad().into());
    }
    Ok(Slo { percentile, bound })
}

/// One step of the search.
pub(super) struct Step {
    pub(super) requested: f64,
    pub(super) achieved: f64,
    pub(super) latency_us: f64,
    pub(super) errors: u64,
    pub(super) held: bool,
    pub(super) client_share: Option<f64>,
}

/// A step holds when the percentile is within bound and the rate was delivered (95 %), both
/// of the requests in `rows` (the searched role's, or every row).
pub(super) fn judge(requested: f64, outcome: &Outcome, rows: std::ops::Range<usize>, slo: Slo) -> Step {
    let total = crate::stats::total(outcome.ops.get(rows).unwrap_or(&outcome.ops));
    let secs = outcome.elapsed.as_secs_f64().max(1e-9);
    let achieved = total.count as f64 / secs;
    let latency_us = total.latency_ns.value_at_quantile(slo.percentile / 100.0) as f64 / 1000.0;
    let held = latency_us <= slo.bound.as_secs_f64() * 1e6 && achieved >= 0.95 * requested && total.count > 0;
    let client_share = outcome.client_share().map(|s| s.share);
    Step { requested, achieved, latency_us, errors: total.errors, held, client_share }
}

pub(super) type Found = (Vec<Step>, Option<f64>, bool);

/// Runs the search: one measured run per step, each through the run API.
pub(super) fn search(
    config: &mut Config,
    role: Option<&str>,
    slo: Slo,
    (start, max, precision): (f64, f64, f64),
    cx: &RunContext<'_>,
) -> Result<Found, crate::net::ConnectError> {
    let stop = cx.stop;
    let mut steps = Vec::new();
    let best = climb(
        start,
        max,
        precision,
        || stop.load(Ordering::SeqCst),
        |rate| {
            config.set_rate_of(role, rate);
            let outcome = run::measure(config, cx)?;
            let step = judge(rate, &outcome, config.rows_of(role), slo);
            eprintln!(
                "  {:>12.0} req/s requested, {:>12.0} achieved, p{}={:.3} ms: {}",
                step.requested,
                step.achieved,
                slo.percentile,
                step.latency_us / 1000.0,
                if step.held { "holds" } else { "misses" }
            );
            let held = step.held;
            steps.push(step);
            Ok(held)
        },
    )?;
    Ok((steps, best, stop.load(Ordering::SeqCst)))
}

/// The search itself, over any `holds(rate)`: double from `start` while it holds, then bisect
/// between the last rate that held and the first that missed until they are within
/// `precision` percent. A miss is tried a second time before it counts.
fn climb<E>(
    start: f64,
    max: f64,
    precision: f64,
    interrupted: impl Fn() -> bool,
    mut holds: impl FnMut(f64) -> Result<bool, E>,
) -> Result<Option<f64>, E> {
    let mut confirmed = |rate: f64| -> Result<bool, E> { Ok(holds(rate)? || (!interrupted() && holds(rate)?)) };
    // Bracket: the highest rate that held and the lowest that did not.
    let (mut good, mut bad): (Option<f64>, Option<f64>) = (None, None);
    let mut rate = start.min(max);
    while !interrupted() {
        if confirmed(rate)? {
            good = Some(rate);
            if rate >= max {
                break;
            }
            rate = (rate * 2.0).min(max);
        } else {
            bad = Some(rate);
            if good.is_some() || rate < 2.0 {
                break;
            }
            rate /= 2.0;
        }
    }
    if let (Some(mut lo), Some(mut hi)) = (good, bad) {
        while (hi - lo) / lo > precision / 100.0 && !interrupted() {
            let mid = ((lo + hi) / 2.0).round();
            if confirmed(mid)? { lo = mid } else { hi = mid }
        }
        good = Some(lo);
    }
    Ok(good)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A synthetic server whose capacity is `knee`: a rate holds below it, except that one
    /// step in `flake_every` misses by chance, as steps on a busy machine do.
    fn synthetic(knee: f64, flake_every: usize) -> impl FnMut(f64) -> Result<bool, ()> {
        let mut calls = 0;
        move |rate| {
            calls += 1;
            Ok(rate <= knee && (flake_every == 0 || calls % flake_every != 0))
        }
    }

    #[test]
    fn climb_lands_within_the_precision_of_the_knee() {
        for knee in [1_234.0, 60_000.0, 512_000.0, 2_000_000.0] {
            let found = climb(1000.0, 10e6, 5.0, || false, synthetic(knee, 0)).unwrap().unwrap();
            assert!(found <= knee && found >= knee * 0.95, "knee {knee}: found {found}");
        }
    }

    #[test]
    fn one_flaky_miss_does_not_end_the_climb() {
        for flake_every in [3, 4, 5, 7] {
            let found = climb(1000.0, 10e6, 5.0, || false, synthetic(100_000.0, flake_every)).unwrap().unwrap();
            assert!((95_000.0..=100_000.0).contains(&found), "flaky every {flake_every}: {found}");
        }
    }

    #[test]
    fn below_the_start_it_halves_and_at_the_ceiling_it_stops() {
        let found = climb(1000.0, 10e6, 5.0, || false, synthetic(300.0, 0)).unwrap().unwrap();
        assert!((285.0..=300.0).contains(&found), "{found}");
        assert_eq!(climb(1000.0, 4000.0, 5.0, || false, synthetic(1e9, 0)).unwrap(), Some(4000.0));
        assert_eq!(climb(1000.0, 4000.0, 5.0, || false, synthetic(0.5, 0)).unwrap(), None);
    }
}
