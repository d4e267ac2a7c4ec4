//! redis-benchmark's and valkey-benchmark's command line (`respbench redis-benchmark ARGS`, or
//! the binary run as `redis-benchmark` / `valkey-benchmark`): the classic suite with its test
//! names, keys and semantics, or a command given after the options (`;` makes a sequence),
//! and its output: a block per test, `-q` one line per test, `--csv` its columns. Each test is
//! one run of the engine.

use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

mod connection;
mod options;
mod suite;
mod words;

use super::dialect::{Found, scan};
use super::{EXIT_FAILURE, EXIT_USAGE};
use crate::config::{CommandSpec, Config, StopAfter};
use crate::engine::Outcome;
use crate::stats::OpStats;
use options::{Map, OPTIONS};

/// One test of the run: a name and what it sends.
struct Test {
    name: String,
    commands: Vec<CommandSpec>,
    sequence: Option<Vec<crate::config::Step>>,
    /// Commands sent once, on a connection of their own, before the test (FCALL's library).
    setup: Vec<Vec<String>>,
}

/// A command line that cannot run: one line with "error", exit 2.
fn usage_error(tool: &str, msg: &str) -> ExitCode {
    eprintln!("{tool}: error: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}

/// The whole command line, understood.
struct Plan {
    base: Config,
    tests: Vec<Test>,
    quiet: bool,
    csv: bool,
    /// Decimal places of latencies in milliseconds.
    precision: usize,
    looping: bool,
    idle: bool,
    payload: usize,
    /// respbench's flags for the whole command line, and `--save-scenario`'s file.
    native: Vec<OsString>,
    save: Option<std::path::PathBuf>,
}

/// `respbench redis-benchmark ARGS` (ARGS without the program name); `tool` is the name it
/// answers to (`redis-benchmark` or `valkey-benchmark`).
pub fn main(tool: &str, args: &[OsString]) -> ExitCode {
    let plan = match plan(tool, args) {
        Ok(Parsed::Run(plan)) => plan,
        Ok(Parsed::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => return usage_error(tool, &msg),
    };
    if let Some(code) = suite::save_scenario(&plan, tool, args) {
        return code;
    }
    let stop = super::install_sigint();
    if plan.base.cluster.is_none()
        && let Err(code) = words::check_server(tool, &plan.base)
    {
        return code;
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
                    eprintln!("{}", words::connect_error(tool, &e));
                    return ExitCode::from(EXIT_FAILURE);
                }
            };
            // The tools stop at the first error reply rather than report false results.
            if let Some(message) = outcome.errors.first_reply() {
                eprintln!("{}", words::error_from_server(message));
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
pub fn plan_tests(tool: &str, args: &[OsString]) -> Result<Vec<PlannedTest>, String> {
    let plan = match plan(tool, args)? {
        Parsed::Run(plan) => plan,
        Parsed::Print(_) => return Err("the command line asks for help or the version, not a run".into()),
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

/// What a command line asks for.
enum Parsed {
    Run(Box<Plan>),
    /// Print this (help, version) and exit successfully.
    Print(String),
}

/// Reads the command line.
fn plan(tool: &str, args: &[OsString]) -> Result<Parsed, String> {
    let (found, mut command) = scan(tool, OPTIONS, args, true)?;
    let mut native: Vec<OsString> = vec!["respbench".into(), "--key-prefix".into(), "".into()];
    let (mut requests, mut keyspace, mut selected, mut duration) = (100_000u64, None, None, None);
    let (mut quiet, mut csv, mut looping, mut idle, mut stdin_arg) = (false, false, false, false, false);
    let mut precision = 3;
    let mut say_notes = false;
    let mut threads_given = false;
    let mut payload = None;
    let mut server = connection::Connection::default();
    // The options passed on as they are, each once with its last value, as the tool's parser
    // keeps the last; TLS 1.2 and 1.3 cipher lists, each the last given.
    let mut flags: Vec<(&'static str, Option<String>)> = Vec::new();
    let mut ciphers: [Option<String>; 2] = [None, None];
    let mut functions = suite::Functions::default();
    for Found { index, long, value } in found {
        let (spec, map) = &OPTIONS[index];
        let count = |v: &str| super::parse::positive(v).map_err(|e| format!("invalid value for '{long}': {e}"));
        match map {
            Map::Flag(flag) => {
                threads_given |= *flag == "--threads";
                if let (true, Some(v)) = (*flag == "--data-size", value.as_deref()) {
                    payload = Some(super::parse::size(v).map_err(|e| format!("invalid value for '-d': {e}"))?);
                }
                match flags.iter_mut().find(|(f, _)| f == flag) {
                    Some(earlier) => earlier.1 = value,
                    None => flags.push((flag, value)),
                }
            }
            Map::Unsupported(what) => return Err(format!("{tool}'s {long} is not supported yet ({what})")),
            Map::Special => {
                let v = value.unwrap_or_default();
                if server.apply(spec.names[0], &v)? {
                    continue;
                }
                match spec.names[0] {
                    "n" => requests = count(&v)?,
                    "r" => keyspace = Some(count(&v)?),
                    "k" if v == "1" => {}
                    // A new connection for every request.
                    "k" if v == "0" => native.extend(["--reconnect-every".into(), "1".into()]),
                    "k" => {
                        return Err(format!(
                            "invalid value for '-k': '{v}' (expected 1 to keep alive, 0 to reconnect)"
                        ));
                    }
                    "num-functions" | "num-keys-in-fcall" if tool != "valkey-benchmark" => {
                        return Err(format!(
                            "{long} sets valkey-benchmark's FUNCTION LOAD and FCALL tests: run as valkey-benchmark"
                        ));
                    }
                    "num-functions" => functions.count = count(&v)? as u32,
                    "num-keys-in-fcall" => {
                        functions.keys =
                            v.parse().map_err(|_| format!("invalid value for '{long}': '{v}' is not a whole number"))?
                    }
                    // The tools stop at the first error reply, and say -e changes nothing.
                    "e" => eprintln!("{}", words::SHOW_ERRORS_WARNING),
                    "tls-ciphers" => ciphers[0] = Some(v),
                    "tls-ciphersuites" => ciphers[1] = Some(v),
                    "q" => quiet = true,
                    "csv" => csv = true,
                    "notes" => say_notes = true,
                    "l" => looping = true,
                    "I" => idle = true,
                    "x" => stdin_arg = true,
                    "t" => selected = Some(v),
                    "precision" => {
                        let digits = v
                            .parse::<i64>()
                            .map_err(|_| format!("invalid value for '--precision': '{v}' is not a number"))?;
                        // As redis-benchmark: below 0 is the default, above 4 is 4.
                        precision = if digits < 0 { 3 } else { digits.clamp(1, 4) as usize };
                    }
                    "duration" | "warmup" => {
                        let secs = seconds(&v)
                            .ok_or_else(|| format!("invalid value for '{long}': '{v}' is not a duration"))?;
                        if spec.names[0] == "duration" {
                            duration = Some(secs);
                        } else {
                            native.extend(["--warmup".into(), secs.into()]);
                        }
                    }
                    "help" => return Ok(Parsed::Print(options::help(tool))),
                    "version" => return Ok(Parsed::Print(options::version(tool))),
                    _ => unreachable!("every Special option is handled"),
                }
            }
        }
    }
    for (flag, value) in flags {
        native.push(flag.into());
        native.extend(value.map(OsString::from));
    }
    // --user without -a sends no AUTH, as in the tools.
    native.extend(server.flags());
    if server.tls && !native.iter().any(|a| a == "--tls") {
        native.push("--tls".into());
    }
    let ciphers: Vec<String> = ciphers.into_iter().flatten().collect();
    if !ciphers.is_empty() {
        native.extend(["--tls-ciphers".into(), ciphers.join(":").into()]);
    }
    if payload.is_none() {
        // redis-benchmark's values are 3 bytes unless -d says otherwise.
        native.extend(["--data-size".into(), "3".into()]);
    }
    let payload = payload.unwrap_or(3);
    if !threads_given {
        // redis-benchmark runs on one thread unless --threads says otherwise.
        native.extend(["--threads".into(), "1".into()]);
    }
    match duration {
        Some(d) => native.extend(["--duration".into(), d.into()]),
        None => native.extend(["--requests".into(), requests.to_string().into()]),
    }
    if let Some(r) = keyspace {
        native.extend(["--key-min".into(), "0".into(), "--key-max".into(), (r - 1).to_string().into()]);
    }
    tls_as_the_tools(tool, &mut native, say_notes);
    let args = <super::Args as clap::Parser>::try_parse_from(&native).map_err(|e| super::clap_message(&e))?;
    let (mut base, output) = args.into_config()?;
    base.faults.voice = if say_notes { crate::config::Voice::Respbench } else { crate::config::Voice::Quiet };
    let save = output.scenario.save_scenario;
    if stdin_arg {
        let mut last = String::new();
        std::io::stdin()
            .read_to_string(&mut last)
            .map_err(|e| format!("-x: cannot read the last argument from stdin: {e}"))?;
        command.push(last);
    }
    let tests = if command.is_empty() {
        let functions = (tool == "valkey-benchmark").then_some(functions);
        suite::suite(selected.as_deref(), keyspace.is_some(), base.cluster.is_some(), functions)?
    } else {
        vec![suite::custom(&command, keyspace.is_some())?]
    };
    if tool == "valkey-benchmark" {
        requests = valkey_units(&tests, requests, &mut base);
    }
    if base.stop == StopAfter::AllKeys {
        base.stop = StopAfter::Requests(requests);
    }
    Ok(Parsed::Run(Box::new(Plan { base, tests, quiet, csv, precision, looping, idle, payload, native, save })))
}

/// As the tools do with OpenSSL: the chain is verified, the host name is not.
fn tls_as_the_tools(tool: &str, native: &mut Vec<OsString>, say_notes: bool) {
    let tls = native.iter().any(|a| a == "--tls");
    // respbench's note on how TLS is verified: the tools' stderr carries only their own lines,
    // so it is said only with --notes (this front-end writes no JSON to keep it in).
    let mut notes = super::notes::Notes::kept(say_notes);
    if tls && !native.iter().any(|a| a == "--tls-skip-verify") {
        native.push("--tls-skip-hostname".into());
        notes.note(
            tool,
            format!(
                "TLS verifies the server's certificate chain but not its host name, as {tool} does (respbench --tls \
                 checks both)"
            ),
        );
    }
}

/// valkey-benchmark counts -n in commands: -n 4000 of a four-command sequence is 1,000 units;
/// the requests in units, the plan's stop condition with them.
fn valkey_units(tests: &[Test], requests: u64, base: &mut Config) -> u64 {
    let Some(steps) = tests.first().and_then(|t| t.sequence.as_ref()) else { return requests };
    let per_unit: u64 = steps.iter().map(|s| u64::from(s.repeat)).sum();
    let requests = (requests / per_unit.max(1)).max(1);
    if let StopAfter::Requests(_) = base.stop {
        base.stop = StopAfter::Requests(requests);
    }
    requests
}

/// A whole number of seconds (`10`), or a duration with its unit (`10s`, `500ms`).
fn seconds(v: &str) -> Option<String> {
    if v.parse::<u64>().is_ok() {
        return Some(format!("{v}s"));
    }
    super::parse::duration(v).ok().map(|_| v.to_string())
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
         keep alive: 1\n  multi-thread: {threads}\n  latency: {}\n\nSummary:\n  throughput summary: {rps:.2} requests \
         per second\n  latency summary (msec):\n{:>13}{:>10}{:>10}{:>10}{:>10}{:>10}\n{:>13}{:>10}{:>10}{:>10}{:>10}{:>10}\n{}\n",
        test.name,
        op.count,
        if outcome.interrupted { " (INTERRUPTED)" } else { "" },
        config.connections,
        plan.payload,
        crate::report::method(config),
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
    use crate::config::ArgPart;
    use suite::SUITE;

    fn plan_of(args: &[&str]) -> Result<Plan, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        match plan("redis-benchmark", &args)? {
            Parsed::Run(plan) => Ok(*plan),
            Parsed::Print(_) => panic!("help, not a run"),
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
