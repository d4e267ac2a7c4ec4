//! `respbench capacity --slo p99=1ms`: the highest arrival rate that keeps a latency
//! percentile under a bound. Steps the rate up by doubling, then bisects between the last
//! rate that held and the first that did not, one short open-loop run per step; a miss is
//! tried a second time before it counts, so one hiccup of the machine does not end the climb.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use clap::Parser;

use super::run::{self, RunContext};
use super::{Args, EXIT_FAILURE, parse, parse_args, usage_error};
use crate::config::{Config, Rate, StopAfter};
use crate::engine::Outcome;
use crate::report::document::{self, Capacity, CapacityResult, CapacityStep};

/// A latency objective: `p99=1ms`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slo {
    /// Percentile, 0 to 100.
    pub percentile: f64,
    pub bound: Duration,
}

/// Parses `pNN[.N]=DURATION` (`p99=1ms`, `p99.9=500us`, `p50=0.2ms`).
pub fn slo(s: &str) -> Result<Slo, String> {
    let bad = || format!("expected a percentile and a bound such as p99=1ms or p99.9=500us, got '{s}'");
    let (p, bound) = s.split_once('=').ok_or_else(bad)?;
    let percentile: f64 = p.trim().strip_prefix(['p', 'P']).ok_or_else(bad)?.parse().map_err(|_| bad())?;
    if !(percentile > 0.0 && percentile < 100.0) {
        return Err(format!("'{s}': the percentile must be above 0 and below 100"));
    }
    let bound = match bound.trim().strip_suffix("us") {
        Some(us) => Duration::from_secs_f64(us.parse::<f64>().map_err(|_| bad())? / 1e6),
        None => parse::duration(bound).map_err(|_| bad())?,
    };
    if bound.is_zero() {
        return Err(bad());
    }
    Ok(Slo { percentile, bound })
}

/// Finds the highest rate that meets a latency objective.
#[derive(Debug, Parser)]
#[command(name = "respbench capacity", version, disable_help_flag = true, max_term_width = 100)]
pub(crate) struct CapacityArgs {
    /// The objective: a percentile of the response time (from the intended send) and its bound.
    #[arg(long, value_parser = slo, help_heading = "Capacity")]
    pub(crate) slo: Slo,
    /// First rate tried, requests per second.
    #[arg(long, default_value = "1000", value_parser = parse::positive, help_heading = "Capacity")]
    pub(crate) start_rate: u64,
    /// Highest rate tried.
    #[arg(long, default_value = "10m", value_parser = parse::positive, help_heading = "Capacity")]
    pub(crate) max_rate: u64,
    /// Stop bisecting when the bracket is this close (percent of the rate that held).
    #[arg(long, default_value_t = 5.0, help_heading = "Capacity")]
    pub(crate) precision: f64,
    /// Length of each step (the run's --duration); default 3s.
    #[command(flatten)]
    pub(crate) run: Args,
}

/// One step of the search.
struct Step {
    requested: f64,
    achieved: f64,
    latency_us: f64,
    errors: u64,
    held: bool,
}

/// A step holds when the percentile is within bound and the rate was delivered (95 %).
fn judge(requested: f64, outcome: &Outcome, slo: Slo) -> Step {
    let total = outcome.total();
    let secs = outcome.elapsed.as_secs_f64().max(1e-9);
    let achieved = total.count as f64 / secs;
    let latency_us = total.latency_ns.value_at_quantile(slo.percentile / 100.0) as f64 / 1000.0;
    let held = latency_us <= slo.bound.as_secs_f64() * 1e6 && achieved >= 0.95 * requested && total.count > 0;
    Step { requested, achieved, latency_us, errors: total.errors, held }
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: CapacityArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let stop = super::install_sigint();
    execute(args, &RunContext::new(&stop)).0
}

/// A scenario's capacity phase: its flags as typed values.
pub(crate) fn phase(args: CapacityArgs, cx: &RunContext<'_>) -> (ExitCode, Option<CapacityResult>) {
    execute(args, cx)
}

/// The search a command line asks for, its table on stdout and its `--json`; the exit code and
/// the result (also when interrupted).
fn execute(args: CapacityArgs, cx: &RunContext<'_>) -> (ExitCode, Option<CapacityResult>) {
    if let Err(msg) = args.run.scenario.refuse_in("capacity") {
        return (usage_error(&msg), None);
    }
    if args.run.rate.is_some() || args.run.requests.is_some() || args.run.runs > 1 {
        return (usage_error("capacity chooses the rates itself: drop --rate, -n and --runs"), None);
    }
    if !(args.precision > 0.0 && args.precision < 100.0) {
        let msg = format!("--precision {} must be a percentage above 0 and below 100", args.precision);
        return (usage_error(&msg), None);
    }
    let (slo, start, max, precision) = (args.slo, args.start_rate as f64, args.max_rate as f64, args.precision);
    let mut run = args.run;
    let json = run.json.take();
    let step_length = run.duration.take().unwrap_or(Duration::from_secs(3));
    let scenario_flags = run.scenario.clone();
    let (mut config, _) = match run.into_config() {
        Ok(c) => c,
        Err(msg) => return (usage_error(&msg), None),
    };
    config.stop = StopAfter::Duration(step_length);
    let own = match scenario_flags.serve_metrics(cx) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("respbench: {e}");
            return (ExitCode::from(EXIT_FAILURE), None);
        }
    };
    let cx = cx.with_metrics(own.clone().or_else(|| cx.metrics.clone()));
    let found = search(&mut config, slo, (start, max, precision), &cx);
    scenario_flags.finish_metrics(own);
    match found {
        Ok((steps, best, interrupted)) => {
            print!("{}", render(&steps, best, slo));
            let result = typed(&steps, best, slo);
            if let Some(path) = &json {
                let text = serde_json::to_string_pretty(&result).expect("plain data serialises") + "\n";
                if let Err(e) = crate::report::write_atomic(path, text.as_bytes()) {
                    eprintln!("respbench: cannot write {}: {e}", path.display());
                    return (ExitCode::from(EXIT_FAILURE), Some(result));
                }
            }
            (if interrupted { super::exit::interrupted() } else { ExitCode::SUCCESS }, Some(result))
        }
        Err(e) => {
            eprintln!("respbench: {e}");
            (ExitCode::from(EXIT_FAILURE), None)
        }
    }
}

type Found = (Vec<Step>, Option<f64>, bool);

/// Runs the search: one measured run per step, each through the run API.
fn search(
    config: &mut Config,
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
            config.rate = Some(Rate { per_sec: rate, poisson: config.rate.is_some_and(|r| r.poisson) });
            let outcome = run::measure(config, cx)?;
            let step = judge(rate, &outcome, slo);
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

/// The search's result: the objective, every step and the answer (what `--json` writes).
fn typed(steps: &[Step], best: Option<f64>, slo: Slo) -> CapacityResult {
    let steps = steps
        .iter()
        .map(|s| CapacityStep {
            requested_per_sec: s.requested,
            achieved_per_sec: s.achieved,
            latency_us: s.latency_us,
            errors: s.errors,
            held: s.held,
        })
        .collect();
    let slo = document::Slo { percentile: slo.percentile, bound_us: slo.bound.as_secs_f64() * 1e6 };
    CapacityResult { capacity: Capacity { slo, steps, requests_per_sec: best } }
}

fn render(steps: &[Step], best: Option<f64>, slo: Slo) -> String {
    let mut out = String::new();
    let bound_ms = slo.bound.as_secs_f64() * 1000.0;
    let _ = writeln!(
        out,
        "Capacity search: p{} of the response time (from the intended send) <= {bound_ms} ms",
        slo.percentile
    );
    let _ = writeln!(
        out,
        "{:>6}{:>16}{:>16}{:>14}{:>10}  result",
        "step", "requested/s", "achieved/s", "latency ms", "errors"
    );
    for (i, s) in steps.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>6}{:>16.0}{:>16.0}{:>14.3}{:>10}  {}",
            i + 1,
            s.requested,
            s.achieved,
            s.latency_us / 1000.0,
            s.errors,
            if s.held { "holds" } else { "misses" }
        );
    }
    match best {
        Some(rate) => {
            let _ = writeln!(out, "Capacity: {rate:.0} requests per second hold p{}<={bound_ms} ms", slo.percentile);
        }
        None => {
            let _ = writeln!(out, "Capacity: no rate tried holds p{}<={bound_ms} ms", slo.percentile);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_objectives() {
        assert_eq!(slo("p99=1ms"), Ok(Slo { percentile: 99.0, bound: Duration::from_millis(1) }));
        assert_eq!(slo("p99.9=500us"), Ok(Slo { percentile: 99.9, bound: Duration::from_micros(500) }));
        assert!(slo("p100=1ms").is_err());
        assert!(slo("99=1ms").unwrap_err().contains("'99=1ms'"));
        assert!(slo("p99").is_err());
    }

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
