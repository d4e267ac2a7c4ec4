//! How long a memtier_benchmark run lasts and how its clients start: `-n`, `--test-time` and
//! the client staircase, as respbench's stop condition and ramp.

use std::time::Duration;

use super::error::MemtierError;
use crate::cli::options::Args;

/// memtier's default `--requests`, per client.
const REQUESTS_PER_CLIENT: u64 = 10_000;

/// How long the run lasts and how its clients start.
pub(super) struct Load {
    pub clients: u64,
    pub threads: u64,
    pub requests: Option<Option<u64>>,
    pub test_time: Option<u64>,
    pub staircase: [Option<u64>; 3],
}

/// `-n`, `--test-time` and the client staircase as respbench's stop condition and ramp.
pub(super) fn load_args(load: Load, args: &mut Args) -> Result<(), MemtierError> {
    let Load { clients, threads, requests, test_time, staircase } = load;
    let connections = clients * threads;
    match staircase {
        [None, None, None] => {}
        [Some(start), Some(step), Some(secs)] => {
            if start >= clients {
                return Err(format!(
                    "memtier_benchmark's --clients-start ({start}) must be less than --clients ({clients})"
                )
                .into());
            }
            if requests.is_some() {
                return Err(
                    "memtier_benchmark's --requests cannot be used with a client staircase: use --test-time".into()
                );
            }
            if test_time.is_none() {
                return Err("memtier_benchmark's client staircase (--clients-start) needs --test-time".into());
            }
            // Per thread in memtier: the same share of every thread's connections in respbench.
            args.connections_start = Some(start * threads);
            args.connections_step = Some(step * threads);
            args.step_duration = Some(Duration::from_secs(secs));
        }
        _ => {
            return Err("memtier_benchmark's --clients-start, --clients-step and --step-duration go together".into());
        }
    }
    args.requests = match (requests, test_time) {
        (Some(_), Some(_)) => return Err("memtier_benchmark's --requests and --test-time exclude each other".into()),
        (_, Some(secs)) => {
            args.duration = Some(Duration::from_secs(secs));
            None
        }
        (Some(None), None) => Some("allkeys".into()),
        // -n counts per client in memtier.
        (Some(Some(n)), None) => Some((rotations(args, n) * connections).to_string()),
        (None, None) => Some((rotations(args, REQUESTS_PER_CLIENT) * connections).to_string()),
    };
    Ok(())
}

/// `-n`'s requests as respbench counts them: under `--transaction` memtier counts each command
/// of a rotation, respbench whole rotations (units), so `-n` becomes the rotations that hold
/// that many commands (rounded up: a rotation is never cut).
fn rotations(args: &Args, requests: u64) -> u64 {
    if !args.transaction {
        return requests;
    }
    let ratio = |i: usize| u64::from(args.command_ratio.get(i).copied().unwrap_or(1));
    let per_rotation: u64 = (0..args.command.len()).map(ratio).sum();
    requests.div_ceil(per_rotation.max(1))
}
