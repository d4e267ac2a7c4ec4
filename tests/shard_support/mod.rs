//! What the shard tests share: starting a shard against a real server, checking it ended well,
//! and decoding the lossless histograms a result carries.

#![allow(dead_code)]

use std::path::Path;
use std::process::{Child, Stdio};

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use serde_json::Value;

use crate::common::{Server, read_json, respbench, stderr};

/// A native shard: `-p PORT`, then `args`.
pub fn spawn_shard(server: &Server, args: &[&str]) -> Child {
    spawn_shard_with(server, &[], args)
}

/// A shard through a front-end: its own words first (`memtier ...`), then `-p PORT`, then `extra`.
pub fn spawn_shard_with(server: &Server, front: &[&str], extra: &[&str]) -> Child {
    respbench()
        .args(front)
        .args(["-p", &server.port_arg()])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

pub fn wait_ok(child: Child) {
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "a shard failed: {}", stderr(&out));
}

/// Runs `n` native shards of one command line together (`args`, then `--shard I/N`, `--json`
/// into `dir` as `{name}{I}.json` and `-q`), waits for each to succeed, and returns their
/// result files and results.
pub fn run_shards(server: &Server, dir: &Path, name: &str, n: usize, args: &[&str]) -> (Vec<String>, Vec<Value>) {
    let files: Vec<String> = (0..n).map(|i| dir.join(format!("{name}{i}.json")).display().to_string()).collect();
    let shards: Vec<Child> = (0..n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            spawn_shard(server, &[args, &["--shard", &shard, "--json", &files[i], "-q"]].concat())
        })
        .collect();
    shards.into_iter().for_each(wait_ok);
    let docs = files.iter().map(|f| read_json(f.as_ref())).collect();
    (files, docs)
}

/// A histogram as a result stores it (HdrHistogram V2 compressed, base64).
pub fn decode(text: &Value) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap()).unwrap();
    Deserializer::new().deserialize(&mut std::io::Cursor::new(bytes)).unwrap()
}
