//! The JSON result of a real run conforms to docs/json-schema.json, so the documented schema
//! and the output cannot drift apart.

mod common;

use common::*;
use serde_json::Value;

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
