//! `--save-scenario FILE.toml`: a plan written down as the scenario that reproduces it. From the
//! typed flags (`options::Args`) and the record of which flags the user gave (kept by the one
//! parse of the command line): the common ones become the file's typed settings, the rest its
//! `args` as the user wrote them, so `respbench run FILE.toml` plans the same run (same seed,
//! same key streams). Output flags stay with the command line; a password never goes in the
//! file, only the name of the environment variable to read it from.

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use toml::Spanned;

use super::error::ScenarioError;
use super::flags::Given;
use super::schema::{Distribution, Keyspace, Mix, Phase, Scenario, Target, Values};
use crate::cli::options::Args;
use crate::cli::usage::{EXIT_FAILURE, usage_error};
use crate::report;

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
    pub fn text(&mut self, shown: &[OsString], seed: u64) -> Result<String, ScenarioError> {
        for phase in &mut self.scenario.phases {
            phase.get_mut().seed.get_or_insert(seed);
        }
        render(&self.scenario, shown)
    }
}

/// `--save-scenario FILE`: the scenario drafted from the typed flags, written with the seed the
/// run uses; `shown` is the command line as the user typed it.
pub fn write(shown: &[impl Into<OsString> + Clone], draft: Option<Draft>, seed: u64) -> Result<(), ExitCode> {
    let Some(mut draft) = draft else { return Ok(()) };
    let shown: Vec<OsString> = shown.iter().cloned().map(Into::into).collect();
    let text = draft.text(&shown, seed).map_err(|e| usage_error(&e))?;
    if let Err(e) = report::output::write(&draft.path, text.as_bytes()) {
        eprintln!("respbench: {e}");
        return Err(ExitCode::from(EXIT_FAILURE));
    }
    eprintln!("respbench: scenario saved to {}", draft.path.display());
    for note in &draft.notes {
        eprintln!("respbench: note: {note}");
    }
    Ok(())
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
) -> Result<String, ScenarioError> {
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

fn render(sc: &Scenario, argv: &[OsString]) -> Result<String, ScenarioError> {
    let body = toml::to_string_pretty(sc).map_err(|e| format!("cannot write the scenario: {e}"))?;
    let shown: Vec<String> = mask(argv);
    Ok(format!("# Saved by respbench from:\n#   {}\n# Run it with: respbench run FILE.toml\n\n{body}", shown.join(" ")))
}

/// What a saved phase is built up from: the file's tables as the flags fill them.
#[derive(Default)]
struct Sketch {
    sc: Scenario,
    /// The keys of `[target]`, the phase, its keyspace and its values, by table.
    tables: std::collections::BTreeMap<&'static str, toml::Table>,
    mix: Option<Mix>,
    /// The phase's free flags.
    args: Vec<String>,
    password: bool,
}

/// The tables a flag the user gave is saved in, as a key of its own.
const TABLES: &[&str] = &["target", "phase", "keyspaces", "values"];

/// The scenario of one plan: a phase with the flags the user gave.
fn scenario_of(args: &Args, notes: &mut Vec<String>) -> Scenario {
    let mut d = Sketch::default();
    let phase = d.tables.entry("phase").or_default();
    phase.insert("kind".into(), "run".into());
    phase.insert("name".into(), "run".into());
    let commands = args.scenario.given.iter().any(|g| g.id == "command");
    let cmd = <Args as clap::CommandFactory>::command();
    for given in &args.scenario.given {
        if is_output(&cmd, &given.id) || given.id.starts_with("memtier_") {
            continue;
        }
        let long = cmd.get_arguments().find(|a| a.get_id() == given.id.as_str()).and_then(|a| a.get_long());
        if d.shaped(args, given, commands) || long.is_some_and(|long| d.keyed(long, &given.values)) {
            continue;
        }
        if given.values.is_empty() {
            d.args.push(given.flag.clone());
        }
        for value in &given.values {
            d.args.push(given.flag.clone());
            d.args.push(value.clone());
        }
    }
    d.finish(notes)
}

impl Sketch {
    /// A flag saved as the file's key for it (see `keys`), its value as the user wrote it, typed
    /// as the key is (`false`: no key, or a value the key cannot hold).
    fn keyed(&mut self, long: &str, values: &[String]) -> bool {
        let Some((table, key)) = super::keys::key(TABLES, long) else { return false };
        let candidates: Vec<toml::Value> = match values {
            [] => vec![true.into()],
            [one] => {
                let mut c = Vec::new();
                // A count as the flags read it (`1k` is 1000), a number, else the text.
                c.extend(
                    crate::config::parse::count(one).ok().and_then(|n| i64::try_from(n).ok()).map(toml::Value::from),
                );
                c.extend(one.parse::<f64>().ok().map(toml::Value::from));
                c.push(one.clone().into());
                c
            }
            _ => return false,
        };
        for candidate in candidates {
            let mut t = self.tables.get(table).cloned().unwrap_or_default();
            t.insert(key.to_string(), candidate);
            if holds(table, &t) {
                self.tables.insert(table, t);
                return true;
            }
        }
        false
    }

    /// The flags whose keys have a shape of their own: `--ratio` (a mix's weights),
    /// `--key-pattern` (a keyspace's distribution, by name), `--uri` (the target's parts) and the
    /// password (read from the environment); `false`: not one of them.
    fn shaped(&mut self, args: &Args, given: &Given, commands: bool) -> bool {
        match given.id.as_str() {
            "ratio" => {
                let Some((set, get)) = args.ratio else { return false };
                let mix = self.mix.get_or_insert_with(Mix::default);
                (mix.set, mix.get) = (Some(set), Some(get));
            }
            "key_pattern" if !commands => {
                let Some(name) =
                    args.key_pattern.filter(|(a, b)| a == b).and_then(|(a, _)| Distribution::from_letter(a))
                else {
                    return false;
                };
                let name = toml::Value::try_from(name).expect("a distribution is a name");
                self.tables.entry("keyspaces").or_default().insert("distribution".into(), name);
            }
            "password" => self.password = true,
            "uri" => {
                let Some(uri) = &args.uri else { return false };
                let t = self.tables.entry("target").or_default();
                match &uri.target {
                    crate::config::Target::Tcp { host, port } => {
                        t.insert("host".into(), host.clone().into());
                        t.insert("port".into(), i64::from(*port).into());
                    }
                    crate::config::Target::Unix(path) => {
                        t.insert("socket".into(), path.display().to_string().into());
                    }
                }
                if let Some(user) = &uri.user {
                    t.insert("user".into(), user.clone().into());
                }
                if let Some(db) = uri.db {
                    t.insert("db".into(), i64::from(db).into());
                }
                if uri.tls {
                    t.insert("tls".into(), true.into());
                }
                self.password |= uri.password.is_some();
            }
            _ => return false,
        }
        true
    }

    /// The tables named from the phase, and the password's variable.
    fn finish(mut self, notes: &mut Vec<String>) -> Scenario {
        let table = |name: &str| toml::Value::Table(self.tables.get(name).cloned().unwrap_or_default());
        let mut phase: Phase = table("phase").try_into().expect("the phase's keys were checked");
        phase.args = self.args;
        self.sc.target = table("target").try_into().expect("the target's keys were checked");
        let keyspace: Keyspace = table("keyspaces").try_into().expect("the keyspace's keys were checked");
        let values: Values = table("values").try_into().expect("the values' keys were checked");
        if self.password {
            self.sc.target.password_env = named(PASSWORD_ENV);
            notes.push(format!("the scenario reads the password from the environment variable {PASSWORD_ENV}"));
        }
        if self.tables.contains_key("keyspaces") {
            self.sc.keyspaces.insert("main".into(), keyspace);
            match &mut self.mix {
                Some(mix) => mix.keyspace = named("main"),
                None => phase.keyspace = named("main"),
            }
        }
        if let Some(mix) = self.mix {
            self.sc.mixes.insert("main".into(), mix);
            phase.mix = named("main");
        }
        if self.tables.contains_key("values") {
            self.sc.values.insert("main".into(), values);
            phase.values = named("main");
        }
        self.sc.phases.push(Spanned::new(0..0, phase));
        self.sc
    }
}

/// Whether `t` is a valid `table` of the file.
fn holds(table: &str, t: &toml::Table) -> bool {
    let value = toml::Value::Table(t.clone());
    match table {
        "target" => value.try_into::<Target>().is_ok(),
        "phase" => value.try_into::<Phase>().is_ok(),
        "keyspaces" => value.try_into::<Keyspace>().is_ok(),
        _ => value.try_into::<Values>().is_ok(),
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
