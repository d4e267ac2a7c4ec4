//! respbench's reply scanner's answer in the reference reader's terms, so the differential
//! test and the `scan_diff` fuzz target compare the two the same way.

use respbench::resp::{Limits, ReplyClass, scan_within};

use crate::reference::{Class, Verdict};

/// `scan_within` on `data` under a `max_len` limit, as a [`Verdict`].
pub fn scanner(data: &[u8], max_len: i64) -> Verdict {
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
