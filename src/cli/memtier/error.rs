//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// A memtier_benchmark command line that cannot run as memtier would run it; the message
    /// names the option.
    MemtierError from crate::cli::options::error::OptionsError, crate::config::parse::InvalidValue,
        crate::cli::dialect::ScanError, crate::workload::monitor::MonitorError,
        crate::report::live::push::PushError, crate::report::live::shape::ShapeError, super::mix::MixError
);
