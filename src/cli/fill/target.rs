//! A fill's memory target: a share of the server's memory or a size, as `--memory-target` and
//! `--target-fraction` give it.

use crate::config::parse::{InvalidValue, memory_size};

/// How full to make the server.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryTarget {
    /// A share of the server's memory (its maxmemory, or --memory).
    Percent(f64),
    Bytes(u64),
}

/// `75%`, or a size: `2gb`, `512MiB`, `100000000`.
pub fn memory_target(s: &str) -> Result<MemoryTarget, InvalidValue> {
    if let Some(p) = s.trim().strip_suffix('%') {
        let pct: f64 = p
            .trim()
            .parse()
            .map_err(|_| format!("expected a percentage such as 75% or a size such as 2gb, got '{s}'"))?;
        if !(pct > 0.0 && pct <= 100.0) {
            return Err(format!("'{s}': the percentage must be above 0 and at most 100").into());
        }
        return Ok(MemoryTarget::Percent(pct));
    }
    memory_size(s).map(MemoryTarget::Bytes)
}

/// `0.75`: a share of the server's memory, as a fraction (`--target-fraction`).
pub fn fraction(s: &str) -> Result<MemoryTarget, InvalidValue> {
    match s.trim().parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(MemoryTarget::Percent(f * 100.0)),
        _ => Err(format!("expected a fraction above 0 and at most 1 such as 0.75, got '{s}'").into()),
    }
}
