//! The classic suite (redis-benchmark's tests, names, keys and commands) and commands given
//! after the options, compiled into what the engine sends; and `--save-scenario`, which writes
//! them back as respbench's `--command` flags, one scenario phase per test (the flags the tests
//! share are [`save::flags`](super::save::flags)).

use std::ffi::OsString;
use std::process::ExitCode;

use super::Test;
use crate::config::{ArgPart, CommandSpec, KeyPattern, Sequence, StopAfter};

/// The classic suite in redis-benchmark's order: name as printed, the names `-t` selects it
/// by, and the command (`__rand_int__` becomes a random number only with `-r`).
pub const SUITE: &[(&str, &[&str], &str)] = &[
    ("PING_INLINE", &["ping_inline", "ping"], "PING"),
    ("PING_MBULK", &["ping_mbulk", "ping"], "PING"),
    ("SET", &["set"], "SET key:__rand_int__ __data__"),
    ("GET", &["get"], "GET key:__rand_int__"),
    ("INCR", &["incr"], "INCR counter:__rand_int__"),
    ("LPUSH", &["lpush"], "LPUSH mylist __data__"),
    ("RPUSH", &["rpush"], "RPUSH mylist __data__"),
    ("LPOP", &["lpop"], "LPOP mylist"),
    ("RPOP", &["rpop"], "RPOP mylist"),
    ("SADD", &["sadd"], "SADD myset element:__rand_int__"),
    ("HSET", &["hset"], "HSET myhash element:__rand_int__ __data__"),
    ("SPOP", &["spop"], "SPOP myset"),
    ("ZADD", &["zadd"], "ZADD myzset __score__ element:__rand_int__"),
    ("ZPOPMIN", &["zpopmin"], "ZPOPMIN myzset"),
    (
        "LPUSH (needed to benchmark LRANGE)",
        &["lrange", "lrange_100", "lrange_300", "lrange_500", "lrange_600"],
        "LPUSH mylist __data__",
    ),
    ("LRANGE_100 (first 100 elements)", &["lrange", "lrange_100"], "LRANGE mylist 0 99"),
    ("LRANGE_300 (first 300 elements)", &["lrange", "lrange_300"], "LRANGE mylist 0 299"),
    ("LRANGE_500 (first 500 elements)", &["lrange", "lrange_500"], "LRANGE mylist 0 499"),
    ("LRANGE_600 (first 600 elements)", &["lrange", "lrange_600"], "LRANGE mylist 0 599"),
    ("MSET (10 keys)", &["mset"], "MSET __10__ key:__rand_int__ __data__"),
    ("MGET (10 keys)", &["mget"], "MGET __10__ key:__rand_int__"),
    ("XADD", &["xadd"], "XADD mystream * myfield __data__"),
];

/// valkey-benchmark's two tests after the classic suite, with the names `-t` selects them by.
const FUNCTION_TESTS: [(&str, &str); 2] = [("FUNCTION LOAD", "function_load"), ("FCALL", "fcall")];

/// valkey-benchmark's `--num-functions` and `--num-keys-in-fcall`.
#[derive(Debug, Clone, Copy)]
pub struct Functions {
    /// Functions in the library the FUNCTION LOAD test loads again and again.
    pub count: u32,
    /// Keys each FCALL passes (`key1` .. `keyN`).
    pub keys: u32,
}

impl Default for Functions {
    fn default() -> Functions {
        Functions { count: 10, keys: 1 }
    }
}

/// valkey-benchmark's library `benchlib` of `n` functions `fooN` .. `foo1`, each returning
/// its first key (with keys) or 0. Registered through `redis.` (valkey-benchmark writes
/// `server.`, which Redis does not know; valkey takes both).
pub fn library(n: u32, with_keys: bool) -> String {
    let mut script = String::from("#!lua name=benchlib\n");
    for i in (1..=n).rev() {
        if with_keys {
            script.push_str(&format!("local function foo{i}(keys, args)\nreturn keys[0]\nend\n"));
        } else {
            script.push_str(&format!("local function foo{i}()\nreturn 0\nend\n"));
        }
        script.push_str(&format!("redis.register_function('foo{i}', foo{i})\n"));
    }
    script
}

/// The tests `-t` selects (all without it), in the suite's order; `functions` adds
/// valkey-benchmark's FUNCTION LOAD and FCALL tests.
pub fn suite(
    selected: Option<&str>,
    random: bool,
    cluster: bool,
    functions: Option<Functions>,
) -> Result<Vec<Test>, String> {
    let wanted: Option<Vec<String>> = selected.map(|s| s.split(',').map(|t| t.trim().to_ascii_lowercase()).collect());
    let extra: &[(&str, &str)] = if functions.is_some() { &FUNCTION_TESTS } else { &[] };
    let known_name =
        |w: &str| SUITE.iter().any(|(_, names, _)| names.contains(&w)) || extra.iter().any(|(_, n)| *n == w);
    if let Some(wanted) = &wanted
        && let Some(unknown) = wanted.iter().find(|w| !known_name(w))
    {
        let mut known: Vec<&str> = SUITE.iter().flat_map(|(_, names, _)| names.iter().copied()).collect();
        known.extend(extra.iter().map(|(_, n)| *n));
        known.dedup();
        return Err(format!("-t: unknown test '{unknown}'; the tests are {}", known.join(", ")));
    }
    let tests = SUITE
        .iter()
        .filter(|(_, names, _)| wanted.as_ref().is_none_or(|w| names.iter().any(|n| w.iter().any(|x| x == n))))
        .map(|(name, _, command)| {
            let mut words: Vec<String> = Vec::new();
            let parts: Vec<&str> = command.split(' ').collect();
            // `MSET __10__ key:__rand_int__ __data__`: the pair ten times over.
            if parts.get(1) == Some(&"__10__") {
                words.push(parts[0].to_string());
                for _ in 0..10 {
                    words.extend(parts[2..].iter().map(|w| w.to_string()));
                }
            } else {
                // ZADD's score is the random number with -r, else 0 (as redis-benchmark).
                let score = if random { "__rand_int__" } else { "0" };
                words.extend(parts.iter().map(|w| if *w == "__score__" { score.to_string() } else { w.to_string() }));
            }
            if cluster {
                // As redis-benchmark does in cluster mode: a hash tag in every key name, so each
                // request (MSET's ten keys too) stays on one node.
                for w in words.iter_mut().skip(1) {
                    for base in ["key:", "counter:", "mylist", "myset", "myhash", "myzset", "mystream"] {
                        if let Some(rest) = w.strip_prefix(base) {
                            *w = format!(
                                "{}{{tag}}{}{rest}",
                                base.trim_end_matches(':'),
                                if base.ends_with(':') { ":" } else { "" }
                            );
                            break;
                        }
                    }
                }
            }
            let mut spec = command_spec(&words, random);
            spec.inline = *name == "PING_INLINE";
            Test { name: name.to_string(), commands: vec![spec], sequence: None, setup: Vec::new() }
        });
    let mut tests: Vec<Test> = tests.collect();
    if let Some(f) = functions {
        let chosen = |name: &str| wanted.as_ref().is_none_or(|w| w.iter().any(|x| x == name));
        if chosen("function_load") {
            let words = ["FUNCTION", "LOAD", "REPLACE"].map(String::from);
            let mut words = words.to_vec();
            words.push(library(f.count, false));
            // The script is sent as it is: no placeholders inside it.
            let spec = CommandSpec::from_words(&words, 1, KeyPattern::Random, false);
            tests.push(Test { name: "FUNCTION LOAD".into(), commands: vec![spec], sequence: None, setup: Vec::new() });
        }
        if chosen("fcall") {
            let load = vec!["FUNCTION".into(), "LOAD".into(), "REPLACE".into(), library(1, f.keys > 0)];
            let mut words = vec!["FCALL".to_string(), "foo1".into(), f.keys.to_string()];
            words.extend((1..=f.keys).map(|i| format!("key{i}")));
            let spec = CommandSpec::from_words(&words, 1, KeyPattern::Random, false);
            tests.push(Test { name: "FCALL".into(), commands: vec![spec], sequence: None, setup: vec![load] });
        }
    }
    Ok(tests)
}

/// A command given after the options; `;` between commands makes a sequence.
pub fn custom(words: &[String], random: bool) -> Result<Test, String> {
    let name = words.join(" ");
    match crate::config::split_sequence(words)? {
        Some(parts) => {
            let Sequence { mut commands, steps } = Sequence::of(&parts, KeyPattern::Random, true);
            for c in &mut commands {
                *c = with_rand(c.clone(), random);
            }
            Ok(Test { name, commands, sequence: Some(steps), setup: Vec::new() })
        }
        None => Ok(Test { name, commands: vec![command_spec(words, random)], sequence: None, setup: Vec::new() }),
    }
}

pub fn command_spec(words: &[String], random: bool) -> CommandSpec {
    with_rand(CommandSpec::from_words(words, 1, KeyPattern::Random, true), random)
}

/// Without `-r`, redis-benchmark leaves `__rand_int__` as it is: every request hits one key.
pub fn with_rand(spec: CommandSpec, random: bool) -> CommandSpec {
    if random { spec } else { spec.with_literal_rand_int() }
}

/// `--save-scenario FILE.toml`: writes the tests as a scenario, one phase each with the same
/// flags and seed, so `respbench run FILE.toml` sends the same commands. `Some` is the exit
/// code of a failure (said on stderr).
pub fn save_scenario(plan: &super::Plan, tool: &str, typed: &[OsString]) -> Option<ExitCode> {
    let (path, _) = plan.save.as_ref()?;
    let text = match scenario_text(plan, tool, typed) {
        Ok(t) => t,
        Err(msg) => return Some(super::usage_error(tool, &format!("--save-scenario: {msg}"))),
    };
    if let Err(e) = crate::report::write_atomic(path, text.0.as_bytes()) {
        eprintln!("respbench: cannot write {}: {e}", path.display());
        return Some(ExitCode::from(crate::cli::usage::EXIT_FAILURE));
    }
    eprintln!("respbench: scenario saved to {}", path.display());
    for note in text.1 {
        eprintln!("respbench: note: {note}");
    }
    None
}

/// The scenario's text and the notes for the user.
fn scenario_text(plan: &super::Plan, tool: &str, typed: &[OsString]) -> Result<(String, Vec<String>), String> {
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
    let cmd = <crate::cli::native::Args as clap::CommandFactory>::command();
    let set = |args: &mut crate::cli::native::Args, flag: &str, values: &[&str]| {
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
            ));
        }
        let mut args = base.clone();
        let text = match &test.sequence {
            Some(steps) => {
                let parts: Result<Vec<String>, String> = steps
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
fn words_of(spec: &CommandSpec) -> Result<String, String> {
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
                other => return Err(format!("{}: {other:?} cannot be written in a scenario", spec.name)),
            }
        }
        words.push(match (word.contains('"'), word.contains('\'')) {
            (true, true) => return Err(format!("{}: an argument holds both kinds of quote", spec.name)),
            _ if !word.is_empty() && !word.contains(char::is_whitespace) && !word.contains(['"', '\'']) => word,
            (true, false) => format!("'{word}'"),
            _ => format!("\"{word}\""),
        });
    }
    Ok(words.join(" "))
}
