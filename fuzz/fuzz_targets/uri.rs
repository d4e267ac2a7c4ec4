//! Fuzzes the server URI parser (`-u redis://...`): any text must give a target or an error.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = respbench::cli::parse::uri(text);
    }
});
