//! The journal against a real redis-server: a run SIGKILLed mid-way is recovered from its
//! journal (counts equal to what it journaled, within an interval of the server's), a journal
//! cut mid-line still recovers, and a run that ends writes its file atomically and leaves no
//! journal. Every wait is for an event: a line in the journal, a line of `--progress`.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use serde_json::Value;

/// The journal's lines as JSON (whole lines only).
fn journal_lines(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    whole.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn intervals(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["line"] == "interval").collect()
}

/// Replies in an interval line (a sequence's unit row left out).
fn replies(line: &Value) -> u64 {
    line["ops"].as_array().unwrap().iter().filter(|o| o["unit"] != true).map(|o| o["count"].as_u64().unwrap()).sum()
}

/// Waits until the journal holds `n` interval lines (more may come meanwhile).
fn wait_journaled(path: &Path, n: usize) {
    wait_for(&format!("{n} intervals in {}", path.display()), Duration::from_secs(60), || {
        intervals(&journal_lines(path)).len() >= n
    });
}

fn recover(journal: &Path, json: &Path) -> (std::process::Output, Value) {
    let out =
        respbench().args(["recover", journal.to_str().unwrap(), "--json", json.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (out, read_json(json))
}

#[test]
fn a_killed_run_is_recovered_from_its_journal_and_a_cut_line_is_left_out() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let journal = dir.path().join("run.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "60s", "-c", "4", "--threads", "1", "--ratio", "1:0"]).args([
        "--key-max",
        "999",
        "--json",
        json.to_str().unwrap(),
    ]);
    let run = Watched::spawn(cmd);
    wait_journaled(&journal, 3);
    run.signal(libc::SIGKILL);
    let out = run.finish();
    assert_eq!(out.status.code(), None, "killed by a signal");
    assert!(!json.exists(), "a killed run writes no result");
    let lines = journal_lines(&journal);
    assert_eq!(lines[0]["line"], "header");
    let journaled = intervals(&lines);
    assert!(journaled.len() >= 3);
    let counted: u64 = journaled.iter().map(|l| replies(l)).sum();
    let biggest = journaled.iter().map(|l| replies(l)).max().unwrap();

    let recovered = dir.path().join("recovered.json");
    let (out, doc) = recover(&journal, &recovered);
    assert!(stdout(&out).contains("INTERRUPTED run recovered from"), "{}", stdout(&out));
    assert_eq!(doc["interrupted"], true);
    assert_eq!(doc["recovered"]["intervals"], journaled.len() as u64);
    assert_eq!(doc["recovered"]["cut_line"], false);
    let last = journaled.last().unwrap();
    let end = last["start_secs"].as_f64().unwrap() + last["duration_secs"].as_f64().unwrap();
    assert!((doc["recovered"]["last_interval_end_secs"].as_f64().unwrap() - end).abs() < 1e-9);
    assert_eq!(doc["totals"]["count"], counted, "the recovered count is the journaled intervals'");
    assert_eq!(doc["time_series"].as_array().unwrap().len(), journaled.len());
    let t = &doc["totals"];
    let n = |k: &str| t[k].as_u64().unwrap();
    assert_eq!(n("sent"), n("count") + n("failed") + n("abandoned"), "{t}");
    // The server executed every journaled SET, and at most what the unjournaled interval under
    // way (and the collector's lag behind it) added.
    let calls = server.calls("set");
    assert!(calls >= counted, "server {calls} < journaled {counted}");
    assert!(calls - counted <= 3 * biggest + 4, "server {calls}, journaled {counted}, interval up to {biggest}");
    // Percentiles come from the journaled histograms.
    assert!(t["latency_us"]["p99_us"].as_f64().unwrap() > 0.0, "{t}");
    assert!(doc["histograms"]["totals"]["latency"].as_str().unwrap().len() > 10);

    // A power loss in the middle of the last line: read up to the last whole one.
    let text = std::fs::read(&journal).unwrap();
    let last_start = text[..text.len() - 1].iter().rposition(|&b| b == b'\n').unwrap() + 1;
    let cut = dir.path().join("cut.journal");
    std::fs::write(&cut, &text[..last_start + (text.len() - last_start) / 2]).unwrap();
    let (_, doc) = recover(&cut, &dir.path().join("cut.json"));
    assert_eq!(doc["recovered"]["intervals"], journaled.len() as u64 - 1);
    assert_eq!(doc["recovered"]["cut_line"], true);
    assert_eq!(doc["totals"]["count"], counted - replies(last));
}

#[test]
fn a_killed_second_run_recovers_the_first_whole_and_the_second_in_part() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("runs.json");
    let journal = dir.path().join("runs.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--runs", "2", "--duration", "2s", "-c", "2", "--threads", "1"]).args([
        "--ratio",
        "1:0",
        "--key-max",
        "99",
        "--json",
        json.to_str().unwrap(),
    ]);
    let run = Watched::spawn(cmd);
    wait_for("an interval of the second run", Duration::from_secs(60), || {
        intervals(&journal_lines(&journal)).iter().any(|l| l["run"] == 1)
    });
    run.signal(libc::SIGKILL);
    run.finish();
    let lines = journal_lines(&journal);
    assert!(lines.iter().any(|l| l["line"] == "run_ended" && l["run"] == 0), "the first run's end is journaled");
    let (_, doc) = recover(&journal, &dir.path().join("recovered.json"));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2, "{}", doc["runs"]);
    assert_eq!(doc["configuration"]["runs"], 2);
    let counted: u64 = intervals(&lines).iter().map(|l| replies(l)).sum();
    assert_eq!(doc["totals"]["count"], counted);
    assert!(doc["time_series"].as_array().unwrap().iter().any(|p| p["run"] == 1));
}

#[test]
fn a_run_that_ends_writes_its_file_atomically_and_leaves_no_journal() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("done.json");
    let journal = dir.path().join("done.json.journal");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg(), "--duration", "2s", "-c", "2", "--threads", "1", "--key-max", "99"])
        .args(["--progress", "--json", json.to_str().unwrap()])
        .args(["--html", dir.path().join("done.html").to_str().unwrap()]);
    let mut run = Watched::spawn(cmd);
    run.wait_intervals(1);
    // While it runs: the journal, never a partial result.
    assert!(!json.exists());
    wait_journaled(&journal, 1);
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!journal.exists(), "the journal goes once the files are written");
    let mut names: Vec<String> =
        std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(
        names,
        ["done.html", "done.json", "done.json.hlog"],
        "no temporary or journal left (the interval log stays)"
    );
    let doc = read_json(&json);
    assert_eq!(doc["interrupted"], false);
    assert!(doc.get("recovered").is_none());
    // The respbench recover of a file that is no journal: one line, exit 2.
    let out = respbench().args(["recover", json.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("is not a respbench journal"), "{}", stderr(&out));
}

#[test]
fn a_killed_memtier_run_journals_beside_its_json_and_recovers_in_memtiers_layout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("memtier.json");
    let journal = dir.path().join("memtier.json.journal");
    let mut cmd = respbench();
    cmd.args(["memtier", "-p", &server.port_arg(), "--test-time", "60", "-c", "2", "-t", "1", "--ratio", "1:0"])
        .args(["--key-maximum", "999", "--hide-histogram", "--json-out-file", json.to_str().unwrap()]);
    let run = Watched::spawn(cmd);
    wait_journaled(&journal, 2);
    run.signal(libc::SIGKILL);
    let out = run.finish();
    assert_eq!(out.status.code(), None, "killed by a signal");
    assert!(!stderr(&out).contains("journal"), "the journal says nothing under memtier's name: {}", stderr(&out));
    let counted: u64 = intervals(&journal_lines(&journal)).iter().map(|l| replies(l)).sum();
    let back = dir.path().join("back.json");
    let out = respbench()
        .args(["recover", journal.to_str().unwrap(), "--memtier-json", back.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&back);
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(totals["Count"].as_u64(), Some(counted), "{totals}");
}
