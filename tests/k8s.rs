//! The Kubernetes manifest in deploy/kubernetes/ (an Indexed Job, one pod per shard) is valid:
//! checked with PyPI's kubernetes-validate in strict mode, and it gives each pod what respbench
//! reads.

use std::process::Command;

const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/kubernetes/respbench-shards.yaml");

#[test]
fn the_indexed_job_manifest_validates_strictly() {
    let out = Command::new("kubernetes-validate").args(["--strict", MANIFEST]).output().unwrap_or_else(|e| {
        panic!("cannot run kubernetes-validate ({e}): scripts/install-deps.sh installs it (pip install kubernetes-validate)")
    });
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && text.contains("passed"), "{text}");
    let yaml = std::fs::read_to_string(MANIFEST).unwrap();
    for wanted in [
        "completionMode: Indexed",
        "name: RESPBENCH_SHARDS",
        "JOB_COMPLETION_INDEX",
        "--start-at",
        "--allow-late-start",
        "--metrics-push \"$PUSHGATEWAY\"",
        "--metrics-push-label shard=$JOB_COMPLETION_INDEX",
    ] {
        assert!(yaml.contains(wanted), "the manifest lacks {wanted}");
    }
    let count = |key: &str| {
        yaml.lines().find_map(|l| l.trim().strip_prefix(key)).map(|v| v.trim().trim_matches('"').to_string())
    };
    assert_eq!(count("completions:"), count("parallelism:"));
    assert_eq!(
        count("completions:"),
        yaml.lines()
            .skip_while(|l| !l.contains("name: RESPBENCH_SHARDS"))
            .nth(1)
            .and_then(|l| l.trim().strip_prefix("value:").map(|v| v.trim().trim_matches('"').to_string()))
    );
}
