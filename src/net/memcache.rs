//! Logging in to memcached and its control calls: binary SASL PLAIN, `version` as the
//! liveness probe, and the RESP control commands the engine asks (INFO, DBSIZE, PING,
//! FLUSHALL) answered from memcached's own (`stats`, `version`, `flush_all`) in the RESP
//! shapes their callers read, so the telemetry, preflight and fill work unchanged. Nothing
//! here reads keys: memcached's cmd_get counts only the run's own gets.

use crate::codec::memcache::binary::{self, OP_GETKQ, OP_NOOP, OP_SASL_AUTH, OP_STAT, OP_VERSION};
use crate::codec::memcache::{Dialect, stats::Stats};

message_error!(
    /// A control call that has no memcached counterpart, or a reply that does not read as one.
    NotTranslated
);

/// What a control command becomes on memcached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Ask {
    /// `stats`, answered as INFO's text.
    Info,
    /// `stats`, answered as an integer: curr_items.
    Items,
    /// `version`, answered `+PONG`.
    Ping,
    /// `flush_all`, answered `+OK`.
    Flush,
    /// A multi-key get, answered as MGET's array (nil for a miss): `--data-verify`'s reads.
    Mget(Vec<Vec<u8>>),
}

/// The request bytes for a RESP control command, or why memcached has no such thing.
pub(super) fn request(dialect: Dialect, args: &[&[u8]]) -> Result<(Vec<u8>, Ask), NotTranslated> {
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
        b"MGET" if args.len() > 1 => {
            let keys: Vec<Vec<u8>> = args[1..].iter().map(|k| k.to_vec()).collect();
            let mut bytes = Vec::new();
            if binary {
                for key in &keys {
                    bytes.extend(binary::request(OP_GETKQ, key, b"", b"", 0));
                }
                bytes.extend(binary::request(OP_NOOP, b"", b"", b"", 0));
            } else {
                bytes.extend_from_slice(b"get");
                for key in &keys {
                    bytes.push(b' ');
                    bytes.extend_from_slice(key);
                }
                bytes.extend_from_slice(b"\r\n");
            }
            (bytes, Ask::Mget(keys))
        }
        _ => {
            let shown = String::from_utf8_lossy(&word).into_owned();
            return Err(format!("{shown} is not a memcached command").into());
        }
    })
}

/// A binary NOOP: answered only after a login where memcached wants one.
pub(super) fn noop() -> Vec<u8> {
    binary::request(OP_NOOP, b"", b"", b"", 0)
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
pub(super) fn answer(dialect: Dialect, ask: Ask, reply: &[u8]) -> Result<Vec<u8>, NotTranslated> {
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
        Ask::Mget(keys) => {
            let found = if dialect == Dialect::Binary { binary_values(reply) } else { text_values(reply) };
            let mut out = format!("*{}\r\n", keys.len()).into_bytes();
            for key in keys {
                match found.iter().find(|(k, _)| *k == key) {
                    Some((_, v)) => {
                        out.extend(format!("${}\r\n", v.len()).into_bytes());
                        out.extend_from_slice(v);
                        out.extend_from_slice(b"\r\n");
                    }
                    None => out.extend_from_slice(b"$-1\r\n"),
                }
            }
            out
        }
    })
}

/// The (key, value) pairs of a text get reply, already checked whole by the scanner.
fn text_values(reply: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(nl) = memchr::memmem::find(&reply[pos..], b"\r\n") {
        let line = &reply[pos..pos + nl];
        let Some(rest) = line.strip_prefix(b"VALUE ") else { break };
        let mut tokens = rest.split(|&b| b == b' ');
        let (Some(key), Some(_), Some(len)) = (tokens.next(), tokens.next(), tokens.next()) else { break };
        let Some(len) = std::str::from_utf8(len).ok().and_then(|l| l.parse::<usize>().ok()) else { break };
        let start = pos + nl + 2;
        let Some(value) = reply.get(start..start + len) else { break };
        out.push((key.to_vec(), value.to_vec()));
        pos = start + len + 2;
    }
    out
}

/// The (key, value) pairs of a GETKQ ... NOOP reply's hits.
fn binary_values(reply: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while let Ok(Some(p)) = binary::packet(reply, pos, crate::resp::Limits::default()) {
        if p.opcode == OP_GETKQ && p.status == binary::STATUS_OK {
            out.push((reply[p.key.0..p.key.1].to_vec(), reply[p.value.0..p.value.1].to_vec()));
        }
        pos = p.end;
    }
    out
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
        let (_, ask) = request(Dialect::Text, &[b"MGET", b"a", b"b"]).unwrap();
        let reply = answer(Dialect::Text, ask, b"VALUE b 0 2\r\nxx\r\nEND\r\n").unwrap();
        assert_eq!(reply, b"*2\r\n$-1\r\n$2\r\nxx\r\n");
        let sasl = sasl_plain("u", "pw");
        assert_eq!(&sasl[24..], b"PLAIN\0u\0pw");
    }
}
