//! `--start-at`: shards on several machines begin their measured phase at one wall-clock
//! instant. The engine connects first, waits here until the warmup must begin, then warms up
//! for exactly the time left, so the measured phase starts on the instant.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime};

/// The longest single sleep, so that a stop signal is heard while waiting.
const SLICE: Duration = Duration::from_millis(50);
/// How much earlier than needed the load begins when it may (its warmup absorbs the rest):
/// a sleeping thread can wake tens of milliseconds late on a busy machine, a warmup cannot.
const MARGIN: Duration = Duration::from_millis(50);

/// Blocks until `at - warmup` (or a stop signal); `early`: a little before, when load sent
/// before the instant may be left out (not for `-n allkeys`, which writes each key once).
pub fn wait(at: SystemTime, warmup: Duration, early: bool, stop: &AtomicBool) {
    let lead = if early { warmup + MARGIN } else { warmup };
    let begin = at.checked_sub(lead).unwrap_or(at);
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
