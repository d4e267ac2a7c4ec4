//! What the shard tests share: starting a shard against a real server, checking it ended well,
//! and decoding the lossless histograms a result carries.

#![allow(dead_code)]

use std::process::{Child, Stdio};

use base64::Engine as _;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::Deserializer;
use serde_json::Value;

use crate::common::{Server, respbench, stderr};

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

/// A histogram as a result stores it (HdrHistogram V2 compressed, base64).
pub fn decode(text: &Value) -> Histogram<u64> {
    let bytes = base64::engine::general_purpose::STANDARD.decode(text.as_str().unwrap()).unwrap();
    Deserializer::new().deserialize(&mut std::io::Cursor::new(bytes)).unwrap()
}
