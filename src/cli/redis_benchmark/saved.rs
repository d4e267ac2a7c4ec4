//! `--save-scenario FILE.toml` of a redis-benchmark command line: its tests as a scenario, one
//! phase each with the same flags and seed, so `respbench run FILE.toml` sends the same
//! commands.

use std::ffi::OsString;
use std::process::ExitCode;

use super::error::BenchmarkError;
use super::plan::Plan;
use super::words::usage_error;
use crate::config::{ArgPart, CommandSpec, StopAfter};

/// `--save-scenario FILE.toml`: writes the tests as a scenario, one phase each with the same
/// flags and seed, so `respbench run FILE.toml` sends the same commands. `Some` is the exit
/// code of a failure (said on stderr).
pub fn save_scenario(plan: &Plan, tool: &str, typed: &[OsString]) -> Option<ExitCode> {
    let (path, _) = plan.save.as_ref()?;
    let text = match scenario_text(plan, tool, typed) {
        Ok(t) => t,
        Err(msg) => return Some(usage_error(tool, &format!("--save-scenario: {msg}"))),
    };
    if let Err(e) = crate::report::output::write(path, text.0.as_bytes()) {
        eprintln!("respbench: {e}");
        return Some(ExitCode::from(crate::cli::usage::EXIT_FAILURE));
    }
    eprintln!("respbench: scenario saved to {}", path.display());
    for note in text.1 {
        eprintln!("respbench: note: {note}");
    }
    None
}

/// The scenario's text and the notes for the user.
fn scenario_text(plan: &Plan, tool: &str, typed: &[OsString]) -> Result<(String, Vec<String>), BenchmarkError> {
    if plan.idle {
        return Err("-I opens idle connections: there is no test to save".into());
    }
    let mut notes = Vec::new();
    if plan.looping {
        notes.push("-l loops forever; the scenario runs the tests once (repeat = N on a phase repeats it)".into());
    }
    // The flags every test shares, with -n as the engine counts it (valkey-benchmark's
    // sequences count each command).
    let Some((_, saved)) = plan.save.as_ref() else { return Err("--save-scenario was not asked for".into()) };
    let mut base = saved.clone();
    let cmd = <crate::cli::options::Args as clap::CommandFactory>::command();
    let set = |args: &mut crate::cli::options::Args, flag: &str, values: &[&str]| {
        let values = values.iter().map(|v| v.to_string()).collect();
        crate::cli::scenario::flags::record(&mut args.scenario.given, &cmd, flag, values)
    };
    if let (StopAfter::Requests(n), Some(_)) = (&plan.base.stop, &base.requests) {
        base.requests = Some(n.to_string());
        set(&mut base, "--requests", &[&n.to_string()]);
    }
    let random = plan.keyspace.is_some();
    if !random && plan.tests.iter().any(|t| t.commands.iter().any(has_rand_int)) {
        // Without -r, redis-benchmark sends `__rand_int__` as it is: one key. The file cannot
        // spell a literal placeholder, so it draws from a range of one number instead.
        (base.key_min, base.key_max) = (0, 0);
        set(&mut base, "--key-min", &["0"]);
        set(&mut base, "--key-max", &["0"]);
        notes.push(
            "without -r every request uses one key: the scenario's is key:000000000000, not key:__rand_int__".into(),
        );
    }
    let mut runs = Vec::new();
    for test in &plan.tests {
        if !test.setup.is_empty() {
            return Err(format!(
                "the {} test loads a library first, which a scenario cannot say: leave it out with -t",
                test.name
            )
            .into());
        }
        let mut args = base.clone();
        let text = match &test.sequence {
            Some(steps) => {
                let parts: Result<Vec<String>, BenchmarkError> = steps
                    .iter()
                    .map(|s| {
                        let words = words_of(&test.commands[s.command])?;
                        Ok(if s.repeat > 1 { format!("{} {words}", s.repeat) } else { words })
                    })
                    .collect();
                parts?.join(" ; ")
            }
            None => words_of(&test.commands[0])?,
        };
        set(&mut args, "--command", &[&text]);
        args.command = vec![text];
        if test.commands.iter().any(|c| c.inline) {
            args.inline = true;
            set(&mut args, "--inline", &[]);
        }
        runs.push((test.name.clone(), args));
    }
    let mut shown = vec![OsString::from(tool)];
    shown.extend(typed.iter().cloned());
    let text = crate::cli::scenario::save::from_runs(&shown, &runs, plan.base.seed, &mut notes)?;
    Ok((text, notes))
}

fn has_rand_int(spec: &CommandSpec) -> bool {
    spec.args.iter().flatten().any(|p| matches!(p, ArgPart::Lit(b) if b.windows(12).any(|w| w == b"__rand_int__")))
}

/// A command as `--command` takes it: placeholders by name, words with spaces quoted.
fn words_of(spec: &CommandSpec) -> Result<String, BenchmarkError> {
    const ORDINALS: [&str; 9] = ["1st", "2nd", "3rd", "4th", "5th", "6th", "7th", "8th", "9th"];
    let mut words = Vec::new();
    for arg in &spec.args {
        let mut word = String::new();
        for part in arg {
            match part {
                ArgPart::Lit(bytes) => word.push_str(
                    std::str::from_utf8(bytes).map_err(|_| format!("{}: an argument is not text", spec.name))?,
                ),
                ArgPart::Key => word.push_str("__key__"),
                ArgPart::Data => word.push_str("__data__"),
                ArgPart::RandInt => word.push_str("__rand_int__"),
                ArgPart::RandShared(i) => word.push_str(&format!("__rand_{}__", ORDINALS[usize::from(*i)])),
                ArgPart::Tag => word.push_str("{tag}"),
                other => return Err(format!("{}: {other:?} cannot be written in a scenario", spec.name).into()),
            }
        }
        words.push(match (word.contains('"'), word.contains('\'')) {
            (true, true) => return Err(format!("{}: an argument holds both kinds of quote", spec.name).into()),
            _ if !word.is_empty() && !word.contains(char::is_whitespace) && !word.contains(['"', '\'']) => word,
            (true, false) => format!("'{word}'"),
            _ => format!("\"{word}\""),
        });
    }
    Ok(words.join(" "))
}
