//! Where the password comes from besides `-a`: `--password-file` or `REDISCLI_AUTH` (as
//! redis-cli and redis-benchmark read it), so that it need not appear in `ps`.

use std::path::Path;

message_error!(
    /// A password file that cannot be read.
    SecretError
);

/// The variable redis-cli and redis-benchmark read the password from.
pub const PASSWORD_VARIABLE: &str = "REDISCLI_AUTH";

/// The password: `-a`, else the file's first line, else `$REDISCLI_AUTH`, else none.
pub fn password(flag: Option<String>, file: Option<&Path>) -> Result<Option<String>, SecretError> {
    if flag.is_some() {
        return Ok(flag);
    }
    if let Some(path) = file {
        return from_file(path).map(Some);
    }
    Ok(std::env::var(PASSWORD_VARIABLE).ok().filter(|p| !p.is_empty()))
}

/// The first line of `path`, without its line ending. The error names the file, never its content.
fn from_file(path: &Path) -> Result<String, SecretError> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!("--password-file {}: cannot read it ({e}); expected a file holding the password", path.display())
    })?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if line.is_empty() {
        return Err(format!(
            "--password-file {}: the file is empty; expected the password on its first line",
            path.display()
        )
        .into());
    }
    Ok(line.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_then_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret\r\nignored\n").unwrap();
        assert_eq!(password(Some("a".into()), Some(&file)).unwrap().as_deref(), Some("a"));
        assert_eq!(password(None, Some(&file)).unwrap().as_deref(), Some("s3cret"));
        std::fs::write(&file, "").unwrap();
        assert!(password(None, Some(&file)).unwrap_err().contains("empty"));
        let missing = password(None, Some(&dir.path().join("nope"))).unwrap_err();
        assert!(missing.contains("--password-file") && missing.contains("nope"), "{missing}");
    }
}
