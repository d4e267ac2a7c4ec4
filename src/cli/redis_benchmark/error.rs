//! What goes wrong here, as one type the folder's files share.

message_error!(
    /// A redis-benchmark command line that cannot run as the tool would run it, or tests that
    /// cannot be saved as a scenario; the message names the option or the test.
    BenchmarkError from crate::cli::options::error::OptionsError, crate::config::parse::InvalidValue,
        crate::cli::dialect::ScanError, crate::cli::scenario::ScenarioError
);
