//! Servers that do not answer, or do not speak RESP: how a control call tells them apart
//! from a refusal, so that messages say what happened ("did not answer", "is this a TLS
//! port?") instead of a generic failure.

use std::io;
use std::time::Duration;

use super::error::ConnectError;
use super::stream::Stream;
use crate::codec::Protocol;
use crate::resp::ScanError;

/// Bytes shown from a reply that is not RESP.
const SHOWN: usize = 8;

/// Sets how long the next read may wait.
pub(super) fn read_timeout(stream: &Stream, left: Duration) -> io::Result<()> {
    match stream {
        Stream::Tcp(s) => s.set_read_timeout(Some(left)),
        Stream::Unix(s) => s.set_read_timeout(Some(left)),
        Stream::Tls(s) => s.sock.set_read_timeout(Some(left)),
    }
}

/// A read that ended because its timeout passed (Linux says `WouldBlock`).
pub(super) fn timed_out(e: &io::Error) -> bool {
    matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut)
}

/// The scan failed: a reply that is RESP but broken, or no RESP at all (then the first bytes,
/// and a guess at what answers instead).
pub(super) fn not_resp(target: &str, buf: &[u8], source: ScanError, protocol: Protocol) -> ConnectError {
    let spoken = if protocol.is_memcache() { "memcached" } else { "RESP" };
    let Some(guess) = guess_for(buf, protocol) else {
        return ConnectError::Protocol { target: target.to_string(), source, protocol: spoken };
    };
    ConnectError::NotResp { target: target.to_string(), bytes: hex(buf), guess, protocol: spoken }
}

/// `0x16 0x03 0x01 ...`: the first bytes of a reply.
pub fn hex(buf: &[u8]) -> String {
    let mut out: Vec<String> = buf.iter().take(SHOWN).map(|b| format!("0x{b:02x}")).collect();
    if buf.len() > SHOWN {
        out.push("...".into());
    }
    out.join(" ")
}

/// What a reply that does not start like RESP probably is; `None` when it does start like RESP.
/// What a reply that does not start like `protocol`'s probably is; `None` when it does.
pub fn guess_for(buf: &[u8], protocol: Protocol) -> Option<&'static str> {
    let first = *buf.first()?;
    let resp = matches!(
        first,
        b'+' | b'-' | b':' | b'$' | b'*' | b'_' | b',' | b'#' | b'!' | b'=' | b'(' | b'%' | b'~' | b'|' | b'>'
    );
    // A TLS record: handshake (0x16) or alert (0x15), version 3.x.
    if matches!(first, 0x15 | 0x16) && buf.get(1).is_none_or(|&b| b == 0x03) {
        return Some("is this a TLS port? (add --tls)");
    }
    if buf.starts_with(b"HTTP/") {
        return Some("is this an HTTP port?");
    }
    let memcached =
        first == 0x81 || [&b"ERROR"[..], b"CLIENT_ERROR", b"SERVER_ERROR"].iter().any(|p| buf.starts_with(p));
    match (protocol.is_memcache(), resp) {
        (false, true) => None,
        (false, false) if memcached => {
            Some("is this memcached? (add --protocol memcache-text, or memtier's -P memcache_text)")
        }
        (false, false) => Some("is this a Redis-protocol server?"),
        (true, true) => Some("is this a Redis-protocol server? (drop --protocol)"),
        (true, false) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_bytes_are_named() {
        let e =
            not_resp("h:1", &[0x16, 0x03, 0x01, 0x00, 0x2a, 1, 2, 3, 4, 5], ScanError::BadType(0x16), Protocol::Resp);
        let msg = e.to_string();
        assert!(msg.starts_with("no RESP reply from h:1: got bytes 0x16 0x03 0x01"), "{msg}");
        assert!(msg.contains("...") && msg.contains("TLS port"), "{msg}");
        let bad = ScanError::BadType(b'H');
        assert!(not_resp("h:1", b"HTTP/1.1 400", bad, Protocol::Resp).to_string().contains("HTTP"));
        assert!(matches!(
            not_resp("h:1", b"$x\r\n", ScanError::BadNumber, Protocol::Resp),
            ConnectError::Protocol { .. }
        ));
    }

    #[test]
    fn memcached_and_redis_are_told_apart() {
        let bad = ScanError::BadType(b'E');
        let e = not_resp("h:1", b"ERROR\r\n", bad, Protocol::Resp).to_string();
        assert!(e.contains("is this memcached? (add --protocol memcache-text"), "{e}");
        let bad = ScanError::Unrecognised { offset: 0 };
        let e = not_resp("h:1", b"-ERR unknown command\r\n", bad, Protocol::MemcacheText).to_string();
        assert!(e.starts_with("no memcached reply from h:1") && e.contains("(drop --protocol)"), "{e}");
        let e = not_resp("h:1", b"VALUE x\r\n", bad, Protocol::MemcacheText).to_string();
        assert!(e.starts_with("h:1 sent a reply that is not memcached: an unrecognised reply"), "{e}");
    }
}
