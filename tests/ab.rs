//! `respbench ab` against real redis-servers, one slowed by an fsync per write
//! (`appendonly yes`, `appendfsync always`: 4-5 times slower here), and `respbench compare`'s
//! verdicts on `--runs` results and on scenario results, phase by phase. `ab` interleaves its
//! rounds, so a loaded machine's drift hits both sides alike. `compare` judges runs made one
//! after another, five a side, where a single run slowed by the machine's neighbours would
//! overlap the other side: there B is held to 200 requests a second by its own pacing, a
//! hundredth of what A does, so that no stall short of a hundredfold one for a whole run can
//! swing it, and the runs are counted, short: A's 2,000 requests, B's 100.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};

use common::*;
use serde_json::Value;

const SIDE: &str = "-c 4 --threads 1 --ratio 1:0 --key-max 1000";

fn fsync_always() -> Server {
    Server::start(&["--appendonly", "yes", "--appendfsync", "always"])
}

fn ab(a: &Server, b: &Server, extra: &[&str]) -> std::process::Output {
    respbench()
        .args(["ab", "--a", &format!("-p {} {SIDE}", a.port), "--b", &format!("-p {} {SIDE}", b.port)])
        // No --seed: the order drawn anew each time is what makes the exact test's error rate hold.
        // 16 pairs: at 98.75 % a figure (95 % for the set of four) the interval leaves out the
        // 20 most extreme of the 136 pair averages on each side, so a few rounds stalled by the
        // loaded machine's neighbours (a server starved for most of a round) do not swing it.
        .args(["--rounds", "16", "--round-duration", "250ms", "--warmup", "50ms"])
        .args(extra)
        .output()
        .unwrap()
}

fn change(doc: &Value, metric: &str) -> Value {
    doc["changes"].as_array().unwrap().iter().find(|c| c["metric"] == metric).cloned().unwrap()
}

#[test]
fn ab_names_the_fsync_server_slower_and_a_server_against_itself_unchanged() {
    let (fast, slow) = (Server::start(&[]), fsync_always());
    let dir = tempfile::tempdir().unwrap();
    let (json, md, html) = (dir.path().join("ab.json"), dir.path().join("ab.md"), dir.path().join("ab.html"));
    let out = ab(
        &fast,
        &slow,
        &[
            "--json",
            json.to_str().unwrap(),
            "--markdown",
            md.to_str().unwrap(),
            "--html",
            html.to_str().unwrap(),
            "--a-price",
            "0.2",
            "--b-price",
            "0.1",
            "--fail-on-regression",
            "10",
        ],
    );
    // B regressed by far more than 10 %: exit 1, for CI.
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("B against A: SLOWER by ops/sec"), "{text}");
    assert!(stderr(&out).contains("respbench ab: pair 16/16"), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["verdict"], "slower");
    let ops = change(&doc, "ops/sec");
    assert!(ops["change_high"].as_f64().unwrap() < 0.0, "the interval excludes 0: {ops}");
    assert_eq!(doc["order"].as_array().unwrap().len(), 16);
    assert_eq!(doc["a"]["rounds"].as_array().unwrap().len(), 16);
    assert!(doc["a"]["ops_per_sec_per_price"].as_f64().unwrap() > 0.0);
    assert!(doc["regression"]["regressed"].as_bool().unwrap());
    let markdown = std::fs::read_to_string(&md).unwrap();
    assert!(markdown.contains("| **ops/sec** |") && markdown.contains("**slower**"), "{markdown}");
    chromium_renders(&html, dir.path());

    // A against A. At 99 % so that this assertion fails by chance once in a hundred runs at most
    // (scripts/ab-validate.sh measures the rate at the default 95 %).
    let out = ab(&fast, &fast, &["--confidence", "99", "--fail-on-regression", "10", "--json", json.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["verdict"], "no significant change", "{}", stdout(&out));
}

/// `ab` with B's writes paused on its server (`CLIENT PAUSE ... WRITE`: the SETs wait, the
/// test's UNPAUSE does not), its requests timing out after 100 ms; `--seed 5` runs pair 1 AB.
fn ab_against_paused(a: &Server, b: &Server, json: &Path) -> Watched {
    assert_eq!(b.cli(&["CLIENT", "PAUSE", "600000", "WRITE"]), "OK");
    let mut cmd = respbench();
    cmd.args(["ab", "--a", &format!("-p {} {SIDE}", a.port)])
        .args(["--b", &format!("-p {} {SIDE} --timeout 100ms", b.port)])
        .args(["--rounds", "1", "--round-duration", "250ms", "--warmup", "50ms", "--seed", "5"])
        .args(["--json", json.to_str().unwrap()]);
    Watched::spawn(cmd)
}

const AGAIN: &str = "respbench ab: B's round of pair 1 completed no request in";

#[test]
fn ab_runs_a_pair_again_when_a_round_completed_no_request() {
    let (a, b) = (Server::start(&[]), Server::start(&[]));
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("ab.json");
    let mut run = ab_against_paused(&a, &b, &json);
    run.wait_lines(1, |l| l.starts_with(AGAIN) && l.ends_with("; the pair runs again"));
    assert_eq!(b.cli(&["CLIENT", "UNPAUSE"]), "OK");
    let out = run.finish();
    assert_eq!(out.status.code(), Some(0), "{}{}", stdout(&out), stderr(&out));
    let doc = read_json(&json);
    assert_eq!(doc["order"].as_array().unwrap().len(), 1, "one pair, counted once");
    assert!(doc["b"]["rounds"][0]["ops_per_sec"].as_f64().unwrap() > 0.0, "{}", doc["b"]);
    let warnings = doc["warnings"].as_array().unwrap();
    assert!(warnings.iter().any(|w| w.as_str().unwrap().ends_with("; the pair ran again")), "{warnings:?}");
}

#[test]
fn ab_gives_up_when_a_pair_completes_no_request_three_times() {
    let (a, b) = (Server::start(&[]), Server::start(&[]));
    let dir = tempfile::tempdir().unwrap();
    let out = ab_against_paused(&a, &b, &dir.path().join("ab.json")).finish();
    assert_eq!(b.cli(&["CLIENT", "UNPAUSE"]), "OK");
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().filter(|l| l.starts_with(AGAIN)).count(), 2, "{err}");
    let last = err.lines().last().unwrap();
    assert!(last.starts_with("respbench: B's round of pair 1 completed no request in"), "{err}");
    assert!(last.ends_with(", as in each of its 3 attempts: no ratio to judge"), "{err}");
}

/// The page in Chromium at 1280 px: nothing wider than the window, the interval chart and
/// both sides' distributions drawn.
fn chromium_renders(html: &Path, dir: &Path) {
    let dom = chromium_dom(html, dir);
    assert!(dom.contains("id=\"intervals\""), "no interval chart");
    let spectrum = dom.split("id=\"spectrum\"").nth(1).expect("a spectrum chart").split("</svg>").next().unwrap();
    assert_eq!(spectrum.matches("data-points=").count(), 2, "both sides' distributions");
}

/// The page as Chromium lays it out at 1280 px, checked to be no wider than the window.
fn chromium_dom(html: &Path, dir: &Path) -> String {
    let page = std::fs::read_to_string(html).unwrap();
    let probe = dir.join("probe.html");
    let script = "<script>document.body.setAttribute('data-layout', \
                  document.documentElement.scrollWidth + ' ' + window.innerWidth)</script></body>";
    std::fs::write(&probe, page.replacen("</body>", script, 1)).unwrap();
    let profile = tempfile::tempdir().unwrap();
    let out = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(["--hide-scrollbars", "--window-size=1280,900", "--dump-dom"])
        .arg(format!("file://{}", probe.display()))
        .stdin(Stdio::null())
        .output()
        .expect("chromium is installed");
    let dom = String::from_utf8_lossy(&out.stdout);
    let layout = dom.split("data-layout=\"").nth(1).and_then(|s| s.split('"').next()).expect("the probe ran");
    let (scroll, inner) = layout.split_once(' ').unwrap();
    assert!(scroll.parse::<u32>().unwrap() <= inner.parse::<u32>().unwrap(), "wider than the window: {layout}");
    dom.into_owned()
}

#[test]
fn compare_judges_runs_and_refuses_on_one_run_each() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    // A closed loop; B paced at 200/s, a hundredth of it (see the file's head). With 5 runs a
    // side the interval at 98.75 % a figure is the extreme differences, so no run may overlap.
    let result = |name: &str, runs: &str, side: &[&str]| {
        let path = dir.path().join(format!("{name}.json"));
        let args = ["--runs", runs, "-q", "--json", path.to_str().unwrap()];
        run_ok(&server, &[&["-c", "4", "--threads", "1", "--ratio", "1:0"][..], &args[..], side].concat());
        path
    };
    let (a, b): (&[&str], &[&str]) = (&["-n", "2000"], &["-n", "100", "--rate", "200"]);
    let (a5, b5) = (result("a5", "5", a), result("b5", "5", b));
    let json = dir.path().join("verdict.json");
    // Judged by throughput, as the runs are built to be (a paced side is judged by p99 by default).
    let out = respbench()
        .args(["compare", a5.to_str().unwrap(), b5.to_str().unwrap(), "--json", json.to_str().unwrap()])
        .args(["--fail-on-regression", "10", "--judge-by", "ops"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    assert!(stdout(&out).contains("B (b5) against A (a5): SLOWER by "), "{}", stdout(&out));
    let doc = read_json(&json);
    assert_eq!((doc["kind"].as_str(), doc["verdict"].as_str()), (Some("compare"), Some("slower")));
    assert!(change(&doc, "ops/sec")["change_high"].as_f64().unwrap() < 0.0);
    assert_eq!(doc["b"]["rounds"].as_array().unwrap().len(), 5);
    assert!(doc["b"]["rounds"][0]["p99.9_us"].as_f64().unwrap() > 0.0, "per-run percentiles from its histograms");

    let (a1, b1) = (result("a1", "1", a), result("b1", "1", b));
    let out = respbench().args(["compare", a1.to_str().unwrap(), b1.to_str().unwrap()]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(
            "NO VERDICT: the exact rank-sum test at 98.75 % needs at least 5 runs on each side; A has 1, B has 1 \
             (take the results with --runs N)"
        ),
        "{text}"
    );
    let out = respbench()
        .args(["compare", a1.to_str().unwrap(), b1.to_str().unwrap(), "--fail-on-regression", "5"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a check that cannot be made is not a pass");
}

/// A scenario with a measured phase of 5 runs, one of a single run and a fill; on B's side
/// the measured phase paced at 200/s (see the file's head), and a phase A does not have.
fn scenario(dir: &Path, name: &str, b_side: bool) -> String {
    let mut text = String::from(
        "[keyspaces.k]\nprefix = \"k:\"\nmax = 999\n[values.small]\nsize = \"100\"\n[mixes.w]\nset = 1\n\
         keyspace = \"k\"\n[defaults]\nconnections = 4\nthreads = 1\nvalues = \"small\"\nmix = \"w\"\n\
         [[phase]]\nkind = \"fill\"\n\
         [[phase]]\nkind = \"run\"\nname = \"writes\"\nruns = 5\n",
    );
    text.push_str(if b_side { "requests = \"100\"\nrate = 200\n" } else { "requests = \"2000\"\n" });
    text.push_str("[[phase]]\nkind = \"run\"\nname = \"once\"\nrequests = \"500\"\n");
    if b_side {
        text.push_str("[[phase]]\nkind = \"run\"\nname = \"extra\"\nrequests = \"500\"\n");
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn compare_judges_scenario_results_phase_by_phase_and_draws_the_verdicts() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let result = |name: &str, b_side: bool| {
        let file = scenario(dir.path(), &format!("{name}.toml"), b_side);
        let json = dir.path().join(format!("{name}.json"));
        let out = respbench()
            .args(["run", &file, "-p", &server.port_arg(), "--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        json.to_str().unwrap().to_string()
    };
    let (a, b) = (result("a", false), result("b", true));
    let (html, md) = (dir.path().join("cmp.html"), dir.path().join("cmp.md"));
    let out = respbench()
        .args(["compare", &a, &b, "--html", html.to_str().unwrap(), "--markdown", md.to_str().unwrap()])
        .args(["--fail-on-regression", "10", "--phase", "writes", "--judge-by", "ops"])
        .output()
        .unwrap();
    // The phase of 5 runs a side: B's, paced at a hundredth of A's rate, is slower by far more than 10 %,
    // judged by throughput (a paced side would be judged by p99, which a loaded machine's stalls
    // on A's side can bring level with B's).
    assert_eq!(out.status.code(), Some(1), "{}{}", stdout(&out), stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Phase writes: B (b) against A (a): SLOWER by "), "{text}");
    assert!(!text.contains("Phase once"), "--phase judges that phase alone: {text}");
    assert!(std::fs::read_to_string(&md).unwrap().contains("Phase writes: B (b) against A (a): SLOWER"));

    // Every phase: the single run cannot be judged (exit 2 under --fail-on-regression), the
    // phase B alone has is named, the fill is left out.
    let out = respbench()
        .args(["compare", &a, &b, "--html", html.to_str().unwrap(), "--fail-on-regression", "10", "--judge-by", "ops"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "a check that cannot be made is not a pass: {}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("Phase writes: B (b) against A (a): SLOWER by "), "{text}");
    assert!(
        text.contains(
            "Phase once: B (b) against A (a): NO VERDICT: the exact rank-sum test at 98.75 % needs at least 5 runs \
             on each side; A has 1, B has 1 (give the phase runs = N)"
        ),
        "{text}"
    );
    assert!(text.contains("No verdict for phase extra: only in b, not in a"), "{text}");
    assert!(!text.contains("Phase fill"), "{text}");
    let dom = chromium_dom(&html, dir.path());
    assert!(dom.contains("id=\"intervals-1\""), "the writes phase's interval drawn");
    assert!(!dom.contains("id=\"intervals-2\""), "no interval to draw for a phase without a verdict");

    // One verdict a JSON file: with two phases in both, --json asks which.
    let json = dir.path().join("v.json");
    let out = respbench().args(["compare", &a, &b, "--json", json.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("pick one with --phase NAME"), "{}", stderr(&out));
    let out = respbench()
        .args(["compare", &a, &b, "--phase", "writes", "--judge-by", "ops", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc = read_json(&json);
    assert_eq!((doc["phase"].as_str(), doc["verdict"].as_str()), (Some("writes"), Some("slower")));
    assert!(change(&doc, "ops/sec")["change_high"].as_f64().unwrap() < 0.0, "the interval excludes 0");
    assert_eq!(doc["a"]["rounds"].as_array().unwrap().len(), 5);

    // A run's result against a scenario's is refused, naming both.
    let run = dir.path().join("single.json");
    run_ok(&server, &["-n", "200", "-c", "2", "--threads", "1", "-q", "--json", run.to_str().unwrap()]);
    let out = respbench().args(["compare", &a, run.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("compare takes results of one kind: 'single' is a run's result and 'a' a scenario's"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_sides_bad_flags_are_one_line_naming_the_side() {
    let out = respbench().args(["ab", "--a", "-p 1 --duration 5s", "--b", "-p 2"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("respbench: --a gives --duration: ab sets every round's length"),
        "{}",
        stderr(&out)
    );
    let out = respbench().args(["ab", "--a", "-p 1", "--b", "-c lots"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).starts_with("respbench: --b: "), "{}", stderr(&out));
    assert_eq!(stderr(&out).lines().count(), 1);
}
