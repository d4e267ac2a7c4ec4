//! Why an I/O path cannot run here.

message_error!(
    /// Why an I/O path cannot run on this machine.
    IoUnavailable
);
