//! The server's own latency per command, from `INFO latencystats` (Redis 7+ and Valkey, with
//! `latency-tracking` on, their default), read at the run's start and end on the telemetry
//! sampler's connection (`server_stats`), with `INFO commandstats` in the same call.
//!
//! The server keeps these percentiles from its start (or its last `CONFIG RESETSTAT`) and
//! reports only the percentiles, not the histogram behind them. A run's own percentiles cannot
//! be derived from two readings (a difference of percentiles is no percentile), so they are
//! reported as what they are: the server's figures since then. Beside them, the commandstats
//! counters say how many of those calls fell in the run and the server's mean per call over the
//! run alone (a difference of counters, which is valid).

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

message_error!(
    /// Why a server gave no figures of its own (refused, unreadable).
    NoFigures
);

/// Where the figures come from.
pub const SOURCE: &str = "INFO latencystats";
/// What the percentiles cover.
pub const SPAN: &str = "since the server started or its last CONFIG RESETSTAT";
/// The one INFO call that reads both sections (Redis 7 takes several sections).
pub(super) const CALL: [&[u8]; 3] = [b"INFO", b"latencystats", b"commandstats"];

/// The server's own figures for one command.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ServerCommandLatency {
    /// The server's percentiles over its span (see [`ServerLatency::span`]), in milliseconds;
    /// null when it tracks no such percentile for the command.
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p99_9_ms: Option<f64>,
    /// Calls the server counted over the same span (commandstats at the run's end).
    pub calls_total: Option<u64>,
    /// Calls during the measured phase, from all clients (commandstats, end less start); null
    /// when the start was not read or the counters went back (a restart, a reset).
    pub calls_in_run: Option<u64>,
    /// The server's mean time per call over the measured phase alone, in milliseconds.
    pub run_mean_ms: Option<f64>,
    /// This run's wire-and-server time for the command (from the send to the kernel's receive
    /// of the reply, kernel receive timestamps), in milliseconds, set beside the server's own
    /// by the reports; null when the run kept none ([`ServerLatency::wire_and_server_unavailable`]).
    pub wire_and_server_p50_ms: Option<f64>,
    pub wire_and_server_p99_ms: Option<f64>,
    pub wire_and_server_p99_9_ms: Option<f64>,
    /// What remains of the wire-and-server p99 once the server's own p99 is taken out: the
    /// network's, the kernels' and the server's outside the command (its event loop, a wait
    /// for a core; negative if the server's span held slower calls than this
    /// run met); null without both figures.
    pub network_p99_ms: Option<f64>,
}

/// The server's own latency per command, or why there is none.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ServerLatency {
    /// `INFO latencystats`.
    pub source: String,
    /// Why there are no figures at all (memcached, a server without latencystats, INFO
    /// refused); null when there are.
    pub unavailable: Option<String>,
    /// What the percentiles cover: the server's figures since its start or its last
    /// `CONFIG RESETSTAT`, not this run alone.
    pub span: String,
    /// By command (as the server names it, upper case). In cluster mode each percentile is the
    /// highest over the primaries (an upper bound on the cluster's own), calls are summed.
    pub commands: BTreeMap<String, ServerCommandLatency>,
    /// Cluster mode: each primary's own figures, by address.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, BTreeMap<String, ServerCommandLatency>>,
    /// What kept some figures out: a node that did not answer, a command without an entry.
    pub problems: Vec<String>,
    /// Why the run has no wire-and-server time to set beside the server's figures (kernel
    /// receive timestamps off, a unix socket, refused by the kernel); null when it has.
    pub wire_and_server_unavailable: Option<String>,
}

impl ServerLatency {
    /// No figures, and why.
    pub fn unavailable(reason: impl Into<String>) -> ServerLatency {
        ServerLatency {
            source: SOURCE.into(),
            unavailable: Some(reason.into()),
            span: SPAN.into(),
            ..Default::default()
        }
    }

    /// Pools `--runs`: the later reading's percentiles (the server's latest), the runs' calls
    /// and means combined.
    pub fn then(self, later: ServerLatency) -> ServerLatency {
        if later.unavailable.is_some() {
            return self;
        }
        let pool = |mine: &BTreeMap<String, ServerCommandLatency>,
                    theirs: &mut BTreeMap<String, ServerCommandLatency>| {
            for (name, t) in theirs.iter_mut() {
                if let Some(m) = mine.get(name) {
                    *t = pooled_calls(m, t);
                }
            }
        };
        let mut out = later;
        pool(&self.commands, &mut out.commands);
        for (node, figures) in out.nodes.iter_mut() {
            if let Some(mine) = self.nodes.get(node) {
                pool(mine, figures);
            }
        }
        for p in self.problems {
            if !out.problems.contains(&p) {
                out.problems.push(p);
            }
        }
        out
    }
}

/// `later` with the run counts and means of `earlier` added in.
fn pooled_calls(earlier: &ServerCommandLatency, later: &ServerCommandLatency) -> ServerCommandLatency {
    let calls = earlier.calls_in_run.zip(later.calls_in_run).map(|(a, b)| a + b);
    let time = run_time_ms(earlier).zip(run_time_ms(later)).map(|(a, b)| a + b);
    ServerCommandLatency { calls_in_run: calls, run_mean_ms: mean_of(time, calls), ..*later }
}

/// The server's time on a command over the run (mean times calls), when known.
fn run_time_ms(c: &ServerCommandLatency) -> Option<f64> {
    match (c.calls_in_run?, c.run_mean_ms) {
        (0, _) => Some(0.0),
        (n, mean) => Some(mean? * n as f64),
    }
}

/// A mean from a total time and a count; none without calls.
fn mean_of(time_ms: Option<f64>, calls: Option<u64>) -> Option<f64> {
    time_ms.zip(calls).filter(|&(_, n)| n > 0).map(|(t, n)| t / n as f64)
}

/// One node's figures by command, or why it has none.
pub(super) type NodeFigures = Result<BTreeMap<String, ServerCommandLatency>, NoFigures>;

/// One command's percentiles in microseconds, as latencystats gives them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Percentiles {
    p50_us: Option<f64>,
    p99_us: Option<f64>,
    p99_9_us: Option<f64>,
}

/// One command's commandstats counters.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Calls {
    calls: u64,
    usec: u64,
}

/// One reading of [`CALL`], by command name in lower case as the server writes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Reading {
    /// `None`: the reply has no Latencystats section (a server older than Redis 7).
    percentiles: Option<BTreeMap<String, Percentiles>>,
    calls: BTreeMap<String, Calls>,
}

impl Reading {
    pub(super) fn parse(text: &str) -> Reading {
        let mut reading = Reading::default();
        for line in text.lines().map(str::trim_end) {
            if line.eq_ignore_ascii_case("# Latencystats") {
                reading.percentiles.get_or_insert_with(BTreeMap::new);
            }
            let Some((field, value)) = line.split_once(':') else { continue };
            let pairs = || value.split(',').filter_map(|kv| kv.split_once('='));
            if let Some(name) = field.strip_prefix("latency_percentiles_usec_") {
                let mut p = Percentiles::default();
                for (k, v) in pairs() {
                    let v = v.parse::<f64>().ok();
                    match k {
                        "p50" => p.p50_us = v,
                        "p99" => p.p99_us = v,
                        "p99.9" => p.p99_9_us = v,
                        _ => {}
                    }
                }
                reading.percentiles.get_or_insert_with(BTreeMap::new).insert(name.to_ascii_lowercase(), p);
            } else if let Some(name) = field.strip_prefix("cmdstat_") {
                let mut c = Calls::default();
                for (k, v) in pairs() {
                    match k {
                        "calls" => c.calls = v.parse().unwrap_or(0),
                        "usec" => c.usec = v.parse().unwrap_or(0),
                        _ => {}
                    }
                }
                reading.calls.insert(name.to_ascii_lowercase(), c);
            }
        }
        reading
    }
}

/// Why a reading failed, from the server's error reply.
pub(super) fn refused(message: &str) -> String {
    if message.starts_with("NOPERM") {
        format!("the server's ACL denies INFO latencystats ({message})")
    } else if message.to_ascii_lowercase().contains("syntax") {
        "the server's INFO takes one section (a server older than Redis 7 has no latencystats)".into()
    } else {
        format!("the server refused INFO latencystats ({message})")
    }
}

/// One node's figures for `names` (the run's commands), from its readings at the run's start
/// (when read) and end; `Err` says why the node has none. What is missing for one command
/// goes to `problems`, prefixed by `node` when there are several.
pub(super) fn node_figures(
    start: Option<&Reading>,
    end: &Reading,
    names: &[String],
    (node, problems): (Option<&str>, &mut Vec<String>),
) -> NodeFigures {
    let Some(percentiles) = &end.percentiles else {
        return Err("the server's INFO has no latencystats section (Redis 7+ and Valkey report it)".into());
    };
    // Our own INFO calls are tracked too: an empty section means tracking is off.
    if percentiles.is_empty() {
        return Err("the server tracks no command latency (latency-tracking is off; CONFIG SET latency-tracking yes \
                    turns it on)"
            .into());
    }
    let on = node.map(|n| format!(" on {n}")).unwrap_or_default();
    let mut out = BTreeMap::new();
    for name in names {
        let key = name.to_ascii_lowercase();
        let p = percentiles.get(&key).copied();
        if p.is_none() {
            problems.push(format!("no latencystats entry for {name}{on}"));
        }
        let p = p.unwrap_or_default();
        let now = end.calls.get(&key).copied();
        let then = start.map(|s| s.calls.get(&key).copied().unwrap_or_default());
        let run = now.zip(then).and_then(|(n, t)| Some((n.calls.checked_sub(t.calls)?, n.usec.checked_sub(t.usec)?)));
        let ms = |us: Option<f64>| us.map(|u| u / 1000.0);
        out.insert(
            name.to_ascii_uppercase(),
            ServerCommandLatency {
                p50_ms: ms(p.p50_us),
                p99_ms: ms(p.p99_us),
                p99_9_ms: ms(p.p99_9_us),
                calls_total: now.map(|n| n.calls),
                calls_in_run: run.map(|(calls, _)| calls),
                run_mean_ms: run
                    .filter(|&(calls, _)| calls > 0)
                    .map(|(calls, usec)| usec as f64 / calls as f64 / 1000.0),
                ..Default::default()
            },
        );
    }
    Ok(out)
}

/// The nodes' figures as one result: a single node's as they are; several nodes' each kept
/// under `nodes`, with each percentile the highest over them and the calls summed.
pub(super) fn combine(nodes: Vec<(String, NodeFigures)>, mut problems: Vec<String>) -> ServerLatency {
    let several = nodes.len() > 1;
    let mut found: BTreeMap<String, BTreeMap<String, ServerCommandLatency>> = BTreeMap::new();
    let mut reasons = Vec::new();
    for (node, figures) in nodes {
        match figures {
            Ok(f) => drop(found.insert(node, f)),
            Err(why) if several => reasons.push(format!("{node}: {why}")),
            Err(why) => reasons.push(why.0),
        }
    }
    if found.is_empty() {
        let mut out = ServerLatency::unavailable(reasons.join("; "));
        out.problems = problems;
        return out;
    }
    problems.extend(reasons);
    let mut commands: BTreeMap<String, ServerCommandLatency> = BTreeMap::new();
    let mut times: BTreeMap<String, Option<f64>> = BTreeMap::new();
    for figures in found.values() {
        for (name, f) in figures {
            let zero = ServerCommandLatency { calls_total: Some(0), calls_in_run: Some(0), ..Default::default() };
            let all = commands.entry(name.clone()).or_insert(zero);
            let highest = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(x), Some(y)) => Some(x.max(y)),
                _ => a.or(b),
            };
            all.p50_ms = highest(all.p50_ms, f.p50_ms);
            all.p99_ms = highest(all.p99_ms, f.p99_ms);
            all.p99_9_ms = highest(all.p99_9_ms, f.p99_9_ms);
            all.calls_total = all.calls_total.zip(f.calls_total).map(|(a, b)| a + b);
            all.calls_in_run = all.calls_in_run.zip(f.calls_in_run).map(|(a, b)| a + b);
            let time = times.entry(name.clone()).or_insert(Some(0.0));
            *time = time.zip(run_time_ms(f)).map(|(a, b)| a + b);
        }
    }
    for (name, c) in commands.iter_mut() {
        c.run_mean_ms = mean_of(times[name], c.calls_in_run);
    }
    ServerLatency {
        source: SOURCE.into(),
        unavailable: None,
        span: SPAN.into(),
        commands: if several { commands } else { found.values().next().cloned().unwrap_or_default() },
        nodes: if several { found } else { BTreeMap::new() },
        problems,
        wire_and_server_unavailable: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const START: &str = "# Commandstats\r\ncmdstat_get:calls=100,usec=400,usec_per_call=4.00,rejected_calls=0,\
        failed_calls=0\r\ncmdstat_info:calls=2,usec=90,usec_per_call=45.00\r\n\r\n# Latencystats\r\n\
        latency_percentiles_usec_get:p50=3.007,p99=9.023,p99.9=20.095\r\nlatency_percentiles_usec_info:p50=40.1\r\n";
    const END: &str = "# Commandstats\r\ncmdstat_get:calls=1100,usec=2400,usec_per_call=2.18\r\n\
        cmdstat_set:calls=10,usec=50,usec_per_call=5.00\r\n# Latencystats\r\n\
        latency_percentiles_usec_get:p50=2.007,p99=8.031,p99.9=16.127\r\n\
        latency_percentiles_usec_config|get:p50=44.031,p99=44.031,p99.9=44.031\r\n";

    fn names(n: &[&str]) -> Vec<String> {
        n.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn reads_percentiles_and_counters_and_derives_only_what_counters_allow() {
        let (start, end) = (Reading::parse(START), Reading::parse(END));
        let mut problems = Vec::new();
        let f = node_figures(Some(&start), &end, &names(&["GET", "SET"]), (None, &mut problems)).unwrap();
        let get = f["GET"];
        // The end's percentiles as the server gives them: no difference of percentiles.
        assert_eq!((get.p50_ms, get.p99_ms, get.p99_9_ms), (Some(0.002007), Some(0.008031), Some(0.016127)));
        assert_eq!((get.calls_total, get.calls_in_run), (Some(1100), Some(1000)));
        assert_eq!(get.run_mean_ms, Some(0.002));
        // SET has counters but no latencystats entry: said, not made up.
        assert_eq!((f["SET"].p99_ms, f["SET"].calls_in_run), (None, Some(10)));
        assert_eq!(problems, ["no latencystats entry for SET"]);
    }

    #[test]
    fn says_why_a_server_has_no_figures() {
        let mut problems = Vec::new();
        let old = Reading::parse("# Commandstats\r\ncmdstat_get:calls=1,usec=4\r\n");
        let why = node_figures(None, &old, &names(&["GET"]), (None, &mut problems)).unwrap_err();
        assert!(why.contains("no latencystats section"), "{why}");
        let off = Reading::parse("# Latencystats\r\n");
        let why = node_figures(None, &off, &names(&["GET"]), (None, &mut problems)).unwrap_err();
        assert!(why.contains("latency-tracking is off"), "{why}");
        assert!(refused("NOPERM User x has no permissions to run the 'info' command").contains("ACL denies"));
        assert!(refused("ERR syntax error").contains("older than Redis 7"));
    }

    #[test]
    fn a_restart_or_reset_leaves_the_runs_share_unknown() {
        let (start, end) = (Reading::parse(END), Reading::parse(START));
        let f = node_figures(Some(&start), &end, &names(&["GET"]), (None, &mut Vec::new())).unwrap();
        assert_eq!((f["GET"].calls_in_run, f["GET"].run_mean_ms, f["GET"].calls_total), (None, None, Some(100)));
        let f = node_figures(None, &end, &names(&["GET"]), (None, &mut Vec::new())).unwrap();
        assert_eq!(f["GET"].calls_in_run, None);
    }

    #[test]
    fn nodes_combine_into_upper_bounds_and_sums() {
        let one = |p99: f64, calls: u64, mean: f64| ServerCommandLatency {
            p50_ms: Some(p99 / 2.0),
            p99_ms: Some(p99),
            p99_9_ms: None,
            calls_total: Some(calls),
            calls_in_run: Some(calls),
            run_mean_ms: Some(mean),
            ..Default::default()
        };
        let node = |c| Ok(BTreeMap::from([("GET".to_string(), c)]));
        let all = combine(
            vec![
                ("a:1".into(), node(one(0.01, 100, 0.002))),
                ("b:2".into(), node(one(0.03, 300, 0.006))),
                ("c:3".into(), Err("did not answer".into())),
            ],
            Vec::new(),
        );
        let get = all.commands["GET"];
        assert_eq!((get.p99_ms, get.calls_in_run, get.p99_9_ms), (Some(0.03), Some(400), None));
        assert!((get.run_mean_ms.unwrap() - 0.005).abs() < 1e-12);
        assert_eq!(all.nodes.len(), 2);
        assert_eq!(all.problems, ["c:3: did not answer"]);
        let single = combine(vec![("a:1".into(), node(one(0.01, 100, 0.002)))], Vec::new());
        assert!(single.nodes.is_empty() && single.commands["GET"].p99_ms == Some(0.01));
        let none = combine(vec![("a:1".into(), Err("refused".into()))], Vec::new());
        assert_eq!(none.unavailable.as_deref(), Some("refused"));
    }

    #[test]
    fn pooled_runs_keep_the_latest_percentiles_and_add_the_calls() {
        let run = |p99: f64, calls: u64, mean: f64| {
            let c = ServerCommandLatency {
                p99_ms: Some(p99),
                calls_in_run: Some(calls),
                run_mean_ms: Some(mean),
                ..Default::default()
            };
            ServerLatency { commands: BTreeMap::from([("GET".into(), c)]), ..ServerLatency::unavailable("x") }
        };
        let (mut a, mut b) = (run(0.01, 100, 0.002), run(0.02, 300, 0.006));
        (a.unavailable, b.unavailable) = (None, None);
        let get = a.then(b).commands["GET"];
        assert_eq!((get.p99_ms, get.calls_in_run), (Some(0.02), Some(400)));
        assert!((get.run_mean_ms.unwrap() - 0.005).abs() < 1e-12);
    }
}
