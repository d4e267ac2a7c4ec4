//! `--failed-keys` (memtier's `--failed-keys-file`): the requests a run gave up, one CSV row
//! each, after a header: `timestamp,command,key,status,retries`.

use crate::engine::Outcome;

/// The header row.
pub const HEADER: &str = "timestamp,command,key,status,retries\n";

/// The file: the header, then a row per request given up, oldest first. The timestamp is
/// Unix seconds with microseconds (as MONITOR prints them); a key that is not UTF-8 is
/// written with its bytes replaced; a field holding a comma, a quote or a line break is quoted.
pub fn csv(outcome: &Outcome) -> String {
    let mut out = String::with_capacity(HEADER.len() + outcome.failed_keys.len() * 48);
    out.push_str(HEADER);
    for f in &outcome.failed_keys {
        let command = outcome.command_names.get(f.command).map_or("", String::as_str);
        let key = String::from_utf8_lossy(&f.key);
        let (secs, us) = (f.unix_us / 1_000_000, f.unix_us % 1_000_000);
        out.push_str(&format!(
            "{secs}.{us:06},{},{},{},{}\n",
            field(command),
            field(&key),
            field(&f.status),
            f.retries
        ));
    }
    out
}

fn field(text: &str) -> std::borrow::Cow<'_, str> {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\"")).into()
    } else {
        text.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(field("key:1"), "key:1");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
