//! The JSON result of a real run conforms to docs/json-schema.json, so the documented schema
//! and the output cannot drift apart.

mod common;

use common::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// Checks `value` against the subset of JSON Schema the document uses: type, const, enum,
/// required, properties, additionalProperties, items and local $ref.
fn check(root: &Value, schema: &Value, value: &Value, path: &str, problems: &mut Vec<String>) {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/").expect("local refs only");
        return check(root, &root["$defs"][name], value, path, problems);
    }
    if let Some(c) = schema.get("const")
        && c != value
    {
        problems.push(format!("{path}: {value} is not {c}"));
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array)
        && !options.contains(value)
    {
        problems.push(format!("{path}: {value} not in {options:?}"));
    }
    if let Some(types) = schema.get("type") {
        let types: Vec<&str> = match types {
            Value::String(t) => vec![t.as_str()],
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let actual = match value {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        let ok = types.contains(&actual) || (actual == "integer" && types.contains(&"number"));
        if !ok {
            problems.push(format!("{path}: {actual} where {types:?} expected"));
            return;
        }
    }
    if let Value::Object(map) = value {
        for required in schema.get("required").and_then(Value::as_array).into_iter().flatten() {
            if !map.contains_key(required.as_str().unwrap()) {
                problems.push(format!("{path}: missing {required}"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (key, item) in map {
            let child = format!("{path}.{key}");
            match (properties.and_then(|p| p.get(key)), schema.get("additionalProperties")) {
                (Some(sub), _) => check(root, sub, item, &child, problems),
                (None, Some(Value::Bool(false))) => problems.push(format!("{child}: not in the schema")),
                (None, Some(sub)) if sub.is_object() => check(root, sub, item, &child, problems),
                _ => {}
            }
        }
    }
    if let (Value::Array(items), Some(sub)) = (value, schema.get("items")) {
        for (i, item) in items.iter().enumerate() {
            check(root, sub, item, &format!("{path}[{i}]"), problems);
        }
    }
}

#[test]
fn result_json_conforms_to_the_documented_schema() {
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.json")).unwrap(),
    )
    .unwrap();
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("counted", &["-n", "3000", "--ratio", "1:3", "--key-max", "99", "--expiry-range", "5-9"][..]),
        ("timed", &["--duration", "1200ms", "--data-size-range", "4-40", "-c", "3"][..]),
        ("fill", &["-n", "allkeys", "--key-max", "999", "--data-size-list", "8:1,16:2"][..]),
        (
            "open-loop",
            &["--rate", "2000", "--duration", "1s", "--arrival", "poisson", "--warmup", "200ms", "-c", "4"][..],
        ),
        ("repeated", &["-n", "2000", "--runs", "2", "-c", "2"][..]),
        ("shard", &["-n", "2001", "--shard", "1/2", "--key-pattern", "S:S", "--rate", "3001", "-c", "2"][..]),
    ] {
        let json = dir.path().join(format!("{name}.json"));
        let mut argv = args.to_vec();
        argv.extend(["--json", json.to_str().unwrap(), "-q"]);
        run_ok(&server, &argv);
        let doc = read_json(&json);
        let mut problems = Vec::new();
        check(&schema, &schema, &doc, "$", &mut problems);
        assert!(problems.is_empty(), "{name}: {problems:#?}");
    }
    // A merged result is a result too: the other shard, then both merged.
    let other = dir.path().join("shard0.json");
    let argv = ["-n", "2001", "--shard", "0/2", "--key-pattern", "S:S", "--rate", "3001", "-c", "2", "-q", "--json"];
    run_ok(&server, &[&argv[..], &[other.to_str().unwrap()]].concat());
    let merged = dir.path().join("merged.json");
    let out = respbench()
        .args(["merge", other.to_str().unwrap(), dir.path().join("shard.json").to_str().unwrap()])
        .args(["--json", merged.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let mut problems = Vec::new();
    check(&schema, &schema, &read_json(&merged), "$", &mut problems);
    assert!(problems.is_empty(), "merged: {problems:#?}");
}

#[test]
fn the_schema_checker_catches_drift() {
    let schema: Value = serde_json::json!({
        "type": "object", "required": ["a"], "additionalProperties": false,
        "properties": { "a": { "type": "integer" } }
    });
    let mut problems = Vec::new();
    check(&schema, &schema, &serde_json::json!({"a": "x", "b": 1}), "$", &mut problems);
    assert_eq!(problems.len(), 2, "{problems:?}");
}

/// A schema reduced to what both schemas must agree on: its types, its object's properties
/// (each reduced), required fields and map values, its items, its enumerated values.
#[derive(Debug, Default)]
struct Shape {
    types: BTreeSet<String>,
    properties: BTreeMap<String, Shape>,
    required: BTreeSet<String>,
    values: Option<Box<Shape>>,
    items: Vec<Shape>,
    options: BTreeSet<String>,
    /// `oneOf`/`anyOf` of several non-null schemas (an enum's variants), in order.
    alternatives: Vec<Shape>,
}

fn shape(root: &Value, schema: &Value) -> Shape {
    let mut out = Shape::default();
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let name = reference.strip_prefix("#/$defs/").expect("local refs only");
        return shape(root, &root["$defs"][name]);
    }
    for key in ["anyOf", "oneOf"] {
        let mut parts: Vec<Shape> = Vec::new();
        for alternative in schema.get(key).and_then(Value::as_array).into_iter().flatten() {
            let part = shape(root, alternative);
            if part.types.len() == 1 && part.types.contains("null") {
                out.types.insert("null".into());
            } else {
                out.types.extend(part.types.iter().cloned());
                out.options.extend(part.options.iter().cloned());
                parts.push(part);
            }
        }
        // One schema or null (an Option): that schema's shape; several: each in turn.
        if parts.len() == 1 {
            let part = parts.remove(0);
            (out.properties, out.required, out.values, out.items) =
                (part.properties, part.required, part.values, part.items);
        } else if parts.iter().any(|p| !p.properties.is_empty()) {
            out.alternatives = parts;
        }
    }
    match schema.get("type") {
        Some(Value::String(t)) => drop(out.types.insert(t.clone())),
        Some(Value::Array(ts)) => out.types.extend(ts.iter().filter_map(Value::as_str).map(String::from)),
        _ => {}
    }
    for (key, sub) in schema.get("properties").and_then(Value::as_object).into_iter().flatten() {
        out.properties.insert(key.clone(), shape(root, sub));
    }
    out.required.extend(schema.get("required").and_then(Value::as_array).into_iter().flatten().map(|r| r.to_string()));
    if let Some(sub) = schema.get("additionalProperties").filter(|s| s.is_object()) {
        out.values = Some(Box::new(shape(root, sub)));
    }
    if let Some(items) = schema.get("prefixItems").and_then(Value::as_array) {
        out.items = items.iter().map(|i| shape(root, i)).collect();
    } else if let Some(sub) = schema.get("items").filter(|s| s.is_object()) {
        out.items = vec![shape(root, sub)];
    }
    let constant = schema.get("const").into_iter();
    out.options.extend(
        schema.get("enum").and_then(Value::as_array).into_iter().flatten().chain(constant).map(|v| v.to_string()),
    );
    out
}

fn shape_copy(s: &Shape) -> Shape {
    Shape {
        types: s.types.clone(),
        properties: s.properties.iter().map(|(k, v)| (k.clone(), shape_copy(v))).collect(),
        required: s.required.clone(),
        values: s.values.as_ref().map(|v| Box::new(shape_copy(v))),
        items: s.items.iter().map(shape_copy).collect(),
        options: s.options.clone(),
        alternatives: s.alternatives.iter().map(shape_copy).collect(),
    }
}

/// Where the documented shape and the written one differ: a field on one side only, a different
/// set of required fields, a type written that the docs do not allow.
fn compare(path: &str, documented: &Shape, written: &Shape, problems: &mut Vec<String>) {
    // An integer the docs call a number is still one; a const or enum may leave the type out.
    let normal = |s: &Shape| -> BTreeSet<String> { s.types.iter().map(|t| t.replace("integer", "number")).collect() };
    if !documented.types.is_empty() && !written.types.is_empty() && !normal(written).is_subset(&normal(documented)) {
        problems.push(format!("{path}: documented {:?}, written {:?}", documented.types, written.types));
    }
    if !documented.options.is_empty() && !written.options.is_empty() && documented.options != written.options {
        problems.push(format!("{path}: documented values {:?}, written {:?}", documented.options, written.options));
    }
    let (d, w): (BTreeSet<&String>, BTreeSet<&String>) =
        (documented.properties.keys().collect(), written.properties.keys().collect());
    if d != w {
        problems.push(format!("{path}: documented fields {d:?}, written {w:?}"));
    }
    if documented.required != written.required {
        problems.push(format!("{path}: documented required {:?}, written {:?}", documented.required, written.required));
    }
    for (key, sub) in &documented.properties {
        if let Some(other) = written.properties.get(key) {
            // A field left out when empty is never written as null.
            let mut other_types = other.types.clone();
            if !written.required.contains(&format!("{key:?}")) {
                other_types.remove("null");
            }
            let other = Shape { types: other_types, ..shape_copy(other) };
            compare(&format!("{path}.{key}"), sub, &other, problems);
        }
    }
    if documented.alternatives.len() != written.alternatives.len() {
        problems.push(format!(
            "{path}: documented {} alternatives, written {}",
            documented.alternatives.len(),
            written.alternatives.len()
        ));
    }
    for (i, (d, w)) in documented.alternatives.iter().zip(&written.alternatives).enumerate() {
        compare(&format!("{path}/{i}"), d, w, problems);
    }
    if let (Some(d), Some(w)) = (&documented.values, &written.values) {
        compare(&format!("{path}.*"), d, w, problems);
    }
    for (i, w) in written.items.iter().enumerate() {
        if let Some(d) = documented.items.get(i).or(documented.items.first()) {
            compare(&format!("{path}[{i}]"), d, w, problems);
        }
    }
}

/// docs/json-schema.json describes what the result type writes: every object's fields, which of
/// them are always there, and each field's type, checked against the schema generated from
/// `report::document::Document`.
#[test]
fn the_documented_schema_matches_the_result_type() {
    let documented: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.json")).unwrap(),
    )
    .unwrap();
    let written = respbench::report::document::json_schema();
    let mut problems = Vec::new();
    compare("result", &shape(&documented, &documented), &shape(&written, &written), &mut problems);
    assert!(problems.is_empty(), "docs/json-schema.json and the result type differ:\n{}", problems.join("\n"));
}
