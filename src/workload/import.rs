//! Reading memtier's data export (`--data-import`): a CSV of memcached items whose keys and
//! values (arbitrary bytes) a run writes instead of generated ones, and `--data-verify` reads back.
//!
//! The format (memtier's README.import and `file_io.cpp`): the header
//! `dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data`, then one item
//! per row: eight whole numbers, the key and the data. A column that starts with `"` is quoted
//! (a `"` inside doubled, newlines and NULs allowed); any other runs to the next `,` or the end
//! of the line, taken byte for byte (README.import's example keeps its single quotes in the key).
//! `nkey` counts the key's bytes, `nbytes` the data's and a CRLF memcached stores after it;
//! `exptime` is the expiry in seconds (0: none).

use std::path::Path;

use super::holes::{HOLE_EXPIRY, HOLE_KEY};
use crate::config::Config;
use crate::resp::{Part, Template};

message_error!(
    /// An export file that cannot be read or does not parse.
    ImportError
);

/// The header memtier writes and expects.
const HEADER: &[u8] = b"dumpflags, time, exptime";

/// One item of the file (a plain value the plan holds, so it lives in `config`).
pub use crate::config::ImportItem as Item;

/// Reads a whole export file; the error names the file and the line.
pub fn load(path: &Path) -> Result<Vec<Item>, ImportError> {
    let bytes = std::fs::read(path).map_err(|e| format!("error: cannot read --data-import {}: {e}", path.display()))?;
    let items = parse(&bytes).map_err(|e| format!("error: {}:{e}", path.display()))?;
    if items.is_empty() {
        return Err(format!("error: {}: no items to import", path.display()).into());
    }
    Ok(items)
}

/// Parses an export; errors start with the line number.
pub fn parse(bytes: &[u8]) -> Result<Vec<Item>, ImportError> {
    if !bytes.starts_with(HEADER) {
        return Err("1: invalid file, unexpected CSV header (expected 'dumpflags, time, exptime, ...')".into());
    }
    let mut pos = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |p| p + 1);
    let mut line = 2;
    let mut items = Vec::new();
    while pos < bytes.len() {
        if bytes[pos..].iter().all(u8::is_ascii_whitespace) {
            break;
        }
        let start_line = line;
        let err = |what: &str| format!("{start_line}: {what}");
        let mut numbers = [0u64; 8];
        for n in &mut numbers {
            let end =
                memchr::memchr(b',', &bytes[pos..]).ok_or_else(|| err("expected 8 numbers before the key"))? + pos;
            let text = std::str::from_utf8(&bytes[pos..end]).map_err(|_| err("expected a number"))?.trim();
            *n = text.parse().map_err(|_| err(&format!("expected a whole number, got '{text}'")))?;
            pos = end + 1;
        }
        let [_, _, exptime, nbytes, _, _, _, nkey] = numbers;
        let key = column(bytes, &mut pos, &mut line).ok_or_else(|| err("the key's closing '\"' is missing"))?;
        skip_delimiter(bytes, &mut pos).ok_or_else(|| err("expected ',' between the key and the data"))?;
        let value = column(bytes, &mut pos, &mut line).ok_or_else(|| err("the data's closing '\"' is missing"))?;
        if key.is_empty() {
            return Err(err("the key is empty").into());
        }
        if key.len() as u64 != nkey {
            return Err(err(&format!("the key is {} bytes, nkey says {nkey}", key.len())).into());
        }
        if value.len() as u64 + 2 != nbytes {
            return Err(
                err(&format!("the data is {} bytes, nbytes says {} (data and CRLF)", value.len(), nbytes)).into()
            );
        }
        end_of_line(bytes, &mut pos).ok_or_else(|| err("expected the end of the line after the data"))?;
        line += 1;
        items.push(Item { key, value, expiry: exptime });
    }
    Ok(items)
}

/// `, ` between columns.
fn skip_delimiter(bytes: &[u8], pos: &mut usize) -> Option<()> {
    (bytes.get(*pos) == Some(&b',')).then_some(())?;
    *pos += 1;
    while bytes.get(*pos) == Some(&b' ') {
        *pos += 1;
    }
    Some(())
}

/// Spaces, then CRLF or LF (or the end of the file).
fn end_of_line(bytes: &[u8], pos: &mut usize) -> Option<()> {
    while matches!(bytes.get(*pos), Some(b' ' | b'\t' | b'\r')) {
        *pos += 1;
    }
    match bytes.get(*pos) {
        None => Some(()),
        Some(b'\n') => {
            *pos += 1;
            Some(())
        }
        Some(_) => None,
    }
}

/// The column at `pos` (after spaces): quoted when it starts with `"`, else up to the next
/// `,` or line end. `None` for a quoted column that never closes.
fn column(bytes: &[u8], pos: &mut usize, line: &mut usize) -> Option<Vec<u8>> {
    while bytes.get(*pos) == Some(&b' ') {
        *pos += 1;
    }
    if bytes.get(*pos) == Some(&b'"') {
        *pos += 1;
        return quoted(bytes, pos, line);
    }
    let rest = &bytes[*pos..];
    let len = rest.iter().position(|b| matches!(b, b',' | b'\r' | b'\n')).unwrap_or(rest.len());
    *pos += len;
    Some(rest[..len].to_vec())
}

/// The inside of a `"..."` column, `""` standing for `"`; counts the newlines inside.
fn quoted(bytes: &[u8], pos: &mut usize, line: &mut usize) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let b = *bytes.get(*pos)?;
        *pos += 1;
        match b {
            b'"' if bytes.get(*pos) == Some(&b'"') => {
                out.push(b'"');
                *pos += 1;
            }
            b'"' => return Some(out),
            b => {
                *line += usize::from(b == b'\n');
                out.push(b);
            }
        }
    }
}

/// `--data-import` compiled: which commands send items, and their templates.
#[derive(Debug)]
pub(super) struct Imported {
    pub(super) set: usize,
    pub(super) get: Option<usize>,
    pub(super) sets: Vec<Template>,
    pub(super) gets: Vec<Template>,
}

impl Imported {
    pub(super) fn compile(config: &Config) -> Option<Imported> {
        let import = config.extras.import.as_ref()?;
        let set = config.commands.iter().position(|c| c.name == "SET")?;
        let lit = |b: &[u8]| vec![Part::Lit(b.to_vec())];
        let sets = import.items.iter().map(|item| {
            let key = if import.generate_keys {
                vec![Part::Lit(config.keys.prefix.as_bytes().to_vec()), Part::Hole(HOLE_KEY)]
            } else {
                lit(&item.key)
            };
            // memtier writes an item that expires with SETEX (`--expiry-range` wins over the
            // file's exptime, `--no-expiry` drops both), the others with SET.
            let expiry = if import.no_expiry {
                None
            } else if config.expiry.is_some() {
                Some(vec![Part::Hole(HOLE_EXPIRY)])
            } else {
                (item.expiry > 0).then(|| lit(item.expiry.to_string().as_bytes()))
            };
            match expiry {
                Some(secs) => Template::new(&[lit(b"SETEX"), key, secs, lit(&item.value)]),
                None => Template::new(&[lit(b"SET"), key, lit(&item.value)]),
            }
        });
        let gets = import.items.iter().filter(|_| !import.generate_keys);
        Some(Imported {
            set,
            get: config.commands.iter().position(|c| c.name == "GET").filter(|_| !import.generate_keys),
            sets: sets.collect(),
            gets: gets.map(|item| Template::new(&[lit(b"GET"), lit(&item.key)])).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_memtiers_export() {
        let file = b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n\
                     0, 0, 0, 7, 0, 0, 1, 4, \"k:01\", \"abcde\"\n\
                     0, 5, 60, 8, 0, 0, 1, 2, \"k2\", \"a\"\"b\nc\0\"\r\n";
        let items = parse(file).unwrap();
        assert_eq!(items[0], Item { key: b"k:01".to_vec(), value: b"abcde".to_vec(), expiry: 0 });
        assert_eq!(items[1], Item { key: b"k2".to_vec(), value: b"a\"b\nc\0".to_vec(), expiry: 60 });
    }

    #[test]
    fn parses_the_unquoted_columns_of_memtiers_readme() {
        // README.import's example: the single quotes are bytes of the key and the data.
        let file = b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n\
                     0, 0, 60, 19, 200, 0, 1, 11, 'doxrpshny', 'asdfghjklqwerty'\r\n\
                     0, 0, 0, 7, 0, 0, 1, 5, plain, \"hello\"\n\
                     0, 0, 0, 7, 0, 0, 1, 5, \"key:2\", world";
        let items = parse(file).unwrap();
        let item = |k: &[u8], v: &[u8], expiry| Item { key: k.to_vec(), value: v.to_vec(), expiry };
        assert_eq!(items[0], item(b"'doxrpshny'", b"'asdfghjklqwerty'", 60));
        assert_eq!(items[1], item(b"plain", b"hello", 0));
        assert_eq!(items[2], item(b"key:2", b"world", 0));
        let bad = b"dumpflags, time, exptime\n0, 0, 0, 7, 0, 0, 1, 4, plain, hello\n";
        assert!(parse(bad).unwrap_err().starts_with("2: the key is 5 bytes, nkey says 4"), "{:?}", parse(bad));
        let bad = b"dumpflags, time, exptime\n0, 0, 0, 7, 0, 0, 1, 2, k1, \"hello\n";
        assert!(parse(bad).unwrap_err().contains("closing"), "{:?}", parse(bad));
        let bad = b"dumpflags, time, exptime\n0, 0, 0, 7, 0, 0, 1, 2, k1, hello x\n";
        assert!(parse(bad).unwrap_err().contains("the data is 7 bytes"), "{:?}", parse(bad));
    }

    #[test]
    fn bad_files_name_the_line() {
        assert!(parse(b"key,value\n").unwrap_err().contains("header"));
        let bad = b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n\
                    0, 0, 0, 9, 0, 0, 1, 2, \"k1\", \"abc\"\n";
        assert!(parse(bad).unwrap_err().starts_with("2: the data is 3 bytes"), "{:?}", parse(bad));
        let bad = b"dumpflags, time, exptime\n0, x, 0, 5, 0, 0, 1, 2, \"k1\", \"abc\"\n";
        assert!(parse(bad).unwrap_err().contains("'x'"));
    }
}
