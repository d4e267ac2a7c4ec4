//! Why a command cannot be sent over the run's protocol.

message_error!(
    /// A command the run's protocol cannot send; the message names it.
    CannotSend
);
