//! What phases compile to: the flags are the contract between a scenario file and the engine.

use super::*;

fn compile(text: &str, scale: Option<f64>) -> Result<Vec<Step>, ScenarioError> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    std::fs::write(&path, text).unwrap();
    let loaded = load(&path)?;
    loaded.compile(&Overrides { scale, ..Overrides::default() })
}

const GUIDE: &str = r#"
[target]
port = 7000
[keyspaces.k]
max = 999999
distribution = "gaussian"
median = 500000
stddev = 20000
[mixes.m]
set = 1
get = 1
keyspace = "k"
[defaults]
connections = 8
args = ["--timeout", "1s"]
[[phase]]
kind = "fill"
mix = "m"
[[phase]]
kind = "run"
mix = "m"
duration = "10m"
connections = 16
args = ["--retry", "1"]
"#;

#[test]
fn a_phase_is_the_command_line_it_stands_for() {
    let steps = compile(GUIDE, None).unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0].tool, Tool::Native);
    assert_eq!(
        steps[0].shown(),
        "--port 7000 --key-max 999999 --key-median 500000 --key-stddev 20000 --connections 8 --timeout 1s --requests allkeys"
    );
    let run = steps[1].shown();
    assert!(
        run.contains("--ratio 1:1") && run.contains("--key-pattern G") && run.contains("--connections 16"),
        "{run}"
    );
    assert!(run.ends_with("--duration 10m --timeout 1s --retry 1"), "{run}");
}

#[test]
fn scale_shrinks_ranges_counts_and_durations_but_not_rates() {
    let steps = compile(GUIDE, Some(0.001)).unwrap();
    let run = steps[1].shown();
    assert!(
        run.contains("--key-max 999 ") && run.contains("--key-median 500 ") && run.contains("--key-stddev 20 "),
        "{run}"
    );
    assert!(run.contains("--duration 600ms"), "{run}");
    // A range in the middle of the keys stays in the middle: its first key scales too.
    let middle = "[keyspaces.m]\nmin = 27250000\nmax = 47750000\n[[phase]]\nkind = \"fill\"\nkeyspace = \"m\"\n";
    let fill = compile(middle, Some(0.001)).unwrap()[0].shown();
    assert!(fill.contains("--key-min 27250 --key-max 47749"), "{fill}");
    let steps = compile("[[phase]]\nkind = \"steps\"\nrequests = \"1m\"\nrates = [5000]\n", Some(0.01)).unwrap();
    assert!(steps[0].shown().contains("--requests 10000 --rate 5000"), "{}", steps[0].shown());
}

#[test]
fn the_password_comes_from_the_environment_and_is_never_shown() {
    // SAFETY: this test alone reads or writes this variable.
    unsafe { std::env::set_var("RESPBENCH_UNIT_PASSWORD", "hunter2") };
    let steps =
        compile("[target]\npassword_env = \"RESPBENCH_UNIT_PASSWORD\"\n[[phase]]\nkind = \"run\"\n", None).unwrap();
    assert!(steps[0].settings.iter().any(|s| matches!(&s.value, Value::Password(p) if p == "hunter2")));
    assert!(!steps[0].shown().contains("hunter2"));
}

#[test]
fn a_command_mix_keeps_one_key_range() {
    let err = compile(
        "[keyspaces.a]\nmax = 10\n[keyspaces.b]\nmax = 20\n[mixes.m]\ncommands = [{ command = \"GET __key__\", keyspace = \"a\" }, { command = \"INCR __key__\", keyspace = \"b\" }]\n[[phase]]\nkind = \"run\"\nmix = \"m\"\n",
        None,
    )
    .unwrap_err();
    assert!(err.contains("t.toml:6:97: key 'commands'") && err.contains("different ranges"), "{err}");
}
