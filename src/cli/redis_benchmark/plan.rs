//! A redis-benchmark command line read into a typed plan: the options applied in order (the
//! last setting of each wins, as the tool's parser keeps it) to respbench's flags, started from
//! their defaults with the tool's own (3-byte values, one thread, `key:` without a prefix), then
//! turned into the [`Config`] every test of the run shares. No command line is written for
//! respbench's parser: what needs a value parsed calls the value parsers directly, and each error
//! names the tool's option.

use std::ffi::OsString;
use std::io::Read;
use std::time::Duration;

use super::connection::Connection;
use super::error::BenchmarkError;
use super::options::{self, Map, OPTIONS};
use super::suite::{self, Test};
use super::words;
use crate::cli::dialect::{Found, Rest, scan};
use crate::cli::options::Args;
use crate::cli::{notes::Notes, parse};
use crate::config::parse::InvalidValue;
use crate::config::{Config, StopAfter, Voice};

/// The whole command line, understood.
pub struct Plan {
    pub base: Config,
    pub tests: Vec<Test>,
    pub quiet: bool,
    pub csv: bool,
    /// Decimal places of latencies in milliseconds.
    pub precision: usize,
    pub looping: bool,
    pub idle: bool,
    pub payload: usize,
    /// `-r`: keys drawn from 0..r-1.
    pub keyspace: Option<u64>,
    /// `--save-scenario`'s file, and the plan's flags as the scenario writes them.
    /// `--save-scenario`: the file, and the plan as flags with the record of those it sets.
    pub save: Option<(std::path::PathBuf, crate::cli::options::Args)>,
    /// `--fuzz`: the fuzzer's run instead of the tests.
    pub fuzz: Option<super::fuzz::Plan>,
}

/// What a command line asks for.
pub enum Parsed {
    Run(Box<Plan>),
    /// Print this (help, version) and exit successfully.
    Print(String),
    /// Say this on stderr and exit 1, as the tool refuses it (in its words).
    Refused(String),
}

/// Reads the command line (without the program name) of `tool`.
pub fn plan(tool: &str, args: &[OsString]) -> Result<Parsed, BenchmarkError> {
    let (found, mut command) = scan(tool, OPTIONS, args, Rest::Command)?;
    let mut reading = Reading::new(tool)?;
    for found in found {
        if let Some(done) = reading.apply(found)? {
            return Ok(done);
        }
    }
    if reading.stdin_arg {
        let mut last = String::new();
        std::io::stdin()
            .read_to_string(&mut last)
            .map_err(|e| format!("-x: cannot read the last argument from stdin: {e}"))?;
        command.push(last);
    }
    reading.into_plan(&command)
}

/// The options read so far: respbench's typed flags and what only the front-end knows.
struct Reading<'t> {
    tool: &'t str,
    args: Args,
    server: Connection,
    requests: u64,
    /// `-n` was given (valkey-benchmark refuses it beside `--duration`).
    requests_given: bool,
    keyspace: Option<u64>,
    selected: Option<String>,
    duration: Option<Duration>,
    quiet: bool,
    csv: bool,
    looping: bool,
    idle: bool,
    stdin_arg: bool,
    precision: usize,
    say_notes: bool,
    /// TLS 1.2 and 1.3 cipher lists, each the last given.
    ciphers: [Option<String>; 2],
    functions: suite::Functions,
    /// `--dataset` and `--maxdocs` (at or below 0: every row).
    dataset: Option<std::path::PathBuf>,
    maxdocs: Option<usize>,
    /// `--fuzz`, its modes and log level.
    fuzz: bool,
    fuzz_modes: super::fuzz::Modes,
    fuzz_log: super::fuzz::LogLevel,
}

impl<'t> Reading<'t> {
    /// respbench's defaults with the tool's: 3-byte values, one thread, keys without a prefix.
    fn new(tool: &'t str) -> Result<Reading<'t>, BenchmarkError> {
        let mut args = Args::checked_default()?;
        args.data_size = 3;
        args.threads = Some(1);
        args.key_prefix = String::new();
        // The tools never reconnect: a connection that fails ends their run at once, with its
        // error (`mod.rs`), where respbench's own counted run would try again for seconds.
        args.max_reconnects = Some(0);
        Ok(Reading {
            tool,
            args,
            server: Connection::default(),
            requests: 100_000,
            requests_given: false,
            keyspace: None,
            selected: None,
            duration: None,
            quiet: false,
            csv: false,
            looping: false,
            idle: false,
            stdin_arg: false,
            precision: 3,
            say_notes: false,
            ciphers: [None, None],
            functions: suite::Functions::default(),
            dataset: None,
            maxdocs: None,
            fuzz: false,
            fuzz_modes: super::fuzz::Modes::default(),
            fuzz_log: super::fuzz::LogLevel::Info,
        })
    }

    /// Applies one option; `Some` is what to do instead of running (help, version, a refusal
    /// in the tool's words).
    fn apply(&mut self, Found { index, long, value }: Found) -> Result<Option<Parsed>, BenchmarkError> {
        let (spec, map) = &OPTIONS[index];
        let v = value.unwrap_or_default();
        let invalid = |e: InvalidValue| format!("invalid value for '{long}': {e}");
        let count = |v: &str| parse::positive(v).map_err(invalid);
        let name = spec.names[0];
        match map {
            Map::Set(set) => set(&mut self.args, &v).map_err(invalid)?,
            Map::Unsupported(what) => {
                return Err(format!("{}'s {long} is not supported yet ({what})", self.tool).into());
            }
            Map::Special if self.server.apply(name, &v)? => {}
            Map::Special => match name {
                // valkey-benchmark's parser refuses the second of the two, whichever it is.
                "n" | "duration" if self.tool == "valkey-benchmark" && self.exclusive(name) => {
                    return Ok(Some(Parsed::Refused(words::N_AND_DURATION.into())));
                }
                "n" => {
                    self.requests = count(&v)?;
                    self.requests_given = true;
                }
                "r" => self.keyspace = Some(count(&v)?),
                "k" if v == "1" => {}
                // A new connection for every request.
                "k" if v == "0" => self.args.reconnect_every = Some(1),
                "k" => {
                    return Err(
                        format!("invalid value for '-k': '{v}' (expected 1 to keep alive, 0 to reconnect)").into()
                    );
                }
                "num-functions" | "num-keys-in-fcall" if self.tool != "valkey-benchmark" => {
                    return Err(format!(
                        "{long} sets valkey-benchmark's FUNCTION LOAD and FCALL tests: run as valkey-benchmark"
                    )
                    .into());
                }
                "num-functions" => self.functions.count = count(&v)? as u32,
                "num-keys-in-fcall" => {
                    self.functions.keys =
                        v.parse().map_err(|_| format!("invalid value for '{long}': '{v}' is not a whole number"))?
                }
                // The tools stop at the first error reply, and say -e changes nothing.
                "e" => eprintln!("{}", words::SHOW_ERRORS_WARNING),
                "dataset" => self.dataset = Some(v.into()),
                "maxdocs" => {
                    let n: i64 =
                        v.trim().parse().map_err(|_| invalid(format!("'{v}' is not a whole number").into()))?;
                    self.maxdocs = (n > 0).then_some(n as usize);
                }
                "fuzz" | "fuzz-mode" | "fuzz-loglevel" if self.tool != "valkey-benchmark" => {
                    return Err(format!("{long} is valkey-benchmark's fuzzer: run as valkey-benchmark").into());
                }
                "fuzz" => self.fuzz = true,
                "fuzz-mode" => {
                    if let Err(words) = self.fuzz_modes.add(&v) {
                        return Ok(Some(Parsed::Refused(words)));
                    }
                }
                "fuzz-loglevel" => self.fuzz_log = super::fuzz::LogLevel::parse(&v),
                "tls-ciphers" => self.ciphers[0] = Some(v),
                "tls-ciphersuites" => self.ciphers[1] = Some(v),
                "q" => self.quiet = true,
                "csv" => self.csv = true,
                "notes" => self.say_notes = true,
                "l" => self.looping = true,
                "I" => self.idle = true,
                "x" => self.stdin_arg = true,
                "t" => self.selected = Some(v),
                "precision" => {
                    let digits = v
                        .parse::<i64>()
                        .map_err(|_| format!("invalid value for '--precision': '{v}' is not a number"))?;
                    // As redis-benchmark: below 0 is the default, above 4 is 4.
                    self.precision = if digits < 0 { 3 } else { digits.clamp(1, 4) as usize };
                }
                "duration" => self.duration = Some(seconds(&v).map_err(invalid)?),
                "warmup" => self.args.warmup = Some(seconds(&v).map_err(invalid)?),
                "help" => return Ok(Some(Parsed::Print(options::help(self.tool)))),
                "version" => return Ok(Some(Parsed::Print(options::version(self.tool)))),
                _ => unreachable!("every Special option is handled"),
            },
        }
        Ok(None)
    }

    /// Whether `-n` (or `--duration`, as `name` says) meets the other already given.
    fn exclusive(&self, name: &str) -> bool {
        if name == "n" { self.duration.is_some() } else { self.requests_given }
    }

    /// The plan: the flags checked and turned into the run's configuration, and the tests.
    fn into_plan(mut self, command: &[String]) -> Result<Parsed, BenchmarkError> {
        self.finish_flags()?;
        let save = self.args.scenario.save_scenario.clone().map(|path| {
            let mut args = self.args.clone();
            args.scenario.given = super::save::given(&self.args);
            (path, args)
        });
        let payload = self.args.data_size;
        let (mut base, _) = self.args.into_config()?;
        if base.rate.is_some() {
            // The RPS summary's samples: the achieved rate every 250 ms, as valkey-benchmark
            // samples it.
            base.interval = Duration::from_millis(250);
        }
        base.faults.voice = if self.say_notes { Voice::Respbench } else { Voice::Quiet };
        // valkey-benchmark's clients each on one primary, their pipelines whole.
        base.extras.clients_bound_to_primaries = base.cluster.is_some();
        // The tools send nothing of their own on a new TLS connection.
        if let Some(tls) = &mut base.server.tls {
            tls.no_probe = true;
        }
        let random = self.keyspace.is_some();
        let tests = if command.is_empty() {
            let functions = (self.tool == "valkey-benchmark").then_some(self.functions);
            suite::suite(self.selected.as_deref(), random, base.cluster.is_some(), functions)?
        } else {
            vec![suite::custom(command, random)?]
        };
        if let Some(path) = &self.dataset {
            match dataset(path, self.maxdocs, &tests, command, !(self.quiet || self.csv)) {
                Ok(d) => base.extras.dataset = Some(std::sync::Arc::new(d)),
                Err(words) => return Ok(Parsed::Refused(words.0)),
            }
        }
        let mut requests = self.requests;
        if self.tool == "valkey-benchmark" {
            requests = valkey_units(&tests, requests, &mut base);
        }
        if base.stop == StopAfter::AllKeys {
            base.stop = StopAfter::Requests(requests);
        }
        let fuzz = self.fuzz.then(|| super::fuzz::Plan {
            server: base.server.clone(),
            clients: base.connections,
            commands: self.requests,
            duration: self.duration,
            modes: self.fuzz_modes,
            log: self.fuzz_log,
            seed: base.seed,
            keyspace: self.keyspace.unwrap_or(100),
            cluster: base.cluster.is_some(),
        });
        let (quiet, csv, precision, looping, idle) = (self.quiet, self.csv, self.precision, self.looping, self.idle);
        let keyspace = self.keyspace;
        let plan = Plan { base, tests, quiet, csv, precision, looping, idle, payload, keyspace, save, fuzz };
        Ok(Parsed::Run(Box::new(plan)))
    }

    /// What the options leave to the end: the server, the cipher lists, how long each test runs,
    /// the key range, how TLS is verified, and the checks respbench's parser would make.
    fn finish_flags(&mut self) -> Result<(), BenchmarkError> {
        let args = &mut self.args;
        self.server.set(args);
        args.tls |= self.server.tls;
        let ciphers: Vec<String> = self.ciphers.iter().flatten().cloned().collect();
        if !ciphers.is_empty() {
            args.tls_ciphers = Some(ciphers.join(":"));
        }
        match self.duration {
            Some(d) => args.duration = Some(d),
            None => args.requests = Some(self.requests.to_string()),
        }
        if let Some(r) = self.keyspace {
            (args.key_min, args.key_max) = (0, r - 1);
        }
        if args.cert.is_some() != args.key.is_some() {
            return Err("--cert and --key go together: the client certificate and its private key".into());
        }
        if args.shards.allow_late_start && args.shards.start_at.is_none() {
            return Err("--allow-late-start needs --start-at TIME".into());
        }
        tls_as_the_tools(self.tool, args, self.say_notes);
        Ok(())
    }
}

message_error!(
    /// What the tool itself says on stderr when it refuses a run (exit 1, not a usage error).
    Refusal
);

/// valkey-benchmark's `--dataset`: the file read for the fields the command names, or what
/// valkey-benchmark says on stderr (exit 1) when it cannot be used. `verbose`: its loading
/// lines on stderr (not under `-q` or `--csv`).
fn dataset(
    path: &std::path::Path,
    maxdocs: Option<usize>,
    tests: &[Test],
    command: &[String],
    verbose: bool,
) -> Result<crate::config::dataset::Dataset, Refusal> {
    use crate::config::dataset::{Dataset, fields_named};
    let example = "Example: SET doc:__rand_int__ \"__field:content__\"";
    if command.is_empty() {
        return Err(format!("Error: Dataset mode requires a command with field placeholders\n{example}").into());
    }
    let commands: Vec<_> = tests.iter().flat_map(|t| t.commands.iter().cloned()).collect();
    if fields_named(&commands).is_empty() {
        return Err(format!("Error: Dataset mode requires at least one field placeholder\n{example}").into());
    }
    if command.iter().any(|w| w.contains("__data__")) {
        return Err("Error: __data__ placeholders cannot be used with --dataset option".into());
    }
    if verbose {
        eprintln!("Loading dataset from {}...", path.display());
    }
    let dataset = Dataset::for_commands(path, maxdocs, &commands).map_err(|e| format!("Error: {e}"))?;
    if verbose {
        eprintln!("\rLoaded {} documents{:20}", dataset.rows.len(), "");
    }
    Ok(dataset)
}

/// As the tools do with OpenSSL: the chain is verified, the host name is not.
fn tls_as_the_tools(tool: &str, args: &mut Args, say_notes: bool) {
    // respbench's note on how TLS is verified: the tools' stderr carries only their own lines,
    // so it is said only with --notes (this front-end writes no JSON to keep it in).
    let mut notes = Notes::kept(say_notes);
    if args.tls && !args.tls_skip_verify {
        args.tls_skip_hostname = true;
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
fn seconds(v: &str) -> Result<Duration, InvalidValue> {
    let bad = |_| InvalidValue(format!("expected a duration above 0 such as 10 (seconds), 10s or 500ms, got '{v}'"));
    if v.parse::<u64>().is_ok() {
        return parse::duration(&format!("{v}s")).map_err(bad);
    }
    parse::duration(v).map_err(bad)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn os(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    /// The options of `line` read and finished, before they become the configuration.
    fn read(tool: &str, line: &[&str]) -> Reading<'static> {
        let tool: &'static str = if tool == "valkey-benchmark" { "valkey-benchmark" } else { "redis-benchmark" };
        let (found, _) = scan(tool, OPTIONS, &os(line), Rest::Command).unwrap();
        let mut reading = Reading::new(tool).unwrap();
        for f in found {
            assert!(reading.apply(f).unwrap().is_none());
        }
        reading.finish_flags().unwrap();
        reading
    }

    fn native(argv: &[OsString]) -> Config {
        Args::try_parse_from(argv).unwrap_or_else(|e| panic!("{argv:?}: {e}")).into_config().unwrap().0
    }

    /// Command lines with what the front-end meant by them in respbench's flags (what it wrote
    /// for respbench's parser before the plan was typed): the same configuration.
    #[test]
    fn each_option_means_what_respbenchs_flag_means() {
        let cases = [
            ("", "--requests 100000"),
            (
                "-h 10.0.0.2 -p 7000 -c 20 -n 1000 -P 4 -d 1k --threads 2",
                "--host 10.0.0.2 --port 7000 --connections 20 --pipeline 4 --data-size 1k --threads 2 --requests 1000",
            ),
            (
                "-r 100 -a pw --user bob --dbnum 3 -3 --rps 5k --warmup 2 -k 0",
                "--key-min 0 --key-max 99 --password pw --user bob --db 3 --resp3 --rate 5k --warmup 2s \
                 --reconnect-every 1 --requests 100000",
            ),
            (
                "--tls --cacert ca.pem --sni n --tls-ciphers A --tls-ciphersuites B",
                "--tls --cacert ca.pem --sni n --tls-ciphers A:B --tls-skip-hostname --requests 100000",
            ),
            (
                "-u rediss://u:p@h:1/2 --insecure --cluster --rfr all --duration 500ms",
                "--host h --port 1 --password p --user u --db 2 --tls --tls-skip-verify --cluster \
                 --read-from-replicas all --duration 500ms",
            ),
            (
                "-s /tmp/s --mptcp --enable-tracking --shard 1/4 --user nobody",
                "--socket /tmp/s --mptcp --enable-tracking --shard 1/4 --requests 100000",
            ),
        ];
        for (line, flags) in cases {
            let mut line: Vec<&str> = line.split_whitespace().collect();
            line.extend(["--seed", "5"]);
            let typed = read("redis-benchmark", &line).args.into_config().unwrap().0;
            // The tool's own defaults, where the line does not set them.
            let mut argv = os(&["respbench", "--key-prefix", "", "--seed", "5", "--max-reconnects", "0"]);
            argv.extend(flags.split_whitespace().map(OsString::from));
            for (flag, value) in [("--data-size", "3"), ("--threads", "1")] {
                if !flags.contains(flag) {
                    argv.extend(os(&[flag, value]));
                }
            }
            assert_eq!(format!("{typed:?}"), format!("{:?}", native(&argv)), "{line:?}");
        }
    }

    /// `--save-scenario` writes the plan as respbench's flags: read back, they plan the same run.
    #[test]
    fn saved_flags_plan_the_same_run() {
        let lines: &[&[&str]] = &[
            &["--seed", "9"],
            &["--seed", "9", "-c", "7", "-n", "300", "-P", "2", "-d", "100", "-r", "50", "-k", "0", "--rps", "900"],
            &["--seed", "9", "-u", "valkeys://a:b@h:9/1", "--cacert", "c", "--cert", "x", "--key", "y", "--rfr", "yes"],
            &["--seed", "9", "-s", "/s", "-3", "--cluster", "--duration", "2", "--warmup", "1.5s", "--mptcp"],
            &[
                "--seed",
                "9",
                "--shard",
                "0/2",
                "--shard-count",
                "2",
                "--start-at",
                "1893596645.25",
                "--allow-late-start",
            ],
            &["--seed", "9", "--enable-tracking", "--insecure", "--tls-ciphersuites", "TLS13_AES_128_GCM_SHA256"],
        ];
        for line in lines {
            let reading = read("redis-benchmark", line);
            let mut argv = os(&["respbench"]);
            argv.extend(super::super::save::flags(&reading.args));
            let typed = reading.args.into_config().unwrap().0;
            assert_eq!(format!("{typed:?}"), format!("{:?}", native(&argv)), "{line:?} saved as {argv:?}");
        }
    }

    #[test]
    fn the_checks_respbenchs_parser_made_are_made() {
        let err = |line: &[&str]| match plan("redis-benchmark", &os(line)) {
            Err(e) => e,
            Ok(_) => panic!("{line:?} planned"),
        };
        assert!(err(&["--cert", "c"]).contains("--cert and --key go together"));
        assert!(err(&["--allow-late-start"]).contains("--start-at"));
        assert!(err(&["-c", "0"]).contains("invalid value for '-c'"));
        assert!(err(&["--rfr", "some"]).contains("'some'"));
        assert!(err(&["--seed", "x"]).contains("invalid value for '--seed'"));
        assert!(err(&["-p", "70000"]).contains("'70000'"));
        assert!(err(&["--warmup", "0"]).contains("'0'"));
    }
}
