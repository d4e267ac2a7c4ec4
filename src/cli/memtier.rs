//! memtier_benchmark's command line (`respbench memtier ARGS`, or the binary run as
//! `memtier_benchmark`): its options with its semantics (clients per thread, requests per
//! client, its defaults), translated into respbench's own flags. Long options may carry one
//! dash or two and `=value` or a separate value, as guides print them. An option respbench
//! cannot honour yet is an error naming it, never silently dropped.

use std::ffi::OsString;

use super::dialect::{Found, Spec, scan};

/// What one memtier option becomes.
enum Map {
    /// The same meaning under respbench's name: the value is passed on.
    Flag(&'static str),
    /// Taken care of below (needs arithmetic or splitting).
    Special,
    /// A switch with nothing to do: respbench already behaves that way.
    Honoured,
    /// Not supported yet, with why.
    Unsupported(&'static str),
}

/// memtier's options: names (long first), whether they take a value, and their mapping.
const OPTIONS: &[(Spec, Map)] = &[
    opt(&["server", "s"], true, Map::Flag("--host")),
    opt(&["port", "p"], true, Map::Flag("--port")),
    opt(&["unix-socket", "S"], true, Map::Flag("--socket")),
    opt(&["protocol", "P"], true, Map::Special),
    opt(&["authenticate", "a"], true, Map::Special),
    opt(&["select-db"], true, Map::Flag("--db")),
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
    opt(&["command"], true, Map::Flag("--command")),
    opt(&["command-ratio"], true, Map::Flag("--command-ratio")),
    opt(&["command-key-pattern"], true, Map::Flag("--command-key-pattern")),
    opt(&["run-count", "x"], true, Map::Flag("--runs")),
    opt(&["out-file", "o"], true, Map::Flag("--out-file")),
    opt(&["json-out-file"], true, Map::Flag("--memtier-json")),
    opt(&["hide-histogram"], false, Map::Honoured),
    opt(&["distinct-client-seed"], false, Map::Honoured),
    opt(&["randomize"], false, Map::Honoured),
    opt(&["print-percentiles"], true, Map::Flag("--percentiles")),
    opt(&["tls"], false, Map::Flag("--tls")),
    opt(&["tls-skip-verify"], false, Map::Flag("--tls-skip-verify")),
    opt(&["cert"], true, Map::Flag("--cert")),
    opt(&["key"], true, Map::Flag("--key")),
    opt(&["cacert"], true, Map::Flag("--cacert")),
    opt(&["sni"], true, Map::Flag("--sni")),
    opt(&["tls-protocols"], true, Map::Unsupported("choosing TLS versions: rustls offers TLS 1.2 and 1.3")),
    opt(&["cluster-mode"], false, Map::Flag("--cluster")),
    opt(&["rate-limiting"], true, Map::Unsupported("memtier's per-connection rate limit; use respbench --rate")),
    opt(&["reconnect-interval"], true, Map::Unsupported("reconnecting")),
    opt(&["multi-key-get"], true, Map::Flag("--multi-key-get")),
    opt(&["data-offset"], true, Map::Flag("--data-offset")),
    opt(&["data-size-pattern"], true, Map::Flag("--data-size-pattern")),
    opt(&["data-import"], true, Map::Flag("--data-import")),
    opt(&["data-verify"], false, Map::Flag("--data-verify")),
    opt(&["verify-only"], false, Map::Flag("--verify-only")),
    opt(&["generate-keys"], false, Map::Flag("--generate-keys")),
    opt(&["no-expiry"], false, Map::Flag("--no-expiry")),
    opt(&["monitor-input"], true, Map::Flag("--monitor-input")),
    opt(&["monitor-pattern"], true, Map::Flag("--monitor-pattern")),
    opt(&["scan-incremental-iteration"], false, Map::Flag("--scan-incremental-iteration")),
    opt(&["scan-incremental-max-iterations"], true, Map::Flag("--scan-incremental-max-iterations")),
    opt(&["wait-ratio"], true, Map::Flag("--wait-ratio")),
    opt(&["num-slaves"], true, Map::Flag("--num-slaves")),
    opt(&["wait-timeout"], true, Map::Flag("--wait-timeout")),
    opt(&["debug", "D"], false, Map::Unsupported("debug output")),
];

const fn opt(names: &'static [&'static str], takes_value: bool, map: Map) -> (Spec, Map) {
    (Spec { names, takes_value }, map)
}

/// memtier's defaults where they differ from respbench's.
const CLIENTS_PER_THREAD: u64 = 50;
const THREADS: u64 = 4;
const REQUESTS_PER_CLIENT: u64 = 10_000;

/// Translates memtier's arguments (without the program name) into respbench's.
pub fn translate(args: &[OsString]) -> Result<Vec<OsString>, String> {
    let mut out: Vec<OsString> = vec!["respbench".into()];
    let mut key_prefix_given = false;
    let (mut clients, mut threads, mut requests, mut test_time) = (CLIENTS_PER_THREAD, THREADS, None, None);
    let (found, _) = scan("memtier_benchmark", OPTIONS, args, false)?;
    for Found { index, long, value } in found {
        let (spec, map) = &OPTIONS[index];
        let names = spec.names;
        key_prefix_given |= names[0] == "key-prefix";
        let count = |v: &str| super::parse::positive(v).map_err(|e| format!("invalid value for '{long}': {e}"));
        match map {
            Map::Flag(flag) => {
                out.push((*flag).into());
                if let Some(v) = value {
                    out.push(v.into());
                }
            }
            Map::Honoured => {}
            Map::Unsupported(what) => return Err(format!("memtier_benchmark's {long} is not supported yet ({what})")),
            Map::Special => {
                let v = value.expect("special options take values");
                match names[0] {
                    "clients" => clients = count(&v)?,
                    "threads" => threads = count(&v)?,
                    "requests" if v == "allkeys" => requests = Some(None),
                    "requests" => requests = Some(Some(count(&v)?)),
                    "test-time" => test_time = Some(count(&v)?),
                    "protocol" => match v.as_str() {
                        "redis" | "resp2" => {}
                        "resp3" => out.push("--resp3".into()),
                        other => {
                            return Err(format!(
                                "memtier_benchmark's --protocol {other} is not supported yet (memcache)"
                            ));
                        }
                    },
                    "authenticate" => match v.split_once(':') {
                        // user:password for an ACL user, else the password alone.
                        Some((user, password)) => {
                            out.extend(["--user".into(), user.into(), "-a".into(), password.into()])
                        }
                        None => out.extend(["-a".into(), v.into()]),
                    },
                    _ => unreachable!("every Special option is handled"),
                }
            }
        }
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
    match (requests, test_time) {
        (Some(_), Some(_)) => return Err("memtier_benchmark's --requests and --test-time exclude each other".into()),
        (_, Some(secs)) => out.extend(["--duration".into(), format!("{secs}s").into()]),
        (Some(None), None) => out.extend(["--requests".into(), "allkeys".into()]),
        // -n counts per client in memtier.
        (Some(Some(n)), None) => out.extend(["--requests".into(), (n * connections).to_string().into()]),
        (None, None) => out.extend(["--requests".into(), (REQUESTS_PER_CLIENT * connections).to_string().into()]),
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tr(args: &[&str]) -> Result<Vec<String>, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        translate(&args).map(|v| v.into_iter().map(|s| s.into_string().unwrap()).collect())
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
        assert!(tr(&["--debug"]).unwrap_err().contains("--debug is not supported yet"));
        assert!(tr(&["-n", "1", "--test-time", "2"]).unwrap_err().contains("exclude"));
        assert!(tr(&["-c"]).unwrap_err().contains("needs a value"));
        assert!(tr(&["-c10"]).unwrap().join(" ").contains("--connections 40"));
    }
}
