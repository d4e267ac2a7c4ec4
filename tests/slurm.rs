//! Shards under a real Slurm: a private one-node cluster (munged, slurmctld and slurmd in a
//! temporary directory, on free ports, stopped on drop) runs `srun -n 2 respbench`, each task
//! taking its shard from SLURM_PROCID/SLURM_NTASKS, and `respbench merge` joins their results;
//! and it runs deploy/slurm/respbench.sbatch through `sbatch`, as a user submits it.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::prom::pushed_requests;
use common::*;

/// The daemons of a private Slurm cluster, killed (and reaped) on drop.
struct Cluster {
    dir: tempfile::TempDir,
    daemons: Vec<Child>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for d in self.daemons.iter_mut().rev() {
            let _ = d.kill();
            let _ = d.wait();
        }
    }
}

fn daemon(program: &str, args: &[&str], log: &Path) -> Child {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(log).unwrap())
        .stderr(Stdio::from(std::fs::File::create(log.with_extension("err")).unwrap()))
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"))
}

impl Cluster {
    fn conf(&self) -> PathBuf {
        self.dir.path().join("slurm.conf")
    }

    fn start() -> Cluster {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().to_path_buf();
        let d = d.as_path();
        // munged wants its socket's directory searchable by all, and its key private.
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        let key: Vec<u8> = (0..1024u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let key_file = d.join("munge.key");
        std::fs::write(&key_file, key).unwrap();
        std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o400)).unwrap();
        for sub in ["state", "spool"] {
            std::fs::create_dir(d.join(sub)).unwrap();
        }
        let p = |name: &str| d.join(name).display().to_string();
        let conf = format!(
            "ClusterName=respbench\nSlurmctldHost=localhost\nSlurmctldPort={}\nSlurmdPort={}\n\
             AuthType=auth/munge\nAuthInfo=socket={}\nCredType=cred/munge\n\
             ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nJobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\nJobCompType=jobcomp/none\n\
             SlurmUser=root\nSlurmdUser=root\nStateSaveLocation={}\nSlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\nSlurmdPidFile={}\nSlurmctldLogFile={}\nSlurmdLogFile={}\n\
             SchedulerType=sched/builtin\nSelectType=select/linear\nMpiDefault=none\nMinJobAge=4\n\
             ReturnToService=2\nSlurmdParameters=config_overrides\n\
             NodeName=localhost NodeAddr=127.0.0.1 CPUs=2 State=UNKNOWN\n\
             PartitionName=test Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n",
            free_port(),
            free_port(),
            p("munge.sock"),
            p("state"),
            p("spool"),
            p("slurmctld.pid"),
            p("slurmd.pid"),
            p("slurmctld.log"),
            p("slurmd.log"),
        );
        std::fs::write(d.join("slurm.conf"), conf).unwrap();
        let mut cluster = Cluster { daemons: Vec::new(), dir };
        let conf = cluster.conf().display().to_string();
        let munged = [
            "-F",
            "--key-file",
            &p("munge.key"),
            "--socket",
            &p("munge.sock"),
            "--pid-file",
            &p("munged.pid"),
            "--log-file",
            &p("munged.log"),
            "--seed-file",
            &p("munged.seed"),
        ];
        cluster.daemons.push(daemon("munged", &munged, &d.join("munged.out")));
        wait_for("munged's socket", Duration::from_secs(10), || d.join("munge.sock").exists());
        cluster.daemons.push(daemon("slurmctld", &["-D", "-i", "-f", &conf], &d.join("slurmctld.out")));
        cluster.daemons.push(daemon("slurmd", &["-D", "-N", "localhost", "-f", &conf], &d.join("slurmd.out")));
        // Submit only once the controller answers and the node is idle.
        wait_for("the Slurm node to be idle", Duration::from_secs(30), || {
            let out = Command::new("sinfo").env("SLURM_CONF", &conf).args(["-h", "-o", "%t"]).output();
            out.is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        });
        cluster
    }
}

/// Whether Slurm and munge are here; says which are missing (the test is then skipped).
fn slurm_installed() -> bool {
    let installed = |program: &str| {
        Command::new("sh").args(["-c", &format!("command -v {program}")]).output().is_ok_and(|o| o.status.success())
    };
    let missing: Vec<&str> =
        ["munged", "slurmctld", "slurmd", "srun", "sbatch", "sinfo"].into_iter().filter(|p| !installed(p)).collect();
    if !missing.is_empty() {
        eprintln!(
            "skipped: {} not installed (scripts/install-deps.sh installs slurm-wlm and munge)",
            missing.join(", ")
        );
    }
    missing.is_empty()
}

#[test]
fn srun_runs_two_shards_that_fill_the_range_and_merge() {
    if !slurm_installed() {
        return;
    }
    let server = Server::start(&[]);
    let cluster = Cluster::start();
    let out_dir = tempfile::tempdir().unwrap();
    let pattern = out_dir.path().join("out-%t.json").display().to_string();
    let out = Command::new("srun")
        .env("SLURM_CONF", cluster.conf())
        .args(["--overcommit", "--immediate=30", "-n", "2", env!("CARGO_BIN_EXE_respbench")])
        .args(["-p", &server.port_arg(), "-n", "allkeys", "--key-min", "1", "--key-max", "100000"])
        .args(["--seed", "3", "-c", "4", "-q", "--json", &pattern])
        .output()
        .unwrap();
    assert!(out.status.success(), "srun failed: {}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("shard 0/2 (from SLURM_PROCID=0, SLURM_NTASKS=2)"), "{err}");
    assert!(err.contains("shard 1/2 (from SLURM_PROCID=1, SLURM_NTASKS=2)"), "{err}");
    assert_eq!(server.dbsize(), 100_000);
    assert_eq!(server.calls("set"), 100_000);
    let files: Vec<String> =
        (0..2).map(|i| out_dir.path().join(format!("out-{i}.json")).display().to_string()).collect();
    let merged = out_dir.path().join("merged.json");
    let m = respbench().args(["merge", &files[0], &files[1], "--json", merged.to_str().unwrap()]).output().unwrap();
    assert!(m.status.success(), "{}", stderr(&m));
    let doc = read_json(&merged);
    assert_eq!(doc["totals"]["count"], 100_000);
    assert_eq!(doc["merged_from"][1]["shard"], "1/2");
}

/// The batch script a user submits, run here as they would run it.
const SBATCH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/slurm/respbench.sbatch");

impl Cluster {
    /// Submits deploy/slurm/respbench.sbatch with two tasks from `dir`, its settings through
    /// `--export` as its comment shows, and waits for the job to end (`sbatch --wait` returns
    /// with the job's exit status); returns that and the job's output file.
    fn run_sbatch(&self, dir: &Path, settings: &[(&str, &str)]) -> (std::process::Output, String) {
        let export: String = settings.iter().map(|(k, v)| format!(",{k}={v}")).collect();
        let out = Command::new("sbatch")
            .env("SLURM_CONF", self.conf())
            .args(["--wait", "--ntasks=2", "--time=5", "--chdir", dir.to_str().unwrap()])
            .arg(format!("--export=ALL{export}"))
            .arg(SBATCH)
            .output()
            .unwrap();
        let job = stdout(&out).split_whitespace().nth(3).unwrap_or_else(|| panic!("{}", stderr(&out))).to_string();
        let log = std::fs::read_to_string(dir.join(format!("respbench-{job}.out"))).unwrap_or_default();
        (out, log)
    }
}

#[test]
fn the_sbatch_script_runs_its_shards_from_one_instant_and_merges_them() {
    if !slurm_installed() {
        return;
    }
    let server = Server::start(&[]);
    let cluster = Cluster::start();
    let dir = tempfile::tempdir().unwrap();
    let results = dir.path().join("results");
    let port = server.port_arg();
    // Each shard pushes its live metrics there, where Debian's Pushgateway is installed.
    let gateway = common::prom::pushgateway();
    let push = gateway.as_ref().map(|g| format!("http://{}", g.addr)).unwrap_or_default();
    let settings = [
        ("RESPBENCH", env!("CARGO_BIN_EXE_respbench")),
        ("RESPBENCH_HOST", "127.0.0.1"),
        ("RESPBENCH_PORT", &port),
        ("RESPBENCH_ARGS", "-n allkeys --key-min 1 --key-max 20000 --seed 3 -c 4"),
        // Short, for the test's sake: a shard launched after it starts at once all the same.
        ("RESPBENCH_START_DELAY", "2"),
        ("RESPBENCH_RESULTS", results.to_str().unwrap()),
        ("RESPBENCH_PUSHGATEWAY", &push),
    ];
    let (out, log) = cluster.run_sbatch(dir.path(), &settings);
    assert!(out.status.success(), "sbatch: {}{}\njob output:\n{log}", stdout(&out), stderr(&out));
    assert!(log.contains("shard 0/2 (from SLURM_PROCID=0, SLURM_NTASKS=2)"), "{log}");
    assert!(log.contains("shard 1/2 (from SLURM_PROCID=1, SLURM_NTASKS=2)"), "{log}");
    assert_eq!(server.dbsize(), 20_000);
    let merged = read_json(&results.join("merged.json"));
    assert_eq!(merged["totals"]["count"], server.calls("set"));
    assert_eq!(server.calls("set"), 20_000);
    assert_eq!(merged["merged_from"].as_array().map(Vec::len), Some(2), "{}", merged["merged_from"]);
    assert!(results.join("merged.html").exists());
    assert!(log.contains("Totals"), "the merged report ends the job's output: {log}");
    // Both shards were given the one instant the script computed.
    let requested: Vec<serde_json::Value> = (0..2)
        .map(|i| read_json(&results.join(format!("result-{i}.json")))["start"]["requested_unix_ms"].clone())
        .collect();
    assert!(requested[0].is_f64() && requested[0] == requested[1], "{requested:?}");
    // Each shard's final values, in a group of its own, add up to the run's.
    if let Some(gateway) = &gateway {
        let shards: Vec<_> = (0..2).map(|i| pushed_requests(gateway, &[&format!("shard=\"{i}\"")])).collect();
        for (i, pushed) in shards.iter().enumerate() {
            let own = read_json(&results.join(format!("result-{i}.json")))["totals"]["count"].as_f64();
            assert_eq!(pushed.iter().map(|(_, n)| *n).sum::<f64>(), own.unwrap(), "shard {i}: {pushed:?}");
        }
        assert_eq!(shards.iter().flatten().map(|(_, n)| n).sum::<f64>(), 20_000.0, "{shards:?}");
    }

    // A shard that fails fails the job with its exit status, and nothing is merged.
    let failing = dir.path().join("failing");
    let mut bad = settings;
    bad[3] = ("RESPBENCH_ARGS", "-n 1000 --data-size nonsense");
    bad[5] = ("RESPBENCH_RESULTS", failing.to_str().unwrap());
    let (out, log) = cluster.run_sbatch(dir.path(), &bad);
    assert_eq!(out.status.code(), Some(2), "sbatch: {}{}\njob output:\n{log}", stdout(&out), stderr(&out));
    assert!(log.contains("'nonsense'") && log.contains("a shard failed"), "{log}");
    assert!(!failing.join("merged.json").exists());
}
