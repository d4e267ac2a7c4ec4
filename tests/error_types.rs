//! Errors are typed: a function of the library says what can go wrong with a type of its module
//! (a `message_error!` newtype, or an enum where a caller acts on the kind), not a bare
//! `String`. This counts the signatures under src/ that still return `Result<_, String>`
//! (written over several lines too, and through a type alias that hides the `String`) and
//! keeps them under a ceiling.

use std::path::{Path, PathBuf};

/// The most signatures returning `Result<_, String>` src/ may hold.
const CEILING: usize = 30;

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display())) {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The text without comments (each replaced by spaces, so offsets and lines stay where they were).
fn without_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = bytes.to_vec();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // A string literal: skipped whole, escapes included.
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                    if bytes[i] != b'\n' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
                out[i..(i + 2).min(bytes.len())].fill(b' ');
                i += 2;
            }
            _ => i += 1,
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

/// The generic arguments of the type whose `<` is at `open`, split at their top-level commas,
/// and the offset after the closing `>`.
fn arguments(text: &str, open: usize) -> Option<(Vec<String>, usize)> {
    let bytes = text.as_bytes();
    let (mut depth, mut start, mut args) = (0usize, open + 1, Vec::new());
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'-' if bytes.get(i + 1) == Some(&b'>') => i += 1,
            b'<' | b'(' | b'[' => depth += 1,
            b'>' | b')' | b']' => {
                depth -= 1;
                if depth == 0 {
                    // A trailing comma leaves no argument after it.
                    let last = text[start..i].trim();
                    if !last.is_empty() {
                        args.push(last.to_string());
                    }
                    return Some((args, i + 1));
                }
            }
            b',' if depth == 1 => {
                args.push(text[start..i].trim().to_string());
                start = i + 1;
            }
            b';' | b'{' => return None,
            _ => {}
        }
        i += 1;
    }
    None
}

fn is_string(ty: &str) -> bool {
    let ty: String = ty.split_whitespace().collect();
    ty == "String" || ty == "std::string::String" || ty == "alloc::string::String"
}

/// `Result<_, String>` at `at` (the `R` of `Result`, qualified or not).
fn result_of_string(text: &str, at: usize) -> bool {
    let rest = &text[at..];
    let Some(after) = rest.strip_prefix("Result") else { return false };
    let gap = after.len() - after.trim_start().len();
    if !after.trim_start().starts_with('<') {
        return false;
    }
    match arguments(text, at + "Result".len() + gap) {
        Some((args, _)) => args.len() == 2 && is_string(&args[1]),
        None => false,
    }
}

/// The names of type aliases to `Result<_, String>` in `text`.
fn aliases(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in text.match_indices("type ") {
        let head = &text[at + 5..];
        let name: String = head.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
        let Some(eq) = head.find('=') else { continue };
        let body = head[eq + 1..].trim_start();
        let body_at = text.len() - body.len();
        let path_end = body.find("Result").filter(|&r| body[..r].chars().all(|c| c.is_alphanumeric() || c == ':'));
        if let Some(r) = path_end
            && !name.is_empty()
            && result_of_string(text, body_at + r)
        {
            names.push(name);
        }
    }
    names
}

/// The lines (1-based) of `text` whose signature returns `Result<_, String>`: after `->`
/// directly (a function, a closure, `dyn Fn`), a `type` alias to one, or after `->` through
/// one of `hidden` (aliases found anywhere in src/).
fn offending(text: &str, hidden: &[String]) -> Vec<usize> {
    let text = without_comments(text);
    let line_of = |at: usize| text[..at].matches('\n').count() + 1;
    let mut lines = Vec::new();
    for (arrow, _) in text.match_indices("->") {
        let after = &text[arrow + 2..];
        let ty = after.trim_start();
        let at = text.len() - ty.len();
        let path: String = ty.chars().take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':').collect();
        let last = path.rsplit("::").next().unwrap_or("");
        let hit = (last == "Result" && result_of_string(&text, at + path.len() - "Result".len()))
            || hidden.iter().any(|alias| alias == last);
        if hit {
            lines.push(line_of(arrow));
        }
    }
    for (at, _) in text.match_indices("type ") {
        let head = &text[at..];
        let end = head.find(';').unwrap_or(head.len());
        if !aliases(&head[..end + 1]).is_empty() && !lines.contains(&line_of(at)) {
            lines.push(line_of(at));
        }
    }
    lines.sort_unstable();
    lines.dedup();
    lines
}

#[test]
fn the_scanner_finds_each_way_of_writing_it() {
    let text = "fn a() -> Result<u8, String> {}\n\
                fn b(\n    x: u8,\n) -> Result<\n    Vec<u8>,\n    String,\n> {}\n\
                fn c() -> Result<u8, MyError> {}\n\
                // fn d() -> Result<u8, String> {}\n\
                type Loose<T> = Result<T, String>;\n\
                fn e() -> Loose<u8> {}\n\
                fn f(g: &dyn Fn() -> std::result::Result<(u8, String), String>) {}\n\
                fn h() -> Result<(String, u8), io::Error> {}\n";
    let hidden = aliases(&without_comments(text));
    assert_eq!(hidden, ["Loose"]);
    assert_eq!(offending(text, &hidden), [1, 4, 10, 11, 12]);
}

#[test]
fn few_signatures_return_a_bare_string_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    files.sort();
    let texts: Vec<(PathBuf, String)> = files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("cannot read {}: {e}", f.display()));
            (f, text)
        })
        .collect();
    let hidden: Vec<String> = texts.iter().flat_map(|(_, text)| aliases(&without_comments(text))).collect();
    let mut found = Vec::new();
    for (path, text) in &texts {
        let shown = path.strip_prefix(env!("CARGO_MANIFEST_DIR")).unwrap_or(path).display().to_string();
        for line in offending(text, &hidden) {
            found.push(format!("{shown}:{line}: {}", text.lines().nth(line - 1).unwrap_or("").trim()));
        }
    }
    assert!(
        found.len() <= CEILING,
        "{} signatures return Result<_, String> (at most {CEILING}): give their module a typed error \
         (message_error! in src/lib.rs, or a thiserror enum where a caller acts on the kind):\n{}",
        found.len(),
        found.join("\n")
    );
}
