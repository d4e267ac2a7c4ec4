//! Servers that do not answer, or do not speak RESP: how a control call tells them apart
//! from a refusal, so that messages say what happened ("did not answer", "is this a TLS
//! port?") instead of a generic failure.

use std::io;
use std::time::Duration;

use super::{ConnectError, Stream};
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
pub(super) fn not_resp(target: &str, buf: &[u8], source: ScanError) -> ConnectError {
    let Some(guess) = guess(buf) else {
        return ConnectError::Protocol { target: target.to_string(), source };
    };
    ConnectError::NotResp { target: target.to_string(), bytes: hex(buf), guess }
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
pub fn guess(buf: &[u8]) -> Option<&'static str> {
    match buf.first()? {
        b'+' | b'-' | b':' | b'$' | b'*' | b'_' | b',' | b'#' | b'!' | b'=' | b'(' | b'%' | b'~' | b'|' | b'>' => None,
        // A TLS record: handshake (0x16) or alert (0x15), version 3.x.
        0x15 | 0x16 if buf.get(1).is_none_or(|&b| b == 0x03) => Some("is this a TLS port? (add --tls)"),
        b'H' if buf.starts_with(b"HTTP/") => Some("is this an HTTP port?"),
        _ => Some("is this a Redis-protocol server?"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tls_bytes_are_named() {
        let e = not_resp("h:1", &[0x16, 0x03, 0x01, 0x00, 0x2a, 1, 2, 3, 4, 5], ScanError::BadType(0x16));
        let msg = e.to_string();
        assert!(msg.starts_with("no RESP reply from h:1: got bytes 0x16 0x03 0x01"), "{msg}");
        assert!(msg.contains("...") && msg.contains("TLS port"), "{msg}");
        assert!(not_resp("h:1", b"HTTP/1.1 400", ScanError::BadType(b'H')).to_string().contains("HTTP"));
        assert!(matches!(not_resp("h:1", b"$x\r\n", ScanError::BadNumber), ConnectError::Protocol { .. }));
    }
}
