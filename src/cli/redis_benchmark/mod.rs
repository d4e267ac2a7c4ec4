//! redis-benchmark's and valkey-benchmark's command line (`respbench redis-benchmark ARGS`, or
//! the binary run as `redis-benchmark` / `valkey-benchmark`): the classic suite with its test
//! names, keys and semantics, or a command given after the options (`;` makes a sequence),
//! and its output: a block per test, `-q` one line per test, `--csv` its columns. The command
//! line becomes a typed plan ([`plan`]); each test is one run of the engine through the run API.

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

mod cluster;
mod connection;
mod error;
mod fuzz;
mod options;
mod plan;
mod save;
mod saved;
mod suite;
mod words;
pub use error::BenchmarkError;

use super::usage::EXIT_FAILURE;
use crate::config::Config;
use crate::engine::Outcome;
use crate::stats::OpStats;
use plan::{Parsed, Plan, plan};
use suite::Test;
use words::usage_error;

/// `respbench redis-benchmark ARGS` (ARGS without the program name); `tool` is the name it
/// answers to (`redis-benchmark` or `valkey-benchmark`).
pub fn main(tool: &str, args: &[OsString]) -> ExitCode {
    let plan = match plan(tool, args) {
        Ok(Parsed::Run(plan)) => plan,
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Ok(Parsed::Refused(words)) => {
            eprintln!("{words}");
            return ExitCode::from(EXIT_FAILURE);
        }
        Err(msg) => return usage_error(tool, &msg),
    };
    if let Some(code) = saved::save_scenario(&plan, tool, args) {
        return code;
    }
    let stop = super::signals::install_sigint();
    if plan.base.cluster.is_none()
        && let Err(code) = words::check_server(tool, &plan.base)
    {
        return code;
    }
    if let Some(fuzz) = &plan.fuzz {
        return fuzz::run(tool, fuzz, &stop);
    }
    if let Some(listing) = cluster::listing(tool, &plan.base) {
        print!("{listing}");
    }
    if plan.idle {
        return idle(tool, &plan.base, &stop);
    }
    if plan.csv {
        println!(
            "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\
             \"p99_latency_ms\",\"max_latency_ms\""
        );
    }
    loop {
        for test in &plan.tests {
            let config = test_config(&plan.base, test);
            if let Err(e) = set_up(&config, test) {
                eprintln!("{}", words::connect_error(tool, &e));
                return ExitCode::from(EXIT_FAILURE);
            }
            let outcome = match super::run::measure(&config, &super::run::RunContext::new(&stop)) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("{}", words::run_error(tool, &e));
                    return ExitCode::from(EXIT_FAILURE);
                }
            };
            // The tools stop at the first error reply rather than report false results.
            if let Some(message) = outcome.errors.first_reply() {
                eprintln!("{}", words::error_from_server(message));
                return ExitCode::from(EXIT_FAILURE);
            }
            // As at a read error, in hiredis's words: the run has no results to trust.
            if let Some(loss) = outcome.connections_lost.first_loss().filter(|_| !outcome.interrupted) {
                eprintln!("{}", words::connection_lost(loss));
                return ExitCode::from(EXIT_FAILURE);
            }
            print!("{}", render(&plan, test, &config, &outcome));
            if outcome.interrupted || stop.load(Ordering::SeqCst) {
                return super::exit::interrupted();
            }
        }
        if !plan.looping {
            return ExitCode::SUCCESS;
        }
    }
}

/// One test of a command line, planned: its name as the tool prints it and what the engine runs.
#[derive(Debug, Clone)]
pub struct PlannedTest {
    pub name: String,
    pub config: Config,
}

/// The tests a redis-benchmark (or valkey-benchmark, as `tool` says) command line (without the
/// program name) runs, in order, without running them: what `respbench redis-benchmark ARGS`
/// hands the engine, test by test. `-l` (loop) and `-I` (idle) are not planned as tests.
pub fn plan_tests(tool: &str, args: &[OsString]) -> Result<Vec<PlannedTest>, BenchmarkError> {
    let plan = match plan(tool, args)? {
        Parsed::Run(plan) => plan,
        Parsed::Print(_) => return Err("the command line asks for help or the version, not a run".into()),
        Parsed::Refused(words) => return Err(words.into()),
    };
    if plan.idle {
        return Err("-I opens idle connections: there is no test to plan".into());
    }
    Ok(plan
        .tests
        .iter()
        .map(|test| PlannedTest { name: test.name.clone(), config: test_config(&plan.base, test) })
        .collect())
}

/// A test's plan: the command line's, with the test's commands.
fn test_config(base: &Config, test: &Test) -> Config {
    let mut config = base.clone();
    config.commands = test.commands.clone();
    config.sequence = test.sequence.clone();
    config
}

/// The rows a test is judged by: the unit row of a sequence, else every command.
fn measured(outcome: &Outcome) -> OpStats {
    match outcome.ops.iter().find(|op| op.unit) {
        Some(unit) => unit.clone(),
        None => outcome.total(),
    }
}

/// One test's output in the chosen format.
fn render(plan: &Plan, test: &Test, config: &Config, outcome: &Outcome) -> String {
    let op = measured(outcome);
    let secs = outcome.elapsed.as_secs_f64();
    let rps = if secs > 0.0 { op.count as f64 / secs } else { 0.0 };
    let ms = |ns: u64| format!("{:.*}", plan.precision, ns as f64 / 1e6);
    let h = &op.latency_ns;
    let mean = format!("{:.*}", plan.precision, h.mean() / 1e6);
    let q = |p: f64| ms(h.value_at_quantile(p));
    let errors = outcome.errors.total();
    let error_note = if errors > 0 {
        let kinds: Vec<String> = outcome.errors.sorted().iter().map(|(k, n)| format!("{k} {n}")).collect();
        format!(" ({errors} errors: {})", kinds.join(", "))
    } else {
        String::new()
    };
    if plan.csv {
        return format!(
            "\"{}\",\"{rps:.2}\",\"{mean}\",\"{}\",\"{}\",\"{}\",\"{}\",\"{}\"\n",
            test.name.replace('"', "\"\""),
            ms(h.min()),
            q(0.5),
            q(0.95),
            q(0.99),
            ms(h.max())
        );
    }
    if plan.quiet {
        return format!("{}: {rps:.2} requests per second, p50={} msec{error_note}\n", test.name, q(0.5));
    }
    let threads = if config.threads > 1 { format!("yes ({} threads)", config.threads) } else { "no".into() };
    format!(
        "====== {} ======\n  {} requests completed in {secs:.2} seconds{}\n  {} parallel clients\n  {} bytes payload\n  \
         keep alive: 1\n  multi-thread: {threads}\n  latency: {}\n{}\nSummary:\n  throughput summary: {rps:.2} requests \
         per second\n  latency summary (msec):\n{:>13}{:>10}{:>10}{:>10}{:>10}{:>10}\n{:>13}{:>10}{:>10}{:>10}{:>10}{:>10}\n{}\n",
        test.name,
        op.count,
        if outcome.interrupted { " (INTERRUPTED)" } else { "" },
        config.connections,
        plan.payload,
        crate::report::method(config),
        rps_summary(config, outcome),
        "avg",
        "min",
        "p50",
        "p95",
        "p99",
        "max",
        mean,
        ms(h.min()),
        q(0.5),
        q(0.95),
        q(0.99),
        ms(h.max()),
        if errors > 0 { format!("  errors:{error_note}\n") } else { String::new() },
    )
}

/// `--rps`: valkey-benchmark's `RPS Summary` block, the target and the spread of the rate the
/// run achieved, one sample per interval (250 ms), each a whole number of requests per second.
fn rps_summary(config: &Config, outcome: &Outcome) -> String {
    let Some(rate) = config.rate else { return String::new() };
    let mut samples: Vec<f64> = outcome
        .timeline
        .iter()
        .filter(|i| i.duration_secs > 0.0)
        .map(|i| (i.total.count as f64 / i.duration_secs).floor())
        .collect();
    if samples.is_empty() {
        return String::new();
    }
    samples.sort_by(f64::total_cmp);
    let avg = samples.iter().sum::<f64>() / samples.len() as f64;
    // The smallest sample with at least p % of them at or below it.
    let at = |p: f64| samples[((p / 100.0 * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1];
    let row = [avg, samples[0], at(50.0), at(95.0), at(99.0), samples[samples.len() - 1]];
    let figures: Vec<String> = row.iter().map(|v| format!("{v:9.3}")).collect();
    format!(
        "\nRPS Summary:\n  target RPS: {:.2}\n  RPS distribution (reqs/sec):\n    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}\n    {}\n",
        rate.per_sec,
        "avg",
        "min",
        "p50",
        "p95",
        "p99",
        "max",
        figures.join(" ")
    )
}

/// Sends a test's setup commands (FCALL's library) on a connection of their own.
fn set_up(config: &Config, test: &Test) -> Result<(), crate::net::ConnectError> {
    if test.setup.is_empty() {
        return Ok(());
    }
    let mut session = crate::net::Session::open(&config.server)?;
    for command in &test.setup {
        let args: Vec<&[u8]> = command.iter().map(|w| w.as_bytes()).collect();
        session.call_checked(&args)?;
    }
    Ok(())
}

/// `-I`: opens the connections and holds them, doing nothing, until Ctrl-C.
fn idle(tool: &str, config: &Config, stop: &AtomicBool) -> ExitCode {
    let mut sessions = Vec::new();
    for _ in 0..config.connections {
        // A server at maxclients accepts, then answers with an error and closes: ask once.
        let opened = crate::net::Session::open(&config.server).and_then(|mut s| s.call_checked(&[b"PING"]).map(|_| s));
        match opened {
            Ok(s) => sessions.push(s),
            Err(e) => {
                eprintln!("{}", words::connect_error(tool, &e));
                return ExitCode::from(EXIT_FAILURE);
            }
        }
    }
    println!("Creating {} idle connections and waiting forever (Ctrl+C when done)", sessions.len());
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    super::exit::interrupted()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ArgPart, StopAfter};
    use suite::SUITE;

    fn plan_of(args: &[&str]) -> Result<Plan, BenchmarkError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        match plan("redis-benchmark", &args)? {
            Parsed::Run(plan) => Ok(*plan),
            Parsed::Print(_) | Parsed::Refused(_) => panic!("help, not a run"),
        }
    }

    #[test]
    fn redis_benchmark_semantics() {
        let p = plan_of(&["-c", "20", "-n", "1000", "-P", "4", "-t", "set,lrange_100"]).unwrap();
        assert_eq!((p.base.connections, p.base.threads, p.base.pipeline), (20, 1, 4));
        assert_eq!(p.base.stop, StopAfter::Requests(1000));
        let names: Vec<&str> = p.tests.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["SET", "LPUSH (needed to benchmark LRANGE)", "LRANGE_100 (first 100 elements)"]);
        // Without -r the key stays `key:__rand_int__`; with it, a random number in 0..r-1.
        let key: Vec<u8> = p.tests[0].commands[0].args[1]
            .iter()
            .flat_map(|part| match part {
                ArgPart::Lit(bytes) => bytes.clone(),
                other => panic!("{other:?} in the key"),
            })
            .collect();
        assert_eq!(key, b"key:__rand_int__");
        let p = plan_of(&["-r", "100", "-t", "set"]).unwrap();
        assert_eq!(p.tests[0].commands[0].args[1][1], ArgPart::RandInt);
        assert_eq!((p.base.keys.min, p.base.keys.max), (0, 99));
        let all = plan_of(&[]).unwrap();
        assert_eq!(all.tests.len(), SUITE.len());
        assert!(all.tests[0].commands[0].inline);
    }

    #[test]
    fn commands_after_the_options() {
        let p = plan_of(&["-n", "10", "--", "multi", ";", "set", "k:__rand_int__", "__data__", ";", "exec"]).unwrap();
        assert_eq!(p.tests.len(), 1);
        assert_eq!(p.tests[0].commands.len(), 3);
        assert!(p.tests[0].sequence.is_some());
        let p = plan_of(&["eval", "return 1", "0"]).unwrap();
        assert_eq!(p.tests[0].commands[0].args.len(), 3);
    }

    #[test]
    fn unknown_and_unsupported_are_named() {
        assert!(plan_of(&["-t", "bogus"]).err().unwrap().contains("'bogus'"));
        assert!(plan_of(&["--enable-tracking"]).unwrap().base.server.session.tracking);
        assert!(plan_of(&["--num-functions", "3"]).err().unwrap().contains("run as valkey-benchmark"));
        assert!(plan_of(&["-k", "2"]).err().unwrap().contains("'-k'"));
        assert_eq!(plan_of(&["-k", "0"]).unwrap().base.faults.reconnect_every, Some(1));
        assert!(plan_of(&["--wat"]).err().unwrap().contains("'--wat'"));
    }
}
