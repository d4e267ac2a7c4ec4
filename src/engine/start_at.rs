//! `--start-at`: shards on several machines begin their measured phase at one wall-clock
//! instant. The engine connects first, waits here until the warmup must begin, then warms up
//! for exactly the time left, so the measured phase starts on the instant.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// The longest single sleep, so that a stop signal is heard while waiting.
const SLICE: Duration = Duration::from_millis(50);

/// Blocks until `at - warmup` (or a stop signal).
pub fn wait(at: SystemTime, warmup: Duration, stop: &AtomicBool) {
    let begin = at.checked_sub(warmup).unwrap_or(at);
    while !stop.load(Ordering::SeqCst) {
        match begin.duration_since(SystemTime::now()) {
            Ok(left) if !left.is_zero() => std::thread::sleep(left.min(SLICE)),
            _ => return,
        }
    }
}

/// The warmup that makes the measured phase start at `at`, given the load starts at `wall`:
/// the time left; none when `at` has passed (a late start, which the result shows), and the
/// usual `warmup` for the later runs of `--runs`.
pub fn warmup(at: SystemTime, wall: SystemTime, run: usize, warmup: Duration) -> Duration {
    match at.duration_since(wall) {
        Ok(left) => left,
        Err(_) if run > 0 => warmup,
        Err(_) => Duration::ZERO,
    }
}
