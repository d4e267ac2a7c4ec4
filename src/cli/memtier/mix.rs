//! memtier_benchmark's workload options as respbench flags (hidden: the memtier front-end sets
//! them on its plan, a scenario file may give them) and what they do to the SET/GET mix: MGET
//! of N keys, SETRANGE/GETRANGE at an offset, WAIT mixed in after SETs, value sizes by key.
//! Kept out of `native/` so that the common flags stay readable.

use std::path::PathBuf;

use clap::Args as ClapArgs;

use crate::cli::parse;
use crate::config::parse::InvalidValue;
use crate::config::{ArgPart, CommandSpec, Extras, Import, KeyPattern, ScanFollow};
use crate::workload::monitor::MonitorFile;

message_error!(
    /// memtier's mix options that cannot make a command mix (a pattern, an import, a MONITOR
    /// capture); the message names the option.
    MixError from InvalidValue, crate::workload::import::ImportError, crate::workload::monitor::MonitorError
);

/// The flags, flattened into respbench's own.
#[derive(Debug, Clone, Default, ClapArgs)]
pub struct WorkloadFlags {
    /// GETs become MGETs of N keys; GET's weight is divided by N (memtier's --multi-key-get).
    #[arg(long, value_name = "N", value_parser = parse::positive, hide = true)]
    pub multi_key_get: Option<u64>,
    /// SETRANGE key OFFSET value and GETRANGE key OFFSET -1 instead of SET and GET.
    #[arg(long, value_name = "OFFSET", value_parser = parse::count, hide = true)]
    pub data_offset: Option<u64>,
    /// With --data-size-range: R draws each size at random, S spreads sizes evenly over the
    /// key range by key.
    #[arg(long, value_name = "R|S", value_parser = size_pattern, hide = true)]
    pub data_size_pattern: Option<char>,
    /// SET:WAIT: WAIT commands mixed in after SETs in this ratio.
    #[arg(long, value_name = "SET:WAIT", value_parser = wait_ratio, hide = true)]
    pub wait_ratio: Option<(u32, u32)>,
    /// WAIT's number of replicas, uniform in MIN-MAX [default: 0-0].
    #[arg(long, value_name = "MIN-MAX", value_parser = parse::range, hide = true)]
    pub num_slaves: Option<(u64, u64)>,
    /// WAIT's timeout in milliseconds, normal around the middle of MIN-MAX [default: 0-0].
    #[arg(long, value_name = "MIN-MAX", value_parser = parse::range, hide = true)]
    pub wait_timeout: Option<(u64, u64)>,
    /// A redis MONITOR capture whose lines --command __monitor_lineN__ and __monitor_line@__ send.
    #[arg(long, value_name = "FILE", hide = true)]
    pub monitor_input: Option<PathBuf>,
    /// How __monitor_line@__ picks lines: S in order, R at random [default: S].
    #[arg(long, value_name = "S|R", value_parser = monitor_pattern, hide = true)]
    pub monitor_pattern: Option<char>,
    /// The --command "SCAN 0 ..." follows the cursor each reply returns until it is 0.
    #[arg(long, hide = true)]
    pub scan_incremental_iteration: bool,
    /// Continuation SCANs per cycle before starting again at 0 [default: 0, until the cursor is 0].
    #[arg(long, value_name = "N", value_parser = parse::count, hide = true)]
    pub scan_incremental_max_iterations: Option<u64>,
    /// SETs write the items of a memtier export (CSV) instead of generated keys and values.
    #[arg(long, value_name = "FILE", hide = true)]
    pub data_import: Option<PathBuf>,
    /// With --data-import: keys from the key generator, values from the file.
    #[arg(long, requires = "data_import", hide = true)]
    pub generate_keys: bool,
    /// With --data-import: ignore the file's expiry times.
    #[arg(long, requires = "data_import", hide = true)]
    pub no_expiry: bool,
    /// After the run, read back every key written and count the values that differ.
    #[arg(long, hide = true)]
    pub data_verify: bool,
    /// Only verify (--data-verify), without a run.
    #[arg(long, hide = true)]
    pub verify_only: bool,
    /// Split the key range over the connections as memtier splits it over its clients.
    #[arg(long, hide = true)]
    pub memtier_slices: bool,
}

pub(super) fn size_pattern(s: &str) -> Result<char, InvalidValue> {
    match s {
        "R" | "S" => Ok(s.as_bytes()[0] as char),
        _ => Err(format!("expected R (random) or S (sequential, by key), got '{s}'").into()),
    }
}

pub(super) fn monitor_pattern(s: &str) -> Result<char, InvalidValue> {
    match s {
        "S" | "s" | "R" | "r" => Ok(s.to_ascii_uppercase().as_bytes()[0] as char),
        _ => Err(format!("expected S (sequential) or R (random), got '{s}'").into()),
    }
}

/// `SET:WAIT`, either may be 0 (`1:0` sends no WAIT).
pub(super) fn wait_ratio(s: &str) -> Result<(u32, u32), InvalidValue> {
    let bad = || format!("expected SET:WAIT weights such as 10:1, got '{s}'");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    Ok((a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?))
}

/// The SET/GET mix's shape: weights, key patterns, whether SETs expire.
pub struct Mix {
    pub set_weight: u32,
    pub get_weight: u32,
    pub set_pattern: KeyPattern,
    pub get_pattern: KeyPattern,
    pub expiry: bool,
}

impl WorkloadFlags {
    /// Options that only shape the SET/GET mix, named when a --command makes them meaningless.
    fn mix_only(&self) -> Option<&'static str> {
        if self.multi_key_get.is_some() {
            Some("--multi-key-get")
        } else if self.data_offset.is_some_and(|o| o > 0) {
            Some("--data-offset")
        } else if self.wait_ratio.is_some_and(|(_, w)| w > 0) {
            Some("--wait-ratio")
        } else {
            None
        }
    }

    /// Checks what goes with what; `commands` says whether --command was given.
    pub fn check(&self, commands: bool, cluster: bool, size_range: bool) -> Result<(), MixError> {
        if self.scan_incremental_iteration && !commands {
            // memtier's words: the cursor is followed only in a --command's SCAN.
            return Err("--scan-incremental-iteration requires --command with a SCAN command.".into());
        }
        if commands && let Some(flag) = self.mix_only() {
            return Err(format!("{flag} shapes the SET/GET mix: it cannot be used with --command").into());
        }
        if cluster {
            for (on, flag) in [
                (self.multi_key_get.is_some(), "--multi-key-get"),
                (self.wait_ratio.is_some_and(|(_, w)| w > 0), "--wait-ratio"),
                (self.monitor_input.is_some(), "--monitor-input"),
                (self.scan_incremental_iteration, "--scan-incremental-iteration"),
            ] {
                if on {
                    return Err(format!("{flag} is not supported in cluster mode").into());
                }
            }
        }
        if self.data_size_pattern == Some('S') && !size_range {
            return Err(
                "--data-size-pattern S spreads --data-size-range over the keys: give a --data-size-range".into()
            );
        }
        Ok(())
    }

    /// The extras these flags ask for (the import file read), before the MONITOR and SCAN
    /// ones are filled in.
    pub fn extras(&self, commands: bool) -> Result<Extras, MixError> {
        let import = match &self.data_import {
            Some(_) if commands => return Err("--data-import writes with SET: it cannot be used with --command".into()),
            Some(path) => Some(Import {
                items: std::sync::Arc::new(crate::workload::import::load(path)?),
                generate_keys: self.generate_keys,
                no_expiry: self.no_expiry,
            }),
            None => None,
        };
        Ok(Extras {
            sizes_by_key: self.data_size_pattern == Some('S'),
            import,
            memtier_slices: self.memtier_slices,
            ..Extras::default()
        })
    }

    /// The SET/GET mix with memtier's variations: SETRANGE/GETRANGE at `--data-offset`, MGET
    /// of `--multi-key-get` keys, WAIT after SETs at `--wait-ratio`.
    pub fn default_mix(&self, mix: &Mix) -> Result<Vec<CommandSpec>, MixError> {
        let offset = self.data_offset.filter(|&o| o > 0);
        let (set_weight, mut get_weight) = (mix.set_weight, mix.get_weight);
        // memtier's last MGET of a cycle carries the keys left of the GET ratio (1:10 with
        // 3 keys: 3, 3, 3, 1): here an MGET of that many keys, once per cycle.
        let mut short_mget = None;
        let mut get = match (self.multi_key_get, offset) {
            (Some(n), _) => {
                // memtier counts one MGET of n keys as n of its GET ratio.
                let (gets, n) = (u64::from(get_weight), n.min(u64::from(u16::MAX)));
                if gets <= n {
                    // Fewer GETs than keys: one MGET of them all.
                    get_weight = get_weight.min(1);
                    mget(gets.max(1), mix.get_pattern)
                } else {
                    if gets % n > 0 {
                        short_mget = Some(mget(gets % n, mix.get_pattern));
                    }
                    get_weight = (gets / n) as u32;
                    mget(n, mix.get_pattern)
                }
            }
            (None, Some(offset)) => getrange(offset, mix.get_pattern),
            (None, None) => CommandSpec::get(get_weight, mix.get_pattern),
        };
        let mut set = match offset {
            // memtier sends SETRANGE without an expiry.
            Some(offset) => setrange(offset, mix.set_pattern),
            None => CommandSpec::set(set_weight, mix.set_pattern, mix.expiry),
        };
        let mut wait = None;
        let (mut set_weight, mut get_weight) = (set_weight, get_weight);
        if let Some((sets, waits)) = self.wait_ratio.filter(|&(_, w)| w > 0) {
            if sets == 0 || set_weight == 0 {
                return Err(format!(
                    "--wait-ratio {sets}:{waits}: WAITs follow SETs, so the SET side and the SET weight must be above 0"
                )
                .into());
            }
            // SET:GET stays as it was, and SET:WAIT becomes sets:waits.
            let too_large = || "--wait-ratio and --ratio give weights too large to mix".to_string();
            let wait_weight = set_weight.checked_mul(waits).ok_or_else(too_large)?;
            set_weight = set_weight.checked_mul(sets).ok_or_else(too_large)?;
            get_weight = get_weight.checked_mul(sets).ok_or_else(too_large)?;
            wait = Some(self.wait(wait_weight, mix.set_pattern));
        }
        // The shorter MGET comes once per cycle: the SET weight's share of it, as the others.
        let cycles = if wait.is_some() { self.wait_ratio.map_or(1, |(sets, _)| sets) } else { 1 };
        let short_mget = short_mget.map(|mut m| {
            m.weight = cycles;
            m
        });
        set.weight = set_weight;
        get.weight = get_weight;
        let commands = [(set_weight > 0).then_some(set), (get_weight > 0).then_some(get), short_mget, wait];
        Ok(commands.into_iter().flatten().collect())
    }

    /// The `--monitor-input` capture, loaded when given; a `__monitor_line` placeholder without
    /// one is an error.
    pub fn load_monitor(&self, commands: &[String]) -> Result<Option<MonitorFile>, MixError> {
        let Some(path) = &self.monitor_input else {
            return match commands.iter().find(|c| c.trim().starts_with("__monitor_line")) {
                Some(c) => {
                    Err(format!("error: --command {c} replays a MONITOR capture: give it with --monitor-input").into())
                }
                None => Ok(None),
            };
        };
        Ok(MonitorFile::load(path).map(Some)?)
    }

    /// `--scan-incremental-iteration`: the one `SCAN 0 ...` becomes two rows, memtier's
    /// `SCAN 0` (each cycle's first) and `SCAN <cursor>` (the same arguments after the cursor
    /// the last reply returned).
    pub fn follow_scan(
        &self,
        mut commands: Vec<CommandSpec>,
        pipeline: u64,
        extras: &mut Extras,
    ) -> Result<Vec<CommandSpec>, MixError> {
        if !self.scan_incremental_iteration {
            if self.scan_incremental_max_iterations.is_some() {
                return Err("--scan-incremental-max-iterations needs --scan-incremental-iteration".into());
            }
            return Ok(commands);
        }
        if pipeline != 1 {
            return Err(format!("error: --scan-incremental-iteration requires --pipeline 1, not {pipeline}").into());
        }
        if commands.len() != 1 || extras.monitor.is_some() || commands[0].name != "SCAN" || commands[0].args.len() < 2 {
            return Err("error: --scan-incremental-iteration requires exactly one --command, a SCAN with its cursor                         (\"SCAN 0 [MATCH pattern] [COUNT count] [TYPE type]\")"
                .into());
        }
        let mut next = commands[0].clone();
        next.name = "SCAN <cursor>".into();
        next.args[1] = vec![ArgPart::Cursor];
        commands[0].name = "SCAN 0".into();
        commands.push(next);
        let max = self.scan_incremental_max_iterations.unwrap_or(0).min(u64::from(u32::MAX)) as u32;
        extras.scan = Some(ScanFollow { max_iterations: max });
        Ok(commands)
    }

    /// `WAIT replicas timeout`, both drawn per request as memtier draws them.
    fn wait(&self, weight: u32, key_pattern: KeyPattern) -> CommandSpec {
        let (min, max) = self.num_slaves.unwrap_or((0, 0));
        let replicas = ArgPart::Between { min, max, normal: false };
        let (min, max) = self.wait_timeout.unwrap_or((0, 0));
        let timeout = ArgPart::Between { min, max, normal: true };
        let args = vec![vec![ArgPart::Lit(b"WAIT".to_vec())], vec![replicas], vec![timeout]];
        CommandSpec { name: "WAIT".into(), args, reads: false, weight, key_pattern, inline: false }
    }
}

fn lit(s: &str) -> Vec<ArgPart> {
    vec![ArgPart::Lit(s.as_bytes().to_vec())]
}

/// `MGET key1 .. keyN`, each key drawn on its own.
fn mget(n: u64, key_pattern: KeyPattern) -> CommandSpec {
    let mut args = vec![lit("MGET")];
    args.extend((0..n.min(u64::from(u16::MAX))).map(|i| vec![ArgPart::MultiKey(i as u16)]));
    CommandSpec { name: "MGET".into(), args, reads: true, weight: 0, key_pattern, inline: false }
}

/// memtier's `SETRANGE key offset value`.
fn setrange(offset: u64, key_pattern: KeyPattern) -> CommandSpec {
    let args = vec![lit("SETRANGE"), vec![ArgPart::Key], lit(&offset.to_string()), vec![ArgPart::Data]];
    CommandSpec { name: "SETRANGE".into(), args, reads: false, weight: 0, key_pattern, inline: false }
}

/// memtier's `GETRANGE key offset -1`: the value written at the offset.
fn getrange(offset: u64, key_pattern: KeyPattern) -> CommandSpec {
    let args = vec![lit("GETRANGE"), vec![ArgPart::Key], lit(&offset.to_string()), lit("-1")];
    CommandSpec { name: "GETRANGE".into(), args, reads: true, weight: 0, key_pattern, inline: false }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(set: u32, get: u32) -> Mix {
        let p = KeyPattern::Random;
        Mix { set_weight: set, get_weight: get, set_pattern: p, get_pattern: p, expiry: false }
    }

    #[test]
    fn mget_divides_the_get_weight() {
        let flags = WorkloadFlags { multi_key_get: Some(3), ..Default::default() };
        let c = flags.default_mix(&mix(1, 10)).unwrap();
        // memtier's cycle of 10 GETs: MGETs of 3, 3, 3 and 1 keys.
        assert_eq!((c[1].name.as_str(), c[1].weight, c[1].args.len()), ("MGET", 3, 4));
        assert_eq!((c[2].name.as_str(), c[2].weight, c[2].args.len()), ("MGET", 1, 2));
        // Fewer GETs than keys: one MGET of them all, as memtier's first MGET.
        let c = WorkloadFlags { multi_key_get: Some(5), ..Default::default() }.default_mix(&mix(1, 2)).unwrap();
        assert_eq!((c[1].weight, c[1].args.len(), c.len()), (1, 3, 2));
        let c = WorkloadFlags { multi_key_get: Some(5), ..Default::default() }.default_mix(&mix(1, 10)).unwrap();
        assert_eq!((c[1].weight, c[1].args.len(), c.len()), (2, 6, 2));
    }

    #[test]
    fn wait_keeps_set_get_and_adds_set_wait() {
        let flags = WorkloadFlags { wait_ratio: Some((5, 1)), ..Default::default() };
        let c = flags.default_mix(&mix(2, 3)).unwrap();
        let weights: Vec<(&str, u32)> = c.iter().map(|c| (c.name.as_str(), c.weight)).collect();
        assert_eq!(weights, [("SET", 10), ("GET", 15), ("WAIT", 2)]);
        assert!(WorkloadFlags { wait_ratio: Some((0, 1)), ..Default::default() }.default_mix(&mix(1, 1)).is_err());
        assert!(wait_ratio("x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn offset_means_setrange_and_getrange() {
        let flags = WorkloadFlags { data_offset: Some(100), ..Default::default() };
        let c = flags.default_mix(&mix(1, 1)).unwrap();
        assert_eq!(c[0].name, "SETRANGE");
        assert_eq!(c[1].args[3], lit("-1"));
    }
}
