//! Plain tables built from a result: CSV of the summary and of the time series, and a
//! Markdown summary to paste into issues and pull requests.

use std::fmt::Write;

use crate::report::document::Document;
use crate::report::document::role_figures::{Figure, Grid};

/// A CSV field, quoted when it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) { format!("\"{}\"", s.replace('"', "\"\"")) } else { s.to_string() }
}

pub fn csv_summary(doc: &Document) -> String {
    let mut out = String::from(
        "type,count,ops_per_sec,hits_per_sec,misses_per_sec,avg_ms,p50_ms,p99_ms,p99.9_ms,max_ms,kb_per_sec,errors\n",
    );
    for (name, op) in doc.rows() {
        let l = &op.latency_us;
        let _ = writeln!(
            out,
            "{},{},{:.2},{:.2},{:.2},{:.3},{:.3},{:.3},{:.3},{:.3},{:.2},{}",
            field(name),
            op.count,
            op.ops_per_sec,
            op.hits_per_sec,
            op.misses_per_sec,
            l.mean_us / 1000.0,
            l.p50_us / 1000.0,
            l.p99_us / 1000.0,
            l.p999_us / 1000.0,
            l.max_us / 1000.0,
            op.kb_per_sec,
            op.errors
        );
    }
    out.push_str(&roles_csv(doc));
    out
}

/// `--role`: after the summary, a blank line and a table of the roles' own figures, one row per
/// role and one column per figure (empty where a role's kind has no such figure or measured
/// none).
fn roles_csv(doc: &Document) -> String {
    if doc.roles.is_empty() {
        return String::new();
    }
    let grid = Grid::of(&doc.roles);
    let mut out = format!("\nrole,kind,loop_mode,{}\n", grid.columns.join(","));
    for (role, cells) in &grid.rows {
        let cells: Vec<String> = cells.iter().map(|c| c.map(Figure::text).unwrap_or_default()).collect();
        let (name, kind, mode) = (field(&role.name), field(&role.kind), field(&role.loop_mode));
        let _ = writeln!(out, "{name},{kind},{mode},{}", cells.join(","));
    }
    out
}

pub fn csv_timeline(doc: &Document) -> String {
    let mut out = String::from(
        "run,index,start_secs,duration_secs,count,ops_per_sec,p50_ms,p99_ms,p99.9_ms,max_ms,errors,server_cpu,server_used_memory_bytes,server_hit_ratio\n",
    );
    for p in &doc.time_series {
        let (t, l) = (&p.totals, &p.totals.latency_us);
        let opt = |v: Option<f64>| v.map(|x| x.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{:.3},{:.3},{},{:.2},{:.3},{:.3},{:.3},{:.3},{},{},{},{}",
            p.run,
            p.index,
            p.start_secs,
            p.duration_secs,
            t.count,
            t.ops_per_sec,
            l.p50_us / 1000.0,
            l.p99_us / 1000.0,
            l.p999_us / 1000.0,
            l.max_us / 1000.0,
            t.errors,
            opt(p.server.map(|s| s.cpu.total)),
            opt(p.server.map(|s| s.used_memory_bytes as f64)),
            opt(p.server.and_then(|s| s.hit_ratio)),
        );
    }
    out
}

pub fn markdown(doc: &Document) -> String {
    let server = doc.server.as_ref().map_or_else(|| "server".into(), |s| format!("{} {}", s.name, s.version));
    let c = &doc.configuration;
    let mut out = format!(
        "**{server}** at `{}`: {} connections, pipeline {}, {:.2} s{}\n\n",
        c.target,
        c.connections,
        c.pipeline,
        doc.duration_secs,
        if doc.interrupted { " (interrupted)" } else { "" }
    );
    out.push_str(
        "| Type | Ops/sec | p50 ms | p99 ms | p99.9 ms | Max ms | Errors |\n|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for (name, op) in doc.rows() {
        let l = &op.latency_us;
        let _ = writeln!(
            out,
            "| {name} | {:.0} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            op.ops_per_sec,
            l.p50_us / 1000.0,
            l.p99_us / 1000.0,
            l.p999_us / 1000.0,
            l.max_us / 1000.0,
            op.errors
        );
    }
    out.push_str(&crate::report::document::role_figures::markdown(&doc.roles));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_quotes_only_when_needed() {
        assert_eq!(field("GET"), "GET");
        assert_eq!(field("a,b"), "\"a,b\"");
    }
}
