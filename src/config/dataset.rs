//! A dataset as the source of arguments (`--dataset FILE`): a CSV or TSV file with a header,
//! whose rows fill the `__field:NAME__` placeholders of the commands, one row per command sent,
//! the rows taken in order (connection `i` of `c` takes rows `i`, `i + c`, ...). Only the
//! columns the commands name are kept, each value as the bytes it is sent as (a
//! `__field:NAME:base64__` column decoded once, here), so sending patches them in as any other
//! hole: nothing is parsed or allocated per request.

use std::fmt;
use std::path::{Path, PathBuf};

use super::command::{ArgPart, CommandSpec, FieldRef};

/// The columns the commands name, row by row.
#[derive(Clone, PartialEq, Eq)]
pub struct Dataset {
    pub path: PathBuf,
    /// The header's field names, in order.
    pub header: Vec<String>,
    /// The columns kept: each a field of the header, raw or base64-decoded.
    pub columns: Vec<FieldRef>,
    /// `rows[r][c]`: row `r`'s value of `columns[c]`.
    pub rows: Vec<Vec<Vec<u8>>>,
}

impl fmt::Debug for Dataset {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The rows can be millions: the file and the shape say which dataset it is.
        write!(f, "Dataset({}, {} columns, {} rows)", self.path.display(), self.columns.len(), self.rows.len())
    }
}

/// What is wrong with a dataset, or a command's use of one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatasetError {
    #[error("dataset {path}: cannot read it: {reason}")]
    Unreadable { path: String, reason: String },
    #[error("dataset {path}: it has no header line (the first line names the fields)")]
    NoHeader { path: String },
    #[error("dataset {path}: it has a header and no rows")]
    NoRows { path: String },
    #[error("dataset {path}, line {line}, field '{field}': {what}")]
    Malformed { path: String, line: usize, field: String, what: String },
    #[error("dataset {path}, line {line}: {count} fields where the header has {header} ({what})")]
    Width { path: String, line: usize, count: usize, header: usize, what: &'static str },
    #[error("dataset {path}, line {line}, field '{field}': not base64 (it is read as __field:{field}:base64__)")]
    NotBase64 { path: String, line: usize, field: String },
    #[error("the commands name __field:{field}__, which dataset {path} does not have (its fields: {fields})")]
    UnknownField { path: String, field: String, fields: String },
    #[error("--dataset needs a command that names its fields with __field:NAME__")]
    NoPlaceholder,
    #[error("__field:{field}__ needs a dataset to read it from (--dataset FILE)")]
    NoDataset { field: String },
}

/// The fields `commands` name, each once, in the order they first appear.
pub fn fields_named(commands: &[CommandSpec]) -> Vec<FieldRef> {
    let mut named: Vec<FieldRef> = Vec::new();
    for part in commands.iter().flat_map(|c| c.args.iter().flatten()) {
        if let ArgPart::Field(field) = part
            && !named.contains(field)
        {
            named.push(field.clone());
        }
    }
    named
}

impl Dataset {
    /// Reads `path` (TSV when its name says `.tsv`, else CSV) for the fields `commands` name,
    /// at most `max_rows` rows (all with `None`).
    pub fn for_commands(
        path: &Path,
        max_rows: Option<usize>,
        commands: &[CommandSpec],
    ) -> Result<Dataset, DatasetError> {
        let columns = fields_named(commands);
        if columns.is_empty() {
            return Err(DatasetError::NoPlaceholder);
        }
        let shown = path.display().to_string();
        let bytes =
            std::fs::read(path).map_err(|e| DatasetError::Unreadable { path: shown.clone(), reason: e.to_string() })?;
        let delimiter = if path.to_string_lossy().contains(".tsv") { b'\t' } else { b',' };
        Dataset::parse(&shown, &bytes, delimiter, &columns, max_rows).map(|mut d| {
            d.path = path.to_path_buf();
            d
        })
    }

    /// Parses the file's bytes (`path` names it in errors).
    fn parse(
        path: &str,
        bytes: &[u8],
        delimiter: u8,
        columns: &[FieldRef],
        max_rows: Option<usize>,
    ) -> Result<Dataset, DatasetError> {
        let mut lines = bytes.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l)).enumerate();
        let header = match lines.next() {
            Some((_, line)) if !line.is_empty() => split(path, 1, line, delimiter, &[])?,
            _ => return Err(DatasetError::NoHeader { path: path.into() }),
        };
        let header: Vec<String> = header.into_iter().map(|f| String::from_utf8_lossy(&f).into_owned()).collect();
        let mut at = Vec::with_capacity(columns.len());
        for column in columns {
            match header.iter().position(|h| *h == column.name) {
                Some(i) => at.push(i),
                None => {
                    return Err(DatasetError::UnknownField {
                        path: path.into(),
                        field: column.name.clone(),
                        fields: header.join(", "),
                    });
                }
            }
        }
        let mut rows = Vec::new();
        for (index, line) in lines {
            if max_rows.is_some_and(|max| rows.len() >= max) {
                break;
            }
            // Blank lines (a last newline among them) hold no row.
            if line.is_empty() {
                continue;
            }
            let number = index + 1;
            let fields = split(path, number, line, delimiter, &header)?;
            if fields.len() != header.len() {
                let what = if fields.len() < header.len() { "a short row" } else { "a long row" };
                return Err(DatasetError::Width {
                    path: path.into(),
                    line: number,
                    count: fields.len(),
                    header: header.len(),
                    what,
                });
            }
            let mut row = Vec::with_capacity(columns.len());
            for (column, &i) in columns.iter().zip(&at) {
                let value = if column.base64 {
                    use base64::Engine;
                    base64::engine::general_purpose::STANDARD.decode(&fields[i]).map_err(|_| {
                        DatasetError::NotBase64 { path: path.into(), line: number, field: column.name.clone() }
                    })?
                } else {
                    fields[i].clone()
                };
                row.push(value);
            }
            rows.push(row);
        }
        if rows.is_empty() {
            return Err(DatasetError::NoRows { path: path.into() });
        }
        Ok(Dataset { path: PathBuf::from(path), header, columns: columns.to_vec(), rows })
    }

    /// The column a field reference is kept in.
    pub fn column(&self, field: &FieldRef) -> Option<usize> {
        self.columns.iter().position(|c| c == field)
    }
}

/// One line's fields: a field may be quoted (`"a, b"`), a quote inside written twice (`""`);
/// a quote left open, or text after a closing quote, is an error naming the field (by the
/// header's name, `header` empty while reading the header itself).
fn split(path: &str, line: usize, text: &[u8], delimiter: u8, header: &[String]) -> Result<Vec<Vec<u8>>, DatasetError> {
    let name = |i: usize| header.get(i).cloned().unwrap_or_else(|| format!("#{}", i + 1));
    let bad = |i: usize, what: &str| DatasetError::Malformed {
        path: path.into(),
        line,
        field: name(i),
        what: what.to_string(),
    };
    let mut fields = Vec::new();
    let mut at = 0;
    loop {
        let i = fields.len();
        let mut field = Vec::new();
        if text.get(at) == Some(&b'"') {
            at += 1;
            loop {
                match text.get(at) {
                    None => return Err(bad(i, "a quote is opened and not closed on this line")),
                    Some(b'"') if text.get(at + 1) == Some(&b'"') => {
                        field.push(b'"');
                        at += 2;
                    }
                    Some(b'"') => {
                        at += 1;
                        break;
                    }
                    Some(&b) => {
                        field.push(b);
                        at += 1;
                    }
                }
            }
            match text.get(at) {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(&b) if b == delimiter => at += 1,
                Some(_) => return Err(bad(i, "text after the closing quote (a quote inside a field is written \"\")")),
            }
        } else {
            let end = text[at..].iter().position(|&b| b == delimiter).map_or(text.len(), |p| at + p);
            field.extend_from_slice(&text[at..end]);
            if field.contains(&b'"') {
                return Err(bad(i, "a quote inside a field that does not start with one (quote the whole field)"));
            }
            at = end;
            if at == text.len() {
                fields.push(field);
                return Ok(fields);
            }
            at += 1;
        }
        fields.push(field);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns(names: &[&str]) -> Vec<FieldRef> {
        names.iter().map(|n| FieldRef { name: n.to_string(), base64: false }).collect()
    }

    #[test]
    fn quoted_fields_keep_their_commas_and_quotes() {
        let text = b"id,title,body\r\n1,\"Hello, world\",\"say \"\"hi\"\"\"\n2,plain,\n\n";
        let d = Dataset::parse("d.csv", text, b',', &columns(&["title", "body"]), None).unwrap();
        assert_eq!(d.rows.len(), 2);
        assert_eq!(d.rows[0], vec![b"Hello, world".to_vec(), b"say \"hi\"".to_vec()]);
        assert_eq!(d.rows[1], vec![b"plain".to_vec(), b"".to_vec()]);
        let d = Dataset::parse("d.csv", text, b',', &columns(&["id"]), Some(1)).unwrap();
        assert_eq!(d.rows, vec![vec![b"1".to_vec()]]);
    }

    #[test]
    fn tsv_and_base64() {
        let text = b"k\tv\nx\taGk=\n";
        let cols = vec![FieldRef { name: "v".into(), base64: true }, FieldRef { name: "v".into(), base64: false }];
        let d = Dataset::parse("d.tsv", text, b'\t', &cols, None).unwrap();
        assert_eq!(d.rows[0], vec![b"hi".to_vec(), b"aGk=".to_vec()]);
    }

    #[test]
    fn malformed_rows_name_the_file_line_and_field() {
        let e = |text: &[u8], cols: &[&str]| {
            Dataset::parse("d.csv", text, b',', &columns(cols), None).unwrap_err().to_string()
        };
        assert_eq!(e(b"a,b\n1\n", &["a"]), "dataset d.csv, line 2: 1 fields where the header has 2 (a short row)");
        assert_eq!(
            e(b"a,b\n1,\"open\n", &["a"]),
            "dataset d.csv, line 2, field 'b': a quote is opened and not closed on this line"
        );
        assert!(e(b"a,b\n1,x\"y\n", &["a"]).starts_with("dataset d.csv, line 2, field 'b': a quote inside"));
        assert_eq!(
            e(b"a,b\n1,2\n", &["c"]),
            "the commands name __field:c__, which dataset d.csv does not have (its fields: a, b)"
        );
        assert_eq!(e(b"", &["a"]), "dataset d.csv: it has no header line (the first line names the fields)");
        assert_eq!(e(b"a\n\n", &["a"]), "dataset d.csv: it has a header and no rows");
    }
}
