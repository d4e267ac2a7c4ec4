//! The shape of a memtier_benchmark JSON file (every key path and its value's type), which
//! tests compare with what memtier 2.3 wrote (tests/fixtures/memtier-2.3).

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

/// `ours` has the key set, value types and top-level key order of memtier 2.3's `fixture`
/// (a file of tests/fixtures/memtier-2.3).
pub fn assert_same_as_fixture(ours: &Value, fixture: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/memtier-2.3").join(fixture);
    let theirs: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let (mut a, mut b) = (BTreeMap::new(), BTreeMap::new());
    shape(ours, String::new(), &mut a);
    shape(&theirs, String::new(), &mut b);
    let differences: Vec<String> = a
        .keys()
        .chain(b.keys())
        .filter(|k| a.get(*k) != b.get(*k))
        .map(|k| format!("{k}: ours {:?}, memtier {:?}", a.get(k), b.get(k)))
        .collect();
    assert!(differences.is_empty(), "{fixture}:\n{}", differences.join("\n"));
    // The same keys in the same order where memtier's order is fixed.
    let order = |doc: &Value| doc.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(order(ours), order(&theirs));
}

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
