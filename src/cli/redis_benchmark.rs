//! redis-benchmark's and valkey-benchmark's command line (`respbench redis-benchmark ARGS`, or
//! the binary run as `redis-benchmark` / `valkey-benchmark`): the classic suite with its test
//! names, keys and semantics, or a command given after the options (`;` makes a sequence),
//! and its output: a block per test, `-q` one line per test, `--csv` its columns. Each test is
//! one run of the engine.

use std::ffi::OsString;
use std::io::Read;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use super::dialect::{Found, Spec, scan};
use super::{EXIT_FAILURE, EXIT_INTERRUPTED, usage_error};
use crate::config::{ArgPart, CommandSpec, Config, KeyPattern, Sequence, StopAfter};
use crate::engine::Outcome;
use crate::stats::OpStats;

/// What one redis-benchmark option becomes.
enum Map {
    /// The same meaning under respbench's name: the value is passed on.
    Flag(&'static str),
    /// Taken care of below.
    Special,
    /// Not supported yet, with why.
    Unsupported(&'static str),
}

const fn opt(names: &'static [&'static str], takes_value: bool, map: Map) -> (Spec, Map) {
    (Spec { names, takes_value }, map)
}

/// redis-benchmark's options (7.x) and valkey-benchmark's additions.
const OPTIONS: &[(Spec, Map)] = &[
    opt(&["h"], true, Map::Flag("--host")),
    opt(&["p"], true, Map::Flag("--port")),
    opt(&["s"], true, Map::Flag("--socket")),
    opt(&["a"], true, Map::Flag("--password")),
    opt(&["user"], true, Map::Flag("--user")),
    opt(&["u"], true, Map::Flag("--uri")),
    opt(&["c"], true, Map::Flag("--connections")),
    opt(&["n"], true, Map::Special),
    opt(&["d"], true, Map::Flag("--data-size")),
    opt(&["dbnum"], true, Map::Flag("--db")),
    opt(&["3"], false, Map::Flag("--resp3")),
    opt(&["threads"], true, Map::Flag("--threads")),
    opt(&["k"], true, Map::Special),
    opt(&["r"], true, Map::Special),
    opt(&["P"], true, Map::Flag("--pipeline")),
    opt(&["q"], false, Map::Special),
    opt(&["precision"], true, Map::Special),
    opt(&["csv"], false, Map::Special),
    opt(&["l"], false, Map::Special),
    opt(&["t"], true, Map::Special),
    opt(&["I"], false, Map::Special),
    opt(&["x"], false, Map::Special),
    opt(&["seed"], true, Map::Flag("--seed")),
    opt(&["rps"], true, Map::Flag("--rate")),
    opt(&["duration"], true, Map::Special),
    opt(&["warmup"], true, Map::Special),
    opt(&["cluster"], false, Map::Flag("--cluster")),
    opt(&["enable-tracking"], false, Map::Unsupported("CLIENT TRACKING")),
    opt(&["tls"], false, Map::Flag("--tls")),
    opt(&["sni"], true, Map::Flag("--sni")),
    opt(&["cacert"], true, Map::Flag("--cacert")),
    opt(&["cacertdir"], true, Map::Unsupported("a CA directory: pass the CA file with --cacert")),
    opt(&["insecure"], false, Map::Flag("--tls-skip-verify")),
    opt(&["cert"], true, Map::Flag("--cert")),
    opt(&["key"], true, Map::Flag("--key")),
    opt(&["tls-ciphers"], true, Map::Unsupported("choosing ciphers: rustls's safe defaults are used")),
    opt(&["tls-ciphersuites"], true, Map::Unsupported("choosing ciphers: rustls's safe defaults are used")),
    opt(&["mptcp"], false, Map::Unsupported("multipath TCP")),
    opt(&["num-functions"], true, Map::Unsupported("FCALL tests")),
    opt(&["num-keys-in-fcall"], true, Map::Unsupported("FCALL tests")),
    opt(&["help"], false, Map::Special),
    opt(&["version"], false, Map::Special),
];

/// The classic suite in redis-benchmark's order: name as printed, the names `-t` selects it
/// by, and the command (`__rand_int__` becomes a random number only with `-r`).
const SUITE: &[(&str, &[&str], &str)] = &[
    ("PING_INLINE", &["ping_inline", "ping"], "PING"),
    ("PING_MBULK", &["ping_mbulk", "ping"], "PING"),
    ("SET", &["set"], "SET key:__rand_int__ __data__"),
    ("GET", &["get"], "GET key:__rand_int__"),
    ("INCR", &["incr"], "INCR counter:__rand_int__"),
    ("LPUSH", &["lpush"], "LPUSH mylist __data__"),
    ("RPUSH", &["rpush"], "RPUSH mylist __data__"),
    ("LPOP", &["lpop"], "LPOP mylist"),
    ("RPOP", &["rpop"], "RPOP mylist"),
    ("SADD", &["sadd"], "SADD myset element:__rand_int__"),
    ("HSET", &["hset"], "HSET myhash element:__rand_int__ __data__"),
    ("SPOP", &["spop"], "SPOP myset"),
    ("ZADD", &["zadd"], "ZADD myzset __score__ element:__rand_int__"),
    ("ZPOPMIN", &["zpopmin"], "ZPOPMIN myzset"),
    (
        "LPUSH (needed to benchmark LRANGE)",
        &["lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"],
        "LPUSH mylist __data__",
    ),
    ("LRANGE_100 (first 100 elements)", &["lrange", "lrange_100"], "LRANGE mylist 0 99"),
    ("LRANGE_300 (first 300 elements)", &["lrange", "lrange_300"], "LRANGE mylist 0 299"),
    ("LRANGE_500 (first 500 elements)", &["lrange", "lrange_500"], "LRANGE mylist 0 499"),
    ("LRANGE_600 (first 600 elements)", &["lrange", "lrange_600"], "LRANGE mylist 0 599"),
    ("MSET (10 keys)", &["mset"], "MSET __10__ key:__rand_int__ __data__"),
    ("MGET (10 keys)", &["mget"], "MGET __10__ key:__rand_int__"),
    ("XADD", &["xadd"], "XADD mystream * myfield __data__"),
];

/// One test of the run: a name and what it sends.
struct Test {
    name: String,
    commands: Vec<CommandSpec>,
    sequence: Option<Vec<crate::config::Step>>,
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
}

/// `respbench redis-benchmark ARGS` (ARGS without the program name).
pub fn main(args: &[OsString]) -> ExitCode {
    let plan = match plan(args) {
        Ok(Some(plan)) => plan,
        Ok(None) => return ExitCode::SUCCESS,
        Err(msg) => return usage_error(&msg),
    };
    let stop = super::install_sigint();
    if plan.idle {
        return idle(&plan.base, &stop);
    }
    if plan.csv {
        println!(
            "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\
             \"p99_latency_ms\",\"max_latency_ms\""
        );
    }
    loop {
        for test in &plan.tests {
            let mut config = plan.base.clone();
            config.commands = test.commands.clone();
            config.sequence = test.sequence.clone();
            let outcome = match super::measure(&config, 1, &stop, |_| {}) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("respbench: {e}");
                    return ExitCode::from(EXIT_FAILURE);
                }
            };
            print!("{}", render(&plan, test, &config, &outcome));
            if outcome.interrupted || stop.load(Ordering::SeqCst) {
                return ExitCode::from(EXIT_INTERRUPTED);
            }
        }
        if !plan.looping {
            return ExitCode::SUCCESS;
        }
    }
}

/// Reads the command line; `None` when it asked for help or the version (printed here).
fn plan(args: &[OsString]) -> Result<Option<Plan>, String> {
    let (found, mut command) = scan("redis-benchmark", OPTIONS, args, true)?;
    let mut native: Vec<OsString> = vec!["respbench".into(), "--key-prefix".into(), "".into()];
    let (mut requests, mut keyspace, mut selected, mut duration) = (100_000u64, None, None, None);
    let (mut quiet, mut csv, mut looping, mut idle, mut stdin_arg) = (false, false, false, false, false);
    let mut precision = 3;
    let mut threads_given = false;
    let mut payload = None;
    for Found { index, long, value } in found {
        let (spec, map) = &OPTIONS[index];
        let count = |v: &str| super::parse::positive(v).map_err(|e| format!("invalid value for '{long}': {e}"));
        match map {
            Map::Flag(flag) => {
                threads_given |= *flag == "--threads";
                if let (true, Some(v)) = (*flag == "--data-size", value.as_deref()) {
                    payload = Some(super::parse::size(v).map_err(|e| format!("invalid value for '-d': {e}"))?);
                }
                native.push((*flag).into());
                native.extend(value.map(OsString::from));
            }
            Map::Unsupported(what) => return Err(format!("redis-benchmark's {long} is not supported yet ({what})")),
            Map::Special => {
                let v = value.unwrap_or_default();
                match spec.names[0] {
                    "n" => requests = count(&v)?,
                    "r" => keyspace = Some(count(&v)?),
                    "k" if v == "1" => {}
                    "k" => {
                        return Err(format!(
                            "redis-benchmark's -k {v} is not supported yet (reconnecting per request)"
                        ));
                    }
                    "q" => quiet = true,
                    "csv" => csv = true,
                    "l" => looping = true,
                    "I" => idle = true,
                    "x" => stdin_arg = true,
                    "t" => selected = Some(v),
                    "precision" => {
                        precision = v
                            .parse::<usize>()
                            .map_err(|_| format!("invalid value for '--precision': '{v}' is not a number"))?
                            .max(1)
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
                    "help" => {
                        print!("{}", help());
                        return Ok(None);
                    }
                    "version" => {
                        println!("respbench {} (redis-benchmark command line)", env!("CARGO_PKG_VERSION"));
                        return Ok(None);
                    }
                    _ => unreachable!("every Special option is handled"),
                }
            }
        }
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
    let args = <super::Args as clap::Parser>::try_parse_from(native).map_err(|e| super::clap_message(&e))?;
    let (mut base, _) = args.into_config()?;
    if stdin_arg {
        let mut last = String::new();
        std::io::stdin()
            .read_to_string(&mut last)
            .map_err(|e| format!("-x: cannot read the last argument from stdin: {e}"))?;
        command.push(last);
    }
    let tests = if command.is_empty() {
        suite(selected.as_deref(), keyspace.is_some(), base.cluster.is_some())?
    } else {
        vec![custom(&command, keyspace.is_some())?]
    };
    if base.stop == StopAfter::AllKeys {
        base.stop = StopAfter::Requests(requests);
    }
    Ok(Some(Plan { base, tests, quiet, csv, precision, looping, idle, payload }))
}

/// A whole number of seconds (`10`), or a duration with its unit (`10s`, `500ms`).
fn seconds(v: &str) -> Option<String> {
    if v.parse::<u64>().is_ok() {
        return Some(format!("{v}s"));
    }
    super::parse::duration(v).ok().map(|_| v.to_string())
}

/// The tests `-t` selects (all without it), in the suite's order.
fn suite(selected: Option<&str>, random: bool, cluster: bool) -> Result<Vec<Test>, String> {
    let wanted: Option<Vec<String>> = selected.map(|s| s.split(',').map(|t| t.trim().to_ascii_lowercase()).collect());
    if let Some(wanted) = &wanted
        && let Some(unknown) = wanted.iter().find(|w| !SUITE.iter().any(|(_, names, _)| names.contains(&w.as_str())))
    {
        let known: Vec<&str> = SUITE.iter().flat_map(|(_, names, _)| names.iter().copied()).collect();
        let mut known = known;
        known.dedup();
        return Err(format!("-t: unknown test '{unknown}'; the tests are {}", known.join(", ")));
    }
    let tests = SUITE
        .iter()
        .filter(|(_, names, _)| wanted.as_ref().is_none_or(|w| names.iter().any(|n| w.iter().any(|x| x == n))))
        .map(|(name, _, command)| {
            let mut words: Vec<String> = Vec::new();
            let parts: Vec<&str> = command.split(' ').collect();
            // `MSET __10__ key:__rand_int__ __data__`: the pair ten times over.
            if parts.get(1) == Some(&"__10__") {
                words.push(parts[0].to_string());
                for _ in 0..10 {
                    words.extend(parts[2..].iter().map(|w| w.to_string()));
                }
            } else {
                // ZADD's score is the random number with -r, else 0 (as redis-benchmark).
                let score = if random { "__rand_int__" } else { "0" };
                words.extend(parts.iter().map(|w| if *w == "__score__" { score.to_string() } else { w.to_string() }));
            }
            if cluster {
                // As redis-benchmark does in cluster mode: a hash tag in every key name, so each
                // request (MSET's ten keys too) stays on one node.
                for w in words.iter_mut().skip(1) {
                    for base in ["key:", "counter:", "mylist", "myset", "myhash", "myzset", "mystream"] {
                        if let Some(rest) = w.strip_prefix(base) {
                            *w = format!(
                                "{}{{tag}}{}{rest}",
                                base.trim_end_matches(':'),
                                if base.ends_with(':') { ":" } else { "" }
                            );
                            break;
                        }
                    }
                }
            }
            let mut spec = command_spec(&words, random);
            spec.inline = *name == "PING_INLINE";
            Test { name: name.to_string(), commands: vec![spec], sequence: None }
        })
        .collect();
    Ok(tests)
}

/// A command given after the options; `;` between commands makes a sequence.
fn custom(words: &[String], random: bool) -> Result<Test, String> {
    let name = words.join(" ");
    match crate::config::split_sequence(words)? {
        Some(parts) => {
            let Sequence { mut commands, steps } = Sequence::of(&parts, KeyPattern::Random, true);
            for c in &mut commands {
                *c = with_rand(c.clone(), random);
            }
            Ok(Test { name, commands, sequence: Some(steps) })
        }
        None => Ok(Test { name, commands: vec![command_spec(words, random)], sequence: None }),
    }
}

fn command_spec(words: &[String], random: bool) -> CommandSpec {
    with_rand(CommandSpec::from_words(words, 1, KeyPattern::Random, true), random)
}

/// Without `-r`, redis-benchmark leaves `__rand_int__` as it is: every request hits one key.
fn with_rand(mut spec: CommandSpec, random: bool) -> CommandSpec {
    if !random {
        for part in spec.args.iter_mut().flatten() {
            if *part == ArgPart::RandInt {
                *part = ArgPart::Lit(b"__rand_int__".to_vec());
            }
        }
    }
    spec
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

/// `-I`: opens the connections and holds them, doing nothing, until Ctrl-C.
fn idle(config: &Config, stop: &AtomicBool) -> ExitCode {
    let mut sessions = Vec::new();
    for _ in 0..config.connections {
        match crate::net::Session::open(&config.server) {
            Ok(s) => sessions.push(s),
            Err(e) => {
                eprintln!("respbench: {e}");
                return ExitCode::from(EXIT_FAILURE);
            }
        }
    }
    println!("Creating {} idle connections and waiting forever (Ctrl+C when done)", sessions.len());
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    ExitCode::from(EXIT_INTERRUPTED)
}

fn help() -> String {
    let mut out = String::from(
        "Usage: respbench redis-benchmark [OPTIONS] [COMMAND ARGS...]\n\nredis-benchmark's and valkey-benchmark's \
         options with their meaning (see docs/compatibility.md):\n",
    );
    for (spec, map) in OPTIONS {
        let dash = if spec.names[0].len() == 1 { "-" } else { "--" };
        let note = match map {
            Map::Unsupported(what) => format!("  (not supported yet: {what})"),
            _ => String::new(),
        };
        out.push_str(&format!(" {dash}{}{}{note}\n", spec.names[0], if spec.takes_value { " <value>" } else { "" }));
    }
    out.push_str("\nTests (-t): ");
    let names: Vec<&str> = SUITE.iter().map(|(_, names, _)| names[0]).collect();
    out.push_str(&names.join(","));
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_of(args: &[&str]) -> Result<Plan, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        plan(&args).map(|p| p.expect("not help"))
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
        assert!(plan_of(&["--enable-tracking"]).err().unwrap().contains("--enable-tracking is not supported yet"));
        assert!(plan_of(&["-k", "0"]).err().unwrap().contains("-k 0"));
        assert!(plan_of(&["--wat"]).err().unwrap().contains("'--wat'"));
    }
}
