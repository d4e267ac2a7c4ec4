//! Replays every fuzz corpus file (seeds and anything cargo-fuzz found, see docs/fuzzing.md)
//! under plain `cargo test` on stable: the scanners (RESP and memcached's), the command parser and the URI parser
//! must never panic, and a complete reply must scan the same on its own.

use std::path::{Path, PathBuf};

use respbench::config::{CommandSpec, KeyPattern};
use respbench::resp::{Limits, scan, scan_within};

fn files(dir: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz-corpus").join(dir);
    let mut out: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    out.sort();
    assert!(!out.is_empty(), "no corpus in {}", dir.display());
    out
}

#[test]
fn every_scanner_corpus_file_scans_without_panicking() {
    for path in files("scan") {
        let data = std::fs::read(&path).unwrap();
        if let Ok(Some(reply)) = scan(&data) {
            assert!(reply.len <= data.len(), "{}", path.display());
            assert_eq!(scan(&data[..reply.len]), Ok(Some(reply)), "{}", path.display());
        }
        let _ = scan_within(&data, Limits { max_bulk: 16 });
    }
}

#[test]
fn every_memcached_corpus_file_scans_without_panicking() {
    use respbench::codec::Protocol;
    for path in files("memcache") {
        let data = std::fs::read(&path).unwrap();
        for protocol in [Protocol::MemcacheText, Protocol::MemcacheBinary, Protocol::MemcacheMeta] {
            if let Ok(Some(reply)) = protocol.scan(&data, Limits::default()) {
                assert!(reply.len <= data.len(), "{}", path.display());
                assert_eq!(protocol.scan(&data[..reply.len], Limits::default()), Ok(Some(reply)), "{}", path.display());
                let _ = protocol.hits_misses_multi(&data[..reply.len], 4);
            }
            let _ = protocol.scan(&data, Limits { max_bulk: 16 });
        }
    }
}

#[test]
fn every_command_corpus_file_parses_or_errs_in_words() {
    for path in files("command") {
        let text = std::fs::read_to_string(&path).unwrap();
        if let Err(e) = CommandSpec::parse(&text, 1, KeyPattern::Random) {
            assert!(!e.is_empty(), "{}", path.display());
        }
    }
}

#[test]
fn every_uri_corpus_file_parses_or_errs() {
    for path in files("uri") {
        let bytes = std::fs::read(&path).unwrap();
        if let Ok(text) = std::str::from_utf8(&bytes) {
            let _ = respbench::cli::parse::uri(text);
        }
    }
    // Found by fuzzing: a `%` before a multi-byte character used to split it and panic.
    let uri = respbench::cli::parse::uri("redis://:%%\u{4da}e@h").unwrap();
    assert_eq!(uri.password.as_deref(), Some("%%\u{4da}e"));
    // A sign is not a hex digit.
    assert_eq!(respbench::cli::parse::uri("redis://:%+1@h").unwrap().password.as_deref(), Some("%+1"));
    assert_eq!(respbench::cli::parse::uri("redis://:p%40ss@h").unwrap().password.as_deref(), Some("p@ss"));
}
