//! The scenarios in examples/scenarios are the guides' procedures, and this checks they say
//! what the guides say. Each file names its guide (`# guide: FILE`) and quotes the guide's
//! command lines verbatim on `#| ` comment lines above the phases that follow them (a line
//! the guide breaks is quoted as several `#| ` lines; `# where: N=75000000` fills a guide's
//! `$N`). Every quoted command goes through its front-end's parser (memtier_benchmark's, or
//! redis-/valkey-benchmark's, one plan per test it runs) and the phases after it through the
//! scenario compiler, and the plans must agree on the workload. What is compared, and what not:
//! - at scale 1: the file's `scale` knob multiplies counts, durations and key numbers alike,
//!   so the guide's numbers are the file's at scale 1 (tests/examples.rs runs them small);
//! - not the target (host, port, password, TLS, cluster): that is where the scenario runs, set
//!   in its `[target]`, while the workload is what it sends;
//! - not how failures are handled or reported (reconnects, intervals, output files);
//! - the key range only when a command draws keys, the value size only when one sends a value
//!   (a read-only pass does not depend on `-d`);
//! - the seed as "fixed at N" or "drawn per run" (memtier's `--randomize`, redis-benchmark).
//!
//! A phase a file adds (a rate staircase, a capacity search) says so with `# added:` above it
//! and is left out of the comparison.

use std::collections::{BTreeMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use respbench::cli::scenario::{self, Overrides};
use respbench::config::{
    ArgPart, CommandSpec, Config, Extras, KeyRange, Ramp, Rate, Step, StopAfter, ValueSize, split_words,
};

/// A seed as the workload sees it.
#[derive(Debug, PartialEq)]
enum Seed {
    Fixed(u64),
    /// A new one every run (two plans of the same line differ).
    Drawn,
}

/// The values a plan sends: sizes, random bytes, `EX` range.
#[derive(Debug, PartialEq)]
struct Values {
    sizes: ValueSize,
    random: bool,
    expiry: Option<(u64, u64)>,
}

/// What a plan sends, and how: the fields compared.
#[derive(Debug, PartialEq)]
struct Workload {
    connections: usize,
    threads: usize,
    pipeline: usize,
    stop: StopAfter,
    commands: Vec<CommandSpec>,
    sequence: Option<Vec<Step>>,
    keys: Option<KeyRange>,
    values: Option<Values>,
    seed: Seed,
    same_stream: bool,
    rate: Option<Rate>,
    warmup: std::time::Duration,
    ramp: Option<Ramp>,
    conn_jitter: Option<(std::time::Duration, std::time::Duration)>,
    extras: Extras,
}

/// The workload of a plan; `again` is the same source planned a second time (for the seed).
fn workload(config: &Config, again: &Config) -> Workload {
    let weighted = || config.commands.iter().filter(|c| c.weight > 0);
    let parts = || weighted().flat_map(|c| c.args.iter().flatten());
    let draws_keys = parts().any(|p| matches!(p, ArgPart::Key | ArgPart::RandInt | ArgPart::RandShared(_)))
        || config.stop == StopAfter::AllKeys;
    let sends_values = parts().any(|p| matches!(p, ArgPart::Data));
    Workload {
        connections: config.connections,
        threads: config.threads,
        pipeline: config.pipeline,
        stop: config.stop,
        commands: config.commands.clone(),
        sequence: config.sequence.clone(),
        keys: draws_keys.then(|| config.keys.clone()),
        values: sends_values.then(|| Values {
            sizes: config.values.clone(),
            random: config.random_data,
            expiry: config.expiry,
        }),
        seed: if config.seed == again.seed { Seed::Fixed(config.seed) } else { Seed::Drawn },
        same_stream: config.same_stream,
        rate: config.rate,
        warmup: config.warmup,
        ramp: config.ramp,
        conn_jitter: config.conn_jitter,
        // Per-client figures and the I/O driver are how it is measured, not what is sent.
        extras: Extras { client_stats: false, io: Default::default(), ..config.extras.clone() },
    }
}

/// The guides' folder: `RESPBENCH_GUIDES`, else the project's shared folder beside the repo.
fn guides_dir() -> PathBuf {
    std::env::var_os("RESPBENCH_GUIDES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/guides"))
}

/// One `[[phase]]` of the file and the comment block right above it.
struct PhaseNote {
    /// The quoted guide lines (`#| `), in order.
    quote: Vec<String>,
    added: bool,
    line: usize,
}

/// Reads the notes: the guide's file name, `# where:` values, and each phase's comment block.
fn notes(text: &str) -> (Option<String>, BTreeMap<String, String>, Vec<PhaseNote>) {
    let (mut guide, mut vars, mut phases) = (None, BTreeMap::new(), Vec::new());
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(name) = line.strip_prefix("# guide:") {
            guide = Some(name.trim().to_string());
        }
        if let Some(defs) = line.strip_prefix("# where:") {
            for def in defs.split_whitespace() {
                let (name, value) = def.split_once('=').expect("`# where: NAME=VALUE ...`");
                vars.insert(name.to_string(), value.to_string());
            }
        }
        if line.trim() != "[[phase]]" {
            continue;
        }
        let block: Vec<&str> = lines[..i].iter().rev().take_while(|l| l.starts_with('#')).copied().collect();
        let block: Vec<&str> = block.into_iter().rev().collect();
        let quote = block.iter().filter_map(|l| l.strip_prefix("#| ")).map(str::to_string).collect();
        let added = block.iter().any(|l| l.starts_with("# added:"));
        phases.push(PhaseNote { quote, added, line: i + 1 });
    }
    (guide, vars, phases)
}

/// The plans of a quoted command line, one per run it makes (redis-benchmark: per test).
fn plan_line(line: &str, vars: &BTreeMap<String, String>) -> Vec<(String, Config)> {
    let mut command = line.trim().strip_prefix("$ ").unwrap_or(line.trim()).to_string();
    // Longest names first, so that `$N` does not eat the start of `$NAME`.
    let mut names: Vec<&String> = vars.keys().collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for name in names {
        command = command.replace(&format!("${name}"), &vars[name]);
    }
    assert!(!command.contains('$'), "'{command}': a `$NAME` without `# where: NAME=...`");
    let words = split_words(&command).unwrap_or_else(|e| panic!("'{command}': {e}"));
    let args: Vec<OsString> = words[1..].iter().map(OsString::from).collect();
    match words[0].as_str() {
        "memtier_benchmark" => {
            let config = respbench::cli::memtier::plan(&args).unwrap_or_else(|e| panic!("'{command}': {e}"));
            vec![(command.clone(), config)]
        }
        tool @ ("redis-benchmark" | "valkey-benchmark") => {
            let tests =
                respbench::cli::redis_benchmark::plan_tests(tool, &args).unwrap_or_else(|e| panic!("'{command}': {e}"));
            tests.into_iter().map(|t| (format!("{command} ({})", t.name), t.config)).collect()
        }
        other => panic!("'{command}': no front-end for '{other}'"),
    }
}

fn lines(pending: &VecDeque<(String, Config, Config)>) -> Vec<&str> {
    pending.iter().map(|(line, ..)| line.as_str()).collect()
}

/// Checks one scenario file against its guide; returns how many phases it compared.
fn check_file(path: &Path) -> usize {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let loaded = scenario::load(path).unwrap_or_else(|e| panic!("{e}"));
    let (guide, vars, notes) = notes(&loaded.text);
    let guide = guide.unwrap_or_else(|| panic!("{name}: no `# guide: FILE` line naming the guide it reproduces"));
    let guide_path = guides_dir().join(&guide);
    let guide_text = std::fs::read_to_string(&guide_path).ok();
    if guide_text.is_none() {
        eprintln!("note: {} is not here: the quotes of {name} are not checked against its text", guide_path.display());
    }
    let overrides = Overrides { scale: Some(1.0), ..Overrides::default() };
    let steps = loaded.compile(&overrides).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(notes.len(), loaded.scenario.phases.len(), "{name}: every [[phase]] header on a line of its own");
    let mut pending: VecDeque<(String, Config, Config)> = VecDeque::new();
    let mut compared = 0;
    for (index, note) in notes.iter().enumerate() {
        let at = format!("{name}:{} (phase {})", note.line, index + 1);
        if !note.quote.is_empty() {
            assert!(
                pending.is_empty(),
                "{at}: the runs of the previous quote are not all phases: {:?}",
                lines(&pending)
            );
            for line in &note.quote {
                if let Some(text) = &guide_text {
                    assert!(text.contains(line.as_str()), "{at}: '{line}' is not in {guide} as written");
                }
            }
            // Planned twice: a seed drawn per run differs between the two.
            let quoted = note.quote.join(" ");
            let runs = plan_line(&quoted, &vars).into_iter().zip(plan_line(&quoted, &vars));
            pending.extend(runs.map(|((line, config), (_, again))| (line, config, again)));
        } else if note.added {
            assert!(pending.is_empty(), "{at}: an added phase between the runs of one quote");
            continue;
        }
        let (line, guide_plan, again) = pending
            .pop_front()
            .unwrap_or_else(|| panic!("{at}: follows no guide line (`#| `) and is not marked `# added:`"));
        let mut phase_steps = steps.iter().filter(|s| s.phase == index);
        let step = phase_steps.next().unwrap_or_else(|| panic!("{at}: compiles to no run"));
        assert!(phase_steps.next().is_none(), "{at}: compiles to several runs; the guide line is one");
        let plan = |s: &scenario::Step| s.plan().unwrap_or_else(|e| panic!("{at}: {e}")).0;
        assert_eq!(
            workload(&plan(step), &plan(step)),
            workload(&guide_plan, &again),
            "{at}: the phase '{}' (left) is not the guide's `{line}` (right)",
            step.label
        );
        compared += 1;
    }
    assert!(pending.is_empty(), "{name}: runs of the last quote without a phase: {:?}", lines(&pending));
    compared
}

#[test]
fn every_example_scenario_follows_the_guide_lines_it_quotes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for path in files {
        let compared = check_file(&path);
        assert!(compared > 0, "{}: quotes no guide line", path.display());
    }
}

#[test]
fn a_phase_that_strays_from_its_quote_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let original = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/azure-managed-redis-memtier.toml");
    let text = std::fs::read_to_string(original).unwrap();
    assert!(text.contains("pipeline = 10"));
    let strayed = dir.path().join("strayed.toml");
    std::fs::write(&strayed, text.replacen("pipeline = 10", "pipeline = 20", 1)).unwrap();
    let caught = std::panic::catch_unwind(|| check_file(&strayed)).unwrap_err();
    let msg = caught.downcast_ref::<String>().unwrap();
    assert!(msg.contains("is not the guide's") && msg.contains("pipeline: 20"), "{msg}");
}

#[test]
fn a_quote_that_is_not_the_guide_s_text_is_caught() {
    let original = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scenarios/azure-managed-redis-memtier.toml");
    if !guides_dir().join("000_93eb0b4d5bd75f48.txt").exists() {
        eprintln!("note: the guides are not here ({}): nothing to check quotes against", guides_dir().display());
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(original).unwrap();
    // The same plan, but not the guide's text.
    let reworded = dir.path().join("reworded.toml");
    std::fs::write(&reworded, text.replacen("#| memtier_benchmark -h", "#| memtier_benchmark  -h", 1)).unwrap();
    let caught = std::panic::catch_unwind(|| check_file(&reworded)).unwrap_err();
    let msg = caught.downcast_ref::<String>().unwrap();
    assert!(msg.contains("is not in 000_93eb0b4d5bd75f48.txt as written"), "{msg}");
}
