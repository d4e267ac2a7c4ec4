//! memcached's `stats` as the INFO fields the telemetry, the preflight and `fill` already read:
//! CPU from rusage_user/rusage_system, memory from bytes and limit_maxbytes, hits, misses,
//! evictions, connections, items and the commands processed.

/// The figures of one `stats` reply, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    pairs: Vec<(String, String)>,
}

impl Stats {
    /// From the text protocol's `STAT <name> <value>` lines (up to `END`).
    pub fn parse_text(text: &[u8]) -> Stats {
        let text = String::from_utf8_lossy(text);
        let pairs = text
            .lines()
            .filter_map(|line| line.trim_end().strip_prefix("STAT "))
            .filter_map(|rest| rest.split_once(' '))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Stats { pairs }
    }

    /// From the binary protocol's `STAT` reply packets (each a key and a value).
    pub fn parse_binary(reply: &[u8]) -> Stats {
        let mut pairs = Vec::new();
        let mut pos = 0;
        let limits = crate::resp::Limits::default();
        while let Ok(Some(p)) = super::binary::packet(reply, pos, limits) {
            if p.key.0 < p.key.1 {
                let text = |(s, e): (usize, usize)| String::from_utf8_lossy(&reply[s..e]).into_owned();
                pairs.push((text(p.key), text(p.value)));
            }
            pos = p.end;
        }
        Stats { pairs }
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    fn int(&self, name: &str) -> u64 {
        self.get(name).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// Commands the server processed (each key of a multi-key get counts, as memcached counts).
    pub fn commands(&self) -> u64 {
        ["cmd_get", "cmd_set", "cmd_touch", "cmd_flush", "delete_hits", "delete_misses"]
            .iter()
            .chain(&["incr_hits", "incr_misses", "decr_hits", "decr_misses", "cas_hits", "cas_misses"])
            .map(|name| self.int(name))
            .sum()
    }

    /// The same figures as `INFO` would give them (`field:value` lines), so everything that
    /// reads INFO reads memcached; `None` when the reply held no CPU figures (not `stats`).
    pub fn as_info(&self) -> Option<String> {
        let user = self.get("rusage_user")?;
        let sys = self.get("rusage_system")?;
        let mut out = String::from("# Server\r\nserver_name:memcached\r\n");
        let mut line = |k: &str, v: &str| {
            out.push_str(k);
            out.push(':');
            out.push_str(v);
            out.push_str("\r\n");
        };
        line("memcached_version", self.get("version").unwrap_or(""));
        line("used_cpu_user", user);
        line("used_cpu_sys", sys);
        line("used_memory", &self.int("bytes").to_string());
        line("maxmemory", &self.int("limit_maxbytes").to_string());
        line("keyspace_hits", &self.int("get_hits").to_string());
        line("keyspace_misses", &self.int("get_misses").to_string());
        line("evicted_keys", &self.int("evictions").to_string());
        line("expired_keys", &self.int("expired_unfetched").to_string());
        line("connected_clients", &self.int("curr_connections").to_string());
        line("total_commands_processed", &self.commands().to_string());
        line("aof_enabled", "0");
        line("db0", &format!("keys={},expires=0,avg_ttl=0", self.int("curr_items")));
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATS: &[u8] = b"STAT pid 1\r\nSTAT version 1.6.18\r\nSTAT rusage_user 1.250000\r\n\
        STAT rusage_system 0.500000\r\nSTAT curr_connections 3\r\nSTAT cmd_get 40\r\nSTAT cmd_set 10\r\n\
        STAT get_hits 30\r\nSTAT get_misses 10\r\nSTAT bytes 4096\r\nSTAT limit_maxbytes 67108864\r\n\
        STAT curr_items 7\r\nSTAT evictions 2\r\nEND\r\n";

    #[test]
    fn text_stats_read_as_info() {
        let stats = Stats::parse_text(STATS);
        assert_eq!(stats.get("version"), Some("1.6.18"));
        assert_eq!(stats.commands(), 50);
        let info = stats.as_info().unwrap();
        for line in
            ["used_cpu_user:1.250000", "used_memory:4096", "maxmemory:67108864", "db0:keys=7,", "evicted_keys:2"]
        {
            assert!(info.contains(line), "{line} in {info}");
        }
        assert!(Stats::parse_text(b"END\r\n").as_info().is_none());
    }

    #[test]
    fn binary_stats_read_pairs() {
        use super::super::binary::{OP_STAT, RESPONSE};
        let mut reply = Vec::new();
        for (k, v) in [(&b"curr_items"[..], &b"5"[..]), (b"", b"")] {
            let mut p = vec![RESPONSE, OP_STAT];
            p.extend_from_slice(&(k.len() as u16).to_be_bytes());
            p.extend_from_slice(&[0; 4]);
            p.extend_from_slice(&((k.len() + v.len()) as u32).to_be_bytes());
            p.extend_from_slice(&[0; 12]);
            p.extend_from_slice(k);
            p.extend_from_slice(v);
            reply.extend_from_slice(&p);
        }
        assert_eq!(Stats::parse_binary(&reply).get("curr_items"), Some("5"));
    }
}
