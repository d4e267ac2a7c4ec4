//! `--data-verify` and `--verify-only` (memtier's): after the run, or instead of it, read back
//! what a run writes and count the keys whose value differs. Imported items must each be
//! there with the file's value; generated values ('x' repeated, their size fixed or by key)
//! are checked on every key of the range that exists.

use std::process::ExitCode;

use super::run::Ran;
use super::usage::EXIT_FAILURE;
use crate::config::{Config, ValueSize};
use crate::net::Session;
use crate::resp::value::{self, Value};

message_error!(
    /// Why the values cannot be read back, or why they could not be known.
    VerifyError
);

/// Keys per MGET.
const BATCH: usize = 100;

/// What was read back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verified {
    pub keys: u64,
    pub mismatches: u64,
}

/// A benchmark with `--data-verify` (read back after a run that succeeded) or `--verify-only`
/// (instead of it); the run as `run` does it otherwise.
pub(crate) fn around(config: &Config, verify: bool, verify_only: bool, run: impl FnOnce() -> Ran) -> Ran {
    if verify_only {
        return Ran::failed(read_back(config));
    }
    let ran = run();
    if verify && ran.code == ExitCode::SUCCESS { Ran { code: read_back(config), ..ran } } else { ran }
}

/// Reads back what the run wrote; mismatches fail the run (exit 1).
fn read_back(config: &Config) -> ExitCode {
    match verify(config) {
        Ok(v) => {
            eprintln!("Verified {} keys: {} mismatches", v.keys, v.mismatches);
            if v.mismatches == 0 { ExitCode::SUCCESS } else { ExitCode::from(EXIT_FAILURE) }
        }
        Err(e) => {
            eprintln!("respbench: {e}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}

/// Whether `config`'s values can be known after the run; the error says why not.
pub fn check(config: &Config) -> Result<(), VerifyError> {
    match &config.extras.import {
        Some(import) if import.generate_keys => {
            Err("error: --data-verify cannot know which generated key got which imported item: drop --generate-keys"
                .into())
        }
        Some(_) => Ok(()),
        None if config.random_data => Err("error: --data-verify cannot know random values: drop --random-data".into()),
        None if !config.commands.iter().all(|c| c.name == "SET" || c.name == "GET") => {
            Err("error: --data-verify checks what SET writes: it cannot be used with --command or other commands"
                .into())
        }
        None => match config.values {
            ValueSize::Fixed(_) => Ok(()),
            ValueSize::Range { .. } if config.extras.sizes_by_key => Ok(()),
            _ => {
                Err("error: --data-verify needs sizes it can know: -d, or --data-size-range with --data-size-pattern S"
                    .into())
            }
        },
    }
}

/// What a key should hold.
enum Expect {
    /// An imported item's value: a missing key is a mismatch.
    Exact(Vec<u8>),
    /// A generated value of this length: a key never written is no mismatch.
    Generated(usize),
}

/// Reads back every key the plan writes and compares.
pub fn verify(config: &Config) -> Result<Verified, VerifyError> {
    let mut session = Session::open(&config.server).map_err(|e| e.to_string())?;
    let mut result = Verified { keys: 0, mismatches: 0 };
    let mut batch: Vec<(Vec<u8>, Expect)> = Vec::with_capacity(BATCH);
    let mut flush = |batch: &mut Vec<(Vec<u8>, Expect)>| -> Result<(), VerifyError> {
        if batch.is_empty() {
            return Ok(());
        }
        let mut args: Vec<&[u8]> = vec![b"MGET"];
        args.extend(batch.iter().map(|(k, _)| &k[..]));
        let reply = session.call(&args).map_err(|e| format!("error: verifying: {e}"))?;
        let values = match value::parse(&reply.0) {
            Some(Value::Array(values)) if values.len() == batch.len() => values,
            _ => return Err("error: verifying: MGET did not answer an array of the keys asked".into()),
        };
        for ((_, want), got) in batch.iter().zip(values) {
            let ok = match (want, got) {
                (Expect::Generated(_), Value::Nil) => continue,
                (Expect::Exact(w), Value::Str(g)) => *w == g,
                (Expect::Generated(len), Value::Str(g)) => g.len() == *len && g.iter().all(|&b| b == b'x'),
                _ => false,
            };
            result.keys += 1;
            result.mismatches += u64::from(!ok);
        }
        batch.clear();
        Ok(())
    };
    match &config.extras.import {
        Some(import) => {
            for item in import.items.iter() {
                batch.push((item.key.clone(), Expect::Exact(item.value.clone())));
                if batch.len() == BATCH {
                    flush(&mut batch)?;
                }
            }
        }
        None => {
            for k in config.keys.min..=config.keys.max {
                let len = match config.values {
                    ValueSize::Range { min, max } => {
                        crate::workload::size_by_key(min, max, k, config.keys.min, config.keys.max)
                    }
                    _ => config.values.max(),
                };
                batch.push((format!("{}{k}", config.keys.prefix).into_bytes(), Expect::Generated(len)));
                if batch.len() == BATCH {
                    flush(&mut batch)?;
                }
            }
        }
    }
    flush(&mut batch)?;
    Ok(result)
}
