//! `--transaction` against a real redis-server, under respbench's own name and memtier's: a
//! rotation of WATCH/GET/MULTI/SET/EXEC is one unit on one key (the server's MONITOR stream
//! shows it), and two connections racing on one key make EXEC abort, counted as aborts.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::*;

const ROTATION: [&str; 5] = ["WATCH __key__", "GET __key__", "MULTI", "SET __key__ __data__", "EXEC"];

/// The rotation as `--command` words.
fn commands() -> Vec<String> {
    ROTATION.iter().map(|c| format!("--command={c}")).collect()
}

/// Runs `run` while the server's MONITOR stream is read; returns its output and, per client
/// address, the commands that client sent (the words of each line), once `units` EXECs showed.
fn monitored_units(server: &Server, units: usize, run: impl FnOnce() -> Output) -> (Output, Vec<Vec<Vec<String>>>) {
    let mut monitor =
        Command::new("redis-cli").args(["-p", &server.port_arg(), "MONITOR"]).stdout(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(monitor.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "OK");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            // `1700000000.123 [0 127.0.0.1:5000] "WATCH" "key:1"`
            let Some((client, words)) = line.split_once(" [").and_then(|(_, rest)| rest.split_once("] ")) else {
                continue;
            };
            let words: Vec<String> = words.split(' ').map(|w| w.trim_matches('"').to_string()).collect();
            if ["WATCH", "GET", "MULTI", "SET", "EXEC"].contains(&words[0].as_str()) {
                let _ = tx.send((client.to_string(), words));
            }
        }
    });
    let out = run();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut by_client: Vec<(String, Vec<Vec<String>>)> = Vec::new();
    let mut execs = 0;
    while execs < units {
        let (client, words) = rx.recv_timeout(Duration::from_secs(10)).expect("MONITOR showed every unit");
        execs += usize::from(words[0] == "EXEC");
        match by_client.iter_mut().find(|(c, _)| *c == client) {
            Some((_, seen)) => seen.push(words),
            None => by_client.push((client, vec![words])),
        }
    }
    let _ = monitor.kill();
    let _ = monitor.wait();
    // Only the connections that ran units (respbench's own look at the keyspace is another).
    let units = by_client.into_iter().map(|(_, seen)| seen).filter(|seen| seen.iter().any(|w| w[0] == "WATCH"));
    (out, units.collect())
}

/// Every client's commands come as whole units, WATCH k, GET k, MULTI, SET k v, EXEC, each
/// unit on one key (MONITOR shows a queued SET when EXEC runs it: an aborted unit has none);
/// returns the keys of the units.
fn unit_keys(clients: &[Vec<Vec<String>>]) -> Vec<String> {
    let mut keys = Vec::new();
    for seen in clients {
        let starts: Vec<usize> = (0..seen.len()).filter(|&i| seen[i][0] == "WATCH").collect();
        assert_eq!(starts.first(), Some(&0), "a client's first command is not a unit's: {seen:?}");
        for (i, &start) in starts.iter().enumerate() {
            let unit = &seen[start..starts.get(i + 1).copied().unwrap_or(seen.len())];
            let names: Vec<&str> = unit.iter().map(|w| w[0].as_str()).collect();
            let whole = names == ["WATCH", "GET", "MULTI", "SET", "EXEC"] || names == ["WATCH", "GET", "MULTI", "EXEC"];
            assert!(whole, "not a unit: {unit:?}");
            let key = &unit[0][1];
            assert!(unit.iter().filter(|w| w.len() > 1).all(|w| w[1] == *key), "a unit with two keys: {unit:?}");
            keys.push(key.clone());
        }
    }
    keys
}

fn native(server: &Server, units: u64, key_max: u64, json: &std::path::Path) -> Output {
    let n = units.to_string();
    let keys = ["--key-min", "1", "--key-max", &key_max.to_string()];
    let args = ["-c", "2", "--threads", "2", "-n", &n, "--transaction", "--json", json.to_str().unwrap()];
    run(server, &[&args[..], &keys[..], &commands().iter().map(String::as_str).collect::<Vec<_>>()[..]].concat())
}

fn memtier(server: &Server, units_per_client: u64, key_max: u64, json: &std::path::Path) -> Output {
    respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &server.port_arg(), "-t", "1", "-c", "2", "--hide-histogram"])
        // memtier counts -n in commands: five per rotation.
        .args(["-n", &(units_per_client * 5).to_string(), "--transaction", "--key-minimum=1"])
        .args([format!("--key-maximum={key_max}"), format!("--json-out-file={}", json.display())])
        .args(commands())
        .output()
        .unwrap()
}

#[test]
fn native_transactions_keep_one_key_per_unit_and_count_aborts_on_a_shared_key() {
    let server = Server::start(&[]);
    let json = server.dir.path().join("one-key.json");
    // One key, two connections on two threads: a SET of one lands between the other's WATCH
    // and EXEC, which then aborts.
    let (out, clients) = monitored_units(&server, 300, || native(&server, 300, 1, &json));
    assert_eq!(
        clients.len(),
        2,
        "two connections: {:?}",
        clients.iter().map(|c| &c[..c.len().min(6)]).collect::<Vec<_>>()
    );
    unit_keys(&clients);
    let doc = read_json(&json);
    let exec = &doc["commands"]["EXEC"];
    let aborts = exec["aborts"].as_u64().unwrap_or(0);
    assert!(aborts > 0, "no EXEC aborted: {exec}");
    assert_eq!(doc["totals"]["aborts"].as_u64(), Some(aborts));
    assert_eq!(doc["totals"]["errors"].as_u64(), Some(0));
    assert_eq!(doc["configuration"]["transaction"], true);
    // Aborts are not misses, and the text says them.
    assert!(stdout(&out).contains(&format!("Aborts: {aborts} of 300 EXEC")), "{}", stdout(&out));
    // Over many keys each unit still keeps to one, and units draw different keys.
    let server = Server::start(&[]);
    let (_, clients) = monitored_units(&server, 40, || native(&server, 40, 1000, &json));
    let keys = unit_keys(&clients);
    assert!(keys.iter().collect::<std::collections::BTreeSet<_>>().len() > 1, "every unit on one key: {keys:?}");
}

#[test]
fn memtier_transactions_keep_one_key_per_unit_and_report_aborts_per_second() {
    let server = Server::start(&[]);
    let json = server.dir.path().join("mb.json");
    let (out, clients) = monitored_units(&server, 300, || memtier(&server, 150, 1, &json));
    assert_eq!(
        clients.len(),
        2,
        "two connections: {:?}",
        clients.iter().map(|c| &c[..c.len().min(6)]).collect::<Vec<_>>()
    );
    assert_eq!(unit_keys(&clients).len(), 300, "-n 750 per client is 150 rotations each");
    let text = stdout(&out);
    assert!(text.contains("Aborts/sec"), "{text}");
    let all = &read_json(&json)["ALL STATS"];
    let (exec, totals) = (all["Execs"]["Aborts/sec"].as_f64().unwrap(), all["Totals"]["Aborts/sec"].as_f64().unwrap());
    assert!(exec > 0.0 && exec == totals, "Execs {exec}, Totals {totals}");
    assert!(all["Sets"].get("Aborts/sec").is_none(), "only EXEC and the totals count aborts");
    let server = Server::start(&[]);
    let (_, clients) = monitored_units(&server, 40, || memtier(&server, 20, 1000, &json));
    let keys = unit_keys(&clients);
    assert!(keys.iter().collect::<std::collections::BTreeSet<_>>().len() > 1, "every unit on one key: {keys:?}");
}

#[test]
fn transaction_without_a_command_is_refused_before_anything_is_sent() {
    let server = Server::start(&[]);
    let out = run(&server, &["--transaction", "-n", "10"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--transaction requires at least one --command"), "{}", stderr(&out));
    let out = respbench().args(["memtier", "-p", &server.port_arg(), "--transaction"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    assert!(stderr(&out).contains("--transaction requires at least one --command"), "{}", stderr(&out));
    assert_eq!(server.calls("set") + server.calls("get"), 0);
}

#[test]
fn a_saved_scenario_keeps_the_transaction() {
    let server = Server::start(&[]);
    let saved = server.dir.path().join("txn.toml");
    let args = ["-c", "2", "-n", "10", "--transaction", "--command=GET __key__", "--command=SET __key__ v", "-q"];
    run_ok(&server, &[&args[..], &["--save-scenario", saved.to_str().unwrap()]].concat());
    assert!(std::fs::read_to_string(&saved).unwrap().contains("\"--transaction\""));
    let before = (server.calls("get"), server.calls("set"));
    let out = respbench().args(["run", saved.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    // Ten units of one GET and one SET each.
    assert_eq!((server.calls("get") - before.0, server.calls("set") - before.1), (10, 10));
}

#[test]
fn a_unit_ends_on_the_connection_it_began_on_when_connections_are_recycled() {
    let server = Server::start(&[]);
    let json = server.dir.path().join("recycled.json");
    // Every 7 replies a fresh connection, which would forget a unit's WATCH and MULTI halfway.
    let args = ["-c", "1", "-n", "60", "--reconnect-every", "7", "--transaction", "--json", json.to_str().unwrap()];
    let commands = commands();
    run_ok(&server, &[&args[..], &commands.iter().map(String::as_str).collect::<Vec<_>>()[..]].concat());
    let doc = read_json(&json);
    assert_eq!(doc["totals"]["errors"].as_u64(), Some(0), "{}", doc["errors"]);
    assert_eq!(doc["commands"]["EXEC"]["count"].as_u64(), Some(60));
    assert!(server.info_u64("stats", "total_connections_received") > 5, "connections were recycled");
}
