//! A step's plan as typed values: the flags its settings stand for, read by clap over the
//! phase's free `args`, into the flags' own types (`options::Args` and fill's and capacity's).
//! The settings are the file's values (the scenario's front-end words, mapped in `keys`), so
//! clap's definitions parse, default and relate them as they do a command line; a mistake is
//! said at the key it came from.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory, FromArgMatches};

use super::error::ScenarioError;
use super::schema::Kind;
use crate::cli::capacity::CapacityArgs;
use crate::cli::fill::FillArgs;
use crate::cli::options::Args;

/// Which code path runs a step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tool {
    /// respbench's own run (its flags).
    Native,
    /// `respbench fill` (a memory target).
    Fill,
    /// `respbench capacity`.
    Capacity,
}

/// One run of the engine (or one fill or search) that a phase compiles to.
#[derive(Debug, Clone)]
pub struct Step {
    /// Index of the phase in the file.
    pub phase: usize,
    /// The phase's name, with the step's rate or connections and the repetition when it has several.
    pub label: String,
    pub kind: Kind,
    pub tool: Tool,
    /// What the step sets, in the order shown: the target's, the phase's keys, its free `args`
    /// (a password from the environment is among them).
    pub settings: Vec<Setting>,
    /// Where the phase starts in the file (byte offsets), for messages.
    pub span: std::ops::Range<usize>,
    /// The run's roles (`[[phase.role]]`).
    pub roles: Vec<StepRole>,
}

impl Step {
    /// The step as a command line, for people: the password masked. Never parsed.
    pub fn shown(&self) -> String {
        let mut out = Vec::new();
        for s in &self.settings {
            match &s.value {
                Value::Args(args) => out.extend(args.iter().map(|a| shell_word(a))),
                Value::Password(_) => out.extend(["-a".to_string(), "***".to_string()]),
                Value::Switch(long) => out.push(format!("--{long}")),
                Value::Flag(long) => out.extend([format!("--{long}"), shell_word(&s.text)]),
            }
        }
        for role in &self.roles {
            out.push(role.shown());
        }
        out.join(" ")
    }

    /// The plan this step runs, as `respbench` with the step's settings would build it. A fill
    /// up to a memory target and a capacity search are several runs, not one plan.
    pub fn plan(&self) -> Result<(crate::config::Config, crate::cli::options::Output), ScenarioError> {
        match self.planned() {
            Ok(Planned::Native(args)) => Ok(args.into_config()?),
            Ok(Planned::Fill(_)) => Err("a fill up to a memory target is several runs, not one plan".into()),
            Ok(Planned::Capacity(_)) => Err("a capacity search is several runs, not one plan".into()),
            Err(e) => Err(e.msg.into()),
        }
    }
}

fn shell_word(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_.:/,=%@".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// One value a step sets: the key in the file it came from, the value as shown (scaled as the
/// step runs it) and the flag it sets.
#[derive(Debug, Clone)]
pub struct Setting {
    /// The key in the file (`pipeline`, `max`, `args`), for messages.
    pub key: &'static str,
    /// The flag's value: what clap reads, and what `--dry-run` and the result's `command_line`
    /// show after the flag.
    pub text: String,
    pub value: Value,
}

/// What a setting sets.
#[derive(Debug, Clone)]
pub enum Value {
    /// The flag with this long name, to `text`.
    Flag(&'static str),
    /// The flag with this long name, which takes no value (`--tls`).
    Switch(&'static str),
    /// The password (`--password`), never shown.
    Password(String),
    /// The phase's free flags, as the user wrote them.
    Args(Vec<String>),
}

impl Value {
    /// The long name of the flag this value sets (`None`: the free `args`).
    pub fn long(&self) -> Option<&'static str> {
        match self {
            Value::Flag(long) | Value::Switch(long) => Some(long),
            Value::Password(_) => Some("password"),
            Value::Args(_) => None,
        }
    }
}

impl Setting {
    /// The words clap reads for this setting.
    fn words(&self) -> Vec<String> {
        match &self.value {
            Value::Flag(long) => vec![format!("--{long}={}", self.text)],
            Value::Switch(long) => vec![format!("--{long}")],
            Value::Password(p) => vec![format!("--password={p}")],
            Value::Args(args) => args.clone(),
        }
    }
}

/// A step's mistake: the message and the key of the file it came from (`None`: the phase as a
/// whole, such as a check across several keys).
#[derive(Debug)]
pub struct PlanError {
    pub key: Option<&'static str>,
    pub msg: String,
}

impl PlanError {
    fn at(key: &'static str, msg: String) -> PlanError {
        PlanError { key: Some(key), msg }
    }
}

/// What a step runs, typed: the run's flags, or a fill's or a search's.
pub(crate) enum Planned {
    Native(Box<Args>),
    Fill(Box<FillArgs>),
    Capacity(Box<CapacityArgs>),
}

impl Step {
    /// The step's flags as typed values: the file's settings and the phase's free `args`, read
    /// by clap as one command line would be. A setting the free `args` give again, or one clap
    /// says cannot go with another, is refused at its key, as the command line would refuse it.
    pub(crate) fn planned(&self) -> Result<Planned, PlanError> {
        let (name, mut cmd) = match self.tool {
            Tool::Native => ("respbench", Args::command()),
            Tool::Fill => ("respbench fill", FillArgs::command()),
            // The objective may come from the file's `slo`: the free flags need not give it.
            Tool::Capacity => ("respbench capacity", CapacityArgs::command().mut_arg("slo", |a| a.required(false))),
        };
        let free: Vec<String> =
            self.settings.iter().filter(|s| s.value.long().is_none()).flat_map(Setting::words).collect();
        let argv = |typed: &[&Setting]| {
            let words = typed.iter().flat_map(|s| s.words());
            std::iter::once(name.to_string()).chain(words).chain(free.iter().cloned()).collect::<Vec<String>>()
        };
        cmd.try_get_matches_from_mut(argv(&[]))
            .map_err(|e| PlanError::at("args", crate::cli::usage::clap_message(&e)))?;
        let typed = self.typed(&cmd);
        // The file's settings first (its commands come before the free `args`' ones).
        let matches = cmd.try_get_matches_from_mut(argv(&typed)).map_err(|e| {
            let needs = |s: &Setting| {
                let alone = cmd.clone().try_get_matches_from(argv(&[s]));
                alone.is_err_and(|e| e.kind() == ErrorKind::MissingRequiredArgument)
            };
            refused(&e, &typed, &needs)
        })?;
        let whole = |e: clap::Error| PlanError { key: None, msg: crate::cli::usage::clap_message(&e) };
        Ok(match self.tool {
            Tool::Native => {
                let mut args = Args::from_arg_matches(&matches).map_err(whole)?;
                args.role.extend(self.roles_planned()?);
                Planned::Native(Box::new(args))
            }
            Tool::Fill => Planned::Fill(Box::new(FillArgs::from_arg_matches(&matches).map_err(whole)?)),
            Tool::Capacity => {
                if matches.value_source("slo") != Some(ValueSource::CommandLine) {
                    return Err(PlanError { key: None, msg: "a capacity phase needs 'slo' (p99=1ms, say)".into() });
                }
                let mut args = CapacityArgs::from_arg_matches(&matches).map_err(whole)?;
                args.run.role.extend(self.roles_planned()?);
                Planned::Capacity(Box::new(args))
            }
        })
    }

    /// The settings that set a flag; of several that set one flag taking one value (a staircase
    /// step's connections over the phase's), the last.
    fn typed(&self, cmd: &clap::Command) -> Vec<&Setting> {
        let appends = |long: &str| {
            cmd.get_arguments().any(|a| a.get_long() == Some(long) && matches!(a.get_action(), ArgAction::Append))
        };
        let set: Vec<&Setting> = self.settings.iter().filter(|s| s.value.long().is_some()).collect();
        set.iter()
            .enumerate()
            .filter(|(i, s)| {
                let long = s.value.long();
                appends(long.unwrap_or_default()) || !set[i + 1..].iter().any(|later| later.value.long() == long)
            })
            .map(|(_, s)| *s)
            .collect()
    }
}

/// clap's refusal of a step's command line, said at the key of the setting it names: a value
/// its flag's parser refuses, a flag also in `args`, flags that exclude each other, and (found
/// by `needs`, which tries a setting alone) a flag that needs another.
fn refused(e: &clap::Error, typed: &[&Setting], needs: &dyn Fn(&Setting) -> bool) -> PlanError {
    let flags = |kind: ContextKind| -> Vec<String> {
        match e.get(kind) {
            Some(ContextValue::String(s)) => vec![first_word(s)],
            Some(ContextValue::Strings(v)) => v.iter().map(|s| first_word(s)).collect(),
            _ => Vec::new(),
        }
    };
    let of = |flag: &str| typed.iter().find(|s| s.value.long().is_some_and(|l| format!("--{l}") == flag)).copied();
    let (invalid, prior) = (flags(ContextKind::InvalidArg), flags(ContextKind::PriorArg));
    match e.kind() {
        ErrorKind::ValueValidation | ErrorKind::InvalidValue => {
            if let Some(s) = invalid.first().and_then(|f| of(f)) {
                let cause =
                    std::error::Error::source(e).map_or_else(|| crate::cli::usage::clap_message(e), |c| c.to_string());
                return PlanError::at(s.key, format!("{}: {cause}", s.key));
            }
        }
        ErrorKind::ArgumentConflict if invalid == prior => {
            if let Some(s) = invalid.first().and_then(|f| of(f)) {
                return PlanError::at(s.key, format!("'{}' and args both give {}: keep one", s.key, invalid[0]));
            }
        }
        ErrorKind::ArgumentConflict => {
            let pairs = [(invalid.first(), prior.first()), (prior.first(), invalid.first())];
            for (one, other) in pairs {
                if let (Some(s), Some(other)) = (one.and_then(|f| of(f)), other) {
                    let msg = format!("{} ('{}') cannot be used with {other}", shown(s), s.key);
                    return PlanError::at(s.key, msg);
                }
            }
        }
        ErrorKind::MissingRequiredArgument => {
            if let (Some(s), Some(missing)) = (typed.iter().find(|s| needs(s)), invalid.first()) {
                return PlanError::at(s.key, format!("{} ('{}') needs {missing}", shown(s), s.key));
            }
        }
        _ => {}
    }
    PlanError { key: None, msg: crate::cli::usage::clap_message(e) }
}

/// A flag as clap's messages name it (`--rate <PER_SEC>`): its first word.
fn first_word(s: &str) -> String {
    s.split_whitespace().next().unwrap_or_default().to_string()
}

/// A setting's flag as its messages name it.
fn shown(s: &Setting) -> String {
    match &s.value {
        Value::Password(_) => "-a".into(),
        v => format!("--{}", v.long().unwrap_or_default()),
    }
}

/// A role of a step, as the file gives it.
#[derive(Debug, Clone)]
pub enum StepRole {
    /// A kind role, read, and as the file gives it (`NAME:KIND:SETTINGS`).
    Kind { role: crate::config::role::Role, text: String },
    /// A mix role: its name, the step's connection settings and its run keys' settings,
    /// planned when the step is.
    Mix { name: String, target: Vec<Setting>, settings: Vec<Setting>, start: std::time::Duration },
}

impl StepRole {
    /// The role as `--dry-run` shows it, for people: a kind role as its flag, a mix role's own
    /// settings in brackets. Never parsed.
    pub(super) fn shown(&self) -> String {
        match self {
            StepRole::Kind { text, .. } => format!("--role {text}"),
            StepRole::Mix { name, settings, start, .. } => {
                let own = settings.iter().filter(|s| !s.text.is_empty());
                let mut words: Vec<String> = own.map(|s| format!("{}={}", s.key, s.text)).collect();
                if !start.is_zero() {
                    words.push(format!("start={start:?}"));
                }
                format!("--role {name}:mix[{}]", words.join(" "))
            }
        }
    }
}
