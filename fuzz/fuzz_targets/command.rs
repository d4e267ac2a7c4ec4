//! Fuzzes the command-template parser (`--command`): any text must give a command or a
//! one-line error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respbench::config::{CommandSpec, KeyPattern};

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = CommandSpec::parse(text, 1, KeyPattern::Random) {
            assert!(!e.is_empty());
        }
    }
});
