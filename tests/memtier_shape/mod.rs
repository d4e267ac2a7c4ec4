//! The shape of a memtier_benchmark JSON file (every key path and its value's type), which
//! tests compare with what memtier 2.3 wrote (tests/fixtures/memtier-2.3).

use std::collections::BTreeMap;

use serde_json::Value;

/// Every path of a JSON document with its value's type; per-second keys and array items
/// collapse to `#` and `[]`.
pub fn shape(v: &Value, path: String, out: &mut BTreeMap<String, &'static str>) {
    match v {
        Value::Object(m) => {
            if m.is_empty() {
                out.insert(path.clone(), "{}");
            }
            for (k, v) in m {
                let k = if k.chars().all(|c| c.is_ascii_digit()) { "#" } else { k.as_str() };
                shape(v, format!("{path}/{k}"), out);
            }
        }
        Value::Array(items) => {
            out.insert(path.clone(), "list");
            for v in items {
                shape(v, format!("{path}[]"), out);
            }
        }
        Value::Null => {
            out.insert(path, "null");
        }
        Value::Bool(_) => {
            out.insert(path, "bool");
        }
        Value::String(_) => {
            out.insert(path, "string");
        }
        Value::Number(n) => {
            out.insert(path, if n.is_f64() { "float" } else { "integer" });
        }
    }
}
