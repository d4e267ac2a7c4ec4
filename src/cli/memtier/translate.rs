//! memtier_benchmark's command line (`respbench memtier ARGS`, or the binary run as
//! `memtier_benchmark`): its options with its semantics (clients per thread, requests per
//! client, its defaults), translated into respbench's own flags. Long options may carry one
//! dash or two and `=value` or a separate value, as guides print them. An option respbench
//! cannot honour yet is an error naming it, never silently dropped.

use std::ffi::OsString;

use crate::cli::dialect::{Found, Spec, scan};

/// What one memtier option becomes.
enum Map {
    /// The same meaning under respbench's name: the value is passed on.
    Flag(&'static str),
    /// Taken care of below (needs arithmetic or splitting).
    Special,
}

/// memtier's options: names (long first), whether they take a value, and their mapping.
const OPTIONS: &[(Spec, Map)] = &[
    opt(&["server", "s"], true, Map::Special),
    // memtier's -h is the host, as in its getopt string; help is --help only.
    opt(&["host", "h"], true, Map::Special),
    opt(&["help"], false, Map::Special),
    opt(&["version", "v"], false, Map::Special),
    opt(&["port", "p"], true, Map::Special),
    opt(&["unix-socket", "S"], true, Map::Flag("--socket")),
    opt(&["protocol", "P"], true, Map::Special),
    opt(&["authenticate", "a"], true, Map::Special),
    opt(&["uri", "u"], true, Map::Special),
    opt(&["ipv4", "4"], false, Map::Special),
    opt(&["ipv6", "6"], false, Map::Special),
    opt(&["select-db"], true, Map::Special),
    opt(&["clients", "c"], true, Map::Special),
    opt(&["threads", "t"], true, Map::Special),
    opt(&["requests", "n"], true, Map::Special),
    opt(&["test-time"], true, Map::Special),
    opt(&["ratio"], true, Map::Flag("--ratio")),
    opt(&["pipeline"], true, Map::Flag("--pipeline")),
    opt(&["key-prefix"], true, Map::Flag("--key-prefix")),
    opt(&["key-minimum"], true, Map::Flag("--key-min")),
    opt(&["key-maximum"], true, Map::Flag("--key-max")),
    opt(&["key-pattern"], true, Map::Flag("--key-pattern")),
    opt(&["key-stddev"], true, Map::Flag("--key-stddev")),
    opt(&["key-median"], true, Map::Flag("--key-median")),
    opt(&["key-zipf-exp"], true, Map::Flag("--zipf-exponent")),
    opt(&["data-size", "d"], true, Map::Flag("--data-size")),
    opt(&["data-size-range"], true, Map::Flag("--data-size-range")),
    opt(&["data-size-list"], true, Map::Flag("--data-size-list")),
    opt(&["random-data", "R"], false, Map::Flag("--random-data")),
    opt(&["expiry-range"], true, Map::Flag("--expiry-range")),
    opt(&["command"], true, Map::Special),
    opt(&["command-ratio"], true, Map::Special),
    opt(&["command-key-pattern"], true, Map::Special),
    opt(&["run-count", "x"], true, Map::Flag("--runs")),
    opt(&["out-file", "o"], true, Map::Flag("--out-file")),
    opt(&["json-out-file"], true, Map::Flag("--memtier-json")),
    opt(&["hide-histogram"], false, Map::Flag("--memtier-hide-histogram")),
    opt(&["print-all-runs"], false, Map::Flag("--memtier-print-all-runs")),
    opt(&["command-stats-breakdown"], true, Map::Special),
    opt(&["hdr-file-prefix"], true, Map::Flag("--memtier-hdr-prefix")),
    opt(&["distinct-client-seed"], false, Map::Special),
    // Several load machines as one run (respbench's own; memtier has no equivalent).
    opt(&["shard"], true, Map::Flag("--shard")),
    opt(&["shard-count"], true, Map::Flag("--shard-count")),
    opt(&["start-at"], true, Map::Flag("--start-at")),
    opt(&["allow-late-start"], false, Map::Flag("--allow-late-start")),
    opt(&["randomize"], false, Map::Special),
    opt(&["show-config"], false, Map::Special),
    // respbench's own: its notes on stderr too (they are always in --respbench-json).
    opt(&["notes"], false, Map::Special),
    opt(&["print-percentiles"], true, Map::Flag("--percentiles")),
    opt(&["tls"], false, Map::Special),
    opt(&["tls-skip-verify"], false, Map::Flag("--tls-skip-verify")),
    opt(&["cert"], true, Map::Flag("--cert")),
    opt(&["key"], true, Map::Flag("--key")),
    opt(&["cacert"], true, Map::Flag("--cacert")),
    opt(&["sni"], true, Map::Flag("--sni")),
    opt(&["tls-protocols"], true, Map::Special),
    opt(&["cluster-mode"], false, Map::Flag("--cluster")),
    opt(&["reconnect-interval"], true, Map::Flag("--reconnect-every")),
    opt(&["reconnect-on-error"], false, Map::Special),
    opt(&["max-reconnect-attempts"], true, Map::Special),
    opt(&["reconnect-backoff-factor"], true, Map::Special),
    opt(&["connection-timeout"], true, Map::Special),
    opt(&["thread-conn-start-min-jitter-micros"], true, Map::Special),
    opt(&["thread-conn-start-max-jitter-micros"], true, Map::Special),
    opt(&["statsd-host"], true, Map::Flag("--statsd-host")),
    opt(&["statsd-port"], true, Map::Flag("--statsd-port")),
    opt(&["statsd-prefix"], true, Map::Flag("--statsd-prefix")),
    opt(&["statsd-run-label"], true, Map::Flag("--statsd-run-label")),
    opt(&["save-scenario"], true, Map::Flag("--save-scenario")),
    opt(&["metrics-listen"], true, Map::Flag("--metrics-listen")),
    opt(&["respbench-json"], true, Map::Flag("--json")),
    opt(&["metrics-linger"], true, Map::Flag("--metrics-linger")),
    opt(&["graphite-port"], true, Map::Flag("--graphite-port")),
    opt(&["rate-limiting"], true, Map::Special),
    opt(&["clients-start"], true, Map::Special),
    opt(&["clients-step"], true, Map::Special),
    opt(&["step-duration"], true, Map::Special),
    opt(&["multi-key-get"], true, Map::Flag("--multi-key-get")),
    opt(&["data-import"], true, Map::Flag("--data-import")),
    opt(&["data-verify"], false, Map::Flag("--data-verify")),
    opt(&["wait-ratio"], true, Map::Flag("--wait-ratio")),
    opt(&["num-slaves"], true, Map::Flag("--num-slaves")),
    opt(&["debug", "D"], false, Map::Flag("--debug")),
    // The options other front-end work covers: named, so that they are not "unknown".
    opt(&["client-stats"], true, Map::Flag("--memtier-client-stats")),
    opt(&["data-offset"], true, Map::Flag("--data-offset")),
    opt(&["data-size-pattern"], true, Map::Flag("--data-size-pattern")),
    opt(&["monitor-input"], true, Map::Flag("--monitor-input")),
    opt(&["monitor-pattern"], true, Map::Flag("--monitor-pattern")),
    opt(&["scan-incremental-iteration"], false, Map::Flag("--scan-incremental-iteration")),
    opt(&["scan-incremental-max-iterations"], true, Map::Flag("--scan-incremental-max-iterations")),
    opt(&["wait-timeout"], true, Map::Flag("--wait-timeout")),
    opt(&["verify-only"], false, Map::Flag("--verify-only")),
    opt(&["generate-keys"], false, Map::Flag("--generate-keys")),
    opt(&["no-expiry"], false, Map::Flag("--no-expiry")),
];

const fn opt(names: &'static [&'static str], takes_value: bool, map: Map) -> (Spec, Map) {
    (Spec { names, takes_value }, map)
}

/// memtier's defaults where they differ from respbench's.
const CLIENTS_PER_THREAD: u64 = 50;
const THREADS: u64 = 4;
const REQUESTS_PER_CLIENT: u64 = 10_000;
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
    /// A run with respbench's arguments, memtier's own warnings (for stderr, in its words),
    /// respbench's notes (said on stderr only with `--notes`: `say_notes`), and the
    /// configuration to show (`--show-config`).
    /// `given`: every memtier option's last value (long name; "yes" for a switch), for the
    /// configuration memtier's JSON reports.
    Run {
        args: Vec<OsString>,
        warnings: Vec<String>,
        notices: Vec<String>,
        say_notes: bool,
        show_config: Option<String>,
        given: Vec<(String, String)>,
    },
    /// Print this (help, version) and exit successfully.
    Print(String),
}

/// An arbitrary command with what memtier attaches to it: each `--command-ratio` and
/// `--command-key-pattern` applies to the last `--command` before it.
struct Arbitrary {
    text: String,
    ratio: Option<String>,
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

/// Translates memtier's arguments (without the program name) into respbench's.
pub fn translate(args: &[OsString]) -> Result<Translated, String> {
    // memtier's report and progress lines, and its split of the key range, whatever else is asked.
    let mut out: Vec<OsString> = vec!["respbench".into(), "--memtier-text".into(), "--memtier-slices".into()];
    let mut key_prefix_given = false;
    let (mut clients, mut threads, mut requests, mut test_time) = (CLIENTS_PER_THREAD, THREADS, None, None);
    let (mut distinct, mut randomize, mut show_config, mut reconnect_on_error) = (false, false, false, false);
    let mut say_notes = false;
    let (mut max_attempts, mut backoff_factor, mut jitter) = (0u32, None, (0u64, 0u64));
    let mut server = ServerOptions::default();
    let mut commands: Vec<Arbitrary> = Vec::new();
    // The options passed on as they are, each once with its last value (getopt's rule).
    let mut flags: Vec<(&'static str, Option<String>)> = Vec::new();
    // Every option's last value ("yes" for a switch), for --show-config.
    let mut given: Vec<(&'static str, String)> = Vec::new();
    let mut rate_limit = None;
    let mut staircase: [Option<u64>; 3] = [None; 3];
    let (found, _) = scan("memtier_benchmark", OPTIONS, args, false)?;
    for Found { index, long, value } in found {
        let (spec, map) = &OPTIONS[index];
        let names = spec.names;
        given.retain(|(name, _)| *name != names[0]);
        given.push((names[0], value.clone().unwrap_or_else(|| "yes".into())));
        key_prefix_given |= names[0] == "key-prefix";
        let number =
            |v: &str| v.parse::<u64>().map_err(|_| format!("invalid value for '{long}': '{v}' is not a number"));
        let count = |v: &str| crate::cli::parse::positive(v).map_err(|e| format!("invalid value for '{long}': {e}"));
        match map {
            Map::Flag(flag) => match flags.iter_mut().find(|(f, _)| f == flag) {
                Some(earlier) => earlier.1 = value,
                None => flags.push((flag, value)),
            },
            Map::Special => {
                let v = value.unwrap_or_default();
                match names[0] {
                    "help" => return Ok(Translated::Print(super::usage::usage())),
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
                    "command" => commands.push(Arbitrary { text: v, ratio: None, pattern: None }),
                    "command-ratio" | "command-key-pattern" => attach(&mut commands, &long, v)?,
                    "distinct-client-seed" => distinct = true,
                    "randomize" => randomize = true,
                    "show-config" => show_config = true,
                    "notes" => say_notes = true,
                    "reconnect-on-error" => reconnect_on_error = true,
                    "max-reconnect-attempts" => {
                        max_attempts = u32::try_from(number(&v)?).map_err(|_| format!("'{v}' is too large"))?
                    }
                    "reconnect-backoff-factor" => match v.parse::<f64>() {
                        Ok(f) if f > 0.0 && f.is_finite() => backoff_factor = Some(f),
                        _ => return Err(format!("invalid value for '{long}': '{v}' is not a number above 0")),
                    },
                    "connection-timeout" => match number(&v)? {
                        0 => {}
                        secs => out.extend(["--connect-timeout".into(), format!("{secs}s").into()]),
                    },
                    "thread-conn-start-min-jitter-micros" => jitter.0 = number(&v)?,
                    "thread-conn-start-max-jitter-micros" => jitter.1 = number(&v)?,
                    "version" => return Ok(Translated::Print(super::usage::version())),
                    "clients" => clients = count(&v)?,
                    "threads" => threads = count(&v)?,
                    "requests" if v == "allkeys" => requests = Some(None),
                    "requests" => requests = Some(Some(count(&v)?)),
                    "test-time" => test_time = Some(count(&v)?),
                    "rate-limiting" => rate_limit = Some(count(&v)?),
                    "clients-start" => staircase[0] = Some(count(&v)?),
                    "clients-step" => staircase[1] = Some(count(&v)?),
                    "step-duration" => staircase[2] = Some(count(&v)?),
                    "protocol" => protocol(&v, &mut flags)?,
                    "command-stats-breakdown" => match v.to_ascii_lowercase().as_str() {
                        "command" => flags.retain(|(f, _)| *f != "--memtier-by-line"),
                        "line" if flags.iter().any(|(f, _)| *f == "--memtier-by-line") => {}
                        "line" => flags.push(("--memtier-by-line", None)),
                        _ => {
                            return Err(
                                "memtier_benchmark's --command-stats-breakdown must be 'command' or 'line'".into()
                            );
                        }
                    },
                    _ => unreachable!("every Special option is handled"),
                }
            }
        }
    }
    for (flag, value) in flags {
        out.push(flag.into());
        out.extend(value.map(OsString::from));
    }
    let warnings = server_args(&server, &mut given, &mut out)?;
    let mut notices = Vec::new();
    command_args(commands, &given, &mut out)?;
    let tls = given.iter().any(|(name, value)| {
        matches!(*name, "tls" | "cert" | "key" | "cacert" | "sni" | "tls-protocols")
            || (*name == "uri" && value.to_ascii_lowercase().starts_with("rediss://"))
    });
    let skip_verify = given.iter().any(|(name, _)| *name == "tls-skip-verify");
    if tls && !skip_verify {
        out.push("--tls-skip-hostname".into());
        notices.push(TLS_NOTICE.to_string());
    }
    if !distinct {
        out.push("--same-stream-per-connection".into());
        notices.push(SAME_STREAM_NOTICE.to_string());
    }
    if !randomize {
        out.extend(["--seed".into(), CONSTANT_SEED.to_string().into()]);
    }
    if reconnect_on_error {
        // memtier waits 1 s, times the factor at every attempt (no factor: 1 s each time).
        let factor = backoff_factor.unwrap_or(1.0).max(1.0);
        let attempts = if max_attempts == 0 { u32::MAX } else { max_attempts };
        out.extend([
            "--reconnect-backoff".into(),
            format!("{factor}s").into(),
            "--reconnect-backoff-factor".into(),
            factor.to_string().into(),
            "--max-reconnects".into(),
            attempts.to_string().into(),
        ]);
    } else {
        // Without --reconnect-on-error a failed connection stays closed, as in memtier.
        out.extend(["--max-reconnects".into(), "0".into()]);
    }
    if jitter.1 > 0 {
        let (min, max) = (jitter.0.min(jitter.1), jitter.1);
        out.extend(["--connect-jitter-us".into(), format!("{min}-{max}").into()]);
    }
    if !key_prefix_given {
        out.extend(["--key-prefix".into(), "memtier-".into()]);
    }
    let connections = clients * threads;
    out.extend([
        "--connections".into(),
        connections.to_string().into(),
        "--threads".into(),
        threads.to_string().into(),
    ]);
    // Requests per second per connection; respbench's --rate is the total over them.
    if let Some(per_connection) = rate_limit {
        out.extend(["--rate".into(), (per_connection * connections).to_string().into()]);
    }
    load_args(Load { clients, threads, requests, test_time, staircase }, &mut out)?;
    let show_config = show_config.then(|| super::usage::show_config(&given, server.family));
    let given = given.into_iter().map(|(name, value)| (name.to_string(), value)).collect();
    Ok(Translated::Run { args: out, warnings, notices, say_notes, show_config, given })
}

/// `--protocol`: respbench's protocol flags, the last one given in place of any earlier.
fn protocol(v: &str, flags: &mut Vec<(&'static str, Option<String>)>) -> Result<(), String> {
    flags.retain(|(f, _)| !matches!(*f, "--resp3" | "--protocol"));
    match v {
        "redis" | "resp2" => {}
        "resp3" => flags.push(("--resp3", None)),
        "memcache_text" => flags.push(("--protocol", Some("memcache-text".into()))),
        "memcache_binary" => flags.push(("--protocol", Some("memcache-binary".into()))),
        other => {
            return Err(format!(
                "invalid value for --protocol: '{other}' (redis, resp2, resp3, memcache_text or memcache_binary)"
            ));
        }
    }
    Ok(())
}

/// `--command-ratio` or `--command-key-pattern` (`option`), set on the last `--command`.
fn attach(commands: &mut [Arbitrary], option: &str, v: String) -> Result<(), String> {
    let Some(last) = commands.last_mut() else {
        return Err(format!("memtier_benchmark's {option} '{v}' sets the --command before it: none was given"));
    };
    if option == "--command-ratio" {
        v.parse::<u32>().map_err(|_| format!("invalid value for '--command-ratio': '{v}' is not a whole number"))?;
        last.ratio = Some(v);
    } else {
        match v.as_str() {
            "R" | "S" | "G" | "Z" | "P" => last.pattern = v.chars().next(),
            _ => {
                return Err(format!(
                    "invalid value for '--command-key-pattern': '{v}' (one of R, S, G, Z, P) for '{}'",
                    last.text
                ));
            }
        }
    }
    Ok(())
}

/// The `--command`s, each with its own ratio and key pattern (respbench matches them by
/// position). memtier's rules: the key pattern and ratio go with each command, not
/// `--key-pattern`/`--ratio`, and P (each client its slice of the range) is all or none.
fn command_args(commands: Vec<Arbitrary>, given: &[(&str, String)], out: &mut Vec<OsString>) -> Result<(), String> {
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
        ));
    }
    for c in commands {
        out.extend(["--command".into(), c.text.into()]);
        out.extend(["--command-ratio".into(), c.ratio.unwrap_or_else(|| "1".into()).into()]);
        out.extend(["--command-key-pattern".into(), c.pattern.unwrap_or('R').to_string().into()]);
    }
    Ok(())
}

/// Host, port, credentials, database and TLS: `--uri` overrides the parts it names, as in
/// memtier 2.3, with its warnings (returned, for stderr). Updates `given` to what memtier
/// then holds, for `--show-config`.
fn server_args(
    server: &ServerOptions,
    given: &mut Vec<(&'static str, String)>,
    out: &mut Vec<OsString>,
) -> Result<Vec<String>, String> {
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
    let pairs = [("--host", host), ("--port", port), ("--db", db)];
    for (flag, value) in pairs.into_iter().filter_map(|(f, v)| Some((f, v?))) {
        out.extend([flag.into(), value.into()]);
    }
    if let Some(auth) = &authenticate {
        match super::uri::credentials(auth) {
            (Some(user), password) => out.extend(["--user".into(), user.into(), "-a".into(), password.into()]),
            (None, password) => out.extend(["-a".into(), password.into()]),
        }
    }
    if tls {
        out.push("--tls".into());
    }
    if !server.tls_protocols.is_empty() {
        out.extend(["--tls-versions".into(), server.tls_protocols.join(",").into()]);
    }
    Ok(notices)
}

/// How long the run lasts and how its clients start.
struct Load {
    clients: u64,
    threads: u64,
    requests: Option<Option<u64>>,
    test_time: Option<u64>,
    staircase: [Option<u64>; 3],
}

/// `-n`, `--test-time` and the client staircase as respbench's stop condition and ramp.
fn load_args(load: Load, out: &mut Vec<OsString>) -> Result<(), String> {
    let Load { clients, threads, requests, test_time, staircase } = load;
    let connections = clients * threads;
    match staircase {
        [None, None, None] => {}
        [Some(start), Some(step), Some(secs)] => {
            if start >= clients {
                return Err(format!(
                    "memtier_benchmark's --clients-start ({start}) must be less than --clients ({clients})"
                ));
            }
            if requests.is_some() {
                return Err(
                    "memtier_benchmark's --requests cannot be used with a client staircase: use --test-time".into()
                );
            }
            if test_time.is_none() {
                return Err("memtier_benchmark's client staircase (--clients-start) needs --test-time".into());
            }
            // Per thread in memtier: the same share of every thread's connections in respbench.
            out.extend([
                "--connections-start".into(),
                (start * threads).to_string().into(),
                "--connections-step".into(),
                (step * threads).to_string().into(),
                "--step-duration".into(),
                format!("{secs}s").into(),
            ]);
        }
        _ => {
            return Err("memtier_benchmark's --clients-start, --clients-step and --step-duration go together".into());
        }
    }
    match (requests, test_time) {
        (Some(_), Some(_)) => return Err("memtier_benchmark's --requests and --test-time exclude each other".into()),
        (_, Some(secs)) => out.extend(["--duration".into(), format!("{secs}s").into()]),
        (Some(None), None) => out.extend(["--requests".into(), "allkeys".into()]),
        // -n counts per client in memtier.
        (Some(Some(n)), None) => out.extend(["--requests".into(), (n * connections).to_string().into()]),
        (None, None) => out.extend(["--requests".into(), (REQUESTS_PER_CLIENT * connections).to_string().into()]),
    }
    Ok(())
}

/// The plan a memtier_benchmark command line (without the program name) runs, without running
/// it: what `respbench memtier ARGS` would hand the engine.
pub fn plan(args: &[OsString]) -> Result<crate::config::Config, String> {
    match translate(args)? {
        Translated::Run { args, .. } => crate::cli::plan_flags(&args).map(|(config, _)| config),
        Translated::Print(_) => Err("the command line asks for help or the version, not a run".into()),
    }
}

/// `-4`/`-6`: the host's first address of that family, so that respbench connects to it.
fn resolve(host: &str, family: u8) -> Result<String, String> {
    use std::net::ToSocketAddrs;
    let addrs = (host, 0).to_socket_addrs().map_err(|e| format!("cannot resolve '{host}': {e}"))?;
    addrs
        .map(|a| a.ip())
        .find(|ip| if family == 4 { ip.is_ipv4() } else { ip.is_ipv6() })
        .map(|ip| ip.to_string())
        .ok_or_else(|| format!("'{host}' has no IPv{family} address (asked for by -{family})"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(args: &[&str]) -> Result<Vec<String>, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        match translate(&args)? {
            Translated::Run { args, .. } => Ok(args.into_iter().map(|s| s.into_string().unwrap()).collect()),
            Translated::Print(text) => Ok(vec![text]),
        }
    }

    #[test]
    fn memtier_semantics() {
        let out = tr(&["-c", "10", "-t", "2", "-n", "100", "--ratio=1:0", "-clients=5"]).unwrap();
        // The last -c wins, as in memtier; requests are per client.
        let joined = out.join(" ");
        assert!(joined.contains("--connections 10 --threads 2"), "{joined}");
        assert!(joined.contains("--requests 1000"), "{joined}");
        assert!(joined.contains("--ratio 1:0"), "{joined}");
        let out = tr(&["-n", "allkeys", "--key-pattern", "P:P", "--authenticate", "bob:pw"]).unwrap().join(" ");
        assert!(out.contains("--requests allkeys") && out.contains("--user bob -a pw"), "{out}");
        let out = tr(&["--test-time=5"]).unwrap().join(" ");
        assert!(out.contains("--duration 5s") && out.contains("--connections 200 --threads 4"), "{out}");
    }

    #[test]
    fn unknown_and_unsupported_options_are_named() {
        assert!(tr(&["--bogus"]).unwrap_err().contains("'--bogus'"));
        assert!(tr(&["--client-stats=cs"]).unwrap().join(" ").contains("--memtier-client-stats cs"));
        assert!(tr(&["-n", "1", "--test-time", "2"]).unwrap_err().contains("exclude"));
        assert!(tr(&["-c"]).unwrap_err().contains("needs a value"));
        assert!(tr(&["-c10"]).unwrap().join(" ").contains("--connections 40"));
    }

    #[test]
    fn staircase_and_rate_limit_are_per_thread_and_per_connection() {
        let out =
            tr(&["-t", "2", "-c", "3", "--clients-start=1", "--clients-step=1", "--step-duration=2", "--test-time=6"])
                .unwrap()
                .join(" ");
        assert!(out.contains("--connections-start 2 --connections-step 2 --step-duration 2s"), "{out}");
        let out = tr(&["-t", "2", "-c", "3", "--rate-limiting=100", "--test-time=1"]).unwrap().join(" ");
        assert!(out.contains("--rate 600"), "{out}");
        assert!(tr(&["--clients-start=1"]).unwrap_err().contains("go together"));
        let all = ["--clients-start=5", "--clients-step=1", "--step-duration=1", "--test-time=2", "-c", "5"];
        assert!(tr(&all).unwrap_err().contains("must be less than --clients (5)"));
        let counted = ["--clients-start=1", "--clients-step=1", "--step-duration=1", "-n", "10"];
        assert!(tr(&counted).unwrap_err().contains("--test-time"));
        assert!(tr(&["--rate-limiting=0"]).unwrap_err().contains("'0'"));
    }
}
