//! `--save-scenario`'s flags: a scenario file's phase is written in respbench's own flags (the
//! file is read by people and by `respbench run`), so the front-end's typed plan is written down
//! as the flags that say the same, every field the front-end sets that differs from respbench's
//! defaults. A test reads them back and compares the two plans, so the writer and the options
//! cannot drift apart.

use std::ffi::OsString;
use std::time::Duration;

use crate::cli::options::{Args, ReadFromArg};

/// The flags of `args` that differ from respbench's defaults, as words (a test reads them back).
#[cfg(test)]
pub fn flags(args: &Args) -> Vec<OsString> {
    settings(args).into_iter().flat_map(|(flag, value)| std::iter::once(OsString::from(flag)).chain(value)).collect()
}

/// The same as `--save-scenario`'s record of the flags the plan sets.
pub fn given(args: &Args) -> Vec<crate::cli::scenario::flags::Given> {
    let (mut out, cmd) = (Vec::new(), <Args as clap::CommandFactory>::command());
    for (flag, value) in settings(args) {
        let values = value.map(|v| v.to_string_lossy().into_owned()).into_iter().collect();
        crate::cli::scenario::flags::record(&mut out, &cmd, flag, values);
    }
    out
}

/// Each flag of `args` that differs from respbench's defaults (among those the front-end
/// sets), with its value.
fn settings(args: &Args) -> Vec<(&'static str, Option<OsString>)> {
    let default = Args::default();
    let mut out: Vec<(&'static str, Option<OsString>)> = Vec::new();
    let mut push = |flag: &'static str, value: Option<OsString>| out.push((flag, value));
    let text = |s: &dyn ToString| Some(OsString::from(s.to_string()));
    let secs = |d: &Duration| Some(OsString::from(format!("{}s", d.as_secs_f64())));
    match &args.socket {
        Some(path) => push("--socket", Some(path.as_os_str().to_owned())),
        None => {
            if args.host != default.host {
                push("--host", text(&args.host));
            }
            if args.port != default.port {
                push("--port", text(&args.port));
            }
        }
    }
    let given = [("--password", &args.password), ("--user", &args.user), ("--sni", &args.sni)];
    for (flag, value) in given {
        if let Some(v) = value {
            push(flag, text(v));
        }
    }
    if let Some(db) = args.db {
        push("--db", text(&db));
    }
    let paths = [("--cacert", &args.cacert), ("--cert", &args.cert), ("--key", &args.key)];
    for (flag, value) in paths {
        if let Some(path) = value {
            push(flag, Some(path.as_os_str().to_owned()));
        }
    }
    if let Some(ciphers) = &args.tls_ciphers {
        push("--tls-ciphers", text(ciphers));
    }
    let switches = [
        ("--resp3", args.resp3),
        ("--cluster", args.cluster),
        ("--tls", args.tls),
        ("--tls-skip-verify", args.tls_skip_verify),
        ("--tls-skip-hostname", args.tls_skip_hostname),
        ("--mptcp", args.session.mptcp),
        ("--enable-tracking", args.session.enable_tracking),
        ("--allow-late-start", args.shards.allow_late_start),
    ];
    for (flag, on) in switches {
        if on {
            push(flag, None);
        }
    }
    match args.read_from_replicas {
        ReadFromArg::No => {}
        ReadFromArg::Yes => push("--read-from-replicas", text(&"yes")),
        ReadFromArg::All => push("--read-from-replicas", text(&"all")),
    }
    if let Some(n) = args.reconnect_every {
        push("--reconnect-every", text(&n));
    }
    if args.connections != default.connections {
        push("--connections", text(&args.connections));
    }
    if let Some(threads) = args.threads {
        push("--threads", text(&threads));
    }
    if args.pipeline != default.pipeline {
        push("--pipeline", text(&args.pipeline));
    }
    if let Some(n) = &args.requests {
        push("--requests", text(n));
    }
    if let Some(d) = &args.duration {
        push("--duration", secs(d));
    }
    if let Some(d) = &args.warmup {
        push("--warmup", secs(d));
    }
    if let Some(n) = args.max_reconnects {
        push("--max-reconnects", text(&n));
    }
    if args.key_prefix != default.key_prefix {
        push("--key-prefix", text(&args.key_prefix));
    }
    if (args.key_min, args.key_max) != (default.key_min, default.key_max) {
        push("--key-min", text(&args.key_min));
        push("--key-max", text(&args.key_max));
    }
    if args.data_size != default.data_size {
        push("--data-size", text(&args.data_size));
    }
    if let Some(seed) = args.seed {
        push("--seed", text(&seed));
    }
    if let Some(rate) = args.rate {
        push("--rate", text(&rate));
    }
    if let Some((i, n)) = args.shards.shard {
        push("--shard", text(&format!("{i}/{n}")));
    }
    if let Some(n) = args.shards.shard_count {
        push("--shard-count", text(&n));
    }
    if let Some(at) = args.shards.start_at {
        let since = at.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
        push("--start-at", text(&format!("{}.{:09}", since.as_secs(), since.subsec_nanos())));
    }
    out
}
