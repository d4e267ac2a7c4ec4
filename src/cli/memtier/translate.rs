//! memtier_benchmark's command line (`respbench memtier ARGS`, or the binary run as
//! `memtier_benchmark`) turned into respbench's plan as typed values: its options with its
//! semantics (clients per thread, requests per client, its defaults) set on [`Args`] from its
//! defaults, memtier's output options on [`MemtierOutput`]. Long options may carry one dash or
//! two and `=value` or a separate value, as guides print them. An option respbench cannot
//! honour yet is an error naming it, never silently dropped.

use std::ffi::OsString;
use std::time::Duration;

use super::added;
use super::draft::Draft;
use super::error::MemtierError;
use super::load::{Load, load_args};
use super::options::{self, CONFLICTS, Map, OPTIONS, REQUIRES};
use crate::cli::dialect::{Found, Rest, scan};
use crate::cli::options::Args;
use crate::report::memtier::stats::MemtierOutput;

/// memtier's defaults where they differ from respbench's.
const CLIENTS_PER_THREAD: u64 = 50;
const THREADS: u64 = 4;
/// The seed of every client's random sequence without `--randomize`, as memtier's constant.
const CONSTANT_SEED: u64 = 5381;

/// What memtier does without being told, printed once on stderr.
const SAME_STREAM_NOTICE: &str = "every client draws the same random key sequence, as \
    memtier_benchmark does; --distinct-client-seed gives each client its own";
const TLS_NOTICE: &str = "TLS verifies the server's certificate chain but not its host \
    name, as memtier_benchmark does (respbench --tls checks both)";

/// What a memtier command line asks for.
#[derive(Debug)]
pub enum Translated {
    Run(Box<Run>),
    /// Print this (help, version) and exit successfully.
    Print(String),
}

/// A run: its plan, memtier's own warnings (for stderr, in its words), respbench's notes (said
/// on stderr only with `--notes`: `say_notes`), and the configuration to show (`--show-config`).
#[derive(Debug)]
pub struct Run {
    pub draft: Draft,
    pub warnings: Vec<String>,
    pub notices: Vec<String>,
    pub say_notes: bool,
    pub show_config: Option<String>,
}

/// An arbitrary command with what memtier attaches to it: each `--command-ratio` and
/// `--command-key-pattern` applies to the last `--command` before it.
struct Arbitrary {
    text: String,
    ratio: Option<u32>,
    pattern: Option<char>,
}

/// The server options, held until `--uri` (which overrides them) has been read.
#[derive(Default)]
struct ServerOptions {
    host: Option<String>,
    port: Option<String>,
    authenticate: Option<String>,
    select_db: Option<String>,
    uri: Option<String>,
    tls: bool,
    /// `--tls-protocols`, every one given (memtier adds them up).
    tls_protocols: Vec<String>,
    family: Option<u8>,
}

/// What the options say, gathered in order before the plan is finished.
struct Gathered {
    draft: Draft,
    server: ServerOptions,
    commands: Vec<Arbitrary>,
    load: Load,
    /// Every option's last value ("yes" for a switch), for `--show-config` and memtier's JSON.
    given: Vec<(&'static str, String)>,
    /// The options that set a field, each once with its last value (getopt's rule): long name
    /// as written for messages, and the value.
    passed: Vec<(&'static str, String, String)>,
    rate_limit: Option<u64>,
    distinct: bool,
    randomize: bool,
    show_config: bool,
    say_notes: bool,
    reconnect_on_error: bool,
    max_attempts: u32,
    backoff_factor: Option<f64>,
    jitter_us: (u64, u64),
    /// `--read-preference` and `--read-preference-fallback`, as given.
    read_preference: (Option<String>, Option<String>),
    /// `--read-server`s given.
    read_servers: usize,
    /// `--prometheus-port` and `--prometheus-bind-addr`.
    prometheus: (Option<u16>, Option<std::net::IpAddr>),
    retries: super::retries::Retries,
    /// `--connection-stage-timeout` in seconds (0: off).
    stage_timeout: Option<u64>,
}

/// Translates memtier's arguments (without the program name) into respbench's plan.
pub fn translate(args: &[OsString]) -> Result<Translated, MemtierError> {
    let mut g = Gathered::new();
    // memtier's getopt moves the words that are not options to the end, and memtier never
    // reads them: they change nothing (a note says which, with --notes).
    let (found, ignored) = scan("memtier_benchmark", OPTIONS, args, Rest::Ignored)?;
    for Found { index, long, value } in found {
        let (spec, map) = &OPTIONS[index];
        let name = spec.names[0];
        g.given.retain(|(n, _)| *n != name);
        g.given.push((name, value.clone().unwrap_or_else(|| "yes".into())));
        let value = value.unwrap_or_default();
        match map {
            Map::Set => match g.passed.iter_mut().find(|(n, ..)| *n == name) {
                Some(earlier) => (earlier.1, earlier.2) = (long, value),
                None => g.passed.push((name, long, value)),
            },
            Map::Special => {
                if let Some(text) = g.special(name, &long, value)? {
                    return Ok(Translated::Print(text));
                }
            }
        }
    }
    for (name, long, value) in std::mem::take(&mut g.passed) {
        options::set(&mut g.draft, name, &value).map_err(|e| format!("invalid value for '{long}': {e}"))?;
    }
    relations(&g.given)?;
    g.finish().map(|mut run| {
        if !ignored.is_empty() {
            let quoted: Vec<String> = ignored.iter().map(|w| format!("'{w}'")).collect();
            run.notices.push(format!(
                "words that are not options are ignored, as memtier_benchmark ignores them: {}",
                quoted.join(" ")
            ));
        }
        Translated::Run(Box::new(run))
    })
}

/// The options that need another, or exclude one, as respbench's fields they set do.
fn relations(given: &[(&str, String)]) -> Result<(), MemtierError> {
    let has = |name: &str| given.iter().any(|(n, _)| *n == name);
    // memtier's exporter is the metrics endpoint: --metrics-linger keeps it too.
    let listens = |name: &str| has(name) || (name == "metrics-listen" && has("prometheus-port"));
    if let Some((a, b)) = REQUIRES.iter().find(|(a, b)| has(a) && !listens(b)) {
        return Err(format!("memtier_benchmark's --{a} needs --{b}").into());
    }
    if let Some((a, b)) = CONFLICTS.iter().find(|(a, b)| has(a) && has(b)) {
        return Err(format!("memtier_benchmark's --{a} cannot be used with --{b}").into());
    }
    Ok(())
}

impl Gathered {
    fn new() -> Gathered {
        let draft = Draft { args: Args::default(), output: MemtierOutput::default(), json: None };
        let load = Load {
            clients: CLIENTS_PER_THREAD,
            threads: THREADS,
            requests: None,
            test_time: None,
            staircase: [None; 3],
        };
        Gathered {
            draft,
            server: ServerOptions::default(),
            commands: Vec::new(),
            load,
            given: Vec::new(),
            passed: Vec::new(),
            rate_limit: None,
            distinct: false,
            randomize: false,
            show_config: false,
            say_notes: false,
            reconnect_on_error: false,
            max_attempts: 0,
            backoff_factor: None,
            jitter_us: (0, 0),
            prometheus: (None, None),
            read_preference: (None, None),
            read_servers: 0,
            retries: Default::default(),
            stage_timeout: None,
        }
    }

    /// One option the translation takes care of (`name`, its long name; `long` as written);
    /// `Some` is text to print instead of a run (`--help`, `--version`).
    fn special(&mut self, name: &str, long: &str, v: String) -> Result<Option<String>, MemtierError> {
        let number =
            |v: &str| v.parse::<u64>().map_err(|_| format!("invalid value for '{long}': '{v}' is not a number"));
        let count = |v: &str| crate::cli::parse::positive(v).map_err(|e| format!("invalid value for '{long}': {e}"));
        let server = &mut self.server;
        match name {
            "help" => return Ok(Some(super::usage::usage())),
            "version" => return Ok(Some(super::usage::version())),
            // The last one wins, as in memtier.
            "server" | "host" => server.host = Some(v),
            "port" => server.port = Some(v),
            "authenticate" => server.authenticate = Some(v),
            "select-db" => server.select_db = Some(v),
            "uri" => server.uri = Some(v),
            "tls" => server.tls = true,
            "tls-protocols" => server.tls_protocols.push(v),
            "ipv4" => server.family = Some(4),
            "ipv6" => server.family = Some(6),
            "command" => self.commands.push(Arbitrary { text: v, ratio: None, pattern: None }),
            "command-ratio" | "command-key-pattern" => attach(&mut self.commands, long, v)?,
            "distinct-client-seed" => self.distinct = true,
            "randomize" => self.randomize = true,
            "show-config" => self.show_config = true,
            "notes" => self.say_notes = true,
            "reconnect-on-error" => self.reconnect_on_error = true,
            "max-reconnect-attempts" => {
                self.max_attempts = u32::try_from(number(&v)?).map_err(|_| format!("'{v}' is too large"))?
            }
            "reconnect-backoff-factor" => match v.parse::<f64>() {
                Ok(f) if f > 0.0 && f.is_finite() => self.backoff_factor = Some(f),
                _ => return Err(format!("invalid value for '{long}': '{v}' is not a number above 0").into()),
            },
            // 0 leaves what an earlier one set, as the flag it becomes is not passed for 0.
            "connection-timeout" => match number(&v)? {
                0 => {}
                secs => self.draft.args.connect_timeout = Some(Duration::from_secs(secs)),
            },
            "connection-stage-timeout" => self.stage_timeout = Some(number(&v)?),
            "retry-on-error"
            | "max-retries"
            | "retry-backoff-ms"
            | "retry-backoff-factor"
            | "retry-on"
            | "max-retry-queue" => self.retries.take(name, long, &v)?,
            "thread-conn-start-min-jitter-micros" => self.jitter_us.0 = number(&v)?,
            "thread-conn-start-max-jitter-micros" => self.jitter_us.1 = number(&v)?,
            "clients" => self.load.clients = count(&v)?,
            "threads" => self.load.threads = count(&v)?,
            "requests" if v == "allkeys" => self.load.requests = Some(None),
            "requests" => self.load.requests = Some(Some(count(&v)?)),
            "test-time" => self.load.test_time = Some(count(&v)?),
            "rate-limiting" => self.rate_limit = Some(count(&v)?),
            "clients-start" => self.load.staircase[0] = Some(count(&v)?),
            "clients-step" => self.load.staircase[1] = Some(count(&v)?),
            "step-duration" => self.load.staircase[2] = Some(count(&v)?),
            "protocol" => protocol(&v, &mut self.draft.args)?,
            "read-preference" => self.read_preference.0 = Some(v),
            "read-preference-fallback" => self.read_preference.1 = Some(v),
            // Parsed as memtier parses it; memtier routes reads by it in cluster mode only, where
            // the cluster names its replicas, so it changes nothing (a note says so).
            "read-server" => self.read_servers += usize::from(added::read_server(long, &v)?),
            "command-is-read" => added::command_is_read(long, self.commands.last().map(|c| c.text.as_str()))?,
            "prometheus-port" | "prometheus-bind-addr" | "prometheus-run-label" => {
                added::prometheus(name, long, &v, &mut self.prometheus, &mut self.draft.args)?
            }
            "command-stats-breakdown" => match v.to_ascii_lowercase().as_str() {
                "command" => self.draft.output.by_line = false,
                "line" => self.draft.output.by_line = true,
                _ => return Err("memtier_benchmark's --command-stats-breakdown must be 'command' or 'line'".into()),
            },
            _ => unreachable!("every Special option is handled: {name}"),
        }
        Ok(None)
    }

    /// What the options say together: the server, the commands, memtier's defaults and the
    /// run's length, set on the plan.
    fn finish(mut self) -> Result<Run, MemtierError> {
        let mut warnings = server_args(&self.server, &mut self.given, &mut self.draft.args)?;
        warnings.extend(added::exporter(self.prometheus, &mut self.draft.args));
        added::read_preference(&self.read_preference, &mut self.draft.args)?;
        command_args(std::mem::take(&mut self.commands), &self.given, &mut self.draft.args)?;
        let has = |name: &str| self.given.iter().any(|(n, _)| *n == name);
        let args = &mut self.draft.args;
        let mut notices = Vec::new();
        let tls = self.given.iter().any(|(name, value)| {
            matches!(*name, "tls" | "cert" | "key" | "cacert" | "sni" | "tls-protocols")
                || (*name == "uri" && value.to_ascii_lowercase().starts_with("rediss://"))
        });
        if tls && !has("tls-skip-verify") {
            args.tls_skip_hostname = true;
            notices.push(TLS_NOTICE.to_string());
        }
        if !self.distinct {
            args.same_stream_per_connection = true;
            notices.push(SAME_STREAM_NOTICE.to_string());
        }
        if self.read_servers > 0 {
            notices.push(
                "--read-server changes nothing, as in memtier_benchmark: reads go to replicas in cluster mode \
                 only, the replicas the cluster names"
                    .to_string(),
            );
        }
        if !self.randomize {
            args.seed = Some(CONSTANT_SEED);
        }
        if self.reconnect_on_error {
            // memtier waits 1 s, times the factor at every attempt (no factor: 1 s each time).
            let factor = self.backoff_factor.unwrap_or(1.0).max(1.0);
            args.reconnect_backoff = Duration::from_secs_f64(factor);
            args.reconnect_backoff_factor = Some(factor);
            args.max_reconnects = Some(if self.max_attempts == 0 { u32::MAX } else { self.max_attempts });
        } else {
            // Without --reconnect-on-error a failed connection stays closed, as in memtier.
            args.max_reconnects = Some(0);
        }
        self.retries.apply(args);
        // The connect phase's budget: connecting, logging in, the checks and the first reply.
        // 0 (memtier's "off") keeps respbench's own budget: nothing waits without a bound.
        if let Some(secs) = self.stage_timeout.filter(|&s| s > 0) {
            let stage = Duration::from_secs(secs);
            args.connect_timeout = Some(args.connect_timeout.map_or(stage, |t| t.min(stage)));
        }
        if self.jitter_us.1 > 0 {
            args.connect_jitter_us = Some((self.jitter_us.0.min(self.jitter_us.1), self.jitter_us.1));
        }
        if !has("key-prefix") {
            args.key_prefix = "memtier-".into();
        }
        // memtier's split of the key range over its clients, whatever else is asked.
        args.memtier.memtier_slices = true;
        let connections = self.load.clients * self.load.threads;
        args.connections = connections;
        args.threads = Some(self.load.threads);
        // Requests per second per connection; respbench's --rate is the total over them.
        args.rate = self.rate_limit.map(|per_connection| per_connection * connections);
        load_args(self.load, args)?;
        let show_config = self.show_config.then(|| super::usage::show_config(&self.given, self.server.family));
        self.draft.output.given = self.given.into_iter().map(|(name, value)| (name.to_string(), value)).collect();
        Ok(Run { draft: self.draft, warnings, notices, say_notes: self.say_notes, show_config })
    }
}

/// `--protocol`: respbench's wire protocol and RESP version, the last one given in place of
/// any earlier.
fn protocol(v: &str, args: &mut Args) -> Result<(), MemtierError> {
    use crate::codec::Protocol;
    let (resp3, wire) = match v {
        "redis" | "resp2" => (false, Protocol::Resp),
        "resp3" => (true, Protocol::Resp),
        "memcache_text" => (false, Protocol::MemcacheText),
        "memcache_binary" => (false, Protocol::MemcacheBinary),
        other => {
            return Err(format!(
                "invalid value for --protocol: '{other}' (redis, resp2, resp3, memcache_text or memcache_binary)"
            )
            .into());
        }
    };
    (args.resp3, args.wire.protocol) = (resp3, wire);
    Ok(())
}

/// `--command-ratio` or `--command-key-pattern` (`option`), set on the last `--command`.
fn attach(commands: &mut [Arbitrary], option: &str, v: String) -> Result<(), MemtierError> {
    let Some(last) = commands.last_mut() else {
        return Err(format!("memtier_benchmark's {option} '{v}' sets the --command before it: none was given").into());
    };
    if option == "--command-ratio" {
        let ratio = v.parse::<u32>();
        last.ratio =
            Some(ratio.map_err(|_| format!("invalid value for '--command-ratio': '{v}' is not a whole number"))?);
    } else {
        match v.as_str() {
            "R" | "S" | "G" | "Z" | "P" => last.pattern = v.chars().next(),
            _ => {
                return Err(format!(
                    "invalid value for '--command-key-pattern': '{v}' (one of R, S, G, Z, P) for '{}'",
                    last.text
                )
                .into());
            }
        }
    }
    Ok(())
}

/// The `--command`s, each with its own ratio and key pattern (respbench matches them by
/// position). memtier's rules: the key pattern and ratio go with each command, not
/// `--key-pattern`/`--ratio`, and P (each client its slice of the range) is all or none.
fn command_args(commands: Vec<Arbitrary>, given: &[(&str, String)], args: &mut Args) -> Result<(), MemtierError> {
    if commands.is_empty() {
        return Ok(());
    }
    if given.iter().any(|(name, _)| *name == "key-pattern") {
        return Err("with --command, memtier_benchmark takes each command's key pattern from --command-key-pattern, \
                    not --key-pattern"
            .into());
    }
    let parallel = commands.iter().filter(|c| c.pattern == Some('P')).count();
    if parallel > 0 && parallel < commands.len() {
        return Err(format!(
            "memtier_benchmark's parallel key pattern (P) must be given to every --command: {parallel} of {} have it",
            commands.len()
        )
        .into());
    }
    for c in &commands {
        let name = c.text.split_whitespace().next().unwrap_or_default().to_ascii_uppercase();
        if crate::workload::monitor::UNREPLAYABLE.contains(&name.as_str()) {
            return Err(format!(
                "--command '{}': {name} cannot be benchmarked: the server does not answer it with exactly one \
                 reply per request",
                c.text
            )
            .into());
        }
    }
    for c in commands {
        let letter = c.pattern.unwrap_or('R');
        args.command.push(c.text);
        args.command_ratio.push(c.ratio.unwrap_or(1));
        args.command_key_pattern.push((letter, letter));
    }
    Ok(())
}

/// Host, port, credentials, database and TLS: `--uri` overrides the parts it names, as in
/// memtier 2.3, with its warnings (returned, for stderr). Updates `given` to what memtier
/// then holds, for `--show-config`.
fn server_args(
    server: &ServerOptions,
    given: &mut Vec<(&'static str, String)>,
    args: &mut Args,
) -> Result<Vec<String>, MemtierError> {
    let (mut host, mut port) = (server.host.clone(), server.port.clone());
    let (mut authenticate, mut db, mut tls) = (server.authenticate.clone(), server.select_db.clone(), server.tls);
    let mut notices = Vec::new();
    if let Some(uri) = &server.uri {
        notices = super::uri::warnings(&super::uri::Given {
            host: host.as_deref(),
            port: port.as_deref(),
            authenticate: authenticate.as_deref(),
            select_db: db.as_deref(),
            tls,
        });
        let parts = super::uri::parse(uri)?;
        let mut set = |name: &'static str, slot: &mut Option<String>, value: Option<String>| {
            if let Some(value) = value {
                given.retain(|(n, _)| *n != name && !(name == "server" && *n == "host"));
                given.push((name, value.clone()));
                *slot = Some(value);
            }
        };
        set("server", &mut host, parts.host);
        set("port", &mut port, parts.port.map(|p| p.to_string()));
        set("authenticate", &mut authenticate, parts.credentials);
        set("select-db", &mut db, parts.db.map(|d| d.to_string()));
        tls |= parts.tls;
    }
    if let Some(family) = server.family {
        host = Some(resolve(host.as_deref().unwrap_or("localhost"), family)?);
    }
    if let Some(host) = host {
        args.host = host;
    }
    if let Some(port) = port {
        args.port =
            port.parse().map_err(|_| format!("invalid value for '--port': '{port}' is not a port (0 to 65535)"))?;
    }
    if let Some(db) = db {
        let number =
            db.parse().map_err(|_| format!("invalid value for '--select-db': '{db}' is not a database number"));
        args.db = Some(number?);
    }
    if let Some(auth) = &authenticate {
        let (user, password) = super::uri::credentials(auth);
        (args.user, args.password) = (user.map(String::from), Some(password.to_string()));
    }
    args.tls |= tls;
    if !server.tls_protocols.is_empty() {
        let versions = crate::cli::options::parse_tls_versions(&server.tls_protocols.join(","));
        args.tls_versions = Some(versions.map_err(|e| format!("invalid value for '--tls-protocols': {e}"))?);
    }
    Ok(notices)
}

/// The plan a memtier_benchmark command line (without the program name) runs, without running
/// it: what `respbench memtier ARGS` would hand the engine.
pub fn plan(args: &[OsString]) -> Result<crate::config::Config, MemtierError> {
    match translate(args)? {
        Translated::Run(run) => run.draft.into_plan().map(|(config, _, _)| config),
        Translated::Print(_) => Err("the command line asks for help or the version, not a run".into()),
    }
}

/// `-4`/`-6`: the host's first address of that family, so that respbench connects to it.
fn resolve(host: &str, family: u8) -> Result<String, MemtierError> {
    use std::net::ToSocketAddrs;
    let addrs = (host, 0).to_socket_addrs().map_err(|e| format!("cannot resolve '{host}': {e}"))?;
    addrs
        .map(|a| a.ip())
        .find(|ip| if family == 4 { ip.is_ipv4() } else { ip.is_ipv6() })
        .map(|ip| ip.to_string())
        .ok_or_else(|| MemtierError(format!("'{host}' has no IPv{family} address (asked for by -{family})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(args: &[&str]) -> Result<Args, MemtierError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        match translate(&args)? {
            Translated::Run(run) => Ok(run.draft.args),
            Translated::Print(text) => Err(text.into()),
        }
    }

    #[test]
    fn memtier_semantics() {
        let a = tr(&["-c", "10", "-t", "2", "-n", "100", "--ratio=1:0", "-clients=5"]).unwrap();
        // The last -c wins, as in memtier; requests are per client.
        assert_eq!((a.connections, a.threads), (10, Some(2)));
        assert_eq!(a.requests.as_deref(), Some("1000"));
        assert_eq!(a.ratio, Some((1, 0)));
        let a = tr(&["-n", "allkeys", "--key-pattern", "P:P", "--authenticate", "bob:pw"]).unwrap();
        assert_eq!(a.requests.as_deref(), Some("allkeys"));
        assert_eq!((a.user.as_deref(), a.password.as_deref()), (Some("bob"), Some("pw")));
        let a = tr(&["--test-time=5"]).unwrap();
        assert_eq!((a.duration, a.requests, a.connections), (Some(Duration::from_secs(5)), None, 200));
        assert_eq!((a.seed, a.same_stream_per_connection, a.key_prefix.as_str()), (Some(5381), true, "memtier-"));
    }

    #[test]
    fn retry_options_count_only_with_retry_on_error() {
        let a = tr(&["--retry-on-error"]).unwrap();
        assert_eq!((a.retry_errors, a.retry, a.retry_backoff), (true, u32::MAX, None));
        let a =
            tr(&["--retry-on-error", "--max-retries=0", "--retry-backoff-ms=20", "--retry-on=LOADING, BUSY"]).unwrap();
        assert_eq!((a.retry, a.retry_backoff), (0, Some(Duration::from_millis(20))));
        assert_eq!(a.retry_error_prefixes, ["LOADING", "BUSY"]);
        // The master switch off: the rest change nothing.
        let a = tr(&["--max-retries=3", "--retry-on=LOADING"]).unwrap();
        assert_eq!((a.retry_errors, a.retry, a.retry_error_prefixes.len()), (false, 0, 0));
        assert!(tr(&["--max-retries=-2"]).unwrap_err().contains("'-2'"));
        assert!(tr(&["--retry-backoff-factor=0.5"]).unwrap_err().contains("'0.5'"));
        assert!(tr(&["--retry-on=LOADING,,BUSY"]).unwrap_err().contains("--retry-on"));
        let a = tr(&["--connection-stage-timeout=3", "--connection-timeout=7"]).unwrap();
        assert_eq!(a.connect_timeout, Some(Duration::from_secs(3)));
        assert_eq!(tr(&["--connection-stage-timeout=0"]).unwrap().connect_timeout, None);
        assert_eq!(
            tr(&["--failed-keys-file=f.csv"]).unwrap().failed_keys.as_deref(),
            Some(std::path::Path::new("f.csv"))
        );
    }

    #[test]
    fn unknown_and_unsupported_options_are_named() {
        assert!(tr(&["--bogus"]).unwrap_err().contains("'--bogus'"));
        let args: Vec<OsString> = ["--client-stats=cs"].iter().map(OsString::from).collect();
        let Ok(Translated::Run(run)) = translate(&args) else { panic!() };
        assert_eq!(run.draft.output.client_stats.as_deref(), Some("cs"));
        assert!(tr(&["-n", "1", "--test-time", "2"]).unwrap_err().contains("exclude"));
        assert!(tr(&["-c"]).unwrap_err().contains("needs a value"));
        assert_eq!(tr(&["-c10"]).unwrap().connections, 40);
        assert!(tr(&["--key-maximum=x"]).unwrap_err().contains("'--key-maximum': expected a whole number"));
    }

    #[test]
    fn values_follow_getopt_and_respbenchs_rules() {
        // The last value counts, so an earlier bad one is never read.
        assert_eq!(tr(&["--pipeline=0", "--pipeline=4"]).unwrap().pipeline, 4);
        assert!(tr(&["--cert=c.pem"]).unwrap_err().contains("--cert needs --key"));
        assert!(tr(&["--statsd-port=9"]).unwrap_err().contains("--statsd-port needs --statsd-host"));
        assert!(tr(&["-d", "10", "--data-size-range=1-5"]).unwrap_err().contains("cannot be used with"));
        assert!(tr(&["--graphite-port=0", "--statsd-host=h"]).unwrap_err().contains("'0' is not a port"));
        let a = tr(&["-P", "resp3", "--protocol=memcache_binary"]).unwrap();
        assert_eq!((a.resp3, a.wire.protocol), (false, crate::codec::Protocol::MemcacheBinary));
    }

    #[test]
    fn staircase_and_rate_limit_are_per_thread_and_per_connection() {
        let a =
            tr(&["-t", "2", "-c", "3", "--clients-start=1", "--clients-step=1", "--step-duration=2", "--test-time=6"])
                .unwrap();
        assert_eq!((a.connections_start, a.connections_step), (Some(2), Some(2)));
        assert_eq!(a.step_duration, Some(Duration::from_secs(2)));
        assert_eq!(tr(&["-t", "2", "-c", "3", "--rate-limiting=100", "--test-time=1"]).unwrap().rate, Some(600));
        assert!(tr(&["--clients-start=1"]).unwrap_err().contains("go together"));
        let all = ["--clients-start=5", "--clients-step=1", "--step-duration=1", "--test-time=2", "-c", "5"];
        assert!(tr(&all).unwrap_err().contains("must be less than --clients (5)"));
        let counted = ["--clients-start=1", "--clients-step=1", "--step-duration=1", "-n", "10"];
        assert!(tr(&counted).unwrap_err().contains("--test-time"));
        assert!(tr(&["--rate-limiting=0"]).unwrap_err().contains("'0'"));
    }
}
