//! Differential fuzzing of the reply scanner: on any bytes, `scan_within` and the reference
//! reader (`tests/support/resp_reference.rs`) give the same verdict (complete, with the same
//! length and class; needs more bytes; invalid), at the default limit and a tiny one.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respbench::resp::{Limits, MAX_BULK_LEN, ReplyClass, scan_within};

#[path = "../../tests/support/resp_reference.rs"]
mod reference;

use reference::{Class, Verdict};

fn scanner(data: &[u8], max_len: i64) -> Verdict {
    match scan_within(data, Limits { max_bulk: max_len }) {
        Ok(Some(s)) => Verdict::Complete {
            len: s.len,
            class: match s.class {
                ReplyClass::Value => Class::Value,
                ReplyClass::Nil => Class::Nil,
                ReplyClass::Push => Class::Push,
                ReplyClass::Error { msg_start, msg_end } => Class::Error { msg_start, msg_end },
            },
        },
        Ok(None) => Verdict::Incomplete,
        Err(_) => Verdict::Invalid,
    }
}

fuzz_target!(|data: &[u8]| {
    for max_len in [MAX_BULK_LEN, 16] {
        assert_eq!(scanner(data, max_len), reference::verdict(data, max_len), "limit {max_len}");
    }
});
