//! Logging in to memcached and its control calls: binary SASL PLAIN, `version` as the
//! liveness probe, and the RESP control commands the engine asks (INFO, DBSIZE, PING,
//! FLUSHALL) answered from memcached's own (`stats`, `version`, `flush_all`) in the RESP
//! shapes their callers read, so the telemetry, preflight and fill work unchanged. Nothing
//! here reads keys: memcached's cmd_get counts only the run's own gets.

use crate::codec::memcache::binary::{self, OP_SASL_AUTH, OP_STAT, OP_VERSION};
use crate::codec::memcache::{Dialect, stats::Stats};

/// What a control command becomes on memcached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ask {
    /// `stats`, answered as INFO's text.
    Info,
    /// `stats`, answered as an integer: curr_items.
    Items,
    /// `version`, answered `+PONG`.
    Ping,
    /// `flush_all`, answered `+OK`.
    Flush,
}

/// The request bytes for a RESP control command, or why memcached has no such thing.
pub(super) fn request(dialect: Dialect, args: &[&[u8]]) -> Result<(Vec<u8>, Ask), String> {
    let word = args.first().map(|w| w.to_ascii_uppercase()).unwrap_or_default();
    let binary = dialect == Dialect::Binary;
    Ok(match word.as_slice() {
        b"INFO" | b"DBSIZE" => {
            let bytes = if binary { binary::request(OP_STAT, b"", b"", b"", 0) } else { b"stats\r\n".to_vec() };
            (bytes, if word == b"INFO" { Ask::Info } else { Ask::Items })
        }
        b"PING" => {
            (if binary { binary::request(OP_VERSION, b"", b"", b"", 0) } else { b"version\r\n".to_vec() }, Ask::Ping)
        }
        b"FLUSHALL" | b"FLUSHDB" => {
            (if binary { binary::request(0x08, b"", b"", b"", 0) } else { b"flush_all\r\n".to_vec() }, Ask::Flush)
        }
        _ => {
            let shown = String::from_utf8_lossy(&word).into_owned();
            return Err(format!("{shown} is not a memcached command"));
        }
    })
}

/// SASL PLAIN's one step: `\0user\0password` under the mechanism name.
pub(super) fn sasl_plain(user: &str, password: &str) -> Vec<u8> {
    let mut value = vec![0];
    value.extend_from_slice(user.as_bytes());
    value.push(0);
    value.extend_from_slice(password.as_bytes());
    binary::request(OP_SASL_AUTH, b"PLAIN", b"", &value, 0)
}

/// memcached's reply in the shape the RESP caller reads.
pub(super) fn answer(dialect: Dialect, ask: Ask, reply: &[u8]) -> Result<Vec<u8>, String> {
    let stats = || if dialect == Dialect::Binary { Stats::parse_binary(reply) } else { Stats::parse_text(reply) };
    Ok(match ask {
        Ask::Info => {
            let text = stats().as_info().ok_or("memcached's stats gave no rusage figures")?;
            let mut out = format!("${}\r\n", text.len()).into_bytes();
            out.extend_from_slice(text.as_bytes());
            out.extend_from_slice(b"\r\n");
            out
        }
        Ask::Items => format!(":{}\r\n", stats().get("curr_items").unwrap_or("0")).into_bytes(),
        Ask::Ping => b"+PONG\r\n".to_vec(),
        Ask::Flush => b"+OK\r\n".to_vec(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_commands_map_to_memcached_ones() {
        assert_eq!(request(Dialect::Text, &[b"INFO"]).unwrap(), (b"stats\r\n".to_vec(), Ask::Info));
        // Sampling keys would count in cmd_get: the preflight skips it on memcached.
        assert!(request(Dialect::Meta, &[b"EXISTS", b"a", b"b"]).is_err());
        assert_eq!(request(Dialect::Binary, &[b"PING"]).unwrap().0[1], OP_VERSION);
        let err = request(Dialect::Text, &[b"CONFIG", b"GET", b"save"]).unwrap_err();
        assert_eq!(err, "CONFIG is not a memcached command");
        let sasl = sasl_plain("u", "pw");
        assert_eq!(&sasl[24..], b"PLAIN\0u\0pw");
    }
}
