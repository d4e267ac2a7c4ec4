//! What the fuzzer sends: data command templates, frames a server cannot read, and the
//! settings `config-commands` may change. Nothing here can harm the host (see the module above).

/// Data commands with placeholders: `{k}` a key, `{f}` a field, `{i}` an integer (extremes
/// included), `{n}` a small count, `{v}` a value (empty, a number, up to 4 KiB of random bytes,
/// UTF-8 with CR LF and NUL). None blocks, writes files, or reaches past the server's own keys.
pub(super) const COMMANDS: &[&str] = &[
    "GET {k}",
    "SET {k} {v}",
    "SET {k} {v} EX {n}",
    "SET {k} {v} NX GET",
    "GETDEL {k}",
    "INCR {k}",
    "INCRBY {k} {i}",
    "DECRBY {k} {i}",
    "APPEND {k} {v}",
    "STRLEN {k}",
    "GETRANGE {k} {i} {i}",
    "SETRANGE {k} {n} {v}",
    "MGET {k} {k} {k}",
    "MSET {k} {v} {k} {v}",
    "DEL {k} {k}",
    "EXISTS {k} {k}",
    "TYPE {k}",
    "EXPIRE {k} {i}",
    "TTL {k}",
    "PERSIST {k}",
    "RENAME {k} {k}",
    "COPY {k} {k} REPLACE",
    "OBJECT ENCODING {k}",
    "LPUSH {k} {v} {v}",
    "RPUSH {k} {v}",
    "LPOP {k}",
    "RPOP {k} {n}",
    "LRANGE {k} {i} {i}",
    "LINDEX {k} {i}",
    "LSET {k} {i} {v}",
    "LINSERT {k} BEFORE {v} {v}",
    "LTRIM {k} {i} {i}",
    "LMOVE {k} {k} LEFT RIGHT",
    "HSET {k} {f} {v} {f} {v}",
    "HGET {k} {f}",
    "HGETALL {k}",
    "HDEL {k} {f}",
    "HINCRBY {k} {f} {i}",
    "HRANDFIELD {k} {i} WITHVALUES",
    "SADD {k} {v} {v}",
    "SREM {k} {v}",
    "SMEMBERS {k}",
    "SPOP {k} {n}",
    "SINTER {k} {k}",
    "SUNIONSTORE {k} {k} {k}",
    "SRANDMEMBER {k} {i}",
    "ZADD {k} {i} {v}",
    "ZINCRBY {k} {i} {v}",
    "ZRANGE {k} {i} {i} WITHSCORES",
    "ZRANGEBYSCORE {k} -inf +inf LIMIT 0 {n}",
    "ZREM {k} {v}",
    "ZPOPMIN {k} {n}",
    "ZCARD {k}",
    "XADD {k} * {f} {v}",
    "XLEN {k}",
    "XRANGE {k} - + COUNT {n}",
    "XTRIM {k} MAXLEN {n}",
    "PFADD {k} {v} {v}",
    "PFCOUNT {k} {k}",
    "SETBIT {k} {n} 1",
    "GETBIT {k} {n}",
    "BITCOUNT {k} {i} {i}",
    "BITPOS {k} 1",
    "SORT {k} LIMIT 0 {n} ALPHA",
    "SCAN 0 MATCH fuzz:* COUNT {n}",
    "PING",
    "ECHO {v}",
    "DBSIZE",
    "MULTI",
    "EXEC",
    "DISCARD",
];

/// Frames the server cannot read: it answers `-ERR Protocol error: ...` and closes.
pub(super) const FRAMINGS: &[&[u8]] =
    &[b"*abc\r\n", b"*1\r\n$abc\r\n", b"*1\r\nPING\r\n", b"GET \"unbalanced\r\n", b"*2\r\n$3\r\nGET\r\n$-7\r\n"];

/// The settings `config-commands` may change, with values in and out of range. Nothing here
/// writes a file, opens a port, locks clients out or changes who may log in.
pub(super) const CONFIGS: &[(&str, &[&str])] = &[
    ("maxmemory-policy", &["noeviction", "allkeys-lru", "volatile-lfu", "allkeys-random", "bogus"]),
    ("maxmemory", &["0", "512mb", "1gb", "-1"]),
    ("hz", &["1", "10", "100", "500", "0", "x"]),
    ("slowlog-log-slower-than", &["-1", "0", "10000", "abc"]),
    ("slowlog-max-len", &["0", "128", "1000"]),
    ("latency-monitor-threshold", &["0", "1", "100"]),
    ("list-max-listpack-size", &["-5", "-2", "-1", "1", "128", "0"]),
    ("hash-max-listpack-entries", &["0", "128", "1024"]),
    ("set-max-intset-entries", &["0", "512", "4096"]),
    ("zset-max-listpack-entries", &["0", "128", "1024"]),
    ("activerehashing", &["yes", "no", "maybe"]),
    ("lazyfree-lazy-expire", &["yes", "no"]),
    ("lazyfree-lazy-user-del", &["yes", "no"]),
    ("active-expire-effort", &["1", "10", "11"]),
    ("maxmemory-samples", &["1", "5", "64"]),
    ("stream-node-max-entries", &["0", "100", "1000"]),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_harmful_command_or_setting_is_in_the_tables() {
        let banned = ["SAVE", "BGSAVE", "SHUTDOWN", "DEBUG", "FLUSHALL", "FLUSHDB", "MONITOR", "CONFIG", "BLPOP"];
        for template in COMMANDS {
            let name = template.split(' ').next().unwrap();
            assert!(!banned.contains(&name), "{template}");
        }
        for (name, _) in CONFIGS {
            assert!(!["dir", "dbfilename", "logfile", "save", "appendonly", "maxclients"].contains(name), "{name}");
            assert!(!name.starts_with("tls-") && !name.contains("port") && !name.contains("pass"), "{name}");
        }
    }
}
