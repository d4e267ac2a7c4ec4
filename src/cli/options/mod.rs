//! respbench's own options, the plan every front-end fills (a command line, a scenario phase,
//! memtier's and redis-benchmark's tables): what the user typed, then turned into a validated
//! [`Config`].

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{ArgAction, Parser};

use super::parse;
use crate::config::parse::InvalidValue;
use crate::config::{
    ArgPart, CommandSpec, Config, Faults, KeyPattern, KeyRange, Ramp, Rate, ReadFrom, Sequence, ServerOptions,
    StopAfter, Target, TlsOptions, ValueSize,
};

/// A load generator and benchmark for Redis-protocol servers.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "respbench",
    version,
    disable_help_flag = true,
    max_term_width = 100,
    after_help = "Also: respbench ab | fill | report | compare | merge | capacity [OPTIONS]; respbench run FILE.toml; respbench spec SPEC.yml...; respbench recover FILE.journal; respbench memtier ARGS and \
                  respbench redis-benchmark ARGS take those tools' command lines (see README.md and \
                  docs/compatibility.md)."
)]
pub struct Args {
    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,

    /// Server host name or address.
    #[arg(short = 'h', long, default_value = "127.0.0.1", help_heading = "Connection")]
    pub host: String,
    /// Server port.
    #[arg(short = 'p', long, default_value_t = 6379, help_heading = "Connection")]
    pub port: u16,
    /// Unix socket path (instead of host and port).
    #[arg(short = 's', long, value_name = "PATH", help_heading = "Connection")]
    pub socket: Option<PathBuf>,
    /// Password (AUTH) [default: $REDISCLI_AUTH]. Visible in `ps`: prefer --password-file or the variable.
    #[arg(short = 'a', long, help_heading = "Connection")]
    pub password: Option<String>,
    /// Read the password from FILE (its first line), so it stays out of `ps`.
    #[arg(long, value_name = "FILE", conflicts_with = "password", help_heading = "Connection")]
    pub password_file: Option<PathBuf>,
    /// ACL user name (AUTH user password).
    #[arg(long, help_heading = "Connection")]
    pub user: Option<String>,
    /// Database number (SELECT).
    #[arg(long, value_name = "N", help_heading = "Connection")]
    pub db: Option<u32>,
    /// Server URI: redis://[user:password@]host[:port][/db], valkey://..., rediss:// and valkeys://
    /// (TLS), unix:///path.sock[?db=N] (instead of -h, -p, -s, -a, --user, --db).
    #[arg(short = 'u', long, value_parser = parse::uri, value_name = "URI",
          conflicts_with_all = ["host", "port", "socket", "password", "password_file", "user", "db"], help_heading = "Connection")]
    pub uri: Option<parse::Uri>,
    /// Speak RESP3 (HELLO 3).
    #[arg(short = '3', long, help_heading = "Connection")]
    pub resp3: bool,
    /// Cluster mode: discover the slot map from the server given, route each key to its slot's
    /// node, follow MOVED and ASK.
    #[arg(long, help_heading = "Connection")]
    pub cluster: bool,
    /// Cluster mode: send reads to replicas (READONLY): no, yes (a replica of the slot's shard),
    /// all (the primary and its replicas in turn).
    #[arg(long, value_enum, default_value = "no", value_name = "no|yes|all", help_heading = "Connection")]
    pub read_from_replicas: ReadFromArg,
    /// Connecting, logging in and the checks before the run, all together, may take this long;
    /// also the longest wait for each connect and login reply [default: 5s; 500ms when
    /// reconnecting].
    #[arg(long, value_parser = parse::duration, value_name = "D", help_heading = "Connection")]
    pub connect_timeout: Option<Duration>,
    /// Connect with TLS (certificate verified against --cacert, else the system's CAs).
    #[arg(long, help_heading = "TLS")]
    pub tls: bool,
    /// CA certificates (PEM) that sign the server's certificate.
    #[arg(long, value_name = "FILE", help_heading = "TLS")]
    pub cacert: Option<PathBuf>,
    /// Client certificate (PEM), for servers with tls-auth-clients.
    #[arg(long, value_name = "FILE", requires = "key", help_heading = "TLS")]
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM).
    #[arg(long, value_name = "FILE", requires = "cert", help_heading = "TLS")]
    pub key: Option<PathBuf>,
    /// Server name to ask for and verify (default: the host).
    #[arg(long, value_name = "NAME", help_heading = "TLS")]
    pub sni: Option<String>,
    /// Accept any server certificate (no verification).
    #[arg(long, alias = "insecure", help_heading = "TLS")]
    pub tls_skip_verify: bool,
    /// Verify the certificate chain but not that the certificate names the host.
    #[arg(long, help_heading = "TLS")]
    pub tls_skip_hostname: bool,
    /// TLS versions allowed, comma-separated: 1.2, 1.3 [default: both].
    #[arg(long, value_parser = parse_tls_versions, value_name = "LIST", help_heading = "TLS")]
    pub tls_versions: Option<TlsVersions>,
    /// TLS cipher suites allowed, colon-separated standard names (TLS13_AES_128_GCM_SHA256,
    /// TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256) [default: rustls's].
    #[arg(long, value_name = "LIST", help_heading = "TLS")]
    pub tls_ciphers: Option<String>,
    /// Make a full handshake on every connection and reconnect: no session resumed (tickets,
    /// session IDs) from an earlier connection [default: resumed, as long-lived clients do].
    #[arg(long, help_heading = "TLS")]
    pub no_tls_resumption: bool,

    /// First wait before reconnecting a dropped connection (doubles per failed attempt, up to 500 ms or D).
    #[arg(long, value_parser = parse::duration, default_value = "100ms", value_name = "D", help_heading = "Faults")]
    pub reconnect_backoff: Duration,
    /// Reconnect attempts per outage before a connection gives up [default: until the run ends;
    /// 30 for a counted run].
    #[arg(long, value_name = "N", help_heading = "Faults")]
    pub max_reconnects: Option<u32>,
    /// Send a request in flight on a dropped connection again, up to N times, instead of
    /// counting it failed (with --retry-errors, one answered with an error too).
    #[arg(long, default_value_t = 0, value_name = "N", help_heading = "Faults")]
    pub retry: u32,
    /// Send a request answered with an error reply again too, under --retry's count, unless
    /// the error is permanent (WRONGTYPE, NOAUTH, NOPERM, WRONGPASS, a syntax error, wrong
    /// arguments, an unknown command).
    #[arg(long, help_heading = "Faults")]
    pub retry_errors: bool,
    /// With --retry-errors, only error replies starting with one of these, comma-separated
    /// (LOADING,BUSY,TRYAGAIN) [default: every error not permanent].
    #[arg(long, value_name = "LIST", value_delimiter = ',', requires = "retry_errors", help_heading = "Faults")]
    pub retry_error_prefixes: Vec<String>,
    /// Wait this long before sending a request answered with an error again [default: at once].
    #[arg(long, value_parser = parse::duration, value_name = "D", help_heading = "Faults")]
    pub retry_backoff: Option<Duration>,
    /// Multiply --retry-backoff by F for each further try (0: the same wait each time; at
    /// most 60 s).
    #[arg(long, default_value_t = 0.0, value_name = "F", help_heading = "Faults")]
    pub retry_backoff_factor: f64,
    /// Requests a connection may hold waiting to be sent again; when full it sends nothing
    /// new until one has gone [default: 0, max(pipeline x 4, 64)].
    #[arg(long, default_value_t = 0, value_name = "N", help_heading = "Faults")]
    pub max_retry_queue: usize,
    /// Write every request given up (its error reply kept, or lost with its connection) as
    /// CSV: timestamp,command,key,status,retries.
    #[arg(long, value_name = "FILE", help_heading = "Faults")]
    pub failed_keys: Option<PathBuf>,
    /// A request without a reply after D fails as a timeout (its connection reconnects).
    #[arg(long = "request-timeout", alias = "timeout", value_parser = parse::duration, value_name = "D",
          help_heading = "Faults")]
    pub timeout: Option<Duration>,
    /// Multiply the wait between reconnect attempts by F after each failed one [default: 2,
    /// up to 500 ms or D; with F given, up to 60 s].
    #[arg(long, value_name = "F", help_heading = "Faults")]
    pub reconnect_backoff_factor: Option<f64>,
    /// Close and reopen each connection after N replies (redis-benchmark -k 0 is N = 1).
    #[arg(long, value_parser = parse::positive, value_name = "N", help_heading = "Faults")]
    pub reconnect_every: Option<u64>,
    /// Largest bulk string or aggregate a reply may declare; beyond it the connection is closed
    /// with a protocol error (the server's proto-max-bulk-len).
    #[arg(long, value_parser = parse::size, default_value = "512MiB", value_name = "SIZE", help_heading = "Faults")]
    pub max_reply_size: usize,
    /// Exit 1 if any request failed (for CI pipelines).
    #[arg(long, help_heading = "Faults")]
    pub fail_on_errors: bool,
    /// Exit 1 if more than this fraction of requests failed (0.01 = 1 %).
    #[arg(long, value_parser = super::parse::fraction, value_name = "R", help_heading = "Faults")]
    pub max_error_rate: Option<f64>,

    /// Connections in total, spread over the threads.
    #[arg(short = 'c', long, default_value = "50", value_parser = parse::positive, help_heading = "Load")]
    pub connections: u64,
    /// Worker threads [default: the number of cores].
    #[arg(long, value_parser = parse::positive, help_heading = "Load")]
    pub threads: Option<u64>,
    /// Requests in flight per connection.
    #[arg(short = 'P', long, default_value = "1", value_parser = parse::positive, help_heading = "Load")]
    pub pipeline: u64,
    /// Total requests (100k accepted), or `allkeys`: every key of the range once (a fill).
    #[arg(short = 'n', long, value_name = "N|allkeys", help_heading = "Load")]
    pub requests: Option<String>,
    /// Run for this long instead of a request count (30s, 5m).
    #[arg(long, value_parser = parse::duration, conflicts_with = "requests", help_heading = "Load")]
    pub duration: Option<Duration>,
    /// Staircase ramp: start with N of the connections, add --connections-step more every
    /// --step-duration (needs --duration).
    #[arg(long, value_parser = parse::positive, value_name = "N", help_heading = "Load")]
    pub connections_start: Option<u64>,
    /// Staircase ramp: connections added at each step.
    #[arg(long, value_parser = parse::positive, value_name = "N", help_heading = "Load")]
    pub connections_step: Option<u64>,
    /// Staircase ramp: time between steps (1s, 500ms).
    #[arg(long, value_parser = parse::duration, value_name = "D", help_heading = "Load")]
    pub step_duration: Option<Duration>,

    /// SET:GET weights [default: 1:10; with -n allkeys, 1:0].
    #[arg(long, value_parser = parse::ratio, help_heading = "Workload")]
    pub ratio: Option<(u32, u32)>,
    /// Key name prefix.
    #[arg(long, default_value = "key:", help_heading = "Workload")]
    pub key_prefix: String,
    /// Smallest key number.
    #[arg(long, default_value = "0", value_parser = parse::count, help_heading = "Workload")]
    pub key_min: u64,
    /// Largest key number.
    #[arg(long, default_value = "9999999", value_parser = parse::count, help_heading = "Workload")]
    pub key_max: u64,
    /// Key pattern, one letter or SET:GET: S sequential, R random, G gaussian, Z zipf, P parallel
    /// [default: R; with -n allkeys, P].
    #[arg(long, value_parser = parse::key_patterns, value_name = "P|S:G", help_heading = "Workload")]
    pub key_pattern: Option<(char, char)>,
    /// Gaussian pattern's median key [default: the middle of the range].
    #[arg(long, help_heading = "Workload")]
    pub key_median: Option<f64>,
    /// Gaussian pattern's standard deviation [default: range / 6].
    #[arg(long, help_heading = "Workload")]
    pub key_stddev: Option<f64>,
    /// Zipf pattern's exponent (above 0; larger is more skewed).
    #[arg(long, default_value_t = 1.0, help_heading = "Workload")]
    pub zipf_exponent: f64,
    /// Value size in bytes.
    #[arg(short = 'd', long, value_parser = parse::size, default_value = "32",
          conflicts_with_all = ["data_size_range", "data_size_list"], help_heading = "Workload")]
    pub data_size: usize,
    /// Value sizes drawn uniformly from MIN-MAX bytes.
    #[arg(long, value_parser = parse::range, conflicts_with_all = ["data_size_list"], help_heading = "Workload")]
    pub data_size_range: Option<(u64, u64)>,
    /// Weighted value sizes: SIZE:WEIGHT,...
    #[arg(long, value_parser = parse::size_list, help_heading = "Workload")]
    pub data_size_list: Option<parse::SizeList>,
    /// A command with placeholders, repeatable: __key__ (a key from its key pattern),
    /// __data__ (the value), __rand_int__ (a fresh 12-digit number in the key range),
    /// __rand_1st__ .. __rand_9th__ (shared within the command), {tag} (cluster hash tag).
    /// Commands separated by ' ; ' form a sequence sent as one unit ("MULTI ; SET k v ; 4 GET k ; EXEC").
    #[arg(long, value_name = "\"CMD ARGS\"", help_heading = "Workload")]
    pub command: Vec<String>,
    /// Send the --command commands inline (words and CRLF) instead of as RESP arrays.
    #[arg(long, help_heading = "Workload")]
    pub inline: bool,
    /// Send __rand_int__ in --command as written, not drawn: one key, as redis-benchmark without -r.
    #[arg(long, help_heading = "Workload")]
    pub literal_rand_int: bool,
    /// __rand_int__ and __rand_1st__ .. __rand_9th__ count up through the key range instead of
    /// being drawn, each its own counter, the connections' counts interleaved: -n N over a range
    /// of N numbers sends each once (valkey-benchmark's --sequential).
    #[arg(long, help_heading = "Workload")]
    pub rand_sequential: bool,
    /// Each rotation of the --command entries (in order, each its --command-ratio times) is one
    /// unit on one connection, whose keyed commands all use one key (in cluster mode the whole
    /// unit goes to that key's shard); an EXEC answered with a null array counts as an abort.
    #[arg(long, help_heading = "Workload")]
    pub transaction: bool,
    /// A CSV or TSV file with a header whose rows fill the --command's __field:NAME__
    /// placeholders (__field:NAME:base64__ decoded), one row per command sent, in order.
    #[arg(long, value_name = "FILE", help_heading = "Workload")]
    pub dataset: Option<PathBuf>,
    /// Read at most N rows of --dataset [default: all].
    #[arg(long, value_name = "N", value_parser = parse::positive, requires = "dataset", help_heading = "Workload")]
    pub dataset_rows: Option<u64>,
    /// The weight of the --command in the same position [default: 1].
    #[arg(long, value_name = "N", help_heading = "Workload")]
    pub command_ratio: Vec<u32>,
    /// The key pattern of the --command in the same position (S, R, G, Z, P) [default: R].
    #[arg(long, value_parser = parse::key_patterns, value_name = "P", help_heading = "Workload")]
    pub command_key_pattern: Vec<(char, char)>,
    /// Random value bytes instead of repeated 'x'.
    #[arg(long, help_heading = "Workload")]
    pub random_data: bool,
    /// SET with EX seconds drawn from MIN-MAX.
    #[arg(long, value_parser = parse::range, help_heading = "Workload")]
    pub expiry_range: Option<(u64, u64)>,
    /// Seed for every random choice; each connection derives its own stream [default: random].
    #[arg(long, help_heading = "Workload")]
    pub seed: Option<u64>,
    /// Every connection draws the same random stream (memtier without --distinct-client-seed).
    #[arg(long, hide = true)]
    pub same_stream_per_connection: bool,
    /// A pause of MIN-MAX microseconds between the connections each thread opens.
    #[arg(long, value_parser = parse::range, value_name = "MIN-MAX", hide = true)]
    pub connect_jitter_us: Option<(u64, u64)>,
    /// A client group of the run, NAME:KIND:KEY=VALUE,... (pubsub: channels, subscribers,
    /// publishers, rate, mode=subscribe|psubscribe|ssubscribe, size; tracking: writers, readers,
    /// keys, rate, reads, mode=default|bcast|optin, prefix, cache, size; stream: producers,
    /// consumers, rate, count, block, ack=xack|noack, group, size; queue: producers, workers,
    /// rate, command=bzpopmin|blpop|brpop|blmove, size); the run's own mix does not run, unless
    /// NAME:mix names it as a role of its own (its -c, -t, --pipeline, --rate, keys and sizes).
    /// Given again, each role (one of each kind) is a client group of the one run.
    #[arg(long, value_parser = crate::config::role::parse, value_name = "NAME:KIND:SETTINGS",
          help_heading = "Workload")]
    pub role: Vec<crate::config::role::Role>,
    /// memtier's workload options (hidden: the memtier front-end sets them, scenario files may give them).
    #[command(flatten)]
    pub memtier: super::memtier::mix::WorkloadFlags,
    /// Shards over several load machines, and their common start.
    #[command(flatten)]
    pub shards: super::shard::ShardFlags,
    /// --setup, and the field and member spaces.
    #[command(flatten)]
    pub arguments: argument_flags::ArgumentFlags,
    /// --save-scenario and --metrics-listen.
    #[command(flatten)]
    pub scenario: super::scenario::flags::ScenarioFlags,

    /// Open loop: this many requests per second in total (50k accepted), divided over the
    /// connections; latency counts from each request's intended send time.
    #[arg(long, value_parser = parse::positive, value_name = "PER_SEC", help_heading = "Pacing")]
    pub rate: Option<u64>,
    /// Gaps between a connection's sends at --rate: constant, or poisson (exponential gaps).
    #[arg(long, value_enum, default_value = "constant", requires = "rate", help_heading = "Pacing")]
    pub arrival: Arrival,
    /// Run the load this long first and keep it out of every figure (10s, 500ms).
    #[arg(long, value_parser = parse::duration, help_heading = "Pacing")]
    pub warmup: Option<Duration>,
    /// Repeat the measured phase N times; the report gives the median and spread.
    #[arg(long, default_value = "1", value_parser = parse::positive, help_heading = "Pacing")]
    pub runs: u64,

    /// Write the result as JSON (schema: docs/json-schema.json).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub json: Option<PathBuf>,
    /// Write the text report to FILE instead of standard output.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub out_file: Option<PathBuf>,
    /// Latency percentiles the text table shows, comma-separated.
    #[arg(long, value_parser = parse::percentiles, default_value = "50,99,99.9", value_name = "LIST",
          help_heading = "Output")]
    pub percentiles: parse::Percentiles,
    /// Print one summary line instead of the table.
    #[arg(short = 'q', long, help_heading = "Output")]
    pub quiet: bool,
    /// Print the live line once per interval on stderr, one line each, also when stderr is not
    /// a terminal (CI logs, batch jobs)
    #[arg(long, help_heading = "Output")]
    pub progress: bool,
    /// Write an HdrHistogram interval log (V2; microseconds; tags `response` and `service`).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub hdr_log: Option<PathBuf>,
    /// Write a self-contained HTML report (charts inline; opens offline).
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub html: Option<PathBuf>,
    /// Write the summary table as CSV.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub csv: Option<PathBuf>,
    /// Write the per-interval time series as CSV.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub csv_timeline: Option<PathBuf>,
    /// Write the summary as a Markdown table.
    #[arg(long, value_name = "FILE", help_heading = "Output")]
    pub markdown: Option<PathBuf>,
    /// A name for this result in comparisons and reports.
    #[arg(long, help_heading = "Output")]
    pub label: Option<String>,
    #[command(flatten)]
    pub session: session_flags::SessionFlags,
    #[command(flatten)]
    pub wire: protocol_flags::ProtocolFlags,
    /// Print what connecting and reconnecting do on stderr.
    #[arg(long, hide = true, help_heading = "Output")]
    pub debug: bool,
    /// Send live metrics each interval to this StatsD host (UDP; memtier's metric names).
    #[arg(long, value_name = "HOST", help_heading = "Output")]
    pub statsd_host: Option<String>,
    /// StatsD UDP port.
    #[arg(long, default_value_t = 8125, value_parser = clap::value_parser!(u16).range(1..), value_name = "PORT",
          requires = "statsd_host", help_heading = "Output")]
    pub statsd_port: u16,
    /// Prefix of the StatsD metric names.
    #[arg(long, default_value = "memtier", value_name = "PREFIX", requires = "statsd_host", help_heading = "Output")]
    pub statsd_prefix: String,
    /// Label of this run in the metric names (PREFIX.LABEL.name) and Graphite events.
    #[arg(long, default_value = "default", value_name = "LABEL", requires = "statsd_host", help_heading = "Output")]
    pub statsd_run_label: String,
    /// Graphite HTTP port on the StatsD host, for start and end event annotations.
    #[arg(long, default_value_t = 8080, value_parser = clap::value_parser!(u16).range(1..), value_name = "PORT",
          requires = "statsd_host", help_heading = "Output")]
    pub graphite_port: u16,
}

/// `--tls-versions`: the protocol numbers allowed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsVersions(pub Vec<u16>);

pub(crate) fn parse_tls_versions(s: &str) -> Result<TlsVersions, InvalidValue> {
    let versions = s
        .split(',')
        .map(|v| match v.trim().to_ascii_lowercase().trim_start_matches("tlsv") {
            "1.2" => Ok(0x0303),
            "1.3" => Ok(0x0304),
            "1" | "1.0" | "1.1" => {
                Err(format!("TLS version '{v}' is not offered: respbench (rustls) speaks TLS 1.2 and 1.3 only").into())
            }
            _ => Err(format!("'{v}' is not a TLS version: expected 1.2, 1.3 or both (1.2,1.3)").into()),
        })
        .collect::<Result<Vec<u16>, InvalidValue>>()?;
    Ok(TlsVersions(versions))
}

/// How arrivals are spaced at a fixed rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Arrival {
    Constant,
    Poisson,
}

/// `--read-from-replicas`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReadFromArg {
    No,
    Yes,
    All,
}

/// Where the results go, apart from the run itself.
#[derive(Debug, Clone, Default)]
pub struct Output {
    pub json: Option<PathBuf>,
    pub out_file: Option<PathBuf>,
    pub percentiles: Vec<f64>,
    pub memtier_json: Option<PathBuf>,
    pub quiet: bool,
    /// The live line once per interval, even off a terminal.
    pub progress: bool,
    pub hdr_log: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    pub csv_timeline: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// `--failed-keys`: the requests given up, as CSV.
    pub failed_keys: Option<PathBuf>,
    pub label: Option<String>,
    /// Repetitions of the measured phase.
    pub runs: usize,
    /// Exit 1 when any request failed, or more than this fraction did.
    pub fail_on_errors: bool,
    pub max_error_rate: Option<f64>,
    /// `--command` was given (memtier lays such runs out differently).
    pub arbitrary: bool,
    /// The run came through memtier's command line: messages in memtier's words.
    pub memtier_front_end: bool,
    /// respbench's own notes: kept for the JSON, said on stderr unless a front-end runs it.
    pub notes: super::notes::Notes,
    /// Live metrics to StatsD (and Graphite events).
    pub statsd: Option<crate::report::live::statsd::Options>,
    /// `--data-verify`: read back what was written after the run; `--verify-only`: instead of it.
    pub verify: bool,
    pub verify_only: bool,
    /// --save-scenario and --metrics-listen.
    pub scenario: super::scenario::flags::ScenarioFlags,
}

impl Output {
    /// The files the run writes, each with the flag that named it (memtier's name under
    /// memtier's command line): what is checked before the run and whose `-` moves the report
    /// a person reads to standard error.
    pub fn files(&self) -> Vec<(&'static str, &Path)> {
        let memtier = self.memtier_front_end;
        [
            ("--out-file", &self.out_file),
            ("--json", &self.json),
            (if memtier { "--json-out-file" } else { "--memtier-json" }, &self.memtier_json),
            ("--hdr-log", &self.hdr_log),
            ("--html", &self.html),
            ("--csv", &self.csv),
            ("--csv-timeline", &self.csv_timeline),
            ("--markdown", &self.markdown),
            (if memtier { "--failed-keys-file" } else { "--failed-keys" }, &self.failed_keys),
            ("--save-scenario", &self.scenario.save_scenario),
        ]
        .into_iter()
        .filter_map(|(flag, path)| Some((flag, path.as_deref()?)))
        .collect()
    }

    /// One of the files is `-`: the report a person reads goes to standard error.
    pub fn takes_stdout(&self) -> bool {
        self.files().iter().any(|(_, path)| crate::report::output::is_stdout(path))
    }
}

mod argument_flags;
mod build;
mod defaults;
pub(crate) mod error;
pub mod protocol_flags;
pub mod session_flags;
pub use error::OptionsError;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(Config, Output), OptionsError> {
        let mut argv = vec!["respbench"];
        argv.extend_from_slice(args);
        Args::try_parse_from(argv).map_err(|e| e.to_string())?.into_config()
    }

    #[test]
    fn defaults_follow_the_issue() {
        let (c, out) = parse(&[]).unwrap();
        assert_eq!(c.connections, 50);
        assert_eq!(c.pipeline, 1);
        assert_eq!(c.stop, StopAfter::Requests(100_000));
        assert_eq!(c.commands.iter().map(|c| c.weight).collect::<Vec<_>>(), vec![1, 10]);
        assert_eq!(c.server.target, Target::Tcp { host: "127.0.0.1".into(), port: 6379 });
        assert!(!out.quiet);
    }

    #[test]
    fn allkeys_means_a_fill() {
        let (c, _) = parse(&["-n", "allkeys", "--key-min", "1", "--key-max", "100"]).unwrap();
        assert_eq!(c.stop, StopAfter::AllKeys);
        assert_eq!(c.commands.len(), 1);
        assert_eq!(c.commands[0].key_pattern, KeyPattern::Parallel);
    }

    #[test]
    fn bad_values_name_the_value() {
        assert!(parse(&["-P", "0"]).unwrap_err().contains("'0'"));
        assert!(parse(&["-n", "lots"]).unwrap_err().contains("'lots'"));
        assert!(parse(&["--key-min", "5", "--key-max", "1"]).unwrap_err().contains("--key-min 5"));
        assert!(parse(&["-n", "10", "--duration", "5s"]).is_err());
        assert!(parse(&["--user", "bob"]).is_err());
    }

    #[test]
    fn literal_rand_int_names_one_key() {
        use crate::config::ArgPart;
        let get = ["--command", "GET key:__rand_int__"];
        let (drawn, _) = parse(&get).unwrap();
        assert_eq!(drawn.commands[0].args[1], [ArgPart::Lit(b"key:".to_vec()), ArgPart::RandInt]);
        let (literal, _) = parse(&[get[0], get[1], "--literal-rand-int"]).unwrap();
        let written = [ArgPart::Lit(b"key:".to_vec()), ArgPart::Lit(b"__rand_int__".to_vec())];
        assert_eq!(literal.commands[0].args[1], written);
        let (sequence, _) =
            parse(&["--command", "SET key:__rand_int__ v ; GET key:__rand_int__", "--literal-rand-int"]).unwrap();
        assert!(sequence.commands.iter().all(|c| c.args[1] == written));
    }

    #[test]
    fn retry_flags_set_the_engines_retry_and_name_bad_values() {
        let (c, out) = parse(&[
            "--retry",
            "3",
            "--retry-errors",
            "--retry-error-prefixes",
            "LOADING,BUSY",
            "--retry-backoff",
            "10ms",
            "--retry-backoff-factor",
            "2",
            "--failed-keys",
            "f.csv",
        ])
        .unwrap();
        assert_eq!((c.faults.retry, c.faults.retry_errors, c.faults.failed_keys), (3, true, true));
        assert_eq!((c.faults.retry_backoff, c.faults.retry_backoff_factor), (Duration::from_millis(10), 2.0));
        assert_eq!(c.extras.retry_on, ["LOADING", "BUSY"]);
        assert_eq!(out.failed_keys.as_deref(), Some(Path::new("f.csv")));
        assert!(parse(&["--retry-backoff-factor", "0.5"]).unwrap_err().contains("--retry-backoff-factor 0.5"));
        assert!(parse(&["--retry-error-prefixes", "LOADING"]).is_err(), "needs --retry-errors");
        let (c, _) = parse(&["--retry-backoff", "10m"]).unwrap();
        assert_eq!(c.faults.retry_backoff, crate::config::MAX_BACKOFF);
    }

    #[test]
    fn threads_never_exceed_connections() {
        let (c, _) = parse(&["-c", "1", "--threads", "4"]).unwrap();
        assert_eq!(c.threads, 1);
    }
}
