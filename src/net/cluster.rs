//! Cluster mode's map: which node serves each of the 16384 hash slots (CLUSTER SHARDS, else
//! CLUSTER SLOTS), how a key hashes to its slot (CRC16, hash tags honoured), and hash tags
//! that land on a given node (for `{tag}`).

use super::{ConnectError, Session};
use crate::config::{ServerOptions, Target};
use crate::resp::value::{self, Value};

/// Hash slots in a Redis cluster.
pub const SLOTS: usize = 16384;

/// The slot of `key`: CRC16 of the key, or of its hash tag (the text between the first `{`
/// and the next `}`, when not empty), modulo 16384.
pub fn slot(key: &[u8]) -> u16 {
    let hashed = match memchr::memchr(b'{', key) {
        Some(open) => match memchr::memchr(b'}', &key[open + 1..]) {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) % SLOTS as u16
}

/// CRC16-CCITT (XMODEM), the checksum Redis Cluster hashes keys with: a byte at a time
/// through [`CRC16_TABLE`] (a key is hashed for every request in cluster mode).
fn crc16(data: &[u8]) -> u16 {
    crc16_on(0, data)
}

/// The CRC of bytes that follow bytes whose CRC is `crc`.
#[inline]
fn crc16_on(crc: u16, data: &[u8]) -> u16 {
    data.iter().fold(crc, |crc, &byte| (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ byte)])
}

/// The slots of keys made of fixed text around a key number's decimal digits (`key:` and
/// the number): each key's slot from its number, with no digits written and no CRC chained
/// byte by byte.
///
/// CRC16 (XMODEM: no initial value, no final XOR) is linear: the CRC of the text
/// `before digits after` is the XOR of what each byte contributes on its own, the contribution
/// of a byte depending only on its value and how many bytes follow it. So what the fixed text
/// contributes is computed once for each count of digits, and what two digits contribute
/// for each of the 100 pairs at each place from the end: a key's slot is then one
/// independent table read per two digits, XORed (a key of 5 digits: 3 reads), where the
/// byte-by-byte CRC is a chain of 5 dependent reads that follow the digits' formatting.
#[derive(Debug, Clone)]
pub struct KeySlots {
    /// What the fixed text contributes, by the key's count of digits.
    fixed: [u16; DIGITS + 1],
    /// `pairs[j][p]`: what the two digits of `p` contribute as the `j`-th pair from the end.
    pairs: Box<[[u16; 100]; DIGITS / 2]>,
    /// `leads[j][d]`: what a leading lone digit `d` contributes with `j` pairs after it.
    leads: [[u16; 10]; DIGITS / 2],
}

/// Most decimal digits of a key number (`u64::MAX`).
const DIGITS: usize = 20;

impl KeySlots {
    /// Keys `before` + number + `after`; `None` when the fixed text holds a `{` (a hash tag
    /// could then depend on the number).
    pub fn new(before: &[u8], after: &[u8]) -> Option<KeySlots> {
        if before.contains(&b'{') || after.contains(&b'{') {
            return None;
        }
        let tail = after.len();
        // A byte's contribution with `k` bytes after it: its CRC moved through `k` zero bytes.
        let digit = |d: u64, k: usize| crc16_zeros(CRC16_TABLE[usize::from(b'0' + d as u8)], k);
        let mut fixed = [0; DIGITS + 1];
        for (len, f) in fixed.iter_mut().enumerate() {
            *f = crc16_zeros(crc16(before), len + tail) ^ crc16(after);
        }
        let mut pairs = Box::new([[0; 100]; DIGITS / 2]);
        let mut leads = [[0; 10]; DIGITS / 2];
        for j in 0..DIGITS / 2 {
            for p in 0..100u64 {
                pairs[j][p as usize] = digit(p / 10, 2 * j + 1 + tail) ^ digit(p % 10, 2 * j + tail);
            }
            for d in 0..10u64 {
                leads[j][d as usize] = digit(d, 2 * j + tail);
            }
        }
        Some(KeySlots { fixed, pairs, leads })
    }

    /// The slot of the key whose number is `n`: two digits a step from the end, then the
    /// leading pair or lone digit. A `u64` has at most 20 digits, so the steps stay within the
    /// tables' 10 places (no index is taken modulo anything).
    #[inline]
    pub fn slot_of(&self, mut n: u64) -> u16 {
        let mut crc = 0;
        let mut len = 0;
        for (pairs, leads) in self.pairs.iter().zip(&self.leads) {
            if n < 10 {
                crc ^= leads[n as usize];
                len += 1;
                break;
            }
            if n < 100 {
                crc ^= pairs[n as usize];
                len += 2;
                break;
            }
            crc ^= pairs[(n % 100) as usize];
            n /= 100;
            len += 2;
        }
        (crc ^ self.fixed[len]) % SLOTS as u16
    }
}

/// The CRC of `k` zero bytes following bytes whose CRC is `crc`.
fn crc16_zeros(crc: u16, k: usize) -> u16 {
    (0..k).fold(crc, |crc, _| crc16_on(crc, &[0]))
}

/// The CRC of each byte value, bit by bit (polynomial 0x1021).
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = (i as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 { (crc << 1) ^ 0x1021 } else { crc << 1 };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
};

/// A node's address as the cluster announces it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NodeAddr {
    pub host: String,
    pub port: u16,
}

impl std::fmt::Display for NodeAddr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

impl NodeAddr {
    /// How to log in to this node: `seed`'s options (login, TLS, RESP3) with this address.
    pub fn options(&self, seed: &ServerOptions) -> ServerOptions {
        ServerOptions { target: Target::Tcp { host: self.host.clone(), port: self.port }, ..seed.clone() }
    }
}

/// One shard: its slot ranges, its primary and its replicas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shard {
    pub ranges: Vec<(u16, u16)>,
    pub primary: NodeAddr,
    pub replicas: Vec<NodeAddr>,
}

/// Asks `session` for the cluster's shards: CLUSTER SHARDS (Redis 7+), else CLUSTER SLOTS.
/// Nodes announced without an address get the host of `seed`, the node first asked.
pub fn shards(session: &mut Session, seed: &ServerOptions) -> Result<Vec<Shard>, ConnectError> {
    let seed_host = match &seed.target {
        Target::Tcp { host, .. } => host.as_str(),
        Target::Unix(_) => "127.0.0.1",
    };
    if let Ok(reply) = session.call(&[b"CLUSTER", b"SHARDS"])
        && let Some(shards) = value::parse(&reply.0).and_then(|v| parse_shards(&v, seed_host, session.is_tls()))
        && !shards.is_empty()
    {
        return Ok(shards);
    }
    let reply = session.call_checked(&[b"CLUSTER", b"SLOTS"])?;
    value::parse(&reply.0).and_then(|v| parse_slots(&v, seed_host)).ok_or_else(|| ConnectError::Refused {
        target: session.target().to_string(),
        command: "CLUSTER SLOTS".into(),
        message: "the reply is not a slot map".into(),
    })
}

/// [`shards`], refusing a map that serves no slot (a node whose cluster is not formed yet, or
/// failed): nothing could be sent anywhere.
pub fn serving(session: &mut Session, seed: &ServerOptions) -> Result<Vec<Shard>, ConnectError> {
    let shards = shards(session, seed)?;
    if shards.iter().all(|s| s.ranges.is_empty()) {
        return Err(ConnectError::NoSlots { target: session.target().to_string() });
    }
    Ok(shards)
}

/// A node as CLUSTER SLOTS names it: its id, its address, and whether it is its shard's
/// primary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotNode {
    pub id: String,
    pub addr: NodeAddr,
    pub primary: bool,
}

/// The nodes CLUSTER SLOTS names, each once, in the order it first names them (a range's
/// primary, then its replicas), as valkey-benchmark lists them.
pub fn slot_nodes(session: &mut Session, seed: &ServerOptions) -> Result<Vec<SlotNode>, ConnectError> {
    let seed_host = match &seed.target {
        Target::Tcp { host, .. } => host.as_str(),
        Target::Unix(_) => "127.0.0.1",
    };
    let reply = session.call_checked(&[b"CLUSTER", b"SLOTS"])?;
    let refused = || ConnectError::Refused {
        target: session.target().to_string(),
        command: "CLUSTER SLOTS".into(),
        message: "the reply is not a slot map".into(),
    };
    let parsed = value::parse(&reply.0).ok_or_else(refused)?;
    let mut nodes: Vec<SlotNode> = Vec::new();
    for entry in parsed.as_array().ok_or_else(refused)? {
        let items = entry.as_array().ok_or_else(refused)?;
        for (i, node) in items.iter().enumerate().skip(2) {
            let fields = node.as_array().ok_or_else(refused)?;
            let addr = addr(fields.first().and_then(Value::as_str), fields.get(1).and_then(Value::as_int), seed_host);
            let (Some(addr), Some(id)) = (addr, fields.get(2).and_then(Value::as_str)) else { continue };
            if !nodes.iter().any(|n| n.id == id) {
                nodes.push(SlotNode { id: id.to_string(), addr, primary: i == 2 });
            }
        }
    }
    Ok(nodes)
}

fn addr(host: Option<&str>, port: Option<i64>, seed_host: &str) -> Option<NodeAddr> {
    let host = match host {
        Some(h) if !h.is_empty() && h != "?" => h.to_string(),
        _ => seed_host.to_string(),
    };
    Some(NodeAddr { host, port: u16::try_from(port?).ok()? })
}

/// CLUSTER SLOTS: `[[start, end, [host, port, id], [replica...]...], ...]`.
fn parse_slots(v: &Value, seed_host: &str) -> Option<Vec<Shard>> {
    let mut shards: Vec<Shard> = Vec::new();
    for entry in v.as_array()? {
        let items = entry.as_array()?;
        let (start, end) =
            (u16::try_from(items.first()?.as_int()?).ok()?, u16::try_from(items.get(1)?.as_int()?).ok()?);
        let node = |n: &Value| {
            let fields = n.as_array()?;
            addr(fields.first()?.as_str(), fields.get(1)?.as_int(), seed_host)
        };
        let primary = node(items.get(2)?)?;
        let replicas: Vec<NodeAddr> = items[3..].iter().filter_map(node).collect();
        match shards.iter_mut().find(|s| s.primary == primary) {
            Some(shard) => shard.ranges.push((start, end)),
            None => shards.push(Shard { ranges: vec![(start, end)], primary, replicas }),
        }
    }
    Some(shards)
}

/// CLUSTER SHARDS: maps with `slots` (start, end pairs) and `nodes` (maps with `ip` or
/// `endpoint`, `port` and/or `tls-port`, `role`, `health`). Over TLS the `tls-port` is the one
/// to use (CLUSTER SLOTS may name the plain port of a node that has both).
fn parse_shards(v: &Value, seed_host: &str, tls: bool) -> Option<Vec<Shard>> {
    fn field<'v>(map: &'v [Value], name: &str) -> Option<&'v Value> {
        map.chunks(2).find(|kv| kv[0].as_str() == Some(name)).and_then(|kv| kv.get(1))
    }
    let mut shards = Vec::new();
    for shard in v.as_array()? {
        let map = shard.as_array()?;
        let slots = field(map, "slots")?.as_array()?;
        let ranges: Vec<(u16, u16)> = slots
            .chunks(2)
            .filter_map(|pair| {
                Some((u16::try_from(pair[0].as_int()?).ok()?, u16::try_from(pair.get(1)?.as_int()?).ok()?))
            })
            .collect();
        if ranges.is_empty() {
            continue;
        }
        let mut primary = None;
        let mut replicas = Vec::new();
        for node in field(map, "nodes")?.as_array()? {
            let n = node.as_array()?;
            if field(n, "health").and_then(Value::as_str).is_some_and(|h| h != "online") {
                continue;
            }
            let host = field(n, "endpoint").and_then(Value::as_str).or_else(|| field(n, "ip").and_then(Value::as_str));
            let (plain, secure) =
                (field(n, "port").and_then(Value::as_int), field(n, "tls-port").and_then(Value::as_int));
            let port = if tls { secure.or(plain) } else { plain };
            let Some(a) = addr(host, port, seed_host) else { continue };
            match field(n, "role").and_then(Value::as_str) {
                Some("master" | "primary") => primary = Some(a),
                _ => replicas.push(a),
            }
        }
        if let Some(primary) = primary {
            shards.push(Shard { ranges, primary, replicas });
        }
    }
    Some(shards)
}

/// The first number `n` whose decimal text hashes to a slot `owned` says yes to, as a hash
/// tag (`{n}`): keys carrying it land on that node.
pub fn tag_for(owned: impl Fn(u16) -> bool) -> Option<String> {
    (0..100_000u32).map(|n| n.to_string()).find(|t| owned(slot(t.as_bytes()))).map(|t| format!("{{{t}}}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_match_redis() {
        // Values from the Redis Cluster specification and CLUSTER KEYSLOT.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(slot(b"foo"), 12182);
        assert_eq!(slot(b"key:0"), slot(b"key:0"));
        assert_eq!(slot(b"{user1000}.following"), slot(b"{user1000}.followers"));
        assert_eq!(slot(b"foo{}{bar}"), slot(b"foo{}{bar}"));
        assert_ne!(slot(b"foo{}{bar}"), slot(b"bar"));
        assert_eq!(slot(b"foo{{bar}}zap"), slot(b"{bar"));
    }

    #[test]
    fn slots_of_keys_around_a_drawn_part_match_the_whole_key() {
        for (before, after) in [(&b"key:"[..], &b""[..]), (b"", b""), (b"memtier-", b":x}")] {
            let slots = KeySlots::new(before, after).expect("no hash tag");
            let some = (0..100_000u64).chain([123_456_789, u64::MAX / 3, u64::MAX - 1, u64::MAX]);
            for n in some.chain((1..=DIGITS as u32 - 1).flat_map(|e| [10u64.pow(e) - 1, 10u64.pow(e)])) {
                let key = [before, n.to_string().as_bytes(), after].concat();
                assert_eq!(slots.slot_of(n), slot(&key), "{}", String::from_utf8_lossy(&key));
            }
        }
        assert!(KeySlots::new(b"{user", b"").is_none());
        assert!(KeySlots::new(b"k", b"{x}").is_none());
    }

    #[test]
    fn parses_cluster_slots() {
        let reply = b"*2\r\n*4\r\n:0\r\n:8191\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$2\r\nid\r\n*3\r\n$0\r\n\r\n:7003\r\n$2\r\nid\r\n\
*3\r\n:8192\r\n:16383\r\n*3\r\n$9\r\n127.0.0.1\r\n:7001\r\n$2\r\nid\r\n";
        let shards = parse_slots(&value::parse(reply).unwrap(), "10.0.0.1").unwrap();
        assert_eq!(shards.len(), 2);
        assert_eq!(shards[0].ranges, vec![(0, 8191)]);
        assert_eq!(shards[0].replicas, vec![NodeAddr { host: "10.0.0.1".into(), port: 7003 }]);
        assert_eq!(shards[1].primary.port, 7001);
    }

    #[test]
    fn tags_land_where_asked() {
        let tag = tag_for(|s| s > 16000).unwrap();
        assert!(slot(tag.as_bytes()) > 16000);
        assert_eq!(slot(format!("x{tag}y").as_bytes()), slot(tag.as_bytes()));
    }
}
