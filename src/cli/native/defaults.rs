//! `Args::default()`: the flags as an empty command line leaves them, so that a front-end, a
//! scenario phase or a subcommand builds its plan as a typed value (defaults, then the fields it
//! sets) instead of writing argv for clap to parse again. A test holds it equal to clap's own
//! defaults, so the two cannot drift.

use std::time::Duration;

use super::{Args, Arrival, ReadFromArg};
use crate::cli::parse::Percentiles;

impl Default for Args {
    fn default() -> Self {
        Args {
            help: None,
            host: "127.0.0.1".into(),
            port: 6379,
            socket: None,
            password: None,
            password_file: None,
            user: None,
            db: None,
            uri: None,
            resp3: false,
            cluster: false,
            read_from_replicas: ReadFromArg::No,
            connect_timeout: None,
            tls: false,
            cacert: None,
            cert: None,
            key: None,
            sni: None,
            tls_skip_verify: false,
            tls_skip_hostname: false,
            tls_versions: None,
            tls_ciphers: None,
            reconnect_backoff: Duration::from_millis(100),
            max_reconnects: None,
            retry: 0,
            timeout: None,
            reconnect_backoff_factor: None,
            reconnect_every: None,
            max_reply_size: 512 << 20,
            fail_on_errors: false,
            max_error_rate: None,
            connections: 50,
            threads: None,
            pipeline: 1,
            requests: None,
            duration: None,
            connections_start: None,
            connections_step: None,
            step_duration: None,
            ratio: None,
            key_prefix: "key:".into(),
            key_min: 0,
            key_max: 9_999_999,
            key_pattern: None,
            key_median: None,
            key_stddev: None,
            zipf_exponent: 1.0,
            data_size: 32,
            data_size_range: None,
            data_size_list: None,
            command: Vec::new(),
            inline: false,
            literal_rand_int: false,
            rand_sequential: false,
            dataset: None,
            dataset_rows: None,
            command_ratio: Vec::new(),
            command_key_pattern: Vec::new(),
            random_data: false,
            expiry_range: None,
            seed: None,
            same_stream_per_connection: false,
            connect_jitter_us: None,
            memtier: Default::default(),
            shards: Default::default(),
            scenario: Default::default(),
            rate: None,
            arrival: Arrival::Constant,
            warmup: None,
            runs: 1,
            json: None,
            out_file: None,
            percentiles: Percentiles(vec![50.0, 99.0, 99.9]),
            quiet: false,
            progress: false,
            hdr_log: None,
            html: None,
            csv: None,
            csv_timeline: None,
            markdown: None,
            label: None,
            // `--io` also reads RESPBENCH_IO, as clap does for an empty command line.
            session: super::session_flags::SessionFlags { io: io_from_env(), ..Default::default() },
            wire: Default::default(),
            debug: false,
            statsd_host: None,
            statsd_port: 8125,
            statsd_prefix: "memtier".into(),
            statsd_run_label: "default".into(),
            graphite_port: 8080,
        }
    }
}

impl Args {
    /// The defaults, with `RESPBENCH_IO` checked as clap checks it at a command line: a value it
    /// does not know is an error naming it (a front-end that plans without clap calls this).
    pub fn checked_default() -> Result<Args, String> {
        use clap::ValueEnum;
        if let Some(v) = std::env::var("RESPBENCH_IO").ok().filter(|v| !v.is_empty()) {
            crate::config::IoChoice::from_str(&v, false)
                .map_err(|_| format!("invalid value '{v}' for RESPBENCH_IO: expected auto, uring or epoll"))?;
        }
        Ok(Args::default())
    }
}

/// `RESPBENCH_IO` as `--io` reads it; an unknown value is left to clap's error at the command
/// line, and the default path taken here.
fn io_from_env() -> crate::config::IoChoice {
    use clap::ValueEnum;
    std::env::var("RESPBENCH_IO")
        .ok()
        .and_then(|v| crate::config::IoChoice::from_str(&v, false).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn the_default_is_what_an_empty_command_line_gives() {
        let parsed = Args::try_parse_from(["respbench"]).unwrap();
        assert_eq!(format!("{:?}", Args::default()), format!("{parsed:?}"));
    }
}
