//! Error replies that mean the run cannot succeed as configured (a password is wanted, the
//! command is unknown, the server is a read-only replica or out of memory), each with the fix
//! in words, so that they are named once instead of only counted.

/// One kind of error reply a user can fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hint {
    /// Bit for "said once" bookkeeping.
    pub bit: u8,
    /// Whether a check before the run stops on it (the run could not succeed at all).
    pub fatal: bool,
    pub fix: &'static str,
}

const HINTS: [(&[u8], Hint); 7] = [
    (
        b"NOAUTH",
        Hint {
            bit: 1,
            fatal: true,
            fix: "the server wants a password: pass -a PASSWORD (or --user and -a; --password-file FILE or REDISCLI_AUTH keep it out of ps)",
        },
    ),
    (
        b"WRONGPASS",
        Hint { bit: 2, fatal: true, fix: "the server refused the user name or password: check -a and --user" },
    ),
    (
        b"ERR unknown command",
        Hint {
            bit: 4,
            fatal: false,
            fix: "the server does not know this command: check --command, the server's version, or renamed commands",
        },
    ),
    (
        b"READONLY",
        Hint {
            bit: 8,
            fatal: false,
            fix: "the server is a read-only replica: point respbench at the primary, or send only reads (--ratio 0:1)",
        },
    ),
    (
        b"OOM",
        Hint {
            bit: 16,
            fatal: false,
            fix: "the server is out of memory (maxmemory with noeviction): raise maxmemory, set an eviction policy, or shrink the key range",
        },
    ),
    (
        b"NOPERM",
        Hint {
            bit: 32,
            fatal: false,
            fix: "the ACL user may not run this command: grant it (ACL SETUSER) or connect as another --user",
        },
    ),
    (b"LOADING", Hint { bit: 64, fatal: false, fix: "the server is still loading its dataset: wait until it is done" }),
];

/// The hint for an error message (without its `-`), if it is one a user can fix.
pub fn hint(msg: &[u8]) -> Option<Hint> {
    HINTS.iter().find(|(prefix, _)| msg.starts_with(prefix)).map(|(_, h)| *h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_fixable_errors() {
        assert!(hint(b"NOAUTH Authentication required.").unwrap().fix.contains("-a PASSWORD"));
        assert!(hint(b"WRONGPASS invalid username-password pair").unwrap().fatal);
        assert!(hint(b"ERR unknown command 'FOO', with args beginning with: ").unwrap().fix.contains("--command"));
        assert!(hint(b"READONLY You can't write against a read only replica.").is_some());
        assert!(hint(b"OOM command not allowed when used memory > 'maxmemory'.").is_some());
        assert_eq!(hint(b"ERR syntax error"), None);
        assert_eq!(hint(b"WRONGTYPE Operation against a key"), None);
    }
}
