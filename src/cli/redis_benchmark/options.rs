//! redis-benchmark's and valkey-benchmark's options, what each does to respbench's typed flags,
//! and the usage and version text each tool prints in its own style.

use std::path::PathBuf;

use crate::cli::dialect::Spec;
use crate::cli::options::{Args, ReadFromArg};
use crate::cli::{parse, shard};
use crate::config::parse::InvalidValue;

/// What one redis-benchmark option becomes.
pub enum Map {
    /// The same meaning as one of respbench's flags: sets that field of the typed plan from the
    /// value as given (empty for a switch); an error says what was expected.
    Set(Setter),
    /// Taken care of by the plan.
    Special,
    /// Not supported yet, with why.
    Unsupported(&'static str),
}

/// Sets one field of respbench's flags from an option's value.
pub type Setter = fn(&mut Args, &str) -> Result<(), InvalidValue>;

const fn opt(names: &'static [&'static str], takes_value: bool, map: Map) -> (Spec, Map) {
    (Spec { names, takes_value }, map)
}

/// redis-benchmark's options (7.x) and valkey-benchmark's additions.
pub const OPTIONS: &[(Spec, Map)] = &[
    opt(&["h"], true, Map::Special),
    opt(&["p"], true, Map::Special),
    opt(&["s"], true, Map::Special),
    opt(&["a"], true, Map::Special),
    opt(&["user"], true, Map::Special),
    opt(&["u"], true, Map::Special),
    opt(
        &["c"],
        true,
        Map::Set(|a, v| {
            a.connections = parse::positive(v)?;
            Ok(())
        }),
    ),
    opt(&["n"], true, Map::Special),
    opt(
        &["d"],
        true,
        Map::Set(|a, v| {
            a.data_size = parse::size(v)?;
            Ok(())
        }),
    ),
    opt(&["dbnum"], true, Map::Special),
    opt(
        &["3"],
        false,
        Map::Set(|a, _| {
            a.resp3 = true;
            Ok(())
        }),
    ),
    opt(
        &["threads"],
        true,
        Map::Set(|a, v| {
            a.threads = Some(parse::positive(v)?);
            Ok(())
        }),
    ),
    opt(&["k"], true, Map::Special),
    opt(&["r"], true, Map::Special),
    opt(
        &["P"],
        true,
        Map::Set(|a, v| {
            a.pipeline = parse::positive(v)?;
            Ok(())
        }),
    ),
    opt(&["q"], false, Map::Special),
    opt(&["precision"], true, Map::Special),
    opt(&["csv"], false, Map::Special),
    opt(&["l"], false, Map::Special),
    opt(&["t"], true, Map::Special),
    opt(&["I"], false, Map::Special),
    opt(&["x"], false, Map::Special),
    opt(
        &["seed"],
        true,
        Map::Set(|a, v| {
            a.seed = Some(v.trim().parse().map_err(|_| format!("'{v}' is not a whole number"))?);
            Ok(())
        }),
    ),
    // Several load machines as one run (respbench's own).
    opt(
        &["shard"],
        true,
        Map::Set(|a, v| {
            a.shards.shard = Some(shard::shard_arg(v)?);
            Ok(())
        }),
    ),
    opt(
        &["shard-count"],
        true,
        Map::Set(|a, v| {
            a.shards.shard_count = Some(shard::shard_count(v)?);
            Ok(())
        }),
    ),
    opt(
        &["start-at"],
        true,
        Map::Set(|a, v| {
            a.shards.start_at = Some(shard::start_time(v)?);
            Ok(())
        }),
    ),
    opt(
        &["allow-late-start"],
        false,
        Map::Set(|a, _| {
            a.shards.allow_late_start = true;
            Ok(())
        }),
    ),
    opt(
        &["rps"],
        true,
        Map::Set(|a, v| {
            a.rate = Some(parse::positive(v)?);
            Ok(())
        }),
    ),
    opt(
        &["save-scenario"],
        true,
        Map::Set(|a, v| {
            a.scenario.save_scenario = Some(PathBuf::from(v));
            Ok(())
        }),
    ),
    // respbench's own notes on stderr (how TLS is verified); without it stderr is the tool's.
    opt(&["notes"], false, Map::Special),
    opt(&["duration"], true, Map::Special),
    opt(&["warmup"], true, Map::Special),
    opt(
        &["cluster"],
        false,
        Map::Set(|a, _| {
            a.cluster = true;
            Ok(())
        }),
    ),
    opt(
        &["enable-tracking"],
        false,
        Map::Set(|a, _| {
            a.session.enable_tracking = true;
            Ok(())
        }),
    ),
    opt(
        &["rfr"],
        true,
        Map::Set(|a, v| {
            a.read_from_replicas = read_from(v)?;
            Ok(())
        }),
    ),
    opt(&["e"], false, Map::Special),
    opt(&["rdma"], false, Map::Unsupported("no RDMA device: respbench connects over TCP or a unix socket")),
    opt(
        &["tls"],
        false,
        Map::Set(|a, _| {
            a.tls = true;
            Ok(())
        }),
    ),
    opt(
        &["sni"],
        true,
        Map::Set(|a, v| {
            a.sni = Some(v.to_string());
            Ok(())
        }),
    ),
    opt(
        &["cacert"],
        true,
        Map::Set(|a, v| {
            a.cacert = Some(PathBuf::from(v));
            Ok(())
        }),
    ),
    opt(
        &["cacertdir"],
        true,
        Map::Set(|a, v| {
            a.cacert = Some(PathBuf::from(v));
            Ok(())
        }),
    ),
    opt(
        &["insecure"],
        false,
        Map::Set(|a, _| {
            a.tls_skip_verify = true;
            Ok(())
        }),
    ),
    opt(
        &["cert"],
        true,
        Map::Set(|a, v| {
            a.cert = Some(PathBuf::from(v));
            Ok(())
        }),
    ),
    opt(
        &["key"],
        true,
        Map::Set(|a, v| {
            a.key = Some(PathBuf::from(v));
            Ok(())
        }),
    ),
    opt(&["tls-ciphers"], true, Map::Special),
    opt(&["tls-ciphersuites"], true, Map::Special),
    opt(
        &["mptcp"],
        false,
        Map::Set(|a, _| {
            a.session.mptcp = true;
            Ok(())
        }),
    ),
    opt(&["num-functions"], true, Map::Special),
    opt(&["num-keys-in-fcall"], true, Map::Special),
    opt(&["help"], false, Map::Special),
    opt(&["version", "v"], false, Map::Special),
    // valkey-benchmark's dataset: a CSV or TSV file filling `__field:NAME__`, at most --maxdocs rows.
    opt(&["dataset"], true, Map::Special),
    opt(&["maxdocs"], true, Map::Special),
    // valkey-benchmark's robustness prober: random, malformed and CONFIG commands.
    opt(&["fuzz"], false, Map::Special),
    opt(&["fuzz-mode"], true, Map::Special),
    opt(&["fuzz-loglevel"], true, Map::Special),
    // valkey-benchmark's: `-r` numbers handed out in order rather than drawn.
    opt(
        &["sequential"],
        false,
        Map::Set(|a, _| {
            a.rand_sequential = true;
            Ok(())
        }),
    ),
];

/// `--rfr`: no, yes or all.
fn read_from(v: &str) -> Result<ReadFromArg, InvalidValue> {
    match v {
        "no" => Ok(ReadFromArg::No),
        "yes" => Ok(ReadFromArg::Yes),
        "all" => Ok(ReadFromArg::All),
        _ => Err(format!("expected no, yes or all, got '{v}'").into()),
    }
}

/// `--version`, as the tool prints it, naming respbench.
pub fn version(tool: &str) -> String {
    format!("{tool} respbench-{} (respbench's {tool} front-end)\n", env!("CARGO_PKG_VERSION"))
}

/// valkey-benchmark's fuzzer in `--help` (redis-benchmark has none).
const FUZZ_HELP: &str = "--fuzz             Send random commands one at a time to the server given (never another),
                    count every reply and lost connection by kind, and say whether it survived.
                    For a private test server only
 --fuzz-mode <modes>  With --fuzz, also: malformed-commands, config-commands (CONFIG SET of
                    settings that cannot touch the host's files or ports; set back at the end)
 --fuzz-loglevel <level>  none, error, info (default) or debug
 ";

/// `--help`, in the tool's own layout. The server's name follows the tool.
pub fn help(tool: &str) -> String {
    let (server, scheme) = if tool == "valkey-benchmark" { ("Valkey", "valkey") } else { ("Redis", "redis") };
    let tests: Vec<&str> = super::suite::SUITE.iter().map(|(_, names, _)| names[0]).collect();
    format!(
        "Usage: {tool} [OPTIONS] [COMMAND ARGS...]\n\
         This is respbench {version}'s {tool} front-end: {tool}'s options with their meaning, run by\n\
         respbench (see docs/compatibility.md for what differs).\n\n\
         Options:\n \
         -h <hostname>      Server hostname (default 127.0.0.1)\n \
         -p <port>          Server port (default 6379)\n \
         -s <socket>        Server socket (overrides host and port)\n \
         -a <password>      Password for {server} Auth\n \
         --user <username>  ACL user name ('AUTH username pass'; without -a, no AUTH is sent)\n \
         -u <uri>           Server URI: {scheme}://user:password@host:port/dbnum (all but the host\n                    \
         optional); {scheme}s:// for TLS\n \
         -c <clients>       Number of parallel connections (default 50)\n \
         -n <requests>      Total number of requests (default 100000); with a ';' sequence,\n                    \
         valkey-benchmark counts each command of it\n \
         -d <size>          Data size of SET/GET value in bytes (default 3)\n \
         --dbnum <db>       SELECT the specified db number (default 0)\n \
         -3                 Start session in RESP3 protocol mode\n \
         --threads <num>    Worker threads (default 1)\n \
         --cluster          Cluster mode (put {{tag}} in the keys of your own commands)\n \
         --rfr <mode>       Cluster mode: read from replicas: no, yes or all (default no)\n \
         --enable-tracking  Send CLIENT TRACKING on before the benchmark\n \
         -k <boolean>       1=keep alive 0=reconnect for every request (default 1)\n \
         -r <keyspacelen>   Random keys: __rand_int__ becomes a 12-digit number in 0..keyspacelen-1,\n                    \
         a new one for every command; without -r every request uses one key\n \
         --sequential       With -r: __rand_int__ counts up 0, 1, 2, ... instead of being random\n                    \
         (__rand_1st__ .. __rand_9th__ each their own count): -r N -n N hits each once\n \
         -P <numreq>        Pipeline <numreq> requests (default 1, no pipeline)\n \
         -q                 Quiet: just show requests per second\n \
         --precision        Decimal places of latencies (default 3)\n \
         --csv              Output in CSV format\n \
         -l                 Loop: run the tests forever\n \
         -t <tests>         Only run the comma-separated tests: {tests}\n \
         -I                 Idle mode: open N idle connections and wait\n \
         -x                 Read the last argument from STDIN\n \
         -e                 Show server errors (the first of each kind, on stderr)\n \
         --seed <num>       Seed for the random numbers (default: from the time)\n \
         --shard <I/N>      Run shard I of N of a run spread over N load machines (respbench)\n \
         --shard-count <N>  The number of shards when only the index is given (respbench)\n \
         --start-at <time>  Start the measured phase at this instant (respbench)\n \
         --allow-late-start  Start at once if that instant has passed (respbench)\n \
         --rps <requests>   Requests per second in total (default: as fast as possible); the report\n                    \
         adds the RPS summary (the rate achieved every 250 ms)\n \
         --save-scenario <file.toml>  Write the tests as a scenario, a phase each (respbench run\n                    \
         FILE.toml sends the same commands)\n \
         --duration <secs>  Run each test this long instead of -n requests\n \
         --warmup <secs>    Run each test this long first, unmeasured\n \
         --dataset <file>   CSV or TSV file (with a header) whose rows fill __field:name__\n                    \
         placeholders of the command, a row per command sent, in order\n \
         --maxdocs <num>    Read at most this many rows of the dataset (default: all)\n \
         --mptcp            Connect with multipath TCP (falls back to TCP if the server lacks it)\n \
         --rdma             RDMA transport (respbench: not available)\n \
         {fuzz}--num-functions <n>  valkey-benchmark: functions in the FUNCTION LOAD test's library (default 10)\n \
         --num-keys-in-fcall <n>  valkey-benchmark: keys of the FCALL test (default 1)\n \
         --tls              Connect with TLS (the certificate chain is verified, the host name is not)\n \
         --sni <host>       Server name indication for TLS\n \
         --cacert <file>    CA certificate file to verify with\n \
         --cacertdir <dir>  Directory of trusted CA certificates (PEM files)\n \
         --insecure         Do not verify the server's certificate\n \
         --cert <file>      Client certificate to authenticate with\n \
         --key <file>       Private key file to authenticate with\n \
         --tls-ciphers <list>       TLS 1.2 cipher suites, colon-separated, by their standard names\n \
         --tls-ciphersuites <list>  TLS 1.3 cipher suites, colon-separated, by their standard names\n \
         --help             Output this help and exit\n \
         -v, --version      Output version and exit\n\n\
         Examples:\n   \
         $ {tool} -h 192.168.1.1 -p 6379 -n 100000 -c 20\n   \
         $ {tool} -t set -n 1000000 -r 100000000\n   \
         $ {tool} -r 10000 -n 10000 lpush mylist __rand_int__\n",
        version = env!("CARGO_PKG_VERSION"),
        tests = tests.join(","),
        fuzz = if tool == "valkey-benchmark" { FUZZ_HELP } else { "" },
    )
}
