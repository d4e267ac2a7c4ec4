//! `--save-scenario FILE.toml`: a command line written down as the scenario that reproduces it.
//! clap says which flags the user gave; the common ones become the file's typed settings, the
//! rest its `args`, so `respbench run FILE.toml` compiles back to the same flags (same seed,
//! same key streams). Output flags stay with the command line; a password never goes in the
//! file, only the name of the environment variable to read it from.

use std::ffi::OsString;

use clap::CommandFactory;
use clap::parser::ValueSource;
use toml::Spanned;

use super::schema::{Distribution, Keyspace, Kind, Mix, Phase, Scenario, Values};

/// Where a saved scenario reads the password the command line had.
pub const PASSWORD_ENV: &str = "RESPBENCH_PASSWORD";

/// Flags about this process's outputs, not about the load: they are not saved.
const OUTPUTS: &[&str] = &[
    "help",
    "version",
    "json",
    "html",
    "csv",
    "csv_timeline",
    "markdown",
    "out_file",
    "hdr_log",
    "quiet",
    "progress",
    "label",
    "percentiles",
    "debug",
    "save_scenario",
    "metrics_listen",
    "metrics_linger",
    "statsd_host",
    "statsd_port",
    "statsd_prefix",
    "statsd_run_label",
    "graphite_port",
];

fn named(s: &str) -> Option<Spanned<String>> {
    Some(Spanned::new(0..0, s.to_string()))
}

/// The scenario text for a native command line (program name first) that ran with `seed` (the
/// one it drew when it was given none, so the file replays the same streams). `notes` get what
/// the user must know (the password's variable).
pub fn from_command_line(argv: &[OsString], seed: u64, notes: &mut Vec<String>) -> Result<String, String> {
    render(&scenario_of(argv, seed, notes)?, argv)
}

/// A front-end's run of several engine runs (redis-benchmark's tests) as one scenario: each
/// `(name, respbench argv)` one phase, in order. The target, keyspace and values are the
/// first's (the runs share them); `shown` is the command line the user typed.
pub fn from_runs(
    shown: &[OsString],
    runs: &[(String, Vec<OsString>)],
    seed: u64,
    notes: &mut Vec<String>,
) -> Result<String, String> {
    let mut all: Option<Scenario> = None;
    for (name, argv) in runs {
        let mut quiet = Vec::new();
        let mut sc = scenario_of(argv, seed, if all.is_none() { &mut *notes } else { &mut quiet })?;
        for phase in &mut sc.phases {
            phase.get_mut().name = Some(name.clone());
        }
        match &mut all {
            None => all = Some(sc),
            Some(first) => first.phases.append(&mut sc.phases),
        }
    }
    let all = all.ok_or("--save-scenario: there is no test to save")?;
    render(&all, shown)
}

fn render(sc: &Scenario, argv: &[OsString]) -> Result<String, String> {
    let body = toml::to_string_pretty(sc).map_err(|e| format!("cannot write the scenario: {e}"))?;
    let shown: Vec<String> = mask(argv);
    Ok(format!("# Saved by respbench from:\n#   {}\n# Run it with: respbench run FILE.toml\n\n{body}", shown.join(" ")))
}

/// The scenario of one native command line.
fn scenario_of(argv: &[OsString], seed: u64, notes: &mut Vec<String>) -> Result<Scenario, String> {
    let cmd = crate::cli::Args::command();
    let matches = cmd.clone().try_get_matches_from(argv).map_err(|e| e.to_string())?;
    let mut sc = Scenario::default();
    let mut phase = Phase { kind: Some(Kind::Run), name: Some("run".into()), ..Phase::default() };
    let (mut ks, mut values, mut mix) = (Keyspace::default(), Values::default(), Mix::default());
    let (mut ks_used, mut values_used, mut mix_used) = (false, false, false);
    let commands = matches.value_source("command") == Some(ValueSource::CommandLine);
    let mut password = false;
    for arg in cmd.get_arguments() {
        let id = arg.get_id().as_str();
        if matches.value_source(id) != Some(ValueSource::CommandLine)
            || OUTPUTS.contains(&id)
            || id.starts_with("memtier_")
        {
            continue;
        }
        let raw: Vec<String> = if arg.get_action().takes_values() {
            matches.get_raw(id).map(|v| v.map(|s| s.to_string_lossy().into_owned()).collect()).unwrap_or_default()
        } else {
            Vec::new()
        };
        let one = raw.first().cloned().unwrap_or_default();
        let t = &mut sc.target;
        let typed = match id {
            "host" => set(&mut t.host, Some(one)),
            "port" => set(&mut t.port, one.parse().ok()),
            "socket" => set(&mut t.socket, Some(one)),
            "user" => set(&mut t.user, Some(one)),
            "db" => set(&mut t.db, one.parse().ok()),
            "cacert" => set(&mut t.cacert, Some(one)),
            "cert" => set(&mut t.cert, Some(one)),
            "key" => set(&mut t.key, Some(one)),
            "sni" => set(&mut t.sni, Some(one)),
            "tls" => flag(&mut t.tls),
            "tls_skip_verify" => flag(&mut t.tls_skip_verify),
            "cluster" => flag(&mut t.cluster),
            "resp3" => flag(&mut t.resp3),
            "password" => {
                password = true;
                true
            }
            "uri" => {
                let uri = crate::cli::parse::uri(&one)?;
                match uri.target {
                    crate::config::Target::Tcp { host, port } => {
                        t.host = Some(host);
                        t.port = Some(port);
                    }
                    crate::config::Target::Unix(path) => t.socket = Some(path.display().to_string()),
                }
                t.user = uri.user;
                t.db = uri.db;
                t.tls |= uri.tls;
                password |= uri.password.is_some();
                true
            }
            "connections" => set(&mut phase.connections, one.parse().ok()),
            "threads" => set(&mut phase.threads, one.parse().ok()),
            "pipeline" => set(&mut phase.pipeline, one.parse().ok()),
            "requests" => set(&mut phase.requests, Some(one)),
            "duration" => set(&mut phase.duration, Some(one)),
            "rate" => set(&mut phase.rate, crate::cli::parse::count(&one).ok()),
            "arrival" => set(&mut phase.arrival, Some(one)),
            "warmup" => set(&mut phase.warmup, Some(one)),
            "seed" => set(&mut phase.seed, one.parse().ok()),
            "runs" => set(&mut phase.runs, one.parse().ok()),
            "ratio" => match crate::cli::parse::ratio(&one) {
                Ok((s, g)) => {
                    mix_used = true;
                    mix.set = Some(s);
                    mix.get = Some(g);
                    true
                }
                Err(_) => false,
            },
            "key_prefix" => mark(&mut ks_used, set(&mut ks.prefix, Some(one))),
            "key_min" => mark(&mut ks_used, set(&mut ks.min, one.parse().ok())),
            "key_max" => mark(&mut ks_used, set(&mut ks.max, one.parse().ok())),
            "key_median" => mark(&mut ks_used, set(&mut ks.median, one.parse().ok())),
            "key_stddev" => mark(&mut ks_used, set(&mut ks.stddev, one.parse().ok())),
            "zipf_exponent" => mark(&mut ks_used, set(&mut ks.zipf_exponent, one.parse().ok())),
            "key_pattern" if !commands => {
                let mut letters = one.split(':').map(|l| l.trim().chars().collect::<Vec<_>>());
                let first = letters.next().unwrap_or_default();
                let same = letters.all(|l| l == first);
                match (same, first.as_slice()) {
                    (true, [c]) => mark(&mut ks_used, set(&mut ks.distribution, Distribution::from_letter(*c))),
                    _ => false,
                }
            }
            "data_size" => mark(&mut values_used, set(&mut values.size, Some(one))),
            "data_size_range" => mark(&mut values_used, set(&mut values.range, Some(one))),
            "data_size_list" => mark(&mut values_used, set(&mut values.list, Some(one))),
            _ => false,
        };
        if typed {
            continue;
        }
        let name = match (arg.get_long(), arg.get_short()) {
            (Some(long), _) => format!("--{long}"),
            (None, Some(short)) => format!("-{short}"),
            (None, None) => continue,
        };
        if raw.is_empty() {
            phase.args.push(name.clone());
        }
        for value in raw {
            phase.args.push(name.clone());
            phase.args.push(value);
        }
    }
    phase.seed.get_or_insert(seed);
    if password {
        sc.target.password_env = named(PASSWORD_ENV);
        notes.push(format!("the scenario reads the password from the environment variable {PASSWORD_ENV}"));
    }
    if ks_used {
        sc.keyspaces.insert("main".into(), ks);
        if mix_used {
            mix.keyspace = named("main");
        } else {
            phase.keyspace = named("main");
        }
    }
    if mix_used {
        sc.mixes.insert("main".into(), mix);
        phase.mix = named("main");
    }
    if values_used {
        sc.values.insert("main".into(), values);
        phase.values = named("main");
    }
    sc.phases.push(Spanned::new(0..0, phase));
    Ok(sc)
}

/// The command line with passwords (and URIs, which may hold one) masked.
fn mask(argv: &[OsString]) -> Vec<String> {
    let mut out = Vec::new();
    let mut hide = false;
    for a in argv {
        let a = a.to_string_lossy();
        if hide {
            out.push("***".to_string());
            hide = false;
            continue;
        }
        if ["-a", "--password", "-u", "--uri"].contains(&a.as_ref()) {
            hide = true;
        }
        if a.starts_with("--password=") || a.starts_with("--uri=") || (a.starts_with("-a") && a.len() > 2) {
            out.push("***".into());
            continue;
        }
        out.push(a.into_owned());
    }
    out
}

fn set<T>(slot: &mut Option<T>, value: Option<T>) -> bool {
    let ok = value.is_some();
    if ok {
        *slot = value;
    }
    ok
}

fn mark(used: &mut bool, ok: bool) -> bool {
    *used |= ok;
    ok
}

fn flag(slot: &mut bool) -> bool {
    *slot = true;
    true
}
