//! The configuration and environment of a result as labelled tables and lists, so a person
//! reads every value in words and units: nothing in the page is JSON, even for fields added to
//! the result after this was written (they fall back to a generic labelled rendering).

use std::fmt::Write;

use serde_json::{Map, Value};

use crate::engine::ThreadCpu;
use crate::report::document::{CommandConfig, Configuration, Document, ValueSizeConfig};
use crate::report::pages::chart::escape;

/// A number as people read it: integers whole, other values to about four significant digits.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    if v == v.trunc() && v.abs() < 1e15 {
        return format!("{v:.0}");
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = (3 - magnitude).clamp(0, 6) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') { text.trim_end_matches('0').trim_end_matches('.').to_string() } else { text }
}

/// A field name in words, its unit taken from the suffix: `runqueue_wait_secs` → `runqueue wait (s)`.
pub fn label(key: &str) -> String {
    let (stem, unit) = [("_secs", " (s)"), ("_us", " (µs)"), ("_bytes", " (bytes)"), ("_per_sec", " per second")]
        .iter()
        .find_map(|(suffix, unit)| key.strip_suffix(suffix).map(|stem| (stem, *unit)))
        .unwrap_or((key, ""));
    format!("{}{unit}", stem.replace('_', " "))
}

/// Any value as HTML, recursively: scalars as text, objects as labelled tables, lists of
/// objects as tables with a column per field, other lists as comma-separated text.
pub fn value(v: &Value) -> String {
    match v {
        Value::Null => "none".into(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => u.to_string(),
            (None, Some(i)) => i.to_string(),
            _ => number(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => escape(s),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::Array(items) if items.iter().all(Value::is_object) => records(items),
        Value::Array(items) if items.iter().all(|i| !i.is_array() && !i.is_object()) => {
            items.iter().map(value).collect::<Vec<_>>().join(", ")
        }
        Value::Array(items) => {
            let mut out = String::from("<ul>");
            for item in items {
                let _ = write!(out, "<li>{}</li>", value(item));
            }
            out.push_str("</ul>");
            out
        }
        Value::Object(map) => {
            let rows: Vec<(String, String)> = map.iter().map(|(k, v)| (escape(&label(k)), value(v))).collect();
            table(&rows)
        }
    }
}

/// A table with one row per object and one column per field any of them has.
fn records(items: &[Value]) -> String {
    let mut columns: Vec<&str> = Vec::new();
    for item in items.iter().filter_map(Value::as_object) {
        for key in item.keys() {
            if !columns.contains(&key.as_str()) {
                columns.push(key);
            }
        }
    }
    let mut out = String::from("<div class=\"scroll\"><table><tr>");
    for c in &columns {
        let _ = write!(out, "<th>{}</th>", escape(&label(c)));
    }
    out.push_str("</tr>");
    for item in items {
        out.push_str("<tr>");
        for c in &columns {
            let _ = write!(out, "<td>{}</td>", value(&item[*c]));
        }
        out.push_str("</tr>");
    }
    out.push_str("</table></div>");
    out
}

/// Label / value rows, both already HTML.
pub fn table(rows: &[(String, String)]) -> String {
    let mut out = String::from("<table class=\"kv\">");
    for (k, v) in rows {
        let _ = write!(out, "<tr><th scope=\"row\">{k}</th><td>{v}</td></tr>");
    }
    out.push_str("</table>");
    out
}

fn bytes_as_mib(v: &Value) -> Option<String> {
    v.as_f64().map(|b| format!("{} MiB", number(b / 1_048_576.0)))
}

fn percent(v: &Value) -> Option<String> {
    v.as_f64().map(|f| format!("{} %", number(f * 100.0)))
}

/// What a key pattern letter means (memtier's letters).
fn key_pattern(letter: &str) -> String {
    let meaning = match letter {
        "S" => "sequential",
        "R" => "uniform random",
        "G" => "gaussian",
        "Z" => "zipf",
        "P" => "parallel (each connection its own slice)",
        _ => return escape(letter),
    };
    format!("{} ({meaning})", escape(letter))
}

/// The command mix: one row per command, with its share of the requests.
fn command_mix(commands: &[CommandConfig]) -> String {
    let total: f64 = commands.iter().map(|c| f64::from(c.weight)).sum();
    let mut out = String::from(
        "<table class=\"mix\"><tr><th>command</th><th>weight</th><th>share of requests</th><th>key pattern</th></tr>",
    );
    for c in commands {
        let share = if total > 0.0 { format!("{} %", number(f64::from(c.weight) / total * 100.0)) } else { "-".into() };
        let _ = write!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td>{share}</td><td>{}</td></tr>",
            escape(&c.name),
            c.weight,
            key_pattern(&c.key_pattern),
        );
    }
    out.push_str("</table>");
    out
}

/// A fixed size, a uniform range or a weighted list, in words.
fn value_size(v: &ValueSizeConfig) -> String {
    match v {
        ValueSizeConfig::Fixed(n) => format!("{n} bytes"),
        ValueSizeConfig::Range { min, max } => format!("{min} to {max} bytes, uniform"),
        ValueSizeConfig::List(list) => {
            list.iter().map(|(size, weight)| format!("{size} bytes (weight {weight})")).collect::<Vec<_>>().join(", ")
        }
    }
}

/// The run's configuration as labelled rows, then its command mix.
pub fn configuration(out: &mut String, config: &Configuration) {
    // Field by field as the result writes them, so that a field added later shows too.
    let Ok(Value::Object(map)) = serde_json::to_value(config) else {
        out.push_str("<p>Not recorded.</p>");
        return;
    };
    let mut rows = Vec::new();
    for (key, v) in map.iter().filter(|(k, _)| k.as_str() != "commands") {
        let text = match key.as_str() {
            "value_size" => value_size(&config.value_size),
            "expiry_range_secs" => match config.expiry_range_secs {
                Some((min, max)) => format!("{min} to {max} s"),
                None => value(v),
            },
            "key_prefix" => format!("<code>{}</code>", value(v)),
            _ => value(v),
        };
        rows.push((escape(&label(key)), text));
    }
    out.push_str(&table(&rows));
    out.push_str("<h3>Command mix</h3>");
    out.push_str(&command_mix(&config.commands));
}

/// The client's worker threads: one row each, with how busy it was.
fn threads(out: &mut String, threads: &[ThreadCpu]) {
    out.push_str(
        "<table><tr><th>thread</th><th>CPU (s)</th><th>wall (s)</th><th>busy (% of wall)</th>\
         <th>waiting for a core (s)</th><th>hypervisor steal (s)</th></tr>",
    );
    for (i, t) in threads.iter().enumerate() {
        let busy =
            if t.wall_secs > 0.0 { format!("{} %", number(t.cpu_secs / t.wall_secs * 100.0)) } else { "-".into() };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{busy}</td><td>{}</td><td>{}</td></tr>",
            i + 1,
            number(t.cpu_secs),
            number(t.wall_secs),
            number(t.runqueue_wait_secs),
            number(t.steal_secs),
        );
    }
    out.push_str("</table>");
}

/// The server's figures over the whole run, each with its unit.
fn server_figures(telemetry: &Map<String, Value>) -> String {
    let mut rows = Vec::new();
    for (key, v) in telemetry {
        let (name, text) = match key.as_str() {
            "cpu" => {
                if let Some(cpu) = v.as_object() {
                    for (part, share) in cpu {
                        let name = match part.as_str() {
                            "total" => "CPU, all threads (% of a core)".to_string(),
                            "main_thread" => "CPU, main thread (% of a core)".to_string(),
                            other => format!("CPU, {} (% of a core)", label(other)),
                        };
                        let text = share.as_f64().map(|s| number(s * 100.0)).unwrap_or_else(|| value(share));
                        rows.push((escape(&name), text));
                    }
                    continue;
                }
                ("CPU".to_string(), value(v))
            }
            "used_memory_bytes" => ("used memory".into(), bytes_as_mib(v).unwrap_or_else(|| value(v))),
            "peak_used_memory_bytes" => ("peak used memory".into(), bytes_as_mib(v).unwrap_or_else(|| value(v))),
            "hit_ratio" => ("keyspace hit ratio".into(), percent(v).unwrap_or_else(|| value(v))),
            "ops_per_sec" => ("commands per second (all clients)".into(), value(v)),
            "keys" => ("keys at the end".into(), value(v)),
            other => (label(other), value(v)),
        };
        rows.push((escape(&name), text));
    }
    table(&rows)
}

/// A part of the result as labelled rows, field by field as written.
fn part(v: &impl serde::Serialize) -> String {
    value(&serde_json::to_value(v).unwrap_or(Value::Null))
}

/// Tool, server, client machine and threads, and the server's whole-run figures.
pub fn environment(out: &mut String, doc: &Document) {
    out.push_str("<h3>Tool</h3>");
    let tool = format!("{} {}", doc.tool.name, doc.tool.version);
    out.push_str(&table(&[("tool".into(), escape(tool.trim()))]));
    out.push_str("<h3>Server</h3>");
    match &doc.server {
        Some(server) => out.push_str(&part(server)),
        None => out.push_str("<p>Not known: the server refused INFO.</p>"),
    }
    out.push_str("<h3>Client machine</h3>");
    out.push_str(&part(&doc.client.machine));
    out.push_str("<h3>Client threads</h3>");
    match doc.client.threads.as_slice() {
        [] => out.push_str("<p>Not measured.</p>"),
        t => threads(out, t),
    }
    out.push_str("<h3>Server over the whole run</h3>");
    match serde_json::to_value(doc.server_telemetry) {
        Ok(Value::Object(t)) => out.push_str(&server_figures(&t)),
        _ => out.push_str("<p>Not sampled: the server refused INFO.</p>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_labels_read_as_words() {
        assert_eq!(number(0.998_462_000_000_000_1), "0.9985");
        assert_eq!(number(29_512.905), "29513");
        assert_eq!(number(0.000_383_38), "0.000383");
        assert_eq!(number(3.0), "3");
        assert_eq!(label("runqueue_wait_secs"), "runqueue wait (s)");
        assert_eq!(label("rate_per_sec"), "rate per second");
    }

    #[test]
    fn no_value_renders_as_json() {
        let doc = json!({
            "a": [{"x": 1, "y": "two"}, {"x": 2.5, "z": null}],
            "b": {"c": [1, 2], "d": [[1, 2], [3, 4]]},
            "e": true
        });
        let html = value(&doc);
        for json_like in ["{\"", "\":", "[{", "[["] {
            assert!(!html.contains(json_like), "{json_like} in {html}");
        }
        assert!(html.contains("<th>y</th>") && html.contains("2.5") && html.contains("yes"), "{html}");
    }

    #[test]
    fn the_configuration_lists_commands_and_sizes_in_words() {
        let config = serde_json::from_value(json!({
            "target": "127.0.0.1:6379",
            "commands": [{"name": "SET", "weight": 1, "key_pattern": "R"}, {"name": "GET", "weight": 3, "key_pattern": "S"}],
            "value_size": {"list": [[32, 1], [1024, 3]]},
            "expiry_range_secs": [10, 20]
        }))
        .unwrap();
        let mut out = String::new();
        configuration(&mut out, &config);
        assert!(out.contains("<code>GET</code></td><td>3</td><td>75 %</td><td>S (sequential)"), "{out}");
        assert!(out.contains("32 bytes (weight 1), 1024 bytes (weight 3)") && out.contains("10 to 20 s"), "{out}");
    }
}
