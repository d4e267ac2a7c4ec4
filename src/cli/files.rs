//! The output files a subcommand writes whole.

/// Writes an output file atomically; the error names the file.
pub fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    crate::report::write_atomic(path, text.as_bytes()).map_err(|e| format!("cannot write {}: {e}", path.display()))
}
