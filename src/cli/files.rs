//! The output files a subcommand writes whole.

/// Writes an output file (see [`crate::report::output`]); the error names the file and the reason.
pub fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    crate::report::output::write(path, text.as_bytes()).map_err(|e| e.to_string())
}
