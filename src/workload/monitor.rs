//! Replaying a redis MONITOR capture (memtier's `--monitor-input`): each line's command is
//! read the way memtier (and redis's `sdssplitargs`) reads it, arbitrary bytes included, and
//! `--command __monitor_lineN__` / `__monitor_line@__` send one line or pick lines per request.

use std::path::Path;

use crate::config::{ArgPart, CommandSpec, KeyPattern, MonitorPick};

message_error!(
    /// A MONITOR capture that cannot be read, or a line of it a command names that it lacks.
    MonitorError
);

/// The commands of a capture. Like memtier, a line counts as a command from its first `"` on
/// (the timestamp and client before it are dropped; lines without one, such as `OK`, are not
/// commands); a command that does not split is kept as `None` so that numbering matches memtier's.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorFile {
    pub commands: Vec<Option<Vec<Vec<u8>>>>,
    /// The file line each command came from (1-based).
    pub line_of: Vec<usize>,
    pub total_lines: usize,
    /// Lines left out as memtier 2.4 leaves them: HELLO, and the commands not answered with one
    /// reply per request ([`UNREPLAYABLE`]).
    pub skipped: usize,
}

/// Commands the server does not answer with exactly one reply per request: the subscribe side
/// of pub/sub and the streams. memtier 2.4 refuses them as `--command` and skips them in a
/// capture.
pub const UNREPLAYABLE: [&str; 9] = [
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "PSUBSCRIBE",
    "PUNSUBSCRIBE",
    "SSUBSCRIBE",
    "SUNSUBSCRIBE",
    "MONITOR",
    "SYNC",
    "PSYNC",
];

impl MonitorFile {
    /// Reads and splits a capture; warns on stderr about each malformed command and says how
    /// many were loaded. An unreadable file, or one without commands, is an error.
    pub fn load(path: &Path) -> Result<MonitorFile, MonitorError> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("error: failed to open monitor input file {}: {e}", path.display()))?;
        let file = MonitorFile::parse(&bytes);
        for (i, command) in file.commands.iter().enumerate() {
            if command.is_none() {
                eprintln!(
                    "warning: skipping malformed monitor command at line {}: {}",
                    file.line_of[i],
                    String::from_utf8_lossy(line_at(&bytes, file.line_of[i]))
                );
            }
        }
        if file.skipped > 0 {
            eprintln!("{} unreplayable line(s) skipped", file.skipped);
        }
        let valid = file.commands.iter().flatten().count();
        if valid == 0 {
            return Err(format!("error: no commands found in monitor input file: {}", path.display()).into());
        }
        eprintln!("Loaded {valid} monitor commands from {} total lines", file.total_lines);
        Ok(file)
    }

    pub fn parse(bytes: &[u8]) -> MonitorFile {
        let mut file = MonitorFile { commands: Vec::new(), line_of: Vec::new(), total_lines: 0, skipped: 0 };
        let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        for (n, line) in body.split(|&b| b == b'\n').enumerate() {
            if body.is_empty() {
                break;
            }
            file.total_lines += 1;
            let Some(quote) = memchr::memchr(b'"', line) else { continue };
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let command = split_args(&line[quote..]).filter(|args| !args.is_empty());
            let name = command.as_ref().map(|args| args[0].to_ascii_uppercase());
            if name.is_some_and(|name| name == b"HELLO" || UNREPLAYABLE.iter().any(|u| u.as_bytes() == name)) {
                file.skipped += 1;
                continue;
            }
            file.commands.push(command);
            file.line_of.push(n + 1);
        }
        file
    }

    /// A `--command` that names a line: `Some(Ok(Some(n)))` for `__monitor_lineN__` (0-based
    /// index), `Some(Ok(None))` for `__monitor_line@__`, `Some(Err)` for a placeholder that is
    /// invalid, `None` for a command that is no placeholder.
    pub fn placeholder(&self, text: &str) -> Option<Result<Option<usize>, MonitorError>> {
        let rest = text.trim().strip_prefix("__monitor_line")?;
        if rest == "@__" {
            return Some(Ok(None));
        }
        let n = rest.strip_suffix("__").and_then(|d| d.parse::<usize>().ok()).filter(|&n| n >= 1);
        Some(match n {
            Some(n) if n <= self.commands.len() => match &self.commands[n - 1] {
                Some(_) => Ok(Some(n - 1)),
                None => Err(format!(
                    "error: monitor placeholder '{text}' names line {} of the file, which is malformed",
                    self.line_of[n - 1]
                )
                .into()),
            },
            _ => Err(format!(
                "error: invalid monitor placeholder '{text}' (valid range: __monitor_line1__ to __monitor_line{}__ \
                 or __monitor_line@__)",
                self.commands.len()
            )
            .into()),
        })
    }

    /// Command `index` as a command of the mix, sent as captured.
    pub fn command(&self, index: usize, weight: u32, key_pattern: KeyPattern) -> CommandSpec {
        let words = self.commands[index].as_deref().unwrap_or_default();
        let mut spec = CommandSpec::from_words(&[String::from_utf8_lossy(&words[0])], weight, key_pattern, false);
        spec.args = words.iter().map(|w| vec![ArgPart::Lit(w.clone())]).collect();
        spec
    }

    /// `__monitor_line@__`: the valid commands to pick from, each counted in the row of its
    /// command's name; the rows (names in order of first appearance, weight 0 so that only the
    /// pick sends them) are appended to `commands`.
    pub fn pick(&self, weight: u32, random: bool, commands: &mut Vec<CommandSpec>) -> MonitorPick {
        let first = commands.len();
        let mut lines = Vec::new();
        let mut rows = Vec::new();
        for (i, words) in self.commands.iter().enumerate() {
            let Some(words) = words else { continue };
            let name = String::from_utf8_lossy(&words[0]).to_ascii_uppercase();
            let row = match commands[first..].iter().position(|c| c.name == name) {
                Some(r) => first + r,
                None => {
                    commands.push(self.command(i, 0, KeyPattern::Random));
                    commands.len() - 1
                }
            };
            lines.push(words.clone());
            rows.push(row);
        }
        MonitorPick { lines, rows, random, weight }
    }
}

/// Line `n` (1-based) of `bytes`, for messages.
fn line_at(bytes: &[u8], n: usize) -> &[u8] {
    let line = bytes.split(|&b| b == b'\n').nth(n - 1).unwrap_or_default();
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Splits a command the way redis's `sdssplitargs` (and memtier) does: words separated by
/// white space; in "double quotes" the escapes `\xHH`, `\n`, `\r`, `\t`, `\b`, `\a` and `\<c>`;
/// in 'single quotes' only `\'`; a closing quote must be followed by white space or the end.
/// `None` when the quotes are unbalanced or a closing quote is followed by something else.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut args = Vec::new();
    let mut i = 0;
    let at = |i: usize| line.get(i).copied();
    loop {
        while at(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        if i >= line.len() {
            return Some(args);
        }
        let mut word = Vec::new();
        let (mut double, mut single) = (false, false);
        loop {
            let Some(b) = at(i) else {
                if double || single {
                    return None; // unterminated quotes
                }
                break;
            };
            if double {
                let hex_byte = match (b, at(i + 1)) {
                    (b'\\', Some(b'x')) => at(i + 2).and_then(hex).zip(at(i + 3).and_then(hex)),
                    _ => None,
                };
                match (b, at(i + 1)) {
                    _ if hex_byte.is_some() => {
                        let (h, l) = hex_byte.unwrap_or_default();
                        word.push(h * 16 + l);
                        i += 3;
                    }
                    (b'\\', Some(c)) => {
                        word.push(match c {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 8,
                            b'a' => 7,
                            c => c,
                        });
                        i += 1;
                    }
                    (b'"', next) => {
                        if next.is_some_and(|n| !n.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    (b, _) => word.push(b),
                }
            } else if single {
                match (b, at(i + 1)) {
                    (b'\\', Some(b'\'')) => {
                        word.push(b'\'');
                        i += 1;
                    }
                    (b'\'', next) => {
                        if next.is_some_and(|n| !n.is_ascii_whitespace()) {
                            return None;
                        }
                        i += 1;
                        break;
                    }
                    (b, _) => word.push(b),
                }
            } else {
                match b {
                    b' ' | b'\n' | b'\r' | b'\t' => break,
                    b'"' => double = true,
                    b'\'' => single = true,
                    b => word.push(b),
                }
            }
            i += 1;
        }
        args.push(word);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_monitor_lines_with_escapes() {
        let args = split_args(br#""SET" "k\"1" "a\x00b\n" 'it\'s' plain"#).unwrap();
        assert_eq!(
            args,
            vec![b"SET".to_vec(), b"k\"1".to_vec(), b"a\0b\n".to_vec(), b"it's".to_vec(), b"plain".to_vec()]
        );
        assert_eq!(split_args(br#""SET" "unterminated"#), None);
        assert_eq!(split_args(br#""SET"x"#), None);
        assert_eq!(split_args(b"   ").unwrap(), Vec::<Vec<u8>>::new());
    }

    #[test]
    fn loads_commands_numbered_as_memtier_numbers_them() {
        let capture = b"OK\n1700000000.123456 [0 127.0.0.1:5000] \"SET\" \"key\" \"v\"\r\n\
                        1700000000.2 [0 127.0.0.1:5000] \"GET\" \"bad\n\
                        1700000000.3 [0 unix:/tmp/s] \"get\" \"key\"\n";
        let file = MonitorFile::parse(capture);
        assert_eq!(file.total_lines, 4);
        assert_eq!(file.commands.len(), 3);
        assert_eq!(file.commands[0], Some(vec![b"SET".to_vec(), b"key".to_vec(), b"v".to_vec()]));
        assert_eq!(file.commands[1], None);
        assert_eq!(file.line_of, vec![2, 3, 4]);
        assert_eq!(file.placeholder("__monitor_line1__"), Some(Ok(Some(0))));
        assert_eq!(file.placeholder("__monitor_line@__"), Some(Ok(None)));
        assert!(file.placeholder("__monitor_line2__").unwrap().unwrap_err().contains("malformed"));
        let err = file.placeholder("__monitor_lineX__").unwrap().unwrap_err();
        assert!(err.contains("'__monitor_lineX__'") && err.contains("__monitor_line3__"), "{err}");
        assert_eq!(file.placeholder("GET x"), None);
        let mut commands = Vec::new();
        let pick = file.pick(1, false, &mut commands);
        assert_eq!(commands.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["SET", "GET"]);
        assert_eq!(pick.rows, vec![0, 1]);
    }
}
