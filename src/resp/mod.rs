//! The Redis protocol, with no I/O: templates that encode commands, and a scanner that
//! validates and classifies replies in place.

mod encode;
mod hint;
mod out;
mod scan;
pub mod value;

pub use encode::{KEY_HOLE, LenForm, Part, RawPart, Template, encode_command};
pub use hint::{Hint, hint};
pub use out::{Out, Pieces, SHARE_MIN, SLICES_MAX, SendBuf};
pub use scan::{
    Limits, MAX_BULK_LEN, MAX_DEPTH, MAX_LINE, ReplyClass, ScanError, Scanned, bulk_head, count_misses, scan,
    scan_within,
};

/// The first word of an error message (`ERR`, `WRONGTYPE`, `MOVED`, ...): how errors are counted.
pub fn error_prefix(msg: &[u8]) -> &[u8] {
    let end = memchr::memchr(b' ', msg).unwrap_or(msg.len());
    &msg[..end.min(32)]
}

/// Argument `index` of a command encoded as a RESP array (`None` for inline commands or
/// when it has fewer arguments): how cluster mode finds the key of a request it could not
/// route before encoding it, and of a held request whose node left the map.
pub fn nth_arg(encoded: &[u8], index: usize) -> Option<&[u8]> {
    fn header(buf: &[u8], pos: usize, kind: u8) -> Option<(usize, usize)> {
        if buf.get(pos) != Some(&kind) {
            return None;
        }
        // The decimal length up to its CR, read in place.
        let mut n: usize = 0;
        let mut end = pos + 1;
        while let Some(&digit) = buf.get(end).filter(|d| d.is_ascii_digit()) {
            n = n.checked_mul(10)?.checked_add(usize::from(digit - b'0'))?;
            end += 1;
        }
        (end > pos + 1 && buf.get(end) == Some(&b'\r')).then_some((n, end + 2))
    }
    let (count, mut pos) = header(encoded, 0, b'*')?;
    if index >= count {
        return None;
    }
    for i in 0..=index {
        let (len, start) = header(encoded, pos, b'$')?;
        let end = start.checked_add(len)?;
        if i == index {
            return encoded.get(start..end);
        }
        pos = end.checked_add(2)?;
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn nth_arg_finds_arguments() {
        let cmd = b"*3\r\n$3\r\nSET\r\n$5\r\nkey:1\r\n$1\r\nv\r\n";
        assert_eq!(super::nth_arg(cmd, 1), Some(&b"key:1"[..]));
        assert_eq!(super::nth_arg(cmd, 2), Some(&b"v"[..]));
        assert_eq!(super::nth_arg(cmd, 3), None);
        assert_eq!(super::nth_arg(b"PING\r\n", 0), None);
        // Lengths a server could send in a reply read this way: no overflow, no panic.
        assert_eq!(super::nth_arg(b"*2\r\n$18446744073709551615\r\nx\r\n", 1), None);
        assert_eq!(super::nth_arg(b"*2\r\n$99999999999999999999\r\nx\r\n", 0), None);
        assert_eq!(super::nth_arg(b"*2\r\n$-1\r\n", 0), None);
    }

    #[test]
    fn error_prefix_is_first_word() {
        assert_eq!(super::error_prefix(b"WRONGPASS invalid"), b"WRONGPASS");
        assert_eq!(super::error_prefix(b"ERR"), b"ERR");
        assert_eq!(super::error_prefix(b""), b"");
    }
}
