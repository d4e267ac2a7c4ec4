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

/// Runs respbench against `server` with `args` and `--json` added, asserting success; the
/// result it wrote.
pub fn run_json(server: &Server, args: &[&str]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    super::run_ok(server, &[args, &["--json", json.to_str().unwrap()]].concat());
    super::read_json(&json)
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

/// Two shards of one run merged: each shard's result, the merged result and the merged
/// memtier JSON (`respbench merge --json --memtier-json`).
pub struct Merged {
    pub a: Value,
    pub b: Value,
    pub merged: Value,
    pub memtier: Value,
}

/// Runs `args` twice against `server` as two shards of one run, each with `--json`, and merges
/// them, asserting that every step succeeded.
pub fn merged_shards(server: &Server, args: &[&str]) -> Merged {
    let dir = tempfile::tempdir().unwrap();
    let shard = |name: &str| {
        let json = dir.path().join(name);
        super::run_ok(server, &[args, &["--json", json.to_str().unwrap()]].concat());
        json
    };
    let (a, b) = (shard("a.json"), shard("b.json"));
    let (merged, memtier) = (dir.path().join("merged.json"), dir.path().join("merged.memtier.json"));
    let out = respbench()
        .arg("merge")
        .args([&a, &b])
        .arg("--json")
        .arg(&merged)
        .arg("--memtier-json")
        .arg(&memtier)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let read = super::read_json;
    Merged { a: read(&a), b: read(&b), merged: read(&merged), memtier: read(&memtier) }
}

/// The roles of a result, by name, in the command line's order.
pub fn roles<'a>(doc: &'a Value, names: &[&str]) -> Vec<&'a Value> {
    let roles = doc["roles"].as_array().expect("a roles array");
    let got: Vec<&str> = roles.iter().map(|r| r["name"].as_str().unwrap()).collect();
    assert_eq!(got, names, "{roles:?}");
    roles.iter().collect()
}

/// Each role's requests are its own rows, and the run's totals are theirs added up.
pub fn totals_add_up(doc: &Value, roles: &[&Value]) {
    let requests: u64 = roles.iter().map(|r| count(&r["totals"], "count")).sum();
    assert_eq!(count(&doc["totals"], "count"), requests, "{}", doc["totals"]);
    for role in roles {
        let rows = role["commands"].as_array().expect("the role's rows");
        let own: u64 = rows.iter().map(|row| count(&doc["commands"][row.as_str().unwrap()], "count")).sum();
        assert_eq!(count(&role["totals"], "count"), own, "{role}");
    }
}
