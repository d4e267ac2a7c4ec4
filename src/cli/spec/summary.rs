//! What a run of specifications gives: one entry per specification (its verdict, the
//! figures measured, the check, the parameters set and put back), as JSON, Markdown, HTML and
//! the table printed at the end.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::plan::Spec;
use crate::net::ServerInfo;

/// How a specification ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// It ran and the client succeeded.
    Ran,
    /// It started and stopped: a check missed, a command failed, the client failed.
    Failed,
    /// The server lacks its topology or a configuration parameter.
    Skipped,
    /// respbench does not run it (another tool, several clients together, a dataset file).
    Refused,
    /// `--dry-run`: its plan was built and shown.
    Planned,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Ran => "ok",
            Verdict::Failed => "FAILED",
            Verdict::Skipped => "skipped",
            Verdict::Refused => "refused",
            Verdict::Planned => "planned",
        }
    }
}

/// A configuration parameter: the value set and the one read before.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub value: String,
    pub old: String,
}

/// `dbconfig.check.keyspacelen`: the keys expected (after `--scale`), as written, and found.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct CheckFigures {
    pub expected: u64,
    pub written: u64,
    pub found: u64,
    pub passed: bool,
}

/// One specification in the summary. Figures are absent when they were not measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SpecResult {
    pub name: String,
    pub file: String,
    pub priority: i64,
    pub verdict: Verdict,
    pub reason: Option<String>,
    pub topology: Option<String>,
    pub parameters: Vec<Parameter>,
    pub preload_ops: Option<u64>,
    pub check: Option<CheckFigures>,
    pub requests: Option<u64>,
    pub errors: Option<u64>,
    pub ops_per_sec: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    /// A run of `clientconfigs`: each role's figures in a line (messages delivered, lost, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roles: Vec<String>,
    /// respbench's JSON, HTML and Markdown and memtier's JSON of the client run.
    pub files: Vec<String>,
}

impl SpecResult {
    pub fn new(spec: &Spec) -> SpecResult {
        SpecResult {
            name: spec.name.clone(),
            file: spec.file.display().to_string(),
            priority: spec.priority,
            verdict: Verdict::Failed,
            reason: None,
            topology: None,
            parameters: Vec::new(),
            preload_ops: None,
            check: None,
            requests: None,
            errors: None,
            ops_per_sec: None,
            p50_ms: None,
            p99_ms: None,
            roles: Vec::new(),
            files: Vec::new(),
        }
    }

    /// The live line printed as the specification ends.
    pub fn line(&self, index: usize, count: usize) -> String {
        let mut s = format!("[{index}/{count}] {} {}", self.name, self.verdict.word());
        if let (Some(ops), Some(p50), Some(p99)) = (self.ops_per_sec, self.p50_ms, self.p99_ms) {
            let _ = write!(s, ": {ops:.0} ops/s, p50 {p50:.3} ms, p99 {p99:.3} ms");
        }
        if let Some(c) = &self.check {
            let _ = write!(s, ", check {} keys of {}", c.found, c.expected);
        }
        for role in &self.roles {
            let _ = write!(s, "; {role}");
        }
        if let Some(why) = &self.reason {
            let _ = write!(s, ": {why}");
        }
        s
    }

    fn check_word(&self) -> String {
        match &self.check {
            Some(c) if c.passed => format!("{} keys", c.found),
            Some(c) => format!("{} of {} keys", c.found, c.expected),
            None => "-".into(),
        }
    }
}

/// The summary of a run of specifications.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    pub tool: String,
    pub started_unix_ms: u64,
    pub server: Option<ServerInfo>,
    /// The server's topology in the specifications' terms.
    pub topology: Option<String>,
    pub test_time_secs: Option<f64>,
    pub scale: f64,
    pub specs: Vec<SpecResult>,
}

fn figure(v: Option<f64>, places: usize) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.places$}"))
}

impl Summary {
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("the summary serializes") + "\n"
    }

    fn rows(&self) -> Vec<[String; 6]> {
        self.specs
            .iter()
            .map(|r| {
                let verdict = match &r.reason {
                    Some(why) => format!("{}: {why}", r.verdict.word()),
                    None => r.verdict.word().into(),
                };
                [
                    r.name.clone(),
                    figure(r.ops_per_sec, 0),
                    figure(r.p50_ms, 3),
                    figure(r.p99_ms, 3),
                    r.check_word(),
                    verdict,
                ]
            })
            .collect()
    }

    const HEADERS: [&str; 6] = ["spec", "ops/s", "p50 ms", "p99 ms", "check", "verdict"];

    /// The table printed at the end of a run.
    pub fn table(&self) -> String {
        let rows = self.rows();
        let mut widths: Vec<usize> = Self::HEADERS.iter().map(|h| h.len()).collect();
        for row in &rows {
            for (w, cell) in widths.iter_mut().zip(&row[..5]) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let line = |out: &mut String, cells: &[String]| {
            for (i, cell) in cells.iter().enumerate() {
                let _ = if i == 5 {
                    write!(out, "{cell}")
                } else if i == 0 || i == 4 {
                    write!(out, "{cell:<w$}  ", w = widths[i])
                } else {
                    write!(out, "{cell:>w$}  ", w = widths[i])
                };
            }
            out.push('\n');
        };
        line(&mut out, &Self::HEADERS.map(String::from));
        for row in &rows {
            line(&mut out, row);
        }
        out
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from("# respbench spec\n\n");
        self.about(&mut out, |k, v| format!("- {k}: {v}\n"));
        out.push('\n');
        let _ = writeln!(out, "| {} |", Self::HEADERS.join(" | "));
        out.push_str("|---|---:|---:|---:|---|---|\n");
        for row in self.rows() {
            let cells: Vec<String> = row.iter().map(|c| c.replace('|', "\\|")).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        out
    }

    fn about(&self, out: &mut String, item: impl Fn(&str, &str) -> String) {
        if let Some(s) = &self.server {
            out.push_str(&item("server", &format!("{} {}", s.name, s.version)));
        }
        if let Some(t) = &self.topology {
            out.push_str(&item("topology", t));
        }
        if let Some(t) = self.test_time_secs {
            out.push_str(&item("client test time", &format!("{t} s (--test-time)")));
        }
        if self.scale < 1.0 {
            out.push_str(&item("scale", &format!("{} of every key range and request count", self.scale)));
        }
        let count = |v: Verdict| self.specs.iter().filter(|r| r.verdict == v).count();
        out.push_str(&item(
            "specifications",
            &format!(
                "{} ran, {} failed, {} skipped, {} refused",
                count(Verdict::Ran),
                count(Verdict::Failed),
                count(Verdict::Skipped),
                count(Verdict::Refused)
            ),
        ));
    }

    /// A page that fits a 1280 px window: long names and reasons wrap inside their cells.
    pub fn html(&self) -> String {
        let mut out = String::from(
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>respbench spec</title><style>\
             body{font-family:system-ui,sans-serif;margin:1.5em;max-width:1200px;color:#222}\
             table{border-collapse:collapse;width:100%;table-layout:fixed}\
             th,td{border-bottom:1px solid #ddd;padding:4px 6px;text-align:left;vertical-align:top;\
             overflow-wrap:anywhere;font-size:14px}\
             td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\
             col.spec{width:34%}col.n{width:9%}col.check{width:12%}col.verdict{width:27%}\
             .FAILED{color:#b00020;font-weight:600}\
             </style></head><body>\n<h1>respbench spec</h1>\n<ul>\n",
        );
        self.about(&mut out, |k, v| format!("<li>{}: {}</li>\n", escape(k), escape(v)));
        out.push_str(
            "</ul>\n<table>\n<colgroup><col class=\"spec\"><col class=\"n\"><col class=\"n\"><col class=\"n\">\
             <col class=\"check\"><col class=\"verdict\"></colgroup>\n<thead><tr>",
        );
        for (i, h) in Self::HEADERS.iter().enumerate() {
            let class = if (1..4).contains(&i) { " class=\"n\"" } else { "" };
            let _ = write!(out, "<th{class}>{}</th>", escape(h));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for (row, r) in self.rows().iter().zip(&self.specs) {
            out.push_str("<tr>");
            for (i, cell) in row.iter().enumerate() {
                let class = match i {
                    1..=3 => " class=\"n\"".to_string(),
                    5 => format!(" class=\"{}\"", r.verdict.word()),
                    _ => String::new(),
                };
                let _ = write!(out, "<td{class}>{}</td>", escape(cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table>\n</body></html>\n");
        out
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
