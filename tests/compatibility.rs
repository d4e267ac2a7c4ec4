//! docs/compatibility.md's option index, held to the parsers: every command line in its
//! "checked with" column is given to its front-end's parser (no server) and must be accepted
//! or refused as the row's status says, and every option a row names must be in one of them.

use std::ffi::OsString;
use std::path::Path;

/// Options the index lists as accepted that this tree's memtier front-end does not parse yet:
/// each must be accepted once it does; until then it may be refused as unknown. Empty when
/// every listed option is in.
const NOT_PARSED_YET: &[&str] = &[];

struct Row {
    names: Vec<String>,
    checks: Vec<String>,
    status: String,
}

/// The rows of the table under `heading` in the option index.
fn rows(doc: &str, heading: &str) -> Vec<Row> {
    let start = doc.find(heading).unwrap_or_else(|| panic!("no '{heading}' in docs/compatibility.md"));
    let ticked = |cell: &str| -> Vec<String> { cell.split('`').skip(1).step_by(2).map(String::from).collect() };
    doc[start..]
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2)
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let names =
                ticked(cells[0]).iter().flat_map(|n| n.split('/').map(String::from).collect::<Vec<_>>()).collect();
            Row { names, checks: ticked(cells[1]), status: cells[2].trim().to_string() }
        })
        .collect()
}

/// The files the checks name by placeholder.
fn files(dir: &Path) -> Vec<(&'static str, String)> {
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    vec![
        ("CERT", write("cert.pem", "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")),
        ("KEY", write("key.pem", "-----BEGIN PRIVATE KEY-----\n-----END PRIVATE KEY-----\n")),
        ("MONITOR", write("monitor.txt", "1700000000.000001 [0 127.0.0.1:5000] \"SET\" \"k\" \"v\"\n")),
        (
            "IMPORT",
            write(
                "import.csv",
                "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n0, 0, 0, 7, 0, 0, 1, 4, \"k:01\", \"abcde\"\n",
            ),
        ),
        ("DATASET", write("dataset.csv", "name\nalice\nbob\n")),
    ]
}

/// A check's words, its placeholders replaced by the files.
fn words(check: &str, files: &[(&str, String)]) -> Vec<OsString> {
    shlex::split(check)
        .unwrap_or_else(|| panic!("'{check}' does not split as a shell would"))
        .into_iter()
        .map(|w| {
            let w = files.iter().fold(w, |w, (name, path)| w.replace(name, path));
            OsString::from(w)
        })
        .collect()
}

/// Checks every row of a table with `parse` (Ok: accepted; Err: the refusal's words).
fn check_table(heading: &str, parse: impl Fn(&[OsString]) -> Result<(), String>) {
    let doc = std::fs::read_to_string("docs/compatibility.md").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    let rows = rows(&doc, heading);
    assert!(rows.len() > 40, "{heading}: {} rows", rows.len());
    let mut wrong = Vec::new();
    for row in &rows {
        let checked = |name: &str| {
            row.checks.iter().any(|c| c.split_whitespace().any(|w| w == name || w.starts_with(&format!("{name}="))))
        };
        for name in &row.names {
            if !row.checks.is_empty() && !checked(name) {
                wrong.push(format!("{name}: named but in no check"));
            }
        }
        for check in &row.checks {
            let result = parse(&words(check, &files));
            let accepted = row.status.starts_with("accepted");
            match (&result, accepted) {
                (Ok(()), true) => {}
                (Err(e), false) if row.names.iter().any(|n| e.contains(n.as_str())) => {}
                (Err(e), true) if row.names.iter().all(|n| NOT_PARSED_YET.contains(&n.as_str())) => {
                    assert!(e.contains("unrecognized") || e.contains("unknown"), "{check}: {e}");
                }
                (Err(e), _) => wrong.push(format!("`{check}` ({}): refused: {e}", row.status)),
                (Ok(()), false) => wrong.push(format!("`{check}` ({}): accepted", row.status)),
            }
        }
    }
    assert!(wrong.is_empty(), "{heading}:\n{}", wrong.join("\n"));
}

#[test]
fn the_memtier_rows_are_what_its_front_end_parses() {
    check_table("### memtier_benchmark 2.4", |args| match respbench::cli::memtier::plan(args) {
        Ok(_) => Ok(()),
        // --help and --version print and exit 0: accepted.
        Err(e) if e.contains("asks for help or the version") => Ok(()),
        Err(e) => Err(e.to_string()),
    });
}

#[test]
fn the_valkey_rows_are_what_its_front_end_parses() {
    check_table("### valkey-benchmark 9", |args| {
        match respbench::cli::redis_benchmark::plan_tests("valkey-benchmark", args) {
            Ok(_) => Ok(()),
            Err(e) if e.contains("asks for help or the version") || e.contains("opens idle connections") => Ok(()),
            Err(e) => Err(e.to_string()),
        }
    });
}
