//! What the memtier_benchmark front-end prints for `--help`, `--version` and `--show-config`:
//! memtier 2.3's option names, groups and configuration fields, described in respbench's
//! words, kept apart from the option table so that `translate.rs` stays about meaning.

/// The version line and the lines memtier prints under it, naming respbench.
pub fn version() -> String {
    format!(
        "memtier_benchmark v=2.3.0 (respbench {} front-end) bits={}\nThis is respbench's memtier_benchmark front-end: \
         it takes memtier_benchmark 2.3's command line.\n",
        env!("CARGO_PKG_VERSION"),
        usize::BITS
    )
}

/// `--show-config`: memtier's configuration fields, `name = value`, one a line, with the
/// value given on the command line or memtier's default.
pub fn show_config(given: &[(&str, String)], family: Option<u8>) -> String {
    let value = |option: &str, default: &str| {
        given.iter().rev().find(|(name, _)| *name == option).map_or(default.to_string(), |(_, v)| v.clone())
    };
    let server = given
        .iter()
        .rev()
        .find(|(name, _)| matches!(*name, "server" | "host"))
        .map_or("localhost".to_string(), |(_, v)| v.clone());
    let family = match family {
        Some(4) => "AF_INET",
        Some(_) => "AF_INET6",
        None => "Unspecified",
    };
    let fields: [(&str, String); 36] = [
        ("server", server),
        ("port", value("port", "6379")),
        ("uri", value("uri", "")),
        ("unix socket", value("unix-socket", "")),
        ("address family", family.to_string()),
        ("protocol", value("protocol", "redis")),
        ("tls", value("tls", "no")),
        ("cert", value("cert", "")),
        ("key", value("key", "")),
        ("cacert", value("cacert", "")),
        ("tls_skip_verify", value("tls-skip-verify", "no")),
        ("sni", value("sni", "")),
        ("out_file", value("out-file", "")),
        ("run_count", value("run-count", "1")),
        ("debug", value("debug", "0").replace("yes", "1")),
        ("requests", value("requests", "10000")),
        ("clients", value("clients", "50")),
        ("threads", value("threads", "4")),
        ("test_time", value("test-time", "0")),
        ("ratio", value("ratio", "1:10")),
        ("pipeline", value("pipeline", "1")),
        ("data_size", value("data-size", "32")),
        ("random_data", value("random-data", "no")),
        ("data_size_range", value("data-size-range", "0-0")),
        ("data_size_list", value("data-size-list", "")),
        ("expiry_range", value("expiry-range", "0-0")),
        ("key_prefix", value("key-prefix", "memtier-")),
        ("key_minimum", value("key-minimum", "0")),
        ("key_maximum", value("key-maximum", "10000000")),
        ("key_pattern", value("key-pattern", "R:R")),
        ("reconnect_interval", value("reconnect-interval", "0")),
        ("connection_timeout", value("connection-timeout", "0")),
        ("thread_conn_start_min_jitter_micros", value("thread-conn-start-min-jitter-micros", "0")),
        ("thread_conn_start_max_jitter_micros", value("thread-conn-start-max-jitter-micros", "0")),
        ("select-db", value("select-db", "0")),
        ("json-out-file", value("json-out-file", "")),
    ];
    fields.iter().map(|(name, v)| format!("{name} = {v}\n")).collect()
}

/// `--help`: memtier's usage, its groups and option names.
pub fn usage() -> String {
    format!(
        "Usage: memtier_benchmark [options]\n\
         This is respbench {}'s memtier_benchmark front-end: memtier_benchmark 2.3's options with memtier's\n\
         meaning, run by respbench (see docs/compatibility.md for the few differences).\n\
         {USAGE}",
        env!("CARGO_PKG_VERSION")
    )
}

const USAGE: &str = "
Connection and General Options:
  -h, --host=ADDR                Server address (default: localhost)
  -s, --server=ADDR              Same as --host
  -p, --port=PORT                Server port (default: 6379)
  -S, --unix-socket=SOCKET       UNIX domain socket name (default: none)
  -4, --ipv4                     Resolve the server address to IPv4 only
  -6, --ipv6                     Resolve the server address to IPv6 only
  -P, --protocol=PROTOCOL        redis (default), resp2, resp3, memcache_text or memcache_binary
  -a, --authenticate=CREDENTIALS A password, or USER:PASSWORD for an ACL user (memcache_binary:
                                 a SASL PLAIN login)
  -u, --uri=URI                  redis://user:password@host:port/dbnum (all but the host optional);
                                 rediss:// for TLS
      --tls                      Connect with TLS
      --cert=FILE                Client certificate for TLS
      --key=FILE                 Client certificate's private key
      --cacert=FILE              CA certificates to verify the server with
      --tls-skip-verify          Do not verify the server's certificate
      --tls-protocols=LIST       TLS versions allowed, comma-separated: TLSv1.2, TLSv1.3
                                 (TLSv1 and TLSv1.1 are refused: respbench speaks 1.2 and 1.3)
      --sni=STRING               Server name to send (SNI)
  -x, --run-count=NUMBER         Repeat the whole test NUMBER times
  -D, --debug                    Print debug output on stderr
      --cluster-mode             Run in cluster mode
      --transaction              One rotation of the --command entries is one unit: one
                                 connection, one key for its keyed commands, in cluster mode
                                 that key's shard; a null EXEC is an abort (Aborts/sec).
                                 Requires at least one --command
      --help                     Print this help
  -v, --version                  Print the version

Results Output Options:
  -o, --out-file=FILE            Write the report to FILE (default: stdout)
      --json-out-file=FILE       Write memtier's JSON report to FILE
      --client-stats=FILE        Per-client statistics files
      --hdr-file-prefix=FILE     HDR latency histogram files
      --show-config              Print the configuration before running
      --hide-histogram           Do not print the latency histogram
      --print-percentiles=LIST   Percentiles of the report (default: 50,99,99.9)
      --print-all-runs           Report every iteration of --run-count
      --realtime-latencies       A block per second in place of the progress line: throughput,
                                 miss ratio, the percentiles of the second and of the run
      --command-stats-breakdown=command|line  Group command statistics
      --command-miss-tracking=auto|off  Hits and misses of --command reads (default: auto)
      --miss-rate-threshold=PCT  Warn after the run of each --command read missing more than
                                 PCT percent (default: 1.0; 0: any miss)
      --statsd-host=HOST, --statsd-port=PORT, --statsd-prefix=PREFIX,
      --statsd-run-label=LABEL, --graphite-port=PORT   Live metrics to StatsD/Graphite
      --metrics-listen=ADDR:PORT Live OpenMetrics at http://ADDR:PORT/metrics (respbench;
                                 --metrics-linger=D keeps the final values until scraped)
      --metrics-push=URL         Push them to a Prometheus Pushgateway each interval and at
                                 the end (respbench; --metrics-push-job=JOB, default
                                 respbench, --metrics-push-label=NAME=VALUE, repeatable)
      --prometheus-port=PORT     Serve Prometheus metrics (memtier_*) at /metrics on PORT
                                 (0: a free one, printed on stdout)
      --prometheus-bind-addr=ADDR  Numeric address to listen on (default: 127.0.0.1)
      --prometheus-run-label=KEY=VALUE  A label on every sample (repeatable; at most 16)
      --prometheus-latency-buckets=LIST  Latency bucket bounds in seconds, ascending

Test Options:
  -n, --requests=NUMBER          Requests per client (default: 10000); allkeys: the whole key range
      --rate-limiting=NUMBER     Most requests per second of one connection
  -c, --clients=NUMBER           Clients per thread (default: 50)
  -t, --threads=NUMBER           Threads (default: 4)
      --test-time=SECS           Run for SECS seconds
      --clients-start=NUMBER, --clients-step=NUMBER, --step-duration=SECS  Staircase ramp-up
      --ratio=RATIO              Set:Get ratio (default: 1:10)
      --pipeline=NUMBER          Requests in flight per connection (default: 1)
      --reconnect-interval=NUM   Reconnect after every NUM requests of a connection
      --reconnect-on-error       Reconnect a connection that fails (default: off)
      --max-reconnect-attempts=NUM  Reconnect attempts before giving up (default: 0, unlimited)
      --reconnect-backoff-factor=NUM  Multiply the wait between attempts by NUM (default: no backoff)
      --connection-timeout=SECS  Give up connecting after SECS seconds (default: 0, none)
      --connection-stage-timeout=SECS  Exit 2 if connecting, setup and the first reply take
                                 longer (default: respbench's 5 s budget; 0: timed runs unbounded)
      --retry-on-error           Send a request again after a transient error reply or a
                                 dropped connection (not WRONGTYPE, NOAUTH, NOPERM, syntax)
      --max-retries=N            Tries again per request (default: -1, unlimited; 0: none)
      --retry-backoff-ms=NUM     Wait before sending again (default: 0, at once)
      --retry-backoff-factor=NUM Multiply that wait per further try (default: 0, constant)
      --retry-on=LIST            Only errors starting with these, comma-separated (LOADING,BUSY)
      --max-retry-queue=NUM      Requests waiting per connection (default: 0, max(pipeline*4, 64))
      --failed-keys-file=PATH    Write each request given up as CSV (timestamp,command,key,status,retries)
      --thread-conn-start-min-jitter-micros=NUM  Least pause between a thread's connections (default: 0)
      --thread-conn-start-max-jitter-micros=NUM  Longest pause between a thread's connections (default: 0)
      --multi-key-get=NUM        Multi-key GETs of up to NUM keys
      --select-db=DB             Database to SELECT
      --distinct-client-seed     Give each client its own random sequence
      --randomize                Seed from the clock (default: a constant seed)

Several load machines (respbench):
      --shard=I/N                Run shard I of N: key range, requests and rate split
      --shard-count=N            The number of shards when only the index is given
      --start-at=TIME            Start the measured phase at this instant (RFC 3339, Unix seconds)
      --allow-late-start         Start at once if that instant has passed
      --respbench-json=FILE      Also write respbench's result, which respbench merge adds up

Arbitrary command:
      --command=COMMAND          A command to send, in quotes (repeatable); __key__ and __data__
                                 are filled from the key and object options
      --command-ratio            Weight of the --command before it (default: 1)
      --command-key-pattern      Key pattern of the --command before it (default: R):
                                 G Gaussian, R uniform random, Z zipf, S sequential,
                                 P parallel (each client its own part of the range)
      --monitor-input=FILE, --monitor-pattern=S|R   Commands from a MONITOR capture
      --scan-incremental-iteration, --scan-incremental-max-iterations=NUMBER  SCAN cursors
      --command-is-read          The --command before it is a read (GET and its kin only)

Read Preference Options (cluster mode):
      --read-preference=MODE     primary (default) or secondaryPreferred: reads from replicas,
                                 a slot without one from its primary; secondary with
                                 --read-preference-fallback=primary likewise; nearest refused
      --read-preference-fallback=error|queue|primary
      --read-server=HOST:PORT    Taken, and changes nothing (as memtier outside cluster mode)

Object Options:
  -d  --data-size=SIZE           Value size in bytes (default: 32)
      --data-offset=OFFSET       SETRANGE/GETRANGE at an offset
  -R  --random-data              Random value bytes
      --data-size-range=RANGE    Value sizes drawn from min-max
      --data-size-list=LIST      Value sizes by weight: size1:weight1,..sizeN:weightN
      --data-size-pattern=R|S    How --data-size-range sizes are spread
      --expiry-range=RANGE       Expiry seconds drawn from min-max

Imported Data Options:
      --data-import=FILE, --data-verify, --verify-only, --generate-keys, --no-expiry 

Key Options:
      --key-prefix=PREFIX        Key prefix (default: \"memtier-\")
      --key-minimum=NUMBER       Smallest key number (default: 0)
      --key-maximum=NUMBER       Largest key number (default: 10000000)
      --key-pattern=PATTERN      Set:Get key patterns (default: R:R): G, R, Z, S, P as above
      --key-stddev               Standard deviation of G (default: key range / 6)
      --key-median               Median of G (default: the middle of the key range)
      --key-zipf-exp             Exponent of Z, in (0, 5) (default: 1)

WAIT Options:
      --wait-ratio=RATIO, --num-slaves=RANGE, --wait-timeout=RANGE  WAIT commands
";
