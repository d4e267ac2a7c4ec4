//! Differential fuzzing of the reply scanner: on any bytes, `scan_within` and the reference
//! reader (`tests/support/resp_reference.rs`) give the same verdict (complete, with the same
//! length and class; needs more bytes; invalid), at the default limit and a tiny one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respbench::resp::MAX_BULK_LEN;

#[path = "../../tests/support/resp_reference.rs"]
mod reference;
#[path = "../../tests/support/scanner_verdict.rs"]
mod scanner_verdict;

use scanner_verdict::scanner;

fuzz_target!(|data: &[u8]| {
    for max_len in [MAX_BULK_LEN, 16] {
        assert_eq!(scanner(data, max_len), reference::verdict(data, max_len), "limit {max_len}");
    }
});
