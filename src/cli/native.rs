//! respbench's own flags: what the user typed, then turned into a validated [`Config`].

use std::path::PathBuf;
use std::time::Duration;

use clap::{ArgAction, Parser};

use super::parse;
use crate::config::{
    ArgPart, CommandSpec, Config, Faults, KeyPattern, KeyRange, Ramp, Rate, ReadFrom, Sequence, ServerOptions,
    StopAfter, Target, TlsOptions, ValueSize,
};

/// A load generator and benchmark for Redis-protocol servers.
#[derive(Debug, Parser)]
#[command(
    name = "respbench",
    version,
    disable_help_flag = true,
    max_term_width = 100,
    after_help = "Also: respbench fill | report | compare | capacity [OPTIONS]; respbench run FILE.toml; respbench memtier ARGS and \
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

    /// First wait before reconnecting a dropped connection (doubles per failed attempt, up to 500 ms or D).
    #[arg(long, value_parser = parse::duration, default_value = "100ms", value_name = "D", help_heading = "Faults")]
    pub reconnect_backoff: Duration,
    /// Reconnect attempts per outage before a connection gives up [default: until the run ends;
    /// 30 for a counted run].
    #[arg(long, value_name = "N", help_heading = "Faults")]
    pub max_reconnects: Option<u32>,
    /// Send a request in flight on a dropped connection again, up to N times, instead of
    /// counting it failed.
    #[arg(long, default_value_t = 0, value_name = "N", help_heading = "Faults")]
    pub retry: u32,
    /// A request without a reply after D fails as a timeout (its connection reconnects).
    #[arg(long = "request-timeout", alias = "timeout", value_parser = parse::duration, value_name = "D",
          help_heading = "Faults")]
    pub timeout: Option<Duration>,
    /// Multiply the wait between reconnect attempts by F after each failed one [default: 2,
    /// up to 500 ms or D; with F given, up to 30 s].
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
    #[arg(long, value_parser = super::exit::fraction, value_name = "R", help_heading = "Faults")]
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
    /// memtier's workload options (hidden; the memtier front-end passes them on).
    #[command(flatten)]
    pub memtier: super::mix::WorkloadFlags,
    /// Shards over several load machines, and their common start.
    #[command(flatten)]
    pub shards: super::shard::ShardFlags,
    /// --save-scenario and --metrics-listen.
    #[command(flatten)]
    pub scenario: super::scenario_flags::ScenarioFlags,

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
    /// memtier_benchmark's JSON layout (the memtier front-end's --json-out-file).
    #[arg(long, value_name = "FILE", hide = true, requires = "memtier_text")]
    pub memtier_json: Option<PathBuf>,
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
    /// The memtier front-end: memtier's text report and progress lines.
    #[arg(long, hide = true)]
    pub memtier_text: bool,
    /// memtier's --hide-histogram.
    #[arg(long, hide = true, requires = "memtier_text")]
    pub memtier_hide_histogram: bool,
    /// memtier's --print-all-runs.
    #[arg(long, hide = true, requires = "memtier_text")]
    pub memtier_print_all_runs: bool,
    /// memtier's --command-stats-breakdown=line.
    #[arg(long, hide = true, requires = "memtier_text")]
    pub memtier_by_line: bool,
    /// memtier's --hdr-file-prefix=PREFIX.
    #[arg(long, hide = true, value_name = "PREFIX", requires = "memtier_text")]
    pub memtier_hdr_prefix: Option<String>,
    #[command(flatten)]
    pub memtier_out: super::memtier_out::MemtierOutputFlags,
    #[command(flatten)]
    pub session: super::session_flags::SessionFlags,
    /// Print what connecting and reconnecting do on stderr.
    #[arg(long, hide = true)]
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

fn parse_tls_versions(s: &str) -> Result<TlsVersions, String> {
    let versions = s
        .split(',')
        .map(|v| match v.trim().to_ascii_lowercase().trim_start_matches("tlsv") {
            "1.2" => Ok(0x0303),
            "1.3" => Ok(0x0304),
            "1" | "1.0" | "1.1" => {
                Err(format!("TLS version '{v}' is not offered: respbench (rustls) speaks TLS 1.2 and 1.3 only"))
            }
            _ => Err(format!("'{v}' is not a TLS version: expected 1.2, 1.3 or both (1.2,1.3)")),
        })
        .collect::<Result<Vec<u16>, String>>()?;
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
    pub label: Option<String>,
    /// Repetitions of the measured phase.
    pub runs: usize,
    /// Exit 1 when any request failed, or more than this fraction did.
    pub fail_on_errors: bool,
    pub max_error_rate: Option<f64>,
    /// The memtier front-end's outputs, instead of respbench's text report.
    pub memtier: Option<crate::report::memtier_stats::MemtierOutput>,
    /// `--command` was given (memtier lays such runs out differently).
    pub arbitrary: bool,
    /// `--debug`: connection events on stderr.
    pub debug: bool,
    /// The run came through memtier's command line: messages in memtier's words.
    pub memtier_front_end: bool,
    /// Live metrics to StatsD (and Graphite events).
    pub statsd: Option<crate::report::statsd::Options>,
    /// `--data-verify`: read back what was written after the run; `--verify-only`: instead of it.
    pub verify: bool,
    pub verify_only: bool,
    /// --save-scenario and --metrics-listen.
    pub scenario: super::scenario_flags::ScenarioFlags,
    /// Live metrics already served (a scenario serves one endpoint for all its phases).
    pub metrics: Option<std::sync::Arc<crate::report::metrics::Live>>,
}

impl Args {
    /// Checks what clap cannot and builds the plan.
    pub fn into_config(self) -> Result<(Config, Output), String> {
        if self.key_min > self.key_max {
            return Err(format!("--key-min {} is above --key-max {}", self.key_min, self.key_max));
        }
        if !(self.zipf_exponent > 0.0 && self.zipf_exponent.is_finite()) {
            return Err(format!("--zipf-exponent {} must be a number above 0", self.zipf_exponent));
        }
        if let Some(stddev) = self.key_stddev
            && !(stddev > 0.0 && stddev.is_finite())
        {
            return Err(format!("--key-stddev {stddev} must be a number above 0"));
        }
        let stop = match (self.requests.as_deref(), self.duration) {
            (Some("allkeys"), _) => StopAfter::AllKeys,
            (Some(n), _) => {
                StopAfter::Requests(parse::positive(n).map_err(|e| format!("invalid value for '--requests': {e}"))?)
            }
            (None, Some(d)) => StopAfter::Duration(d),
            (None, None) => StopAfter::Requests(100_000),
        };
        let fill = stop == StopAfter::AllKeys;
        let ramp = self.ramp(&stop)?;
        if fill && self.warmup.is_some() {
            return Err("--warmup cannot be used with -n allkeys: a fill writes every key exactly once".into());
        }
        if fill && self.runs > 1 {
            return Err("--runs cannot be used with -n allkeys: a fill writes every key exactly once".into());
        }
        let (set_weight, get_weight) = self.ratio.unwrap_or(if fill { (1, 0) } else { (1, 10) });
        let (set_letter, get_letter) = self.key_pattern.unwrap_or(if fill { ('P', 'P') } else { ('R', 'R') });
        let pattern = |letter: char| match letter {
            'S' => KeyPattern::Sequential,
            'G' => KeyPattern::Gaussian { median: self.key_median, stddev: self.key_stddev },
            'Z' => KeyPattern::Zipf { exponent: self.zipf_exponent },
            'P' => KeyPattern::Parallel,
            _ => KeyPattern::Random,
        };
        let mut sequence = None;
        self.memtier.check(!self.command.is_empty(), self.cluster, self.data_size_range.is_some())?;
        let mut extras = self.memtier.extras(!self.command.is_empty())?;
        extras.client_stats = self.memtier_out.memtier_client_stats.is_some();
        let commands = if self.command.is_empty() {
            self.memtier.default_mix(&super::mix::Mix {
                set_weight,
                get_weight,
                set_pattern: pattern(set_letter),
                get_pattern: pattern(get_letter),
                expiry: self.expiry_range.is_some(),
            })?
        } else if let Some(compiled) = self.sequence(&pattern)? {
            sequence = Some(compiled.steps);
            compiled.commands
        } else {
            let commands = self.custom_commands(&pattern, &mut extras)?;
            self.memtier.follow_scan(commands, self.pipeline, &mut extras)?
        };
        let values = match (self.data_size_range, self.data_size_list) {
            (Some((min, max)), _) => ValueSize::Range { min: min as usize, max: max as usize },
            (None, Some(list)) => ValueSize::List(list.0),
            (None, None) => ValueSize::Fixed(self.data_size),
        };
        if values.max() > crate::resp::MAX_BULK_LEN as usize {
            return Err("--data-size-range: values may be at most 512 MiB".into());
        }
        let tls_flags = self.cacert.is_some()
            || self.cert.is_some()
            || self.sni.is_some()
            || self.tls_skip_verify
            || self.tls_skip_hostname
            || self.tls_versions.is_some()
            || self.tls_ciphers.is_some();
        let mut tls_on = self.tls || tls_flags;
        let (target, user, password, db) = match self.uri {
            Some(uri) => {
                tls_on |= uri.tls;
                let password = super::secrets::password(uri.password, None)?;
                (uri.target, uri.user, password, uri.db)
            }
            None => {
                let target = match self.socket {
                    Some(path) => Target::Unix(path),
                    None => Target::Tcp { host: self.host, port: self.port },
                };
                let password = super::secrets::password(self.password, self.password_file.as_deref())?;
                if self.user.is_some() && password.is_none() {
                    return Err("--user needs a password: -a PASSWORD, --password-file FILE or REDISCLI_AUTH".into());
                }
                (target, self.user, password, self.db)
            }
        };
        let tls = tls_on.then_some(TlsOptions {
            cacert: self.cacert,
            cert: self.cert,
            key: self.key,
            sni: self.sni,
            skip_verify: self.tls_skip_verify,
            skip_hostname: self.tls_skip_hostname,
            versions: self.tls_versions.map_or_else(Vec::new, |v| v.0),
            ciphers: self
                .tls_ciphers
                .iter()
                .flat_map(|list| list.split([':', ',']))
                .filter(|name| !name.trim().is_empty())
                .map(String::from)
                .collect(),
        });
        if let Some(f) = self.reconnect_backoff_factor
            && !(f >= 1.0 && f.is_finite())
        {
            return Err(format!("--reconnect-backoff-factor {f} must be a number of at least 1"));
        }
        let connections = self.connections as usize;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut config = Config {
            server: ServerOptions {
                target,
                user,
                password,
                db,
                resp3: self.resp3,
                tls,
                connect_timeout: self.connect_timeout,
                session: crate::config::SessionExtras {
                    mptcp: self.session.mptcp,
                    tracking: self.session.enable_tracking,
                },
            },
            connections,
            threads: (self.threads.map_or(cores, |t| t as usize)).min(connections),
            pipeline: self.pipeline as usize,
            stop,
            commands,
            keys: KeyRange { prefix: self.key_prefix, min: self.key_min, max: self.key_max },
            values,
            random_data: self.random_data,
            expiry: self.expiry_range,
            seed: self.seed.unwrap_or_else(random_seed),
            same_stream: self.same_stream_per_connection,
            conn_jitter: self.connect_jitter_us.map(|(lo, hi)| (Duration::from_micros(lo), Duration::from_micros(hi))),
            interval: Duration::from_secs(1),
            rate: self.rate.map(|per_sec| Rate { per_sec: per_sec as f64, poisson: self.arrival == Arrival::Poisson }),
            warmup: self.warmup.unwrap_or(Duration::ZERO),
            sequence,
            faults: Faults {
                reconnect_backoff: self.reconnect_backoff,
                // A counted run has no end to wait for: give up after about half a minute.
                max_reconnects: self.max_reconnects.or(if matches!(stop, StopAfter::Duration(_)) {
                    None
                } else {
                    Some(30)
                }),
                retry: self.retry,
                timeout: self.timeout,
                backoff_factor: self.reconnect_backoff_factor.unwrap_or(2.0),
                max_backoff: self.reconnect_backoff.max(if self.reconnect_backoff_factor.is_some() {
                    Duration::from_secs(30)
                } else {
                    Duration::from_millis(500)
                }),
                reconnect_every: self.reconnect_every,
                connect_timeout: self.connect_timeout.unwrap_or(crate::config::CONNECT_TIMEOUT),
                max_reply: self.max_reply_size as i64,
            },
            cluster: self.cluster.then_some(match self.read_from_replicas {
                ReadFromArg::No => ReadFrom::No,
                ReadFromArg::Yes => ReadFrom::Yes,
                ReadFromArg::All => ReadFrom::All,
            }),
            ramp,
            extras,
        };
        self.shards.apply(&mut config)?;
        let memtier = self.memtier_text.then(|| crate::report::memtier_stats::MemtierOutput {
            hide_histogram: self.memtier_hide_histogram,
            print_all_runs: self.memtier_print_all_runs,
            by_line: self.memtier_by_line,
            hdr_prefix: self.memtier_hdr_prefix.clone(),
            client_stats: self.memtier_out.memtier_client_stats.clone(),
            given: Vec::new(),
        });
        let arbitrary = !self.command.is_empty();
        let mut output = Output {
            memtier,
            arbitrary,
            json: self.json,
            out_file: self.out_file,
            percentiles: self.percentiles.0,
            memtier_json: self.memtier_json,
            quiet: self.quiet,
            progress: self.progress,
            hdr_log: self.hdr_log,
            html: self.html,
            csv: self.csv,
            csv_timeline: self.csv_timeline,
            markdown: self.markdown,
            label: self.label,
            runs: self.runs as usize,
            debug: self.debug,
            memtier_front_end: false,
            statsd: self.statsd_host.map(|host| crate::report::statsd::Options {
                host,
                port: self.statsd_port,
                prefix: self.statsd_prefix,
                run_label: self.statsd_run_label,
                graphite_port: self.graphite_port,
            }),
            verify: self.memtier.data_verify,
            verify_only: self.memtier.verify_only,
            fail_on_errors: self.fail_on_errors,
            max_error_rate: self.max_error_rate,
            scenario: self.scenario,
            metrics: None,
        };
        super::shard::name_outputs(&mut output, config.extras.shard.as_ref());
        if output.verify || output.verify_only {
            super::verify::check(&config)?;
        }
        Ok((config, output))
    }
}

impl Args {
    /// The staircase ramp, when its three flags are given (together, with --duration).
    fn ramp(&self, stop: &StopAfter) -> Result<Option<Ramp>, String> {
        let (start, step, every) = match (self.connections_start, self.connections_step, self.step_duration) {
            (None, None, None) => return Ok(None),
            (Some(start), Some(step), Some(every)) => (start, step, every),
            _ => {
                return Err(
                    "--connections-start, --connections-step and --step-duration go together (a staircase ramp)".into(),
                );
            }
        };
        if start >= self.connections {
            return Err(format!(
                "--connections-start {start} must be below --connections {}: the ramp adds connections up to it",
                self.connections
            ));
        }
        if every.is_zero() {
            return Err("--step-duration must be above 0".into());
        }
        if !matches!(stop, StopAfter::Duration(_)) {
            return Err("--connections-start needs --duration: a staircase ramp runs for a time".into());
        }
        Ok(Some(Ramp { start: start as usize, step: step as usize, every }))
    }

    /// A `--command` with `;` between commands: a sequence sent as one unit.
    fn sequence(&self, pattern: &dyn Fn(char) -> KeyPattern) -> Result<Option<Sequence>, String> {
        let Some(text) = self.command.iter().find(|c| c.split_whitespace().any(|w| w == ";")) else {
            return Ok(None);
        };
        if self.command.len() > 1 {
            return Err(format!("--command '{text}' is a sequence: it must be the only --command"));
        }
        let words = crate::config::split_words(text).map_err(|e| format!("--command: {e}"))?;
        let parts = crate::config::split_sequence(&words).map_err(|e| format!("--command: {e}"))?.unwrap_or_default();
        let letter = self.command_key_pattern.first().map_or('R', |p| p.0);
        let mut sequence = Sequence::of(&parts, pattern(letter), true);
        for c in &mut sequence.commands {
            c.inline = self.inline;
        }
        Ok(Some(sequence))
    }

    /// `--command` with its `--command-ratio` and `--command-key-pattern`, matched by position.
    fn custom_commands(
        &self,
        pattern: &dyn Fn(char) -> KeyPattern,
        extras: &mut crate::config::Extras,
    ) -> Result<Vec<CommandSpec>, String> {
        if self.ratio.is_some() {
            return Err("--ratio weighs SET and GET; with --command use --command-ratio".into());
        }
        let n = self.command.len();
        if self.command_ratio.len() > n || self.command_key_pattern.len() > n {
            return Err(format!(
                "{} --command, {} --command-ratio and {} --command-key-pattern: each ratio and pattern goes with the \
                 --command in the same position",
                n,
                self.command_ratio.len(),
                self.command_key_pattern.len()
            ));
        }
        let monitor = self.memtier.load_monitor(&self.command)?;
        let mut pick = None;
        let mut commands = self
            .command
            .iter()
            .enumerate()
            .filter_map(|(i, text)| {
                let weight = self.command_ratio.get(i).copied().unwrap_or(1);
                let letter = self.command_key_pattern.get(i).map_or('R', |p| p.0);
                // A MONITOR line: sent as captured; `__monitor_line@__` picks a line per request.
                match monitor.as_ref().and_then(|m| m.placeholder(text)) {
                    Some(Ok(Some(line))) => return Some(Ok(monitor.as_ref()?.command(line, weight, pattern(letter)))),
                    Some(Ok(None)) => {
                        pick = Some(weight);
                        return None;
                    }
                    Some(Err(e)) => return Some(Err(e)),
                    None => {}
                }
                Some(self.custom_command(text, weight, pattern(letter)))
            })
            .collect::<Result<Vec<_>, String>>()?;
        if let (Some(weight), Some(file)) = (pick, &monitor) {
            let random = self.memtier.monitor_pattern == Some('R');
            extras.monitor = Some(file.pick(weight, random, &mut commands));
        }
        Ok(commands)
    }

    /// One `--command` with placeholders.
    fn custom_command(&self, text: &str, weight: u32, key_pattern: KeyPattern) -> Result<CommandSpec, String> {
        let mut spec = CommandSpec::parse(text, weight, key_pattern).map_err(|e| format!("--command: {e}"))?;
        spec.inline = self.inline;
        let rand_ints = spec.args.iter().flatten().filter(|p| **p == ArgPart::RandInt).count();
        if rand_ints > crate::workload::MAX_RAND_INTS {
            return Err(format!(
                "--command '{text}' has {rand_ints} __rand_int__: at most {} are supported",
                crate::workload::MAX_RAND_INTS
            ));
        }
        Ok(spec)
    }
}

/// A seed from the clock and the process id, for runs that did not ask for one.
fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    crate::workload::rng::splitmix64(nanos ^ (u64::from(std::process::id()) << 32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<(Config, Output), String> {
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
    fn threads_never_exceed_connections() {
        let (c, _) = parse(&["-c", "1", "--threads", "4"]).unwrap();
        assert_eq!(c.threads, 1);
    }
}
