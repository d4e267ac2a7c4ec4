//! `--save-scenario` under the memtier front-end: a scenario file's phases are written in
//! respbench's flags (`respbench run FILE.toml` gives them to respbench's parser), so the plan a
//! memtier command line built is written out in them, the fields memtier's options set and
//! nothing else. Output only: the front-end runs its typed plan and never parses these words.

#[cfg(test)]
use std::ffi::OsString;
use std::time::Duration;

use crate::cli::options::Args;
use crate::cli::scenario::flags::Given;

/// The words, program name first; they parse back to the same plan (the tests hold it).
#[cfg(test)]
pub(super) fn command_line(args: &Args) -> Vec<OsString> {
    let mut words = vec![OsString::from("respbench")];
    for (flag, value) in settings(args).0 {
        words.push(flag.into());
        words.extend(value.map(OsString::from));
    }
    words
}

/// What `--save-scenario` records of a command line (clap's id, the flag, its values as
/// written), for the flags the plan sets: the scenario saver's input, built from the typed plan
/// (clap's table only names each flag's id), never parsed.
pub(super) fn given(args: &Args) -> Vec<Given> {
    let (mut out, cmd) = (Vec::new(), <Args as clap::CommandFactory>::command());
    for (flag, value) in settings(args).0 {
        crate::cli::scenario::flags::record(&mut out, &cmd, &flag, value.into_iter().collect());
    }
    out
}

fn settings(args: &Args) -> Words {
    let mut words = Words(Vec::new());
    connection(args, &mut words);
    load(args, &mut words);
    workload(args, &mut words);
    words
}

/// The flags being written, each with its value.
struct Words(Vec<(String, Option<String>)>);

impl Words {
    fn flag(&mut self, name: &str, on: bool) {
        if on {
            self.0.push((name.into(), None));
        }
    }

    fn value(&mut self, name: &str, value: Option<impl ToString>) {
        if let Some(value) = value {
            self.0.push((name.into(), Some(value.to_string())));
        }
    }
}

fn seconds(d: Duration) -> String {
    format!("{}s", d.as_secs_f64())
}

/// `A:B`, `MIN-MAX`, `I/N`.
fn pair<A: std::fmt::Display, B: std::fmt::Display>(separator: char) -> impl Fn((A, B)) -> String {
    move |(a, b)| format!("{a}{separator}{b}")
}

/// The server, the login, TLS and reconnecting.
fn connection(args: &Args, w: &mut Words) {
    let default = Args::default();
    w.value("--host", (args.host != default.host).then_some(&args.host));
    w.value("--port", (args.port != default.port).then_some(args.port));
    w.value("--socket", args.socket.as_ref().map(|p| p.display()));
    w.value("--user", args.user.as_ref());
    w.value("--password", args.password.as_ref());
    w.value("--db", args.db);
    w.flag("--resp3", args.resp3);
    w.value("--protocol", (args.wire.protocol != default.wire.protocol).then(|| args.wire.protocol.name()));
    w.flag("--cluster", args.cluster);
    w.value("--connect-timeout", args.connect_timeout.map(seconds));
    w.flag("--tls", args.tls);
    w.value("--cacert", args.cacert.as_ref().map(|p| p.display()));
    w.value("--cert", args.cert.as_ref().map(|p| p.display()));
    w.value("--key", args.key.as_ref().map(|p| p.display()));
    w.value("--sni", args.sni.as_ref());
    w.flag("--tls-skip-verify", args.tls_skip_verify);
    w.flag("--tls-skip-hostname", args.tls_skip_hostname);
    let versions = args
        .tls_versions
        .as_ref()
        .map(|v| v.0.iter().map(|&n| if n == 0x0303 { "1.2" } else { "1.3" }).collect::<Vec<_>>().join(","));
    w.value("--tls-versions", versions);
    w.value(
        "--reconnect-backoff",
        (args.reconnect_backoff != default.reconnect_backoff).then(|| seconds(args.reconnect_backoff)),
    );
    w.value("--reconnect-backoff-factor", args.reconnect_backoff_factor);
    w.value("--max-reconnects", args.max_reconnects);
    w.value("--reconnect-every", args.reconnect_every);
    w.value("--retry", (args.retry != default.retry).then_some(args.retry));
    w.flag("--retry-errors", args.retry_errors);
    w.value(
        "--retry-error-prefixes",
        (!args.retry_error_prefixes.is_empty()).then(|| args.retry_error_prefixes.join(",")),
    );
    w.value("--retry-backoff", args.retry_backoff.map(seconds));
    w.value("--retry-backoff-factor", (args.retry_backoff_factor != 0.0).then_some(args.retry_backoff_factor));
    w.value("--max-retry-queue", (args.max_retry_queue != 0).then_some(args.max_retry_queue));
    w.value("--failed-keys", args.failed_keys.as_ref().map(|p| p.display()));
}

/// Connections, threads, the run's length, its ramp and pacing, and the shard.
fn load(args: &Args, w: &mut Words) {
    w.value("--connections", Some(args.connections));
    w.value("--threads", args.threads);
    w.value("--pipeline", (args.pipeline != 1).then_some(args.pipeline));
    w.value("--requests", args.requests.as_ref());
    w.value("--duration", args.duration.map(seconds));
    w.value("--connections-start", args.connections_start);
    w.value("--connections-step", args.connections_step);
    w.value("--step-duration", args.step_duration.map(seconds));
    w.value("--rate", args.rate);
    w.value("--runs", (args.runs != 1).then_some(args.runs));
    w.value("--connect-jitter-us", args.connect_jitter_us.map(pair('-')));
    let shards = &args.shards;
    w.value("--shard", shards.shard.map(pair('/')));
    w.value("--shard-count", shards.shard_count);
    let unix = |t: std::time::SystemTime| t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    w.value("--start-at", shards.start_at.map(|t| format!("{}.{:09}", unix(t).as_secs(), unix(t).subsec_nanos())));
    w.flag("--allow-late-start", shards.allow_late_start);
}

/// Keys, values, the commands and memtier's workload options.
fn workload(args: &Args, w: &mut Words) {
    let default = Args::default();
    w.value("--ratio", args.ratio.map(pair(':')));
    w.value("--key-prefix", Some(&args.key_prefix));
    w.value("--key-min", (args.key_min != default.key_min).then_some(args.key_min));
    w.value("--key-max", (args.key_max != default.key_max).then_some(args.key_max));
    w.value("--key-pattern", args.key_pattern.map(pair(':')));
    w.value("--key-median", args.key_median);
    w.value("--key-stddev", args.key_stddev);
    w.value("--zipf-exponent", (args.zipf_exponent != default.zipf_exponent).then_some(args.zipf_exponent));
    w.value("--data-size", (args.data_size != default.data_size).then_some(args.data_size));
    w.value("--data-size-range", args.data_size_range.map(pair('-')));
    let list = args.data_size_list.as_ref().map(|l| l.0.iter().map(|&p| pair(':')(p)).collect::<Vec<_>>().join(","));
    w.value("--data-size-list", list);
    for text in &args.command {
        w.value("--command", Some(text));
    }
    for ratio in &args.command_ratio {
        w.value("--command-ratio", Some(ratio));
    }
    for (letter, _) in &args.command_key_pattern {
        w.value("--command-key-pattern", Some(letter));
    }
    w.flag("--random-data", args.random_data);
    w.flag("--transaction", args.transaction);
    w.value("--expiry-range", args.expiry_range.map(pair('-')));
    w.value("--seed", args.seed);
    w.flag("--same-stream-per-connection", args.same_stream_per_connection);
    let m = &args.memtier;
    w.value("--multi-key-get", m.multi_key_get);
    w.value("--data-offset", m.data_offset);
    w.value("--data-size-pattern", m.data_size_pattern);
    w.value("--wait-ratio", m.wait_ratio.map(pair(':')));
    w.value("--num-slaves", m.num_slaves.map(pair('-')));
    w.value("--wait-timeout", m.wait_timeout.map(pair('-')));
    w.value("--monitor-input", m.monitor_input.as_ref().map(|p| p.display()));
    w.value("--monitor-pattern", m.monitor_pattern);
    w.flag("--scan-incremental-iteration", m.scan_incremental_iteration);
    w.value("--scan-incremental-max-iterations", m.scan_incremental_max_iterations);
    w.value("--data-import", m.data_import.as_ref().map(|p| p.display()));
    w.flag("--generate-keys", m.generate_keys);
    w.flag("--no-expiry", m.no_expiry);
    w.flag("--data-verify", m.data_verify);
    w.flag("--verify-only", m.verify_only);
    w.flag("--memtier-slices", m.memtier_slices);
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::memtier::{Translated, translate};

    /// Each memtier command line's words parse (by respbench's own parser) to the plan the
    /// front-end built: what `respbench run` of the saved file replays.
    #[test]
    fn the_words_parse_back_to_the_same_plan() {
        let lines: &[&[&str]] = &[
            &["-n", "100", "-c", "3", "-t", "2", "--ratio=1:3", "--key-pattern=G:Z", "--key-median=40"],
            &["--test-time=5", "--clients-start=1", "--clients-step=1", "--step-duration=2", "-c", "3"],
            &["--uri=rediss://u:p@127.0.0.1:7000/3", "--tls-protocols=TLSv1.2", "--cert=c", "--key=k", "--sni=s"],
            &["-S", "/tmp/s.sock", "-P", "memcache_text", "-d", "100", "-R", "--expiry-range=1-10", "--randomize"],
            &["--command=SET a:__key__ x", "--command-key-pattern=S", "--command=GET a:__key__", "--command-ratio=3"],
            &["--reconnect-on-error", "--reconnect-backoff-factor=1.5", "--connection-timeout=3", "--rate-limiting=7"],
            &["--thread-conn-start-max-jitter-micros=100", "--data-size-range=10-100", "--data-size-pattern=S"],
            &["--multi-key-get=3", "--wait-ratio=2:1", "--num-slaves=0-1", "--wait-timeout=0-3", "-x", "2"],
            &["--data-size-list=10:1,100:2", "--key-zipf-exp=0.5", "--key-stddev=3", "--shard=0/2", "-n", "allkeys"],
            &["--key-prefix=", "--key-minimum=5", "--key-maximum=500", "--pipeline=4", "-a", "pw", "--select-db=2"],
            &["--retry-on-error", "--max-retries=2", "--retry-backoff-ms=5", "--retry-backoff-factor=2"],
            &["--retry-on-error", "--retry-on=LOADING,BUSY", "--max-retry-queue=8", "--failed-keys-file=f.csv"],
            &["--connection-stage-timeout=3", "--connection-timeout=7"],
        ];
        for line in lines {
            let args: Vec<OsString> = line.iter().map(OsString::from).collect();
            let Ok(Translated::Run(run)) = translate(&args) else { panic!("{line:?}") };
            let words = command_line(&run.draft.args);
            let (typed, _, _) = run.draft.into_plan().unwrap();
            let (parsed, _) = Args::try_parse_from(&words).unwrap().into_config().unwrap();
            let (mut typed, parsed) = (format!("{typed:?}"), format!("{parsed:?}"));
            if line.contains(&"--randomize") {
                // The seed is drawn when none is given; the words carry none either.
                typed = typed.replace(&seed_of(&typed), &seed_of(&parsed));
            }
            assert_eq!(typed, parsed, "{line:?}: {words:?}");
        }
    }

    fn seed_of(debug: &str) -> String {
        let at = debug.find("seed: ").unwrap();
        debug[at..].split(',').next().unwrap().to_string()
    }
}
