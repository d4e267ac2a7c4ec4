//! `--save-scenario FILE.toml`: a plan written down as the scenario that reproduces it. From the
//! typed flags (`native::Args`) and the record of which flags the user gave (kept by the one
//! parse of the command line): the common ones become the file's typed settings, the rest its
//! `args` as the user wrote them, so `respbench run FILE.toml` plans the same run (same seed,
//! same key streams). Output flags stay with the command line; a password never goes in the
//! file, only the name of the environment variable to read it from.

use std::ffi::OsString;
use std::path::PathBuf;

use toml::Spanned;

use super::flags::Given;
use super::schema::{Distribution, Keyspace, Kind, Mix, Phase, Scenario, Target, Values};
use crate::cli::native::Args;

/// Where a saved scenario reads the password the command line had.
pub const PASSWORD_ENV: &str = "RESPBENCH_PASSWORD";

/// Whether a flag is about this process's outputs, not about the load (its help's "Output"
/// heading, `--help`): such flags are not saved.
fn is_output(cmd: &clap::Command, id: &str) -> bool {
    cmd.get_arguments().find(|a| a.get_id() == id).is_some_and(|a| {
        a.get_help_heading() == Some("Output")
            || matches!(a.get_action(), clap::ArgAction::Help | clap::ArgAction::Version)
    })
}

fn named(s: &str) -> Option<Spanned<String>> {
    Some(Spanned::new(0..0, s.to_string()))
}

/// A plan's scenario, drafted from its typed flags before the run draws its seed.
pub struct Draft {
    /// `--save-scenario`'s file.
    pub path: PathBuf,
    scenario: Scenario,
    /// What the user must know (the password's variable).
    pub notes: Vec<String>,
}

impl Draft {
    /// The draft of a plan whose flags ask for `--save-scenario`.
    pub fn of(args: &Args) -> Option<Draft> {
        let path = args.scenario.save_scenario.clone()?;
        let mut notes = Vec::new();
        let scenario = scenario_of(args, &mut notes);
        Some(Draft { path, scenario, notes })
    }

    /// The file's text for a run with `seed` (the one it drew when it was given none, so the
    /// file replays the same streams); `shown` is the command line the user typed.
    pub fn text(&mut self, shown: &[OsString], seed: u64) -> Result<String, String> {
        for phase in &mut self.scenario.phases {
            phase.get_mut().seed.get_or_insert(seed);
        }
        render(&self.scenario, shown)
    }
}

/// A front-end's run of several engine runs (redis-benchmark's tests) as one scenario: each
/// `(name, typed flags with the record of those the plan sets)` one phase, in order. The
/// target, keyspace and values are the first's (the runs share them); `shown` is the command
/// line the user typed.
pub fn from_runs(
    shown: &[OsString],
    runs: &[(String, Args)],
    seed: u64,
    notes: &mut Vec<String>,
) -> Result<String, String> {
    let mut all: Option<Scenario> = None;
    for (name, args) in runs {
        let mut quiet = Vec::new();
        let mut sc = scenario_of(args, if all.is_none() { &mut *notes } else { &mut quiet });
        for phase in &mut sc.phases {
            let phase = phase.get_mut();
            phase.name = Some(name.clone());
            phase.seed.get_or_insert(seed);
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

/// What a saved phase is built up from: the file's tables as the flags fill them.
#[derive(Default)]
struct Sketch {
    sc: Scenario,
    phase: Phase,
    keyspace: Option<Keyspace>,
    values: Option<Values>,
    mix: Option<Mix>,
    password: bool,
}

/// The scenario of one plan: a phase with the flags the user gave.
fn scenario_of(args: &Args, notes: &mut Vec<String>) -> Scenario {
    let mut d = Sketch {
        phase: Phase { kind: Some(Kind::Run), name: Some("run".into()), ..Phase::default() },
        ..Sketch::default()
    };
    let commands = args.scenario.given.iter().any(|g| g.id == "command");
    let cmd = <Args as clap::CommandFactory>::command();
    for given in &args.scenario.given {
        if is_output(&cmd, &given.id) || given.id.starts_with("memtier_") {
            continue;
        }
        let typed =
            target(&mut d, args, given) || load(&mut d.phase, args, given) || workload(&mut d, args, given, commands);
        if typed {
            continue;
        }
        if given.values.is_empty() {
            d.phase.args.push(given.flag.clone());
        }
        for value in &given.values {
            d.phase.args.push(given.flag.clone());
            d.phase.args.push(value.clone());
        }
    }
    d.finish(notes)
}

impl Sketch {
    /// The tables named from the phase, and the password's variable.
    fn finish(mut self, notes: &mut Vec<String>) -> Scenario {
        if self.password {
            self.sc.target.password_env = named(PASSWORD_ENV);
            notes.push(format!("the scenario reads the password from the environment variable {PASSWORD_ENV}"));
        }
        if let Some(ks) = self.keyspace {
            self.sc.keyspaces.insert("main".into(), ks);
            match &mut self.mix {
                Some(mix) => mix.keyspace = named("main"),
                None => self.phase.keyspace = named("main"),
            }
        }
        if let Some(mix) = self.mix {
            self.sc.mixes.insert("main".into(), mix);
            self.phase.mix = named("main");
        }
        if let Some(values) = self.values {
            self.sc.values.insert("main".into(), values);
            self.phase.values = named("main");
        }
        self.sc.phases.push(Spanned::new(0..0, self.phase));
        self.sc
    }
}

/// The target's flags, typed (`Ok(false)`: not one of them).
fn target(d: &mut Sketch, args: &Args, given: &Given) -> bool {
    let t: &mut Target = &mut d.sc.target;
    let path = |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.display().to_string());
    match given.id.as_str() {
        "host" => t.host = Some(args.host.clone()),
        "port" => t.port = Some(args.port),
        "socket" => t.socket = path(&args.socket),
        "user" => t.user = args.user.clone(),
        "db" => t.db = args.db,
        "cacert" => t.cacert = path(&args.cacert),
        "cert" => t.cert = path(&args.cert),
        "key" => t.key = path(&args.key),
        "sni" => t.sni = args.sni.clone(),
        "tls" => t.tls = true,
        "tls_skip_verify" => t.tls_skip_verify = true,
        "cluster" => t.cluster = true,
        "resp3" => t.resp3 = true,
        "password" => d.password = true,
        "uri" => {
            let Some(uri) = &args.uri else { return false };
            match &uri.target {
                crate::config::Target::Tcp { host, port } => {
                    t.host = Some(host.clone());
                    t.port = Some(*port);
                }
                crate::config::Target::Unix(path) => t.socket = Some(path.display().to_string()),
            }
            t.user = uri.user.clone();
            t.db = uri.db;
            t.tls |= uri.tls;
            d.password |= uri.password.is_some();
        }
        _ => return false,
    }
    true
}

/// How much and how fast, typed; durations as the user wrote them (`false`: not one of them).
fn load(phase: &mut Phase, args: &Args, given: &Given) -> bool {
    let text = given.values.first().cloned();
    let small = |n: u64| u32::try_from(n).ok();
    match given.id.as_str() {
        "connections" => set(&mut phase.connections, small(args.connections)),
        "threads" => set(&mut phase.threads, args.threads.and_then(small)),
        "pipeline" => set(&mut phase.pipeline, small(args.pipeline)),
        "requests" => set(&mut phase.requests, args.requests.clone()),
        "duration" => set(&mut phase.duration, text),
        "rate" => set(&mut phase.rate, args.rate),
        "arrival" => set(&mut phase.arrival, text),
        "warmup" => set(&mut phase.warmup, text),
        "seed" => set(&mut phase.seed, args.seed),
        "runs" => set(&mut phase.runs, small(args.runs)),
        _ => false,
    }
}

/// The keys, values and SET:GET mix, typed; sizes as the user wrote them (`false`: not one of
/// them).
fn workload(d: &mut Sketch, args: &Args, given: &Given, commands: bool) -> bool {
    let text = given.values.first().cloned();
    let ks = || Keyspace::default();
    let id = given.id.as_str();
    match id {
        "ratio" => {
            let Some((set, get)) = args.ratio else { return false };
            let mix = d.mix.get_or_insert_with(Mix::default);
            (mix.set, mix.get) = (Some(set), Some(get));
            true
        }
        "key_prefix" => set(&mut d.keyspace.get_or_insert_with(ks).prefix, Some(args.key_prefix.clone())),
        "key_min" => set(&mut d.keyspace.get_or_insert_with(ks).min, Some(args.key_min)),
        "key_max" => set(&mut d.keyspace.get_or_insert_with(ks).max, Some(args.key_max)),
        "key_median" => set(&mut d.keyspace.get_or_insert_with(ks).median, args.key_median),
        "key_stddev" => set(&mut d.keyspace.get_or_insert_with(ks).stddev, args.key_stddev),
        "zipf_exponent" => set(&mut d.keyspace.get_or_insert_with(ks).zipf_exponent, Some(args.zipf_exponent)),
        "key_pattern" if !commands => match args.key_pattern {
            Some((a, b)) if a == b => {
                set(&mut d.keyspace.get_or_insert_with(ks).distribution, Distribution::from_letter(a))
            }
            _ => false,
        },
        "data_size" => set(&mut d.values.get_or_insert_with(Values::default).size, text),
        "data_size_range" => set(&mut d.values.get_or_insert_with(Values::default).range, text),
        "data_size_list" => set(&mut d.values.get_or_insert_with(Values::default).list, text),
        _ => false,
    }
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
