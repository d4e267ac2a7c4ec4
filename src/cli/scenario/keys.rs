//! The scenario file's keys that stand for a flag: the one table between the file's names and
//! respbench's options. A phase compiles its keys to these flags and `--save-scenario` writes
//! the flags back under these keys; clap's definition of each flag does the rest (its parser,
//! its default, what it conflicts with or needs).

/// `(table, key, flag)`: the file's `key` in `table` is the flag with this long name. Where
/// several keys stand for one flag, the first is the one `--save-scenario` writes.
const KEYS: &[(&str, &str, &str)] = &[
    ("target", "host", "host"),
    ("target", "port", "port"),
    ("target", "socket", "socket"),
    ("target", "cacert", "cacert"),
    ("target", "cert", "cert"),
    ("target", "key", "key"),
    ("target", "sni", "sni"),
    ("target", "db", "db"),
    ("target", "user", "user"),
    ("target", "password_env", "password"),
    ("target", "tls", "tls"),
    ("target", "tls_skip_verify", "tls-skip-verify"),
    ("target", "cluster", "cluster"),
    ("target", "resp3", "resp3"),
    ("keyspaces", "prefix", "key-prefix"),
    ("keyspaces", "min", "key-min"),
    ("keyspaces", "max", "key-max"),
    ("keyspaces", "median", "key-median"),
    ("keyspaces", "stddev", "key-stddev"),
    ("keyspaces", "zipf_exponent", "zipf-exponent"),
    ("keyspaces", "distribution", "key-pattern"),
    ("values", "size", "data-size"),
    ("values", "range", "data-size-range"),
    ("values", "list", "data-size-list"),
    ("mixes", "set", "ratio"),
    ("commands", "command", "command"),
    ("commands", "weight", "command-ratio"),
    ("commands", "distribution", "command-key-pattern"),
    ("phase", "connections", "connections"),
    ("phase", "threads", "threads"),
    ("phase", "pipeline", "pipeline"),
    ("phase", "seed", "seed"),
    ("phase", "requests", "requests"),
    ("phase", "duration", "duration"),
    ("phase", "rate", "rate"),
    ("phase", "arrival", "arrival"),
    ("phase", "warmup", "warmup"),
    ("phase", "runs", "runs"),
    ("phase", "memory_target", "memory-target"),
    ("phase", "memory", "memory"),
    ("phase", "slo", "slo"),
    ("phase", "start_rate", "start-rate"),
    ("phase", "max_rate", "max-rate"),
    ("phase", "precision", "precision"),
    ("phase", "rates", "rate"),
    ("phase", "connection_steps", "connections"),
    ("phase", "kind", "requests"),
];

/// The long name of the flag `key` of `table` stands for.
pub fn flag(table: &str, key: &str) -> &'static str {
    KEYS.iter()
        .find(|(t, k, _)| *t == table && *k == key)
        .map(|(_, _, flag)| *flag)
        .unwrap_or_else(|| panic!("the scenario key {table}.{key} stands for no flag"))
}

/// The file's key for the flag with this long name, in one of `tables` (the first listed).
pub fn key(tables: &[&str], long: &str) -> Option<(&'static str, &'static str)> {
    KEYS.iter().find(|(t, _, f)| *f == long && tables.contains(t)).map(|(t, k, _)| (*t, *k))
}
