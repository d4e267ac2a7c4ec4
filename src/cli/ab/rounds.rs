//! The interleaved rounds of `respbench ab`: pairs of one A round and one B round, in an order
//! drawn per pair from the seed (AB or BA), each round a warmed-up engine run through the run
//! API, so the machine's drift falls on both sides alike. What each round measured comes back
//! in memory; each side's histograms are merged for its pooled percentiles.

use std::sync::atomic::Ordering;

use super::error::AbError;
use crate::cli::notes::Notes;
use crate::cli::run::{self, Plan, RunContext};
use crate::config::Config;
use crate::engine::Outcome;
use crate::report::ab::{Pooled, RoundFigures};
use crate::stats::OpStats;
use crate::workload::rng::Rng;

/// What the rounds measured, per side (0: A, 1: B).
pub struct Rounds {
    pub figures: [Vec<RoundFigures>; 2],
    totals: [OpStats; 2],
    seconds: [f64; 2],
    /// `AB` or `BA` per pair, as run.
    pub order: Vec<String>,
    pub interrupted: bool,
    /// The checks' warnings, each side's once, named.
    pub warnings: Vec<String>,
}

impl Rounds {
    pub fn pooled(&self, side: usize) -> Pooled {
        let t = &self.totals[side];
        Pooled::of(&t.latency_ns, t.count, t.errors, self.seconds[side])
    }

    /// Complete pairs so far.
    pub fn pairs(&self) -> usize {
        self.figures[0].len().min(self.figures[1].len())
    }
}

/// One round's figures: throughput over its measured time, percentiles of its own histogram.
fn figures(outcome: &Outcome) -> RoundFigures {
    let total = outcome.total();
    let secs = outcome.elapsed.as_secs_f64();
    let q = |p: f64| total.latency_ns.value_at_quantile(p) as f64 / 1000.0;
    RoundFigures {
        ops_per_sec: if secs > 0.0 { total.count as f64 / secs } else { 0.0 },
        p50_us: q(0.5),
        p99_us: q(0.99),
        p999_us: q(0.999),
        errors: total.errors,
    }
}

/// The sides' names, by index.
const LETTERS: [&str; 2] = ["A", "B"];

/// How many times a pair runs before a round that completed no request ends the comparison.
const PAIR_ATTEMPTS: usize = 3;

/// One pair, A's and B's round in `sides`' order; `None` when a stop cut it short. A pair
/// counts whole or not at all: a stop between its rounds drops the first. A round that completed
/// no request (a server stalled for all of it: an fsync behind a busy disk) has no throughput
/// to take a ratio of, so the pair runs again, said in a warning, up to `PAIR_ATTEMPTS` times.
fn run_pair(
    configs: [&Config; 2],
    sides: [usize; 2],
    rounds: &mut Rounds,
    notes: &Notes,
    cx: &RunContext<'_>,
) -> Result<Option<Vec<(usize, Outcome)>>, AbError> {
    let pair_number = rounds.pairs() + 1;
    let mut attempt = 1;
    loop {
        let mut pair = Vec::with_capacity(2);
        for side in sides {
            let config = configs[side];
            let first = rounds.figures[side].is_empty() && attempt == 1;
            let plan = Plan { config, runs: 1, checks: first.then_some(notes) };
            let letter = LETTERS[side];
            let result = run::run(&plan, cx, &mut [])
                .map_err(|e| format!("side {letter}: {}", run::failure_message(config, &e)))?;
            rounds.warnings.extend(result.warnings.iter().map(|w| format!("{letter}: {w}")));
            match result.runs.into_iter().next() {
                Some(outcome) if !outcome.interrupted && !cx.stop.load(Ordering::SeqCst) => pair.push((side, outcome)),
                _ => return Ok(None),
            }
        }
        let Some(&(stalled, ref outcome)) = pair.iter().find(|(_, o)| o.total().count == 0) else {
            return Ok(Some(pair));
        };
        let letter = LETTERS[stalled];
        let ms = outcome.elapsed.as_secs_f64() * 1000.0;
        let round = format!("{letter}'s round of pair {pair_number} completed no request in {ms:.0} ms");
        if attempt == PAIR_ATTEMPTS {
            return Err(AbError(format!("{round}, as in each of its {PAIR_ATTEMPTS} attempts: no ratio to judge")));
        }
        eprintln!("respbench ab: {round}; the pair runs again");
        rounds.warnings.push(format!("{round}; the pair ran again"));
        attempt += 1;
    }
}

/// Runs `pairs` round pairs of `configs` (A, B); `each_pair` hears the rounds after every
/// complete pair. Stops early (marked interrupted) when the context's stop flag is set.
pub fn run(
    configs: [&Config; 2],
    pairs: usize,
    seed: u64,
    cx: &RunContext<'_>,
    each_pair: &mut dyn FnMut(&Rounds),
) -> Result<Rounds, AbError> {
    let mut rng = Rng::derive(seed, 0x0ab0);
    let mut rounds = Rounds {
        figures: [Vec::new(), Vec::new()],
        totals: [OpStats::default(), OpStats::default()],
        seconds: [0.0; 2],
        order: Vec::new(),
        interrupted: false,
        warnings: Vec::new(),
    };
    let notes = Notes::spoken();
    for _ in 0..pairs {
        let a_first = rng.below(2) == 0;
        let sides: [usize; 2] = if a_first { [0, 1] } else { [1, 0] };
        let Some(pair) = run_pair(configs, sides, &mut rounds, &notes, cx)? else {
            rounds.interrupted = true;
            break;
        };
        for (side, outcome) in pair {
            rounds.figures[side].push(figures(&outcome));
            rounds.totals[side].merge(&outcome.total());
            rounds.seconds[side] += outcome.elapsed.as_secs_f64();
        }
        rounds.order.push(if a_first { "AB" } else { "BA" }.into());
        each_pair(&rounds);
    }
    Ok(rounds)
}
