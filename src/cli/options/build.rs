//! Turning what the user typed into the plan: the checks clap cannot make, defaults that
//! depend on other flags, and the [`Config`] and [`Output`] the rest of the program trusts.

use super::*;

impl Args {
    /// Checks what clap cannot and builds the plan.
    pub fn into_config(mut self) -> Result<(Config, Output), OptionsError> {
        self.check_numbers()?;
        crate::report::live::shape::check_labels(&self.scenario.metrics_label).map_err(String::from)?;
        let stop = self.stop()?;
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
        extras.io = self.session.io;
        extras.io.resolve()?;
        extras.timestamps = self.session.timestamps;
        extras.client_share_warning = self.session.client_share_warning;
        // Each interval keeps the report's percentiles (memtier's per-second series shows them).
        extras.interval_quantiles = self.percentiles.0.iter().map(|p| p / 100.0).collect();
        extras.rand_sequential = self.rand_sequential;
        extras.transaction = self.transaction;
        if self.transaction {
            self.check_transaction()?;
        }
        extras.retry_on = self.retry_error_prefixes.iter().map(|p| p.trim().to_string()).collect();
        let commands = if self.command.is_empty() {
            self.memtier.default_mix(&crate::cli::memtier::mix::Mix {
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
        if self.transaction && commands.iter().all(|c| c.weight == 0) {
            return Err("--transaction: every --command-ratio is 0, so the rotation is empty".into());
        }
        let values = self.values()?;
        let server = self.server_options()?;
        let connections = self.connections as usize;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut config = Config {
            server,
            connections,
            threads: (self.threads.map_or(cores, |t| t as usize)).min(connections),
            pipeline: self.pipeline as usize,
            stop,
            commands,
            keys: KeyRange { prefix: std::mem::take(&mut self.key_prefix), min: self.key_min, max: self.key_max },
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
            faults: self.faults(&stop),
            cluster: self.cluster.then_some(match self.read_from_replicas {
                ReadFromArg::No => ReadFrom::No,
                ReadFromArg::Yes => ReadFrom::Yes,
                ReadFromArg::All => ReadFrom::All,
            }),
            ramp,
            extras,
        };
        if let Some(path) = self.dataset.take() {
            let rows = self.dataset_rows.map(|n| n as usize);
            let dataset = crate::config::dataset::Dataset::for_commands(&path, rows, &config.commands)
                .map_err(|e| e.to_string())?;
            config.extras.dataset = Some(std::sync::Arc::new(dataset));
        }
        self.shards.apply(&mut config)?;
        if !self.role.is_empty() && self.runs > 1 {
            return Err("--runs cannot be used with --role: a role's messages are counted over one run".into());
        }
        if !self.role.is_empty() && self.scenario.save_scenario.is_some() {
            return Err("--save-scenario cannot be used with --role: it does not write roles (give them as [[phase.role]] in the file)".into());
        }
        crate::config::role_plan::apply(&mut config, std::mem::take(&mut self.role))?;
        self.arguments.apply(&mut config)?;
        let arbitrary = !self.command.is_empty();
        let mut output = self.into_output(arbitrary);
        output.name_for_shard(config.extras.shard.as_ref());
        super::protocol_flags::check(&config)?;
        crate::workload::Workload::check(&config)?;
        if output.verify || output.verify_only {
            crate::cli::verify::check(&config).map_err(|e| OptionsError::from(e.0))?;
        }
        Ok((config, output))
    }
}

impl Args {
    /// The numbers clap cannot check alone.
    fn check_numbers(&self) -> Result<(), OptionsError> {
        if self.key_min > self.key_max {
            return Err(format!("--key-min {} is above --key-max {}", self.key_min, self.key_max).into());
        }
        if !(self.zipf_exponent > 0.0 && self.zipf_exponent.is_finite()) {
            return Err(format!("--zipf-exponent {} must be a number above 0", self.zipf_exponent).into());
        }
        if let Some(stddev) = self.key_stddev
            && !(stddev > 0.0 && stddev.is_finite())
        {
            return Err(format!("--key-stddev {stddev} must be a number above 0").into());
        }
        if let Some(f) = self.reconnect_backoff_factor
            && !(f >= 1.0 && f.is_finite())
        {
            return Err(format!("--reconnect-backoff-factor {f} must be a number of at least 1").into());
        }
        let f = self.retry_backoff_factor;
        if !(f == 0.0 || (f >= 1.0 && f.is_finite())) {
            return Err(format!(
                "--retry-backoff-factor {f} must be 0 (the same wait each time) or a number of at least 1"
            )
            .into());
        }
        if let Some(empty) = self.retry_error_prefixes.iter().find(|p| p.trim().is_empty()) {
            return Err(format!(
                "--retry-error-prefixes has an empty prefix '{empty}': expected words such as LOADING,BUSY"
            )
            .into());
        }
        Ok(())
    }

    /// `--transaction` rotates the `--command` entries as one unit: it needs some, and none
    /// of the ways that make a unit otherwise.
    fn check_transaction(&self) -> Result<(), String> {
        if self.command.is_empty() {
            return Err("--transaction requires at least one --command".into());
        }
        if self.command.iter().any(|c| c.split_whitespace().any(|w| w == ";")) {
            return Err(
                "--transaction makes the --command entries one unit: give them apart, not as a ';' sequence".into()
            );
        }
        for (on, flag) in [
            (self.memtier.scan_incremental_iteration, "--scan-incremental-iteration"),
            (self.memtier.monitor_input.is_some(), "--monitor-input"),
        ] {
            if on {
                return Err(format!("--transaction cannot be used with {flag}"));
            }
        }
        Ok(())
    }

    /// When the run ends: `-n N`, `-n allkeys`, `--duration`, else 100,000 requests.
    fn stop(&self) -> Result<StopAfter, OptionsError> {
        Ok(match (self.requests.as_deref(), self.duration) {
            (Some("allkeys"), _) => StopAfter::AllKeys,
            (Some(n), _) => {
                StopAfter::Requests(parse::positive(n).map_err(|e| format!("invalid value for '--requests': {e}"))?)
            }
            (None, Some(d)) => StopAfter::Duration(d),
            (None, None) => StopAfter::Requests(100_000),
        })
    }

    /// The value sizes: fixed, a range or a weighted list.
    fn values(&self) -> Result<ValueSize, OptionsError> {
        let values = match (self.data_size_range, self.data_size_list.clone()) {
            (Some((min, max)), _) => ValueSize::Range { min: min as usize, max: max as usize },
            (None, Some(list)) => ValueSize::List(list.0),
            (None, None) => ValueSize::Fixed(self.data_size),
        };
        if values.max() > crate::resp::MAX_BULK_LEN as usize {
            return Err("--data-size-range: values may be at most 512 MiB".into());
        }
        Ok(values)
    }

    /// The server and how to log in (its fields taken out of the flags).
    fn server_options(&mut self) -> Result<ServerOptions, OptionsError> {
        let tls_flags = self.cacert.is_some()
            || self.cert.is_some()
            || self.sni.is_some()
            || self.tls_skip_verify
            || self.tls_skip_hostname
            || self.tls_versions.is_some()
            || self.tls_ciphers.is_some();
        let mut tls_on = self.tls || tls_flags;
        let (target, user, password, db) = match self.uri.take() {
            Some(uri) => {
                tls_on |= uri.tls;
                let password = crate::cli::secrets::password(uri.password, None)?;
                (uri.target, uri.user, password, uri.db)
            }
            None => {
                let target = match self.socket.take() {
                    Some(path) => Target::Unix(path),
                    None => Target::Tcp { host: std::mem::take(&mut self.host), port: self.port },
                };
                let password = crate::cli::secrets::password(self.password.take(), self.password_file.as_deref())?;
                if self.user.is_some() && password.is_none() {
                    return Err("--user needs a password: -a PASSWORD, --password-file FILE or REDISCLI_AUTH".into());
                }
                (target, self.user.take(), password, self.db)
            }
        };
        let tls = tls_on.then_some(TlsOptions {
            cacert: self.cacert.take(),
            cert: self.cert.take(),
            key: self.key.take(),
            sni: self.sni.take(),
            skip_verify: self.tls_skip_verify,
            skip_hostname: self.tls_skip_hostname,
            versions: self.tls_versions.take().map_or_else(Vec::new, |v| v.0),
            ciphers: self
                .tls_ciphers
                .iter()
                .flat_map(|list| list.split([':', ',']))
                .filter(|name| !name.trim().is_empty())
                .map(String::from)
                .collect(),
            no_resumption: self.no_tls_resumption,
            no_probe: false,
        });
        Ok(ServerOptions {
            target,
            user,
            password,
            db,
            resp3: self.resp3,
            tls,
            connect_timeout: self.connect_timeout,
            session: self.session.extras(self.wire.protocol, self.debug),
        })
    }

    /// Reconnecting, retrying and the bounds on a reply.
    fn faults(&self, stop: &StopAfter) -> Faults {
        Faults {
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
                crate::config::MAX_BACKOFF
            } else {
                Duration::from_millis(500)
            }),
            reconnect_every: self.reconnect_every,
            voice: crate::config::Voice::Respbench,
            connect_timeout: self.connect_timeout.unwrap_or(crate::config::CONNECT_TIMEOUT),
            max_reply: self.max_reply_size as i64,
            retry_errors: self.retry_errors,
            retry_backoff: self.retry_backoff.unwrap_or_default().min(crate::config::MAX_BACKOFF),
            retry_backoff_factor: self.retry_backoff_factor,
            max_retry_queue: self.max_retry_queue,
            stage_bound: false,
            failed_keys: self.failed_keys.is_some(),
        }
    }

    /// Where the results go: what is left of the flags.
    fn into_output(self, arbitrary: bool) -> Output {
        Output {
            arbitrary,
            memtier_front_end: false,
            json: self.json,
            out_file: self.out_file,
            percentiles: self.percentiles.0,
            memtier_json: None,
            quiet: self.quiet,
            progress: self.progress,
            hdr_log: self.hdr_log,
            html: self.html,
            csv: self.csv,
            csv_timeline: self.csv_timeline,
            markdown: self.markdown,
            failed_keys: self.failed_keys,
            label: self.label,
            runs: self.runs as usize,
            notes: crate::cli::notes::Notes::spoken(),
            statsd: self.statsd_host.map(|host| crate::report::live::statsd::Options {
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
        }
    }
}

impl Args {
    /// The staircase ramp, when its three flags are given (together, with --duration).
    fn ramp(&self, stop: &StopAfter) -> Result<Option<Ramp>, OptionsError> {
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
            )
            .into());
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
    fn sequence(&self, pattern: &dyn Fn(char) -> KeyPattern) -> Result<Option<Sequence>, OptionsError> {
        let Some(text) = self.command.iter().find(|c| c.split_whitespace().any(|w| w == ";")) else {
            return Ok(None);
        };
        if self.command.len() > 1 {
            return Err(format!("--command '{text}' is a sequence: it must be the only --command").into());
        }
        let words = crate::config::split_words(text).map_err(|e| format!("--command: {e}"))?;
        let parts = crate::config::split_sequence(&words).map_err(|e| format!("--command: {e}"))?.unwrap_or_default();
        let letter = self.command_key_pattern.first().map_or('R', |p| p.0);
        let mut sequence = Sequence::of(&parts, pattern(letter), true);
        for c in &mut sequence.commands {
            c.inline = self.inline;
            if self.literal_rand_int {
                *c = c.clone().with_literal_rand_int();
            }
        }
        Ok(Some(sequence))
    }

    /// `--command` with its `--command-ratio` and `--command-key-pattern`, matched by position.
    fn custom_commands(
        &self,
        pattern: &dyn Fn(char) -> KeyPattern,
        extras: &mut crate::config::Extras,
    ) -> Result<Vec<CommandSpec>, OptionsError> {
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
            )
            .into());
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
                    Some(Err(e)) => return Some(Err(e.into())),
                    None => {}
                }
                Some(self.custom_command(text, weight, pattern(letter)))
            })
            .collect::<Result<Vec<_>, OptionsError>>()?;
        if let (Some(weight), Some(file)) = (pick, &monitor) {
            let random = self.memtier.monitor_pattern == Some('R');
            extras.monitor = Some(file.pick(weight, random, &mut commands));
        }
        Ok(commands)
    }

    /// One `--command` with placeholders.
    fn custom_command(&self, text: &str, weight: u32, key_pattern: KeyPattern) -> Result<CommandSpec, OptionsError> {
        let mut spec = CommandSpec::parse(text, weight, key_pattern).map_err(|e| format!("--command: {e}"))?;
        spec.inline = self.inline;
        if self.literal_rand_int {
            spec = spec.with_literal_rand_int();
        }
        let rand_ints = spec.args.iter().flatten().filter(|p| **p == ArgPart::RandInt).count();
        if rand_ints > crate::workload::MAX_RAND_INTS {
            return Err(format!(
                "--command '{text}' has {rand_ints} __rand_int__: at most {} are supported",
                crate::workload::MAX_RAND_INTS
            )
            .into());
        }
        Ok(spec)
    }
}

/// A seed from the clock and the process id, for runs that did not ask for one.
fn random_seed() -> u64 {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    crate::workload::rng::splitmix64(nanos ^ (u64::from(std::process::id()) << 32))
}

impl Output {
    /// `%t` in the output files' names becomes the shard's index (0 without shards), as srun
    /// names its tasks' output: `--json out-%t.json` gives each shard its own file; and in
    /// `--metrics-push-label`'s values: `shard=%t` gives each its own group on the Pushgateway.
    pub(crate) fn name_for_shard(&mut self, shard: Option<&crate::config::Shard>) {
        let index = shard.map_or(0, |s| s.index).to_string();
        let paths = [
            &mut self.json,
            &mut self.out_file,
            &mut self.memtier_json,
            &mut self.hdr_log,
            &mut self.html,
            &mut self.csv,
            &mut self.csv_timeline,
            &mut self.markdown,
            &mut self.failed_keys,
        ];
        for path in paths.into_iter().flatten() {
            if let Some(text) = path.to_str().filter(|t| t.contains("%t")) {
                *path = text.replace("%t", &index).into();
            }
        }
        self.scenario.push.name_labels(&index);
    }
}
