//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// Flags that do not make a plan (a value out of range, two that conflict); the message
    /// names them.
    OptionsError from crate::config::parse::InvalidValue, crate::cli::secrets::SecretError, crate::workload::monitor::MonitorError,
        crate::net::driver::IoUnavailable, crate::workload::Unsendable,
        crate::cli::memtier::mix::MixError, crate::config::role::RoleError
);
