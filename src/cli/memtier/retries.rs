//! memtier 2.4's retry options (`--retry-on-error` and its companions) turned into respbench's
//! retry flags: the companions count only once the master switch is on, as in memtier.

use std::time::Duration;

use crate::cli::options::Args;
use crate::config::MAX_BACKOFF;

/// What the retry options said, applied together at the end.
#[derive(Default)]
pub(super) struct Retries {
    on_error: bool,
    /// `--max-retries`: -1 (the default) unlimited.
    max: Option<i64>,
    backoff_ms: u64,
    factor: f64,
    on: Vec<String>,
    queue: usize,
}

impl Retries {
    /// One option (`name`, its long name; `long` as written) and its value.
    pub(super) fn take(&mut self, name: &str, long: &str, v: &str) -> Result<(), String> {
        let number =
            |v: &str| v.trim().parse::<u64>().map_err(|_| format!("invalid value for '{long}': '{v}' is not a number"));
        match name {
            "retry-on-error" => self.on_error = true,
            "max-retries" => match v.trim().parse::<i64>() {
                Ok(n) if n >= -1 => self.max = Some(n),
                _ => return Err(format!("invalid value for '{long}': '{v}' (-1 for unlimited, 0 or more)")),
            },
            "retry-backoff-ms" => self.backoff_ms = number(v)?,
            "retry-backoff-factor" => match v.trim().parse::<f64>() {
                Ok(f) if f == 0.0 || (f >= 1.0 && f.is_finite()) => self.factor = f,
                _ => {
                    return Err(format!(
                        "invalid value for '{long}': '{v}' (0 for a constant backoff, or 1 and above)"
                    ));
                }
            },
            "retry-on" => {
                let prefixes: Vec<String> = v.split(',').map(|p| p.trim().to_string()).collect();
                if prefixes.iter().any(String::is_empty) {
                    return Err(format!(
                        "invalid value for '{long}': '{v}' (error prefixes, comma-separated: LOADING,BUSY)"
                    ));
                }
                self.on = prefixes;
            }
            "max-retry-queue" => self.queue = number(v)? as usize,
            _ => unreachable!("a retry option: {name}"),
        }
        Ok(())
    }

    /// With `--retry-on-error`: error replies and requests lost with a connection are sent
    /// again, up to `--max-retries` times each (unlimited: as often as the engine counts).
    pub(super) fn apply(&self, args: &mut Args) {
        if !self.on_error {
            return;
        }
        args.retry_errors = true;
        args.retry = match self.max.unwrap_or(-1) {
            -1 => u32::MAX,
            n => u32::try_from(n).unwrap_or(u32::MAX),
        };
        args.retry_backoff = (self.backoff_ms > 0).then(|| Duration::from_millis(self.backoff_ms).min(MAX_BACKOFF));
        args.retry_backoff_factor = self.factor;
        args.retry_error_prefixes.clone_from(&self.on);
        args.max_retry_queue = self.queue;
    }
}
