//! Scenario files (`respbench run FILE.toml`) and `--save-scenario`, against real redis-server
//! processes: a saved command line replays the same requests, phases run in order into one
//! result, and mistakes in a file are reported at their line and column.

mod common;

use std::path::Path;

use common::*;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn a_saved_command_line_replays_the_same_requests() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("x.toml");
    let first = Server::start(&[]);
    let out = run_ok(
        &first,
        &[
            "--seed",
            "7",
            "-n",
            "5000",
            "--ratio",
            "1:3",
            "-q",
            "--save-scenario",
            file.to_str().unwrap(),
            // Outputs of this run, not of the file's.
            "--metrics-listen",
            "127.0.0.1:0",
            "--metrics-linger",
            "1ms",
        ],
    );
    assert!(stderr(&out).contains("scenario saved"), "{}", stderr(&out));
    let second = Server::start(&[]);
    let out = respbench().args(["run", file.to_str().unwrap(), "-p", &second.port_arg()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(first.calls("set"), 1250);
    assert_eq!(first.calls("get"), 3750);
    assert_eq!(second.calls("set"), first.calls("set"));
    assert_eq!(second.calls("get"), first.calls("get"));
    assert_eq!(second.dbsize(), first.dbsize());
    // Same seed, same key streams: the very same keys.
    let keys = |s: &Server| {
        let mut k: Vec<String> = s.cli(&["KEYS", "*"]).lines().map(String::from).collect();
        k.sort();
        k
    };
    assert_eq!(keys(&second), keys(&first));
}

#[test]
fn a_saved_scenario_never_holds_the_password() {
    let server = Server::start(&["--requirepass", "s3cret"]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.toml");
    let out = run_ok(&server, &["-a", "s3cret", "-n", "100", "-q", "--save-scenario", file.to_str().unwrap()]);
    assert!(stderr(&out).contains("RESPBENCH_PASSWORD"), "{}", stderr(&out));
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(!text.contains("s3cret"), "{text}");
    let out = respbench().args(["run", file.to_str().unwrap()]).env("RESPBENCH_PASSWORD", "s3cret").output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.cli_auth("s3cret", &["INFO", "commandstats"]).matches("cmdstat_get").count(), 1);
    let out = respbench().args(["run", file.to_str().unwrap()]).env_remove("RESPBENCH_PASSWORD").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("RESPBENCH_PASSWORD") && stderr(&out).contains("p.toml:"), "{}", stderr(&out));
}

#[test]
fn phases_run_in_order_into_one_result() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "s.toml",
        r#"
description = "fill, then a closed-loop run and a staircase of rates"
[keyspaces.hot]
prefix = "k:"
max = 1999
distribution = "gaussian"
[values.small]
size = "100"
[mixes.rw]
set = 1
get = 1
keyspace = "hot"
[defaults]
connections = 4
threads = 1
seed = 3
values = "small"
[[phase]]
kind = "fill"
mix = "rw"
[[phase]]
kind = "run"
name = "closed"
mix = "rw"
requests = "2000"
repeat = 2
[[phase]]
kind = "steps"
name = "stairs"
mix = "rw"
duration = "300ms"
rates = [1000, 2000]
"#,
    );
    let json = dir.path().join("all.json");
    let html = dir.path().join("all.html");
    let out = respbench()
        .args([
            "run",
            &file,
            "-p",
            &server.port_arg(),
            "--json",
            json.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.dbsize(), 2000);
    let doc = read_json(&json);
    let phases = doc["phases"].as_array().unwrap();
    let names: Vec<&str> = phases.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["fill-1", "closed #1", "closed #2", "stairs rate 1000", "stairs rate 2000"]);
    assert_eq!(phases[0]["result"]["totals"]["count"], 2000);
    assert_eq!(phases[1]["result"]["totals"]["count"], 2000);
    assert!(phases.iter().all(|p| p["ok"] == true));
    assert!(phases[3]["command_line"].as_str().unwrap().contains("--rate 1000"));
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(doc["scenario"]["text"], text);
    let sum = std::process::Command::new("sha256sum").arg(&file).output().unwrap();
    assert_eq!(doc["scenario"]["sha256"], stdout(&sum).split_whitespace().next().unwrap());
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("Phases compared") && page.contains("stairs rate 2000"));
    // respbench report renders the same page from the JSON alone.
    let again = dir.path().join("again.html");
    let out = respbench().args(["report", json.to_str().unwrap(), "-o", again.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&again).unwrap(), page);
}

/// Runs `respbench run` on `text`; expects a usage error and returns its one line.
fn refused(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "bad.toml", text);
    let out = respbench().args(["run", &file, "--dry-run"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("bad.toml:"), "{err}");
    err
}

#[test]
fn mistakes_are_named_at_their_line_column_and_key() {
    let err = refused("[target]\nport = 1\nhots = \"x\"\n[[phase]]\nkind = \"run\"\n");
    assert!(err.contains("bad.toml:3:1") && err.contains("hots"), "{err}");
    let err = refused("[target]\nport = \"many\"\n[[phase]]\nkind = \"run\"\n");
    assert!(err.contains("bad.toml:2:8") && err.contains("port"), "{err}");
    let err = refused("[[phase]]\nkind = \"run\"\nmix = \"nope\"\n");
    assert!(err.contains("bad.toml:3:7") && err.contains("mix") && err.contains("'nope'"), "{err}");
    let err = refused("[[phase]]\nkind = \"sprint\"\n");
    assert!(err.contains("bad.toml:2:8") && err.contains("kind"), "{err}");
    // A value the command line would refuse is refused before anything runs, at its phase.
    let err = refused("[[phase]]\nkind = \"run\"\n\n[[phase]]\nkind = \"run\"\npipeline = 0\n");
    assert!(err.contains("bad.toml:6:1") && err.contains("pipeline") && err.contains("'0'"), "{err}");
    let err = refused("[[phase]]\nkind = \"run\"\nargs = [\"--bogus\"]\n");
    assert!(err.contains("--bogus"), "{err}");
}

#[test]
fn the_schema_for_editors_is_up_to_date() {
    let out = respbench().args(["run", "--schema"]).output().unwrap();
    assert!(out.status.success());
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/scenario-schema.json");
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::write(&path, &out.stdout).unwrap();
    }
    let saved = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        saved == stdout(&out),
        "docs/scenario-schema.json is out of date: UPDATE_SCHEMA=1 cargo test --test scenario the_schema"
    );
    let schema: serde_json::Value = serde_json::from_str(&saved).unwrap();
    assert!(schema["properties"]["phase"].is_object(), "{schema}");
}

#[test]
fn a_memtier_command_line_saves_too_with_the_seed_it_drew() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("m.toml");
    let first = Server::start(&[]);
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &first.port_arg(), "--ratio=1:3", "-n", "100", "-c", "2", "-t", "1"])
        .args(["--hide-histogram", &format!("--save-scenario={}", file.display())])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&file).unwrap().contains("seed = "));
    let second = Server::start(&[]);
    let out = respbench().args(["run", file.to_str().unwrap(), "-p", &second.port_arg()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!((first.calls("set"), first.calls("get")), (50, 150));
    assert_eq!((second.calls("set"), second.calls("get")), (50, 150));
    assert_eq!(second.dbsize(), first.dbsize());
}

#[test]
fn a_fill_phase_to_a_memory_target_goes_through_respbench_fill() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "fill.toml",
        "[values.kb]\nsize = \"1000\"\n[[phase]]\nkind = \"fill\"\nmemory_target = \"8mb\"\nvalues = \"kb\"\nconnections = 4\n",
    );
    let json = dir.path().join("fill.json");
    let out =
        respbench().args(["run", &file, "-p", &server.port_arg(), "--json", json.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let used = server.info_u64("memory", "used_memory") as f64;
    let target = 8.0 * 1024.0 * 1024.0;
    assert!((used - target).abs() / target < 0.1, "used_memory {used}, target {target}");
    let doc = read_json(&json);
    let fill = &doc["phases"][0]["result"];
    assert_eq!(server.dbsize(), fill["key_max"].as_u64().unwrap() - fill["key_min"].as_u64().unwrap() + 1);
}

#[test]
fn fill_and_capacity_refuse_save_scenario_which_would_do_nothing_there() {
    for (sub, extra) in [("fill", vec![]), ("capacity", vec!["--slo", "p99=1ms"])] {
        let flag = ["--save-scenario", "x.toml"];
        let out = respbench().arg(sub).args(&extra).args(flag).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{sub} {flag:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(flag[0]) && stderr(&out).lines().count() == 1, "{}", stderr(&out));
    }
}

#[test]
fn a_report_of_several_files_compares_them_with_ops_per_price() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let mut results = Vec::new();
    for (name, price) in [("small", "0.126"), ("large", "0.504")] {
        let file = write(
            dir.path(),
            &format!("{name}.toml"),
            &format!(
                "[price]\nper_hour = {price}\ncurrency = \"USD\"\n[mixes.m]\nset = 1\nget = 1\n\
                 [[phase]]\nkind = \"fill\"\nkeyspace = \"k\"\n[keyspaces.k]\nmax = 499\n\
                 [[phase]]\nkind = \"run\"\nname = \"mixed\"\nmix = \"m\"\nrequests = \"2000\"\nconnections = 2\nthreads = 1\n"
            ),
        );
        let json = dir.path().join(format!("{name}.json"));
        let out = respbench()
            .args(["run", &file, "-p", &server.port_arg(), "--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        results.push(json);
    }
    let html = dir.path().join("cmp.html");
    let out = respbench().arg("report").args(&results).args(["-o", html.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    for (json, price) in results.iter().zip([0.126, 0.504]) {
        let doc = read_json(json);
        assert_eq!(doc["scenario"]["price"]["per_hour"], price);
        assert_eq!(doc["scenario"]["price"]["currency"], "USD");
        // The fill is not compared: one row per file, its run phase.
        let stem = json.file_stem().unwrap().to_str().unwrap();
        let row = text.lines().find(|l| l.starts_with(stem)).unwrap_or_else(|| panic!("no row {stem}: {text}"));
        assert!(row.contains("mixed"), "{row}");
        let ops = doc["phases"][1]["result"]["totals"]["ops_per_sec"].as_f64().unwrap();
        let per_dollar = format!("{:.0}", ops * 3600.0 / price);
        assert!(row.ends_with(&per_dollar), "{per_dollar} in {row}");
        assert!(row.contains(&format!("{ops:.0}")), "{row}");
        assert!(page.contains(&format!("<td>{per_dollar}</td>")), "{per_dollar} in {page}");
        // One scenario's own page shows its price and each phase's operations per dollar.
        let own = dir.path().join(format!("{stem}.html"));
        let out = respbench().arg("report").arg(json).args(["-o", own.to_str().unwrap()]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let own = std::fs::read_to_string(&own).unwrap();
        assert!(own.contains(&format!("Price: {price} USD per hour")), "{own}");
        assert!(own.contains("<th>ops per USD</th>") && own.contains(&format!("<td>{per_dollar}</td>")), "{own}");
    }
    assert_eq!(text.lines().filter(|l| l.contains("mixed")).count(), 2, "{text}");
}

#[test]
fn a_price_must_be_above_zero() {
    let err = refused("[price]\nper_hour = 0\n[[phase]]\nkind = \"run\"\n");
    assert!(err.contains("bad.toml:2:1") && err.contains("per_hour"), "{err}");
    let err = refused("[price]\nper_hour = 1\ncurrencey = \"EUR\"\n[[phase]]\nkind = \"run\"\n");
    assert!(err.contains("bad.toml:3:1") && err.contains("currencey"), "{err}");
}

/// `respbench redis-benchmark ARGS --save-scenario FILE` on one server, the file on another:
/// the same commands, as many of each, and the same keys.
fn redis_benchmark_round_trip(args: &[&str], commands: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("rb.toml");
    let first = Server::start(&[]);
    let out = respbench()
        .args(["redis-benchmark", "-p", &first.port_arg(), "-q", "--save-scenario", file.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("scenario saved"), "{}", stderr(&out));
    let second = Server::start(&[]);
    let out = respbench().args(["run", file.to_str().unwrap(), "-p", &second.port_arg()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    for command in commands {
        assert!(first.calls(command) > 0, "{command}");
        assert_eq!(second.calls(command), first.calls(command), "{command}");
    }
    assert_eq!(second.dbsize(), first.dbsize());
}

#[test]
fn a_redis_benchmark_command_line_saves_its_tests_as_phases() {
    redis_benchmark_round_trip(
        &["-t", "set,get,lpush,mset", "-n", "2000", "-r", "500", "-c", "4", "-P", "5", "-d", "64", "--seed", "9"],
        &["set", "get", "lpush", "mset"],
    );
    // Without -r, one key per command; a command after the options; a sequence.
    redis_benchmark_round_trip(&["-t", "set,incr", "-n", "500", "-c", "2"], &["set", "incr"]);
    redis_benchmark_round_trip(&["-n", "300", "-r", "50", "hset", "h:__rand_int__", "f", "__data__"], &["hset"]);
    redis_benchmark_round_trip(
        &["-n", "200", "-r", "50", "multi", ";", "2", "incr", "c:__rand_int__", ";", "exec"],
        &["multi", "incr", "exec"],
    );
}

#[test]
fn phases_come_back_in_memory_and_each_speaks_afresh() {
    // Each phase's result comes back to the scenario in memory: nothing is written to the
    // temporary directory. And what a benchmark says once (a fixable error reply's hint) is
    // said once per phase, not once per process.
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let scratch = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "s.toml",
        r#"
[keyspaces.small]
max = 199
[mixes.w]
set = 1
keyspace = "small"
[mixes.odd]
commands = [{ command = "SET __key__ __data__", keyspace = "small" }, { command = "NOSUCHCMD __key__", keyspace = "small" }]
[defaults]
connections = 2
threads = 1
[[phase]]
kind = "fill"
mix = "w"
memory_target = "3mb"
[[phase]]
kind = "run"
name = "odd"
mix = "odd"
requests = "200"
repeat = 2
"#,
    );
    let json = dir.path().join("all.json");
    let out = respbench()
        .env("TMPDIR", scratch.path())
        .args(["run", &file, "-p", &server.port_arg(), "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let left: Vec<_> = std::fs::read_dir(scratch.path()).unwrap().collect();
    assert!(left.is_empty(), "files left in the temporary directory: {left:?}");
    let doc = read_json(&json);
    let phases = doc["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 3);
    assert!(phases[0]["result"]["keys"].as_u64().unwrap() > 0, "{}", phases[0]);
    for phase in &phases[1..] {
        assert_eq!(phase["result"]["totals"]["count"], 200, "{phase}");
        assert!(phase["result"]["errors"].as_object().unwrap().values().any(|n| n.as_u64() > Some(0)), "{phase}");
    }
    let said = stderr(&out).matches("the server does not know this command").count();
    assert_eq!(said, 2, "{}", stderr(&out));
}
