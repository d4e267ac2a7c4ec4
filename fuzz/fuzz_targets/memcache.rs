//! Fuzzes the memcached reply scanners (text, binary, meta) through the codec seam: any bytes,
//! default and tiny limits. None may panic, and a complete reply must lie within the input,
//! scan the same on its own, and have its hits counted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use respbench::codec::Protocol;
use respbench::resp::Limits;

fuzz_target!(|data: &[u8]| {
    for protocol in [Protocol::MemcacheText, Protocol::MemcacheBinary, Protocol::MemcacheMeta] {
        if let Ok(Some(reply)) = protocol.scan(data, Limits::default()) {
            assert!(reply.len <= data.len());
            assert_eq!(protocol.scan(&data[..reply.len], Limits::default()), Ok(Some(reply)));
            let _ = protocol.hits_misses_multi(&data[..reply.len], 4);
        }
        let _ = protocol.scan(data, Limits { max_bulk: 16 });
    }
});
