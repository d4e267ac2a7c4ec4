//! The Redis protocol, with no I/O: templates that encode commands, and a scanner that
//! validates and classifies replies in place.

mod encode;
mod scan;

pub use encode::{Part, Template, encode_command};
pub use scan::{MAX_BULK_LEN, MAX_DEPTH, ReplyClass, ScanError, Scanned, scan};

/// The first word of an error message (`ERR`, `WRONGTYPE`, `MOVED`, ...): how errors are counted.
pub fn error_prefix(msg: &[u8]) -> &[u8] {
    let end = memchr::memchr(b' ', msg).unwrap_or(msg.len());
    &msg[..end.min(32)]
}

#[cfg(test)]
mod tests {
    #[test]
    fn error_prefix_is_first_word() {
        assert_eq!(super::error_prefix(b"WRONGPASS invalid"), b"WRONGPASS");
        assert_eq!(super::error_prefix(b"ERR"), b"ERR");
        assert_eq!(super::error_prefix(b""), b"");
    }
}
