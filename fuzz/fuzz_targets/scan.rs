//! Fuzzes the reply scanner: any bytes, default and tiny limits. It must never panic, and a
//! complete reply must lie within the input and scan the same on its own.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respbench::resp::{Limits, scan, scan_within};

fuzz_target!(|data: &[u8]| {
    if let Ok(Some(reply)) = scan(data) {
        assert!(reply.len <= data.len());
        assert_eq!(scan(&data[..reply.len]), Ok(Some(reply)));
    }
    let _ = scan_within(data, Limits { max_bulk: 16 });
});
