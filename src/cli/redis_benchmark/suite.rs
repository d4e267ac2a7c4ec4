//! The classic suite (redis-benchmark's tests, names, keys and commands) and commands given
//! after the options, compiled into what the engine sends (`saved` writes them back as a
//! scenario).

use super::error::BenchmarkError;
use crate::config::{CommandSpec, KeyPattern, Sequence};

/// One test of the run: a name and what it sends.
pub(super) struct Test {
    pub(super) name: String,
    pub(super) commands: Vec<CommandSpec>,
    pub(super) sequence: Option<Vec<crate::config::Step>>,
    /// Commands sent once, on a connection of their own, before the test (FCALL's library).
    pub(super) setup: Vec<Vec<String>>,
}

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
) -> Result<Vec<Test>, BenchmarkError> {
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
        return Err(format!("-t: unknown test '{unknown}'; the tests are {}", known.join(", ")).into());
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
pub fn custom(words: &[String], random: bool) -> Result<Test, BenchmarkError> {
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
