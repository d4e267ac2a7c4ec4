//! Cluster mode against a real cluster of 3 primaries and 3 replicas (redis-server
//! --cluster-enabled, joined by redis-cli --cluster create): fills spread over the shards, a
//! slot migrated mid-run (MOVED and ASK followed, at pipeline 1 and 16), a primary killed
//! mid-run (failover).

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;

struct Cluster {
    nodes: Vec<Server>,
}

impl Cluster {
    fn start() -> Cluster {
        Cluster { nodes: cluster(Kind::Redis, 3, 1, &["--cluster-node-timeout", "1000"]) }
    }

    fn primaries(&self) -> Vec<&Server> {
        self.nodes.iter().filter(|n| n.cli(&["INFO", "replication"]).contains("role:master")).collect()
    }

    fn seed(&self) -> &Server {
        &self.nodes[0]
    }

    /// `(id, port, is primary, slot ranges)` for every node, from CLUSTER NODES.
    fn layout(&self) -> Vec<(String, u16, bool, String)> {
        self.seed()
            .cli(&["CLUSTER", "NODES"])
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let port = f[1].split(['@', ':']).nth(1).unwrap().parse().unwrap();
                (f[0].to_string(), port, f[2].contains("master"), f[8..].join(" "))
            })
            .collect()
    }
}

/// How many latencies a result's encoded histogram holds.
fn histogram_len(text: &str) -> u64 {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
    let h: hdrhistogram::Histogram<u64> =
        hdrhistogram::serialization::Deserializer::new().deserialize(&mut std::io::Cursor::new(bytes)).unwrap();
    h.len()
}

fn run_cluster(cluster: &Cluster, args: &[&str]) -> std::process::Output {
    respbench().args(["-p", &cluster.seed().port_arg(), "--cluster"]).args(args).output().unwrap()
}

#[test]
fn a_cluster_fill_leaves_exactly_n_keys_across_the_shards() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("fill.json");
    let html = dir.path().join("fill.html");
    let out = run_cluster(
        &cluster,
        &["-n", "allkeys", "--key-max", "5999", "-c", "6", "--threads", "2", "--json", json.to_str().unwrap()],
    );
    let rendered = respbench().args(["report", json.to_str().unwrap(), "-o", html.to_str().unwrap()]).output().unwrap();
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    assert!(out.status.success(), "{}", stderr(&out));
    let primaries = cluster.primaries();
    assert_eq!(primaries.len(), 3);
    let sizes: Vec<u64> = primaries.iter().map(|p| p.dbsize()).collect();
    assert_eq!(sizes.iter().sum::<u64>(), 6000, "{sizes:?}");
    assert!(sizes.iter().all(|&s| s > 1500), "every shard got its share: {sizes:?}");
    let doc = read_json(&json);
    // The map was known from the start: no redirect.
    assert_eq!(doc["cluster"]["moved"], 0);
    assert_eq!(doc["cluster"]["asked"], 0);
    assert_eq!(doc["cluster"]["nodes"].as_object().unwrap().len(), 3);
    assert_eq!(doc["errors"].as_object().unwrap().len(), 0, "{}", doc["errors"]);
    // Every reply's latency is in its command's histogram once, and in its node's once.
    let histograms = &doc["histograms"];
    let len = |h: &serde_json::Value| histogram_len(h["latency"].as_str().unwrap());
    assert_eq!(len(&histograms["commands"]["SET"]), 6000);
    assert_eq!(histograms["nodes"].as_object().unwrap().values().map(len).sum::<u64>(), 6000);
    // The server's own latency is read on every primary; the combined SET row sums their calls.
    let latency = &doc["server_latency"];
    assert!(latency["unavailable"].is_null(), "{latency}");
    assert_eq!(latency["nodes"].as_object().unwrap().len(), 3, "{latency}");
    assert_eq!(latency["commands"]["SET"]["calls_total"], 6000, "{latency}");
    assert!(latency["commands"]["SET"]["p99_ms"].is_number(), "{latency}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<h2>Cluster nodes</h2>") && page.contains("0 MOVED"), "no cluster section");
    // The check before a run samples keys on the primary of each key's slot.
    let out = run_cluster(&cluster, &["-n", "200", "--key-max", "59999", "-q"]);
    assert!(stderr(&out).contains("keys sampled across the read range"), "{}", stderr(&out));
    let out = run_cluster(&cluster, &["-n", "200", "--key-max", "5999", "-q"]);
    assert!(!stderr(&out).contains("keys sampled"), "{}", stderr(&out));
    // Reads from replicas, and {tag} keys kept on one node per request.
    let out = run_cluster(
        &cluster,
        &["--duration", "1s", "--key-max", "5999", "-c", "6", "--threads", "2", "--read-from-replicas", "yes", "-q"],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let replica_reads: u64 =
        cluster.nodes.iter().filter(|n| !primaries.iter().any(|p| p.port == n.port)).map(|n| n.calls("get")).sum();
    assert!(replica_reads > 100, "{replica_reads} GETs on replicas");
    let out = run_cluster(&cluster, &["-n", "3000", "-c", "3", "--command", "MSET a{tag}:__key__ x b{tag}:__key__ y"]);
    assert!(out.status.success() && !stdout(&out).contains("CROSSSLOT"), "{}", stdout(&out));
    // Each went where its tag's slot is, straight away.
    assert!(stdout(&out).contains("Cluster: 0 MOVED and 0 ASK"), "{}", stdout(&out));
    assert_eq!(primaries.iter().map(|p| p.calls("mset")).sum::<u64>(), 3000);
    // The front-ends' cluster options.
    let port = cluster.seed().port_arg();
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &port, "--cluster-mode", "-n", "100", "-c", "2", "-t", "2"])
        .args(["--ratio=1:0", "--key-prefix=mt:", "--hide-histogram"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = respbench()
        .args(["redis-benchmark", "-p", &port, "--cluster", "-t", "set,lpush,mset", "-n", "600", "-r", "100", "-q"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("errors"), "{}", stdout(&out));
    let memtier_keys: u64 = primaries.iter().map(|p| p.cli(&["KEYS", "mt:*"]).lines().count() as u64).sum();
    assert!(memtier_keys > 0 && memtier_keys <= 400, "{memtier_keys}");
    assert_eq!(primaries.iter().map(|p| p.calls("lpush")).sum::<u64>(), 600);
    // `respbench fill` to a memory target measures the cluster as a whole: every primary's
    // used_memory summed, the keys spread over all of them.
    // What eviction counts (replica output buffers come and go while the replicas catch up).
    let used = |ps: &[&Server]| {
        ps.iter()
            .map(|p| p.info_u64("memory", "used_memory") - p.info_u64("memory", "mem_not_counted_for_evict"))
            .sum::<u64>()
    };
    let target = used(&primaries) + 8 * 1024 * 1024;
    let out = respbench()
        .args(["fill", "-p", &port, "--cluster", "--memory-target", &target.to_string(), "-d", "200"])
        .args(["--key-prefix", "fill:", "-c", "6", "--threads", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let after = used(&primaries) as f64;
    assert!((after - target as f64).abs() < 0.05 * target as f64, "used {after} for a target of {target}");
    for p in &primaries {
        assert!(p.cli(&["KEYS", "fill:*"]).lines().count() > 1000, "a shard without its share");
    }
}

#[test]
fn a_slot_migrated_mid_run_is_followed_through_ask_and_moved() {
    let cluster = Cluster::start();
    let seed = cluster.seed();
    // Every key of the run lives in the slot of the hash tag {k}.
    let slot = seed.cli(&["CLUSTER", "KEYSLOT", "{k}"]);
    let slot_n: u32 = slot.parse().unwrap();
    let layout = cluster.layout();
    let owns = |ranges: &str| {
        ranges.split_whitespace().any(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            (a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()).contains(&slot_n)
        })
    };
    let (src_id, src_port, _, _) = layout.iter().find(|(_, _, primary, r)| *primary && owns(r)).unwrap().clone();
    let (dst_id, dst_port, _, _) = layout.iter().find(|(id, _, primary, _)| *primary && *id != src_id).unwrap().clone();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("migrate.json");
    let child = respbench()
        .args([
            "-p",
            &seed.port_arg(),
            "--cluster",
            "--duration",
            "60s",
            "-c",
            "4",
            "--threads",
            "1",
            "--key-max",
            "199",
        ])
        .args([
            "--command",
            "SET {k}:__key__ __data__",
            "--command",
            "GET {k}:__key__",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let cli = |port: u16, args: &[&str]| {
        let out = Command::new("redis-cli").args(["-p", &port.to_string()]).args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    // The load runs on the slot's owner before the migration starts.
    let src = cluster.nodes.iter().find(|n| n.port == src_port).unwrap();
    let dst = cluster.nodes.iter().find(|n| n.port == dst_port).unwrap();
    src.wait_calls("set", 200);
    assert_eq!(cli(dst_port, &["CLUSTER", "SETSLOT", &slot, "IMPORTING", &src_id]), "OK");
    assert_eq!(cli(src_port, &["CLUSTER", "SETSLOT", &slot, "MIGRATING", &dst_id]), "OK");
    // Keys move in batches while the load runs: the ones already moved answer -ASK.
    loop {
        let keys: Vec<String> =
            cli(src_port, &["CLUSTER", "GETKEYSINSLOT", &slot, "20"]).lines().map(String::from).collect();
        if keys.is_empty() {
            break;
        }
        let port = dst_port.to_string();
        let mut args = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
        args.extend(keys.iter().map(String::as_str));
        assert_eq!(cli(src_port, &args), "OK");
        std::thread::sleep(Duration::from_millis(50));
    }
    // The client has followed an ASK to the new owner.
    dst.wait_calls("asking", 1);
    // The documented order: the new owner first, then the old one, then the rest.
    let mut order = vec![dst_port, src_port];
    order.extend(layout.iter().filter(|(_, p, primary, _)| *primary && *p != dst_port && *p != src_port).map(|l| l.1));
    for port in order {
        assert_eq!(cli(port, &["CLUSTER", "SETSLOT", &slot, "NODE", &dst_id]), "OK");
    }
    // Once every node agrees, a request sent to the old owner is MOVED; the new owner
    // serving 500 more SETs means the load went on long enough to meet one.
    let served = dst.calls("set");
    dst.wait_calls("set", served + 500);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let doc = read_json(&json);
    assert!(doc["cluster"]["asked"].as_u64().unwrap() > 0, "{}", doc["cluster"]);
    assert!(doc["cluster"]["moved"].as_u64().unwrap() > 0, "{}", doc["cluster"]);
    // Every redirect was followed: no request lost, no error of any kind.
    assert_eq!(doc["errors"].as_object().unwrap().len(), 0, "{}", doc["errors"]);
    assert_eq!(doc["totals"]["errors"], 0);
    let moved_keys: u64 = cli(dst_port, &["CLUSTER", "COUNTKEYSINSLOT", &slot]).parse().unwrap();
    assert!(moved_keys > 100, "{moved_keys} keys on the new owner");
}

/// How many error replies of `kind` (`ASK`, `MOVED`) a node has sent.
fn error_replies(node: &Server, kind: &str) -> u64 {
    let prefix = format!("errorstat_{kind}:count=");
    let info = node.cli(&["INFO", "errorstats"]);
    info.lines().find_map(|l| l.strip_prefix(&prefix)).map_or(0, |n| n.trim().parse().unwrap())
}

#[test]
fn a_slot_migrated_under_a_deep_pipeline_is_followed_with_requests_held() {
    // Keys without a hash tag, routed from their digits before they are encoded, 16 deep on
    // each node link: redirected requests join write buffers that hold requests for full links.
    let cluster = Cluster::start();
    let seed = cluster.seed();
    let slot = seed.cli(&["CLUSTER", "KEYSLOT", "key:7"]);
    let slot_n: u32 = slot.parse().unwrap();
    let layout = cluster.layout();
    let owns = |ranges: &str| {
        ranges.split_whitespace().any(|r| {
            let (a, b) = r.split_once('-').unwrap_or((r, r));
            (a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()).contains(&slot_n)
        })
    };
    let (src_id, src_port, _, _) = layout.iter().find(|(_, _, primary, r)| *primary && owns(r)).unwrap().clone();
    let (dst_id, dst_port, _, _) = layout.iter().find(|(id, _, primary, _)| *primary && *id != src_id).unwrap().clone();
    let src = cluster.nodes.iter().find(|n| n.port == src_port).unwrap();
    let dst = cluster.nodes.iter().find(|n| n.port == dst_port).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("migrate.json");
    let child = respbench()
        .args(["-p", &seed.port_arg(), "--cluster", "--duration", "60s", "-c", "4", "--threads", "1", "-P", "16"])
        .args(["--ratio", "1:1", "--key-max", "199", "--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    src.wait_calls("set", 2000);
    assert_eq!(dst.cli(&["CLUSTER", "SETSLOT", &slot, "IMPORTING", &src_id]), "OK");
    assert_eq!(src.cli(&["CLUSTER", "SETSLOT", &slot, "MIGRATING", &dst_id]), "OK");
    let keys: Vec<String> = src.cli(&["CLUSTER", "GETKEYSINSLOT", &slot, "100"]).lines().map(String::from).collect();
    if !keys.is_empty() {
        let port = dst_port.to_string();
        let mut args = vec!["MIGRATE", "127.0.0.1", &port, "", "0", "5000", "KEYS"];
        args.extend(keys.iter().map(String::as_str));
        assert_eq!(src.cli(&args), "OK");
    }
    // A request for the moved key meets -ASK and is followed (ASKING on the new owner).
    wait_for("an ASK", Duration::from_secs(30), || error_replies(src, "ASK") > 0);
    dst.wait_calls("asking", 1);
    let mut order = vec![dst_port, src_port];
    order.extend(layout.iter().filter(|(_, p, primary, _)| *primary && *p != dst_port && *p != src_port).map(|l| l.1));
    for port in order {
        let node = cluster.nodes.iter().find(|n| n.port == port).unwrap();
        assert_eq!(node.cli(&["CLUSTER", "SETSLOT", &slot, "NODE", &dst_id]), "OK");
    }
    // Then one meets -MOVED, and the load goes on on the new owner.
    wait_for("a MOVED", Duration::from_secs(30), || error_replies(src, "MOVED") > 0);
    let served = dst.calls("set");
    dst.wait_calls("set", served + 500);
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let doc = read_json(&json);
    assert!(doc["cluster"]["asked"].as_u64().unwrap() > 0, "{}", doc["cluster"]);
    assert!(doc["cluster"]["moved"].as_u64().unwrap() > 0, "{}", doc["cluster"]);
    // Every redirect was followed: no request lost, no error of any kind.
    assert_eq!(doc["errors"].as_object().unwrap().len(), 0, "{}", doc["errors"]);
    assert_eq!(doc["totals"]["errors"], 0);
    assert!(doc["totals"]["count"].as_u64().unwrap() > 2000, "{}", doc["totals"]);
}

#[test]
fn requests_held_as_key_numbers_and_as_bytes_leave_in_their_order() {
    // SETs are routed from their keys' digits and held as key numbers while their link is
    // full; the APPENDs' key hashes by a literal tag, so they are encoded to be routed and
    // held as bytes, all on the tag's primary, where the two kinds wait in one queue: each
    // joins the pipeline whole, once and in its place, so every node ran exactly what the
    // client counted, and no reply was taken for another request's.
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("mixed.json");
    let args = ["-c", "1", "--threads", "1", "-P", "16", "-n", "3000", "--key-max", "999", "-d", "8"];
    let commands = ["--command=SET k:__key__ __data__", "--command=APPEND s:{h} x"];
    let out = run_cluster(&cluster, &[&args[..], &["--json", json.to_str().unwrap()], &commands[..]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["errors"].as_object().unwrap().len(), 0, "{}", doc["errors"]);
    assert_eq!((doc["cluster"]["moved"].as_u64(), doc["cluster"]["asked"].as_u64()), (Some(0), Some(0)));
    let counted = |name: &str| doc["commands"][name]["count"].as_u64().unwrap();
    let primaries = cluster.primaries();
    let ran = |command: &str| primaries.iter().map(|p| p.calls(command)).collect::<Vec<u64>>();
    let (sets, appends) = (ran("set"), ran("append"));
    assert_eq!(sets.iter().sum::<u64>(), counted("SET"), "{sets:?}");
    assert_eq!(appends.iter().sum::<u64>(), counted("APPEND"), "{appends:?}");
    assert_eq!(counted("SET") + counted("APPEND"), 3000);
    assert!(sets.iter().all(|&n| n > 0), "SETs on every shard: {sets:?}");
    assert_eq!(appends.iter().filter(|&&n| n > 0).count(), 1, "APPENDs on the tag's shard only: {appends:?}");
    let owner = primaries.iter().find(|p| p.calls("append") > 0).unwrap();
    assert_eq!(owner.cli(&["STRLEN", "s:{h}"]), counted("APPEND").to_string());
}

#[test]
fn a_primary_killed_mid_run_fails_over_and_the_run_recovers() {
    let mut cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("failover.json");
    let mut run = Watched::spawn({
        let mut cmd = respbench();
        cmd.args(["-p", &cluster.seed().port_arg(), "--cluster", "--duration", "60s", "-c", "6", "--threads", "2"])
            .args(["--ratio", "1:1", "--key-max", "9999", "--reconnect-backoff", "50ms", "--progress"])
            .args(["--json", json.to_str().unwrap()]);
        cmd
    });
    // A whole interval of traffic first: the baseline.
    run.wait_intervals(1);
    // SIGKILL one primary (not the seed): its replica takes over after the node timeout.
    let victim = cluster
        .nodes
        .iter()
        .position(|n| n.port != cluster.seed().port && n.cli(&["INFO", "replication"]).contains("role:master"))
        .unwrap();
    let victim_port = format!("master_port:{}", cluster.nodes[victim].port);
    let heir = cluster.nodes.iter().position(|n| n.cli(&["INFO", "replication"]).contains(&victim_port)).unwrap();
    cluster.nodes[victim].kill_with_requests_unread();
    // The promoted replica serves the run's SETs, then one more whole interval passes.
    let heir = &cluster.nodes[heir];
    wait_for("the replica's promotion", Duration::from_secs(60), || {
        heir.cli(&["INFO", "replication"]).contains("role:master")
    });
    // (A replica counts the SETs it replicated: count from the promotion on.)
    let replicated = heir.calls("set");
    heir.wait_calls("set", replicated + 500);
    run.wait_fresh_intervals(1);
    run.signal(libc::SIGINT);
    let out = run.finish();
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let doc = read_json(&json);
    assert!(doc["totals"]["errors"].as_u64().unwrap() > 0, "{}", doc["errors"]);
    let outages = doc["faults"]["outages"].as_array().unwrap();
    assert!(!outages.is_empty(), "{}", doc["faults"]);
    let start = outages[0]["start_secs"].as_f64().unwrap();
    assert!(start >= 1.0, "the primary was killed after the first interval: {outages:?}");
    // Throughput is back in the last whole second, on the promoted replica among others.
    let points = doc["time_series"].as_array().unwrap();
    let first = points[0]["ops_per_sec"].as_f64().unwrap();
    let last = points[points.len() - 2]["ops_per_sec"].as_f64().unwrap();
    let series: Vec<String> = points.iter().map(|p| format!("{:.0}", p["ops_per_sec"].as_f64().unwrap())).collect();
    assert!(last > 0.3 * first, "before {first}/s, after {last}/s: {series:?}; {}", doc["faults"]);
    assert!(stdout(&out).contains("Outage:"), "{}", stdout(&out));
}

#[test]
fn a_node_whose_cluster_is_not_formed_is_one_line_and_exit_1() {
    // A cluster node no slot was assigned to: CLUSTER SLOTS is empty, cluster_state:fail.
    let node = Server::start(&["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]);
    assert!(node.cli(&["CLUSTER", "INFO"]).contains("cluster_state:fail"));
    let port = node.port_arg();
    let address = format!("the cluster at 127.0.0.1:{port} serves no slots");
    let runs: [&[&str]; 4] = [
        &["-p", &port, "--cluster", "-n", "100", "-c", "2", "--threads", "2"],
        &["-p", &port, "--cluster", "-n", "100", "-P", "16", "--runs", "2"],
        &["memtier", "-p", &port, "--cluster-mode", "-n", "100", "-c", "2", "--pipeline", "16"],
        &["redis-benchmark", "-p", &port, "--cluster", "-n", "100", "-t", "get", "-q"],
    ];
    for args in runs {
        let out = respbench().args(args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        let lines: Vec<&str> = err.lines().filter(|l| l.contains("serves no slots")).collect();
        assert_eq!(lines.len(), 1, "{args:?}: one line naming the address: {err}");
        assert!(lines[0].contains(&address), "{args:?}: {err}");
    }
}

/// Requests each respbench connection has waiting on a paused primary, from CLIENT LIST's
/// `qbuf` (the query buffer it has not run yet) over the length of one request.
fn waiting_per_connection(node: &Server, request_len: usize) -> Vec<usize> {
    node.cli(&["CLIENT", "LIST"])
        .lines()
        .filter(|l| !l.contains("cmd=client|list"))
        .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("qbuf=")).and_then(|q| q.parse().ok()))
        .filter(|&qbuf: &usize| qbuf > 0)
        .map(|qbuf| qbuf / request_len)
        .collect()
}

#[test]
fn under_memtiers_name_each_primary_gets_a_whole_pipeline_per_connection() {
    // memtier_benchmark's cluster mode: `-c 2 --pipeline 8` over 3 primaries keeps 8 requests
    // in flight on each client's connection to each primary (48), not 8 per client split
    // over the primaries. Writes are paused on every primary, so what each connection sent
    // waits in its query buffer, where CLIENT LIST shows it.
    let cluster = Cluster::start();
    let primaries = cluster.primaries();
    for p in &primaries {
        assert!(p.cli(&["CLIENT", "PAUSE", "60000", "WRITE"]).contains("OK"));
    }
    let (pipeline, clients) = (8, 2);
    let port = cluster.seed().port_arg();
    let mut command = respbench();
    command.args(["memtier", "-s", "127.0.0.1", "-p", &port, "--cluster-mode", "-t", "1", "-c", "2"]);
    command.args(["--pipeline", "8", "--ratio", "1:0", "-d", "10", "-n", "200", "--hide-histogram"]);
    command.args(["--key-minimum", "100000", "--key-maximum", "999999"]);
    let run = Watched::spawn(command);
    // SET memtier-NNNNNN (six digits) to 10 bytes: every request is this long.
    let request_len = "*3\r\n$3\r\nSET\r\n$14\r\nmemtier-123456\r\n$10\r\n0123456789\r\n".len();
    // The first SET of each connection is taken off the buffer to wait for the pause; the
    // rest stay in it.
    let full = |waiting: &[usize]| waiting.len() == clients && waiting.iter().all(|&w| w >= pipeline - 1);
    wait_for("a whole pipeline waiting on every primary", Duration::from_secs(30), || {
        primaries.iter().all(|p| full(&waiting_per_connection(p, request_len)))
    });
    for p in &primaries {
        let waiting = waiting_per_connection(p, request_len);
        assert!(waiting.iter().all(|&w| w < pipeline), "no more than the pipeline per connection: {waiting:?}");
        assert!(p.cli(&["CLIENT", "UNPAUSE"]).contains("OK"));
    }
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let sets: u64 = primaries.iter().map(|p| p.calls("set")).sum();
    assert_eq!(sets, 400, "every request answered once");
}

/// `--transaction` in cluster mode: each rotation goes whole, keyless MULTI and EXEC included,
/// to the primary of its one key, so no command is refused (CROSSSLOT) or redirected (MOVED);
/// under respbench's name and memtier's.
#[test]
fn a_transaction_unit_lands_whole_on_its_keys_shard() {
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("txn.json");
    let rotation = ["WATCH __key__", "GET __key__", "MULTI", "SET __key__ __data__", "EXEC"];
    let commands: Vec<String> = rotation.iter().map(|c| format!("--command={c}")).collect();
    let commands: Vec<&str> = commands.iter().map(String::as_str).collect();
    let args = ["-c", "4", "--threads", "2", "-n", "300", "--transaction", "--key-max", "5999"];
    let out = run_cluster(&cluster, &[&args[..], &["--json", json.to_str().unwrap()], &commands[..]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["errors"].as_object().unwrap().len(), 0, "{}", doc["errors"]);
    assert_eq!((doc["cluster"]["moved"].as_u64(), doc["cluster"]["asked"].as_u64()), (Some(0), Some(0)));
    assert_eq!(doc["commands"]["EXEC"]["count"], 300);
    // Every primary ran whole units: as many MULTIs as EXECs as WATCHes, and the units spread.
    let primaries = cluster.primaries();
    let execs: Vec<u64> = primaries.iter().map(|p| p.calls("exec")).collect();
    for p in &primaries {
        assert_eq!((p.calls("watch"), p.calls("multi")), (p.calls("exec"), p.calls("exec")), "port {}", p.port);
    }
    assert_eq!(execs.iter().sum::<u64>(), 300, "{execs:?}");
    assert!(execs.iter().all(|&n| n > 0), "units on every shard: {execs:?}");
    // memtier's name: -n counts the rotation's five commands.
    let mb = dir.path().join("mb.json");
    let out = respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", &cluster.seed().port_arg(), "--cluster-mode", "--transaction"])
        .args(["-t", "1", "-c", "2", "-n", "250", "--key-maximum=5999", "--hide-histogram"])
        .arg(format!("--json-out-file={}", mb.display()))
        .args(&commands)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("CROSSSLOT") && !stderr(&out).contains("MOVED"), "{}", stderr(&out));
    let totals = &read_json(&mb)["ALL STATS"]["Totals"];
    assert_eq!((totals["MOVED/sec"].as_f64(), totals["Count"].as_u64()), (Some(0.0), Some(500)), "{totals}");
    for p in &primaries {
        assert_eq!((p.calls("watch"), p.calls("multi")), (p.calls("exec"), p.calls("exec")), "port {}", p.port);
    }
    assert_eq!(primaries.iter().map(|p| p.calls("exec")).sum::<u64>(), 400);
}

#[test]
fn under_valkeys_name_each_client_is_bound_to_one_primary_with_its_whole_pipeline() {
    // valkey-benchmark's cluster mode: client i is bound to primary i % 3 and sends its whole
    // pipeline there, so `-c 6 -P 8` keeps two connections with 8 requests each on every
    // primary (not six connections per primary). Writes are paused on every primary, so what
    // each connection sent waits in its query buffer, where CLIENT LIST shows it.
    let cluster = Cluster::start();
    let primaries = cluster.primaries();
    for p in &primaries {
        assert!(p.cli(&["CLIENT", "PAUSE", "60000", "WRITE"]).contains("OK"));
    }
    let (pipeline, per_primary) = (8, 2);
    let mut command = respbench();
    command.args(["valkey-benchmark", "-h", "127.0.0.1", "-p", &cluster.seed().port_arg(), "--cluster"]);
    command.args(["-c", "6", "-P", "8", "-n", "600", "-t", "set", "-q"]);
    let run = Watched::spawn(command);
    // SET key{TAG}:__rand_int__ xxx, the tag naming the client's primary ({0} .. {99999}).
    let request_len = |tag_len: usize| {
        let key = format!("key{{{}}}:__rand_int__", "9".repeat(tag_len - 2));
        format!("*3\r\n$3\r\nSET\r\n${}\r\n{key}\r\n$3\r\nxxx\r\n", key.len()).len()
    };
    // Bytes waiting per connection with any.
    let waiting = |node: &Server| -> Vec<usize> {
        node.cli(&["CLIENT", "LIST"])
            .lines()
            .filter(|l| !l.contains("cmd=client|list"))
            .filter_map(|l| l.split_whitespace().find_map(|f| f.strip_prefix("qbuf=")).and_then(|q| q.parse().ok()))
            .filter(|&qbuf: &usize| qbuf > 0)
            .collect()
    };
    // The first SET of each connection is taken off the buffer to wait for the pause.
    let whole =
        |bytes: &[usize]| bytes.len() == per_primary && bytes.iter().all(|&b| b >= (pipeline - 1) * request_len(3));
    wait_for("two whole pipelines waiting on every primary", Duration::from_secs(30), || {
        primaries.iter().all(|p| whole(&waiting(p)))
    });
    for p in &primaries {
        let bytes = waiting(p);
        assert_eq!(bytes.len(), per_primary, "connections with requests waiting: {bytes:?}");
        assert!(bytes.iter().all(|&b| b < pipeline * request_len(7)), "no more than a pipeline: {bytes:?}");
        assert!(p.cli(&["CLIENT", "UNPAUSE"]).contains("OK"));
    }
    let out = run.finish();
    assert!(out.status.success(), "{}", stderr(&out));
    let sets: u64 = primaries.iter().map(|p| p.calls("set")).sum();
    assert_eq!(sets, 600, "every request answered once");
    // Before the tests, the nodes it loads, on stdout, as the tools list them.
    let layout = cluster.layout();
    // `(heading's count, [(id, port, primary)])` of a listing.
    let listed = |out: &std::process::Output, heading: &str| -> (usize, Vec<(String, u16, bool)>) {
        let text = stdout(out);
        let (count, rest) = text.strip_prefix("Cluster has ").and_then(|t| t.split_once(' ')).expect(&text);
        let rest = rest.strip_prefix(heading).unwrap_or_else(|| panic!("no {heading:?} first:\n{text}"));
        let mut nodes: Vec<(String, u16, bool)> = rest
            .lines()
            .take_while(|l| !l.is_empty())
            .map(|l| {
                let (label, node) = l.split_once(": ").unwrap();
                let (id, addr) = node.split_once(' ').unwrap();
                let port = addr.strip_prefix("127.0.0.1:").unwrap().parse().unwrap();
                (id.to_string(), port, label.ends_with("(Primary)") || label.starts_with("Master "))
            })
            .collect();
        nodes.sort();
        (count.parse().unwrap(), nodes)
    };
    let mut primaries_only: Vec<(String, u16, bool)> =
        layout.iter().filter(|n| n.2).map(|(id, port, p, _)| (id.clone(), *port, *p)).collect();
    primaries_only.sort();
    assert_eq!(listed(&out, "primary nodes:\n\n"), (3, primaries_only.clone()));
    let seed = cluster.seed().port_arg();
    let run = |tool: &str, rfr: &str| {
        let out = respbench()
            .args([tool, "-p", &seed, "--cluster", "--rfr", rfr, "-n", "30", "-t", "get", "-q"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        out
    };
    assert_eq!(listed(&run("redis-benchmark", "no"), "master nodes:\n\n"), (3, primaries_only.clone()));
    // Every primary, and the replicas CLUSTER SLOTS names (those in sync), each marked so.
    let (count, all) = listed(&run("valkey-benchmark", "all"), "cluster nodes:\n\n");
    assert_eq!(count, all.len());
    assert!(primaries_only.iter().all(|p| all.contains(p)), "{all:?}");
    let known = |n: &(String, u16, bool)| layout.iter().any(|(id, port, p, _)| (id, port, p) == (&n.0, &n.1, &n.2));
    assert!(all.iter().all(known), "{all:?} in {layout:?}");
}
