//! The module graph stays a ladder: no module imports one that imports it back (a cycle), and
//! no lower layer reaches up into a higher one. Read from the sources' paths (`crate::a::b`,
//! `super::x`, `use crate::{..}` groups, a child named by its parent), so that a change that
//! closes a circle fails here rather than in the next reader's head.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers, lowest first: a module may use its own layer and those below.
const LAYERS: &[&[&str]] =
    &[&["resp"], &["codec"], &["config", "stats"], &["workload", "net"], &["engine"], &["report"], &["cli"]];

type Graph = BTreeMap<String, BTreeSet<String>>;

#[test]
fn the_module_graph_has_no_cycle_and_no_upward_import() {
    let graph = graph(Path::new(env!("CARGO_MANIFEST_DIR")).join("src").as_path());
    assert!(graph.len() > 50, "only {} modules read: is the source layout what this test expects?", graph.len());
    let cycles: Vec<String> = cycles(&graph).iter().map(|c| c.join(" ")).collect();
    assert!(cycles.is_empty(), "module import cycles: {cycles:?}");
    let upward: Vec<String> = upward(&graph);
    assert!(upward.is_empty(), "imports from a lower layer to a higher one: {upward:?}");
}

/// Inside each folder of src/, no file imports one that imports it back, the folder's `mod.rs`
/// (or `lib.rs`) among them: a file that takes a shared item from its folder's `mod.rs` while
/// the `mod.rs` uses that file is a circle too.
#[test]
fn no_import_circle_between_the_files_of_a_folder() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph_with(&src, true);
    let is_folder = |m: &str| m.is_empty() || graph.keys().any(|c| c.starts_with(&format!("{m}::")));
    let parent = |m: &str| m.rsplit_once("::").map_or(String::new(), |(p, _)| p.to_string());
    let mut circles = Vec::new();
    for folder in graph.keys().filter(|m| is_folder(m)) {
        // The folder's files: its `mod.rs` and each `x.rs` beside it.
        let file = |m: &str| m == folder || (!m.is_empty() && parent(m) == *folder && !is_folder(m));
        let files: Graph = graph
            .iter()
            .filter(|(m, _)| file(m))
            .map(|(m, uses)| (m.clone(), uses.iter().filter(|u| file(u)).cloned().collect()))
            .collect();
        let name = if folder.is_empty() { "src/".to_string() } else { format!("src/{}/", folder.replace("::", "/")) };
        circles.extend(cycles(&files).iter().map(|c| format!("{name}: {}", c.join(" "))));
    }
    assert!(circles.is_empty(), "import circles between the files of a folder: {circles:?}");
}

/// Each module's path (`engine::worker`) and the modules its code names.
fn graph(src: &Path) -> Graph {
    graph_with(src, false)
}

/// The graph; with `ancestors`, a module's imports from its parents' files count too.
fn graph_with(src: &Path, ancestors: bool) -> Graph {
    let mut files = BTreeMap::new();
    collect(src, src, &mut files);
    let modules: BTreeSet<String> = files.keys().cloned().collect();
    let mut graph = Graph::new();
    for (module, text) in &files {
        let code = code_of(text);
        let mut uses = BTreeSet::new();
        for path in paths(&code) {
            if let Some(target) = resolve(&modules, module, &path)
                && target != *module
                && (ancestors || !module.starts_with(&format!("{target}::")))
            {
                uses.insert(target);
            }
        }
        graph.insert(module.clone(), uses);
    }
    graph
}

/// Every `.rs` file under `dir` but the unit-test modules, by module path.
fn collect(root: &Path, dir: &Path, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
        let path = entry.path();
        if path.is_dir() {
            collect(root, &path, files);
            continue;
        }
        let rel = path.strip_prefix(root).unwrap().with_extension("");
        let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        if parts.last().is_some_and(|p| p == "tests") || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        if parts.last().is_some_and(|p| ["mod", "lib", "main"].contains(&p.as_str())) {
            parts.pop();
        }
        files.insert(parts.join("::"), std::fs::read_to_string(&path).unwrap());
    }
}

/// The code without comments and without an inline `#[cfg(test)] mod tests { .. }` at the end.
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests {").next().unwrap();
    text.lines().map(|l| l.split("//").next().unwrap()).collect::<Vec<_>>().join("\n")
}

/// The paths the code names: `crate::a::b`, `super::a`, `self::a`, a bare `a::b`, and each
/// member of a `use x::{a, b::c}` group as `x::a`, `x::b::c`.
fn paths(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if !word(bytes[i]) || (i > 0 && (word(bytes[i - 1]) || bytes[i - 1] == b':')) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len() && (word(bytes[j]) || (bytes[j] == b':' && bytes.get(j + 1) == Some(&b':'))) {
            j += if bytes[j] == b':' { 2 } else { 1 };
        }
        let path = code[i..j].trim_end_matches("::").to_string();
        if code[j..].starts_with('{') && code[i..j].ends_with("::") {
            let end = group_end(code, j);
            for member in split_group(&code[j + 1..end]) {
                out.extend(paths(&member).into_iter().map(|m| format!("{path}::{m}")));
            }
            i = end + 1;
            continue;
        }
        if path.contains("::") {
            out.push(path);
        }
        i = j.max(i + 1);
    }
    out
}

/// The index of the `}` closing the group opened at `open`.
fn group_end(code: &str, open: usize) -> usize {
    let mut depth = 0;
    for (k, c) in code[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 1 => return open + k,
            '}' => depth -= 1,
            _ => {}
        }
    }
    code.len() - 1
}

/// A use group's members, split at its top-level commas; a bare name becomes `name::x` so that
/// `paths` reads it.
fn split_group(group: &str) -> Vec<String> {
    let (mut members, mut depth, mut start) = (Vec::new(), 0, 0);
    for (k, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                members.push(group[start..k].trim().to_string());
                start = k + 1;
            }
            _ => {}
        }
    }
    members.push(group[start..].trim().to_string());
    members
        .into_iter()
        .filter(|m| !m.is_empty())
        .map(|m| if m.contains("::") { m } else { format!("{m}::x") })
        .collect()
}

/// The module a path used in `from` lands in (the longest module prefix), if it is the crate's.
fn resolve(modules: &BTreeSet<String>, from: &str, path: &str) -> Option<String> {
    let mut parts: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if from.is_empty() { vec![] } else { from.split("::").collect() };
    match parts[0] {
        "crate" => {
            base.clear();
            parts.remove(0);
        }
        "super" => {
            while parts.first() == Some(&"super") {
                base.pop();
                parts.remove(0);
            }
        }
        "self" => {
            parts.remove(0);
        }
        // A bare path: a child module of `from`, or not the crate's.
        first => {
            let child = if from.is_empty() { first.to_string() } else { format!("{from}::{first}") };
            if !modules.contains(&child) {
                return None;
            }
        }
    }
    base.extend(parts);
    (0..=base.len()).rev().map(|n| base[..n].join("::")).find(|m| !m.is_empty() && modules.contains(m))
}

/// The strongly connected components of more than one module, each sorted, in order.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    let mut done = BTreeSet::new();
    for start in graph.keys() {
        if done.contains(start) {
            continue;
        }
        let from = reach(graph, start);
        let mut component: Vec<String> = from.iter().filter(|m| reach(graph, m).contains(start)).cloned().collect();
        component.sort();
        done.extend(component.iter().cloned());
        if component.len() > 1 {
            found.push(component);
        }
    }
    found.sort();
    found
}

/// Every module `start` reaches, itself included.
fn reach(graph: &Graph, start: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::from([start.to_string()]);
    let mut todo = vec![start.to_string()];
    while let Some(m) = todo.pop() {
        for next in graph.get(&m).into_iter().flatten() {
            if seen.insert(next.clone()) {
                todo.push(next.clone());
            }
        }
    }
    seen
}

/// `from -> to` for each import into a higher layer.
fn upward(graph: &Graph) -> Vec<String> {
    let layer = |m: &str| {
        let top = m.split("::").next().unwrap();
        LAYERS.iter().position(|l| l.contains(&top)).unwrap_or_else(|| panic!("module {m} is in no layer"))
    };
    let mut out = Vec::new();
    for (from, tos) in graph {
        if from.is_empty() {
            continue;
        }
        out.extend(tos.iter().filter(|to| layer(to) > layer(from)).map(|to| format!("{from} -> {to}")));
    }
    out
}

/// Functions still past 120 lines, with the most lines each may have until it is split (issue
/// 23): the list only shrinks.
const KNOWN_LONG: &[(&str, usize)] = &[];

/// Files and functions stay short enough to read whole: no file past 600 lines, no function
/// past 120 (the house style's bounds).
#[test]
fn no_file_over_600_lines_and_no_function_over_120() {
    let mut files = BTreeMap::new();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    collect(&src, &src, &mut files);
    let mut long = Vec::new();
    for (module, text) in &files {
        let lines = text.lines().count();
        if lines > 600 {
            long.push(format!("{module}: {lines} lines"));
        }
        for (f, n) in functions(text) {
            let name = format!("{module}::{f}");
            let bound = KNOWN_LONG.iter().find(|(k, _)| *k == name).map_or(120, |k| k.1);
            if n > bound {
                long.push(format!("{name}: {n} lines"));
            } else if n <= 120 && bound > 120 {
                long.push(format!("{name}: {n} lines now, take it off KNOWN_LONG"));
            }
        }
    }
    assert!(long.is_empty(), "too long: {long:?}");
}

/// Each `fn` with a body and how many lines it spans, its braces matched outside strings.
fn functions(text: &str) -> Vec<(String, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_start();
        let Some(at) = t.find("fn ") else { continue };
        let head = &t[..at];
        if !head
            .split_whitespace()
            .all(|w| ["pub", "pub(crate)", "pub(super)", "const", "async", "unsafe"].contains(&w))
        {
            continue;
        }
        let name: String = t[at + 3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        if let Some(end) = body_end(&lines, i) {
            out.push((name, end - i + 1));
        }
    }
    out
}

/// The line on which the body opened at or after line `start` closes (`None` for a
/// declaration without a body).
fn body_end(lines: &[&str], start: usize) -> Option<usize> {
    let mut depth = 0i32;
    let mut opened = false;
    for (k, line) in lines.iter().enumerate().skip(start) {
        let code = line.split("//").next().unwrap();
        let mut in_str = false;
        let mut prev = ' ';
        for c in code.chars() {
            match c {
                '"' if prev != '\\' && prev != '\'' => in_str = !in_str,
                '{' if !in_str => {
                    depth += 1;
                    opened = true;
                }
                '}' if !in_str => depth -= 1,
                ';' if !in_str && !opened => return None,
                _ => {}
            }
            prev = c;
        }
        if opened && depth <= 0 {
            return Some(k);
        }
    }
    None
}
