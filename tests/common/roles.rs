//! What the role tests read: a result's one role and its figures, and the README's Roles
//! section's command line for a kind of role, run as written with `-p` added.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::{Server, respbench, stderr};

/// The one role of a result.
pub fn role(json: &Value) -> &Value {
    let roles = json["roles"].as_array().expect("a roles array");
    assert_eq!(roles.len(), 1, "{roles:?}");
    &roles[0]
}

/// A count of `v`, which must be there.
pub fn count(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// A figure in microseconds (`p99_us`, ...) of `v`, which must be there.
pub fn us(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

/// The README's Roles section's first command line with a role of kind `kind` (`pubsub`,
/// `tracking`, `stream`, `queue`), split into its arguments.
pub fn readme_line(kind: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = &readme[readme.find("### Roles").expect("a Roles section")..];
    let line = section
        .lines()
        .find(|l| l.starts_with("respbench ") && l.contains(&format!(":{kind}:")))
        .unwrap_or_else(|| panic!("a respbench line with a {kind} role"));
    line.split_whitespace().skip(1).map(String::from).collect()
}

/// Runs the README's line for role kind `kind`, which must hold `holds`, against `server` as
/// written with `-p` added, in `dir` (where its outputs land); asserts that it succeeded.
pub fn run_readme_line(server: &Server, kind: &str, holds: &str, dir: &Path) -> Output {
    let args = readme_line(kind);
    assert!(args.join(" ").contains(holds), "{args:?}");
    let out = respbench().current_dir(dir).args(["-p", &server.port_arg()]).args(&args).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

/// What a run wrote: its JSON, read, and its Markdown and HTML reports' text.
pub struct Written {
    pub json: Value,
    pub markdown: String,
    pub html: String,
}

/// Runs respbench against `server` with `args` and `--json`, `--markdown` and `--html` added,
/// asserting success; what it wrote.
pub fn run_written(server: &Server, args: &[&str]) -> Written {
    let dir = tempfile::tempdir().unwrap();
    let [json, markdown, html] = ["out.json", "out.md", "out.html"].map(|name| dir.path().join(name));
    let mut all = args.to_vec();
    for (flag, path) in [("--json", &json), ("--markdown", &markdown), ("--html", &html)] {
        all.extend([flag, path.to_str().unwrap()]);
    }
    super::run_ok(server, &all);
    let text = |path: &Path| std::fs::read_to_string(path).unwrap();
    Written { json: super::read_json(&json), markdown: text(&markdown), html: text(&html) }
}

/// Runs `args` then `-n 10` against `server`; asserts that the run was refused with one line
/// holding each of `says`, exit 2.
pub fn assert_refused(server: &Server, args: &[&str], says: &[&str]) {
    let out = super::run(server, &[args, &["-n", "10"]].concat());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(says.iter().all(|s| err.contains(s)), "{err}");
}
