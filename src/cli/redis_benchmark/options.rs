//! redis-benchmark's and valkey-benchmark's options, what each becomes in respbench, and the
//! usage and version text each tool prints in its own style.

use crate::cli::dialect::Spec;

/// What one redis-benchmark option becomes.
pub enum Map {
    /// The same meaning under respbench's name: the value is passed on.
    Flag(&'static str),
    /// Taken care of below.
    Special,
    /// Not supported yet, with why.
    Unsupported(&'static str),
}

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
    opt(&["c"], true, Map::Flag("--connections")),
    opt(&["n"], true, Map::Special),
    opt(&["d"], true, Map::Flag("--data-size")),
    opt(&["dbnum"], true, Map::Special),
    opt(&["3"], false, Map::Flag("--resp3")),
    opt(&["threads"], true, Map::Flag("--threads")),
    opt(&["k"], true, Map::Special),
    opt(&["r"], true, Map::Special),
    opt(&["P"], true, Map::Flag("--pipeline")),
    opt(&["q"], false, Map::Special),
    opt(&["precision"], true, Map::Special),
    opt(&["csv"], false, Map::Special),
    opt(&["l"], false, Map::Special),
    opt(&["t"], true, Map::Special),
    opt(&["I"], false, Map::Special),
    opt(&["x"], false, Map::Special),
    opt(&["seed"], true, Map::Flag("--seed")),
    // Several load machines as one run (respbench's own).
    opt(&["shard"], true, Map::Flag("--shard")),
    opt(&["shard-count"], true, Map::Flag("--shard-count")),
    opt(&["start-at"], true, Map::Flag("--start-at")),
    opt(&["allow-late-start"], false, Map::Flag("--allow-late-start")),
    opt(&["rps"], true, Map::Flag("--rate")),
    opt(&["save-scenario"], true, Map::Flag("--save-scenario")),
    // respbench's own notes on stderr (how TLS is verified); without it stderr is the tool's.
    opt(&["notes"], false, Map::Special),
    opt(&["duration"], true, Map::Special),
    opt(&["warmup"], true, Map::Special),
    opt(&["cluster"], false, Map::Flag("--cluster")),
    opt(&["enable-tracking"], false, Map::Flag("--enable-tracking")),
    opt(&["rfr"], true, Map::Flag("--read-from-replicas")),
    opt(&["e"], false, Map::Special),
    opt(&["rdma"], false, Map::Unsupported("no RDMA device: respbench connects over TCP or a unix socket")),
    opt(&["tls"], false, Map::Flag("--tls")),
    opt(&["sni"], true, Map::Flag("--sni")),
    opt(&["cacert"], true, Map::Flag("--cacert")),
    opt(&["cacertdir"], true, Map::Flag("--cacert")),
    opt(&["insecure"], false, Map::Flag("--tls-skip-verify")),
    opt(&["cert"], true, Map::Flag("--cert")),
    opt(&["key"], true, Map::Flag("--key")),
    opt(&["tls-ciphers"], true, Map::Special),
    opt(&["tls-ciphersuites"], true, Map::Special),
    opt(&["mptcp"], false, Map::Flag("--mptcp")),
    opt(&["num-functions"], true, Map::Special),
    opt(&["num-keys-in-fcall"], true, Map::Special),
    opt(&["help"], false, Map::Special),
    opt(&["version"], false, Map::Special),
];

/// `--version`, as the tool prints it, naming respbench.
pub fn version(tool: &str) -> String {
    format!("{tool} respbench-{} (respbench's {tool} front-end)\n", env!("CARGO_PKG_VERSION"))
}

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
         --rps <requests>   Requests per second in total (default: as fast as possible)\n \
         --save-scenario <file.toml>  Write the tests as a scenario, a phase each (respbench run\n                    \
         FILE.toml sends the same commands)\n \
         --duration <secs>  Run each test this long instead of -n requests\n \
         --warmup <secs>    Run each test this long first, unmeasured\n \
         --mptcp            Connect with multipath TCP (falls back to TCP if the server lacks it)\n \
         --rdma             RDMA transport (respbench: not available)\n \
         --num-functions <n>  valkey-benchmark: functions in the FUNCTION LOAD test's library (default 10)\n \
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
         --version          Output version and exit\n\n\
         Examples:\n   \
         $ {tool} -h 192.168.1.1 -p 6379 -n 100000 -c 20\n   \
         $ {tool} -t set -n 1000000 -r 100000000\n   \
         $ {tool} -r 10000 -n 10000 lpush mylist __rand_int__\n",
        version = env!("CARGO_PKG_VERSION"),
        tests = tests.join(","),
    )
}
