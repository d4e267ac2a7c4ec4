//! The one error of reading a result back: a file, histogram or log line that does not read as
//! what respbench writes.

message_error!(
    /// A saved result, histogram or interval log that does not read; the message names what and where.
    Malformed
);
