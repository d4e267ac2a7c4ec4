//! `respbench capacity --slo p99=1ms`: the highest arrival rate that keeps a latency
//! percentile under a bound. Steps the rate up by doubling, then bisects between the last
//! rate that held and the first that did not, one short open-loop run per step; a miss is
//! tried a second time before it counts, so one hiccup of the machine does not end the climb.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

use super::options::Args;
use super::parse;
use super::run::RunContext;
use super::usage::{EXIT_FAILURE, parse_args, usage_error};
use crate::config::StopAfter;
pub use search::{Slo, slo};
use search::{Step, search};

mod search;
use crate::report::document::{self, Capacity, CapacityResult, CapacityStep};

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
    /// With several --role: the role whose rate is searched (the others keep their own rates);
    /// with one role, that role's.
    #[arg(long, value_name = "NAME", help_heading = "Capacity")]
    pub(crate) search_role: Option<String>,
    /// Length of each step (the run's --duration); default 3s.
    #[command(flatten)]
    pub(crate) run: Args,
}

pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: CapacityArgs = match parse_args(args) {
        Ok(a) => a,
        Err(code) => return code,
    };
    let stop = super::signals::install_sigint();
    execute(args, &RunContext::new(&stop)).0
}

/// The search a command line asks for, its table on stdout and its `--json`; the exit code and
/// the result (also when interrupted). A scenario's capacity phase comes here too.
pub(crate) fn execute(args: CapacityArgs, cx: &RunContext<'_>) -> (ExitCode, Option<CapacityResult>) {
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
    let searched = match searched_role(&mut run, args.search_role.as_deref(), start) {
        Ok(name) => name,
        Err(msg) => return (usage_error(&msg), None),
    };
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
    let found = search(&mut config, searched.as_deref(), slo, (start, max, precision), &cx);
    scenario_flags.finish_metrics(own);
    match found {
        Ok((steps, best, interrupted)) => {
            let taken = json.as_deref().into_iter().chain(cx.stdout_taken());
            crate::report::output::print_report(&render(&steps, best, slo), taken);
            let result = typed(&steps, best, slo);
            if let Some(path) = &json {
                let text = serde_json::to_string_pretty(&result).expect("plain data serialises") + "\n";
                if let Err(e) = crate::report::output::write(path, text.as_bytes()) {
                    eprintln!("respbench: {e}");
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

/// The role whose rate the search steps (`None`: the run's, without roles or with one), each
/// other role at its own rate; the searched role starts at `start` so that it plans as a
/// role at a rate. Several roles and no --search-role, or a name no role has, is refused.
fn searched_role(run: &mut Args, named: Option<&str>, start: f64) -> Result<Option<String>, String> {
    let names: Vec<&str> = run.role.iter().map(|r| r.name.as_str()).collect();
    let name = match (named, names.as_slice()) {
        (None, []) => return Ok(None),
        (Some(n), []) => return Err(format!("--search-role {n}: the run has no roles (give --role, or drop it)")),
        (None, [one]) => one.to_string(),
        (None, _) => {
            return Err(format!(
                "capacity with several roles searches one role's rate: name it with --search-role NAME (one of {})",
                names.join(", ")
            ));
        }
        (Some(n), _) if names.contains(&n) => n.to_string(),
        (Some(n), _) => return Err(format!("--search-role {n} names no role (the roles: {})", names.join(", "))),
    };
    for role in run.role.iter_mut().filter(|r| r.name == name) {
        if !crate::config::role_plan::set_role_rate(role, start) {
            // The command line's own mix: its rate is the run's.
            run.rate = Some(start as u64);
        }
    }
    Ok(Some(name).filter(|_| run.role.len() > 1))
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
            client_share_of_p99: s.client_share,
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
}
