//! The output files a subcommand writes whole.

use crate::report::output::OutputError;

/// Writes an output file (see [`crate::report::output`]); the error names the file and the reason.
pub fn write(path: &std::path::Path, text: &str) -> Result<(), OutputError> {
    crate::report::output::write(path, text.as_bytes())
}
