//! Value parsers shared by every front-end and the scenario loader: counts, sizes, fractions,
//! durations, ranges, times, URIs. A leaf (it names only `config`'s own types and `resp`'s value
//! bound), so the command line and a scenario file read a value the same way. Each error names
//! what was expected, so clap can print "invalid value 'X' for '--flag': <this message>" on one
//! line.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

message_error!(
    /// A value that does not read as what was expected; the message names both.
    InvalidValue
);

/// A count with an optional decimal suffix: `100000`, `100k`, `2m`, `1g`.
pub fn count(s: &str) -> Result<u64, InvalidValue> {
    let t = s.trim();
    let (digits, scale) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1_000),
        Some((i, 'm' | 'M')) => (&t[..i], 1_000_000),
        Some((i, 'g' | 'G')) => (&t[..i], 1_000_000_000),
        _ => (t, 1),
    };
    let n: u64 = digits.parse().map_err(|_| format!("expected a whole number such as 100000 or 100k, got '{s}'"))?;
    n.checked_mul(scale).ok_or_else(|| InvalidValue(format!("'{s}' is too large")))
}

/// Parses a fraction from 0 to 1 (`0.01`), or a percentage (`1%`).
pub fn fraction(s: &str) -> Result<f64, InvalidValue> {
    let t = s.trim();
    let value = match t.strip_suffix('%') {
        Some(p) => p.trim().parse::<f64>().map(|v| v / 100.0),
        None => t.parse::<f64>(),
    };
    match value {
        Ok(v) if (0.0..=1.0).contains(&v) => Ok(v),
        _ => Err(format!("expected a fraction from 0 to 1 such as 0.01, or a percentage such as 1%, got '{s}'").into()),
    }
}

/// A count that must be at least 1.
pub fn positive(s: &str) -> Result<u64, InvalidValue> {
    at_least_one(count(s)?).map_err(|_| InvalidValue(format!("expected at least 1, got '{s}'")))
}

/// A number that must be at least 1 (a scenario file's `pipeline = 0`, as `-P 0` is refused).
pub fn at_least_one(n: u64) -> Result<u64, InvalidValue> {
    if n == 0 { Err(format!("expected at least 1, got '{n}'").into()) } else { Ok(n) }
}

/// A size in bytes: `32`, `1k`/`1KiB` (1024), `1m`/`1MiB`.
///
/// Our own rather than a crate's (bytesize, parse-size): those read `1kb` as 1,000 bytes, where
/// redis-benchmark, memtier and every respbench release read it as 1,024; and the bound is the
/// protocol's 512 MiB value limit.
pub fn size(s: &str) -> Result<usize, InvalidValue> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    let (digits, scale) =
        if let Some(d) = lower.strip_suffix("kib").or(lower.strip_suffix("kb")).or(lower.strip_suffix('k')) {
            (d.to_string(), 1024)
        } else if let Some(d) = lower.strip_suffix("mib").or(lower.strip_suffix("mb")).or(lower.strip_suffix('m')) {
            (d.to_string(), 1024 * 1024)
        } else {
            (lower.strip_suffix('b').unwrap_or(&lower).to_string(), 1)
        };
    let n: usize =
        digits.trim().parse().map_err(|_| format!("expected a size in bytes such as 32, 1k or 4KiB, got '{s}'"))?;
    let bytes = n.checked_mul(scale).ok_or_else(|| format!("'{s}' is too large"))?;
    if bytes > crate::resp::MAX_BULK_LEN as usize {
        return Err(format!("'{s}' is larger than the 512 MiB a value may be").into());
    }
    Ok(bytes)
}

/// A duration: `30s`, `5m`, `1h`, `250ms`, or plain seconds (`30`, `1.5`).
///
/// Our own rather than humantime's: humantime refuses a bare number (plain seconds, which
/// memtier's `--test-time` and scripts give) and fractions (`1.5s`), both accepted since the
/// first release; the grammar is four suffixes.
pub fn duration(s: &str) -> Result<Duration, InvalidValue> {
    let t = s.trim();
    let bad = || format!("expected a duration such as 30s, 5m, 1h or 250ms, got '{s}'");
    let (number, unit_secs) = if let Some(n) = t.strip_suffix("ms") {
        (n, 0.001)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3600.0)
    } else {
        (t, 1.0)
    };
    let value: f64 = number.trim().parse().map_err(|_| bad())?;
    if !value.is_finite() || value <= 0.0 || value * unit_secs > 1e9 {
        return Err(bad().into());
    }
    Ok(Duration::from_secs_f64(value * unit_secs))
}

/// A memory size in bytes, 1024-based: `64mb`, `2GiB`, `1t`, `1048576` (a fill's target and a
/// server's memory, beyond a value's 512 MiB). Our own for the reason `size` is: the crates read
/// `mb` as 1,000,000 bytes, where Redis's `maxmemory` and memtier mean 1024-based units.
pub fn memory_size(s: &str) -> Result<u64, InvalidValue> {
    let lower = s.trim().to_ascii_lowercase();
    let bad = || format!("expected a size such as 64mb or 2gb, got '{s}'");
    let digits_end = lower.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(lower.len());
    let (number, unit) = lower.split_at(digits_end);
    let scale: u64 = match unit.trim() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad().into()),
    };
    let value: f64 = number.parse().map_err(|_| bad())?;
    let bytes = value * scale as f64;
    if !(1.0..1e18).contains(&bytes) {
        return Err(bad().into());
    }
    Ok(bytes as u64)
}

/// A time: RFC 3339 (`2030-01-02T15:04:05.25+01:00`, `Z` for UTC) or Unix seconds
/// (`1893596645.5`).
pub fn start_time(v: &str) -> Result<SystemTime, InvalidValue> {
    let expected = || format!("'{v}' is not a time: give RFC 3339 (2030-01-02T15:04:05Z) or Unix seconds");
    let t = v.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        let secs: f64 = t.parse().map_err(|_| expected())?;
        return Ok(UNIX_EPOCH + Duration::from_secs_f64(secs));
    }
    rfc3339(t).ok_or_else(|| InvalidValue(expected()))
}

/// RFC 3339 by jiff (an offset or `Z` required; fractions to the nanosecond).
fn rfc3339(t: &str) -> Option<SystemTime> {
    t.parse::<jiff::Timestamp>().ok().map(SystemTime::from)
}

/// `A:B` with two whole numbers, not both zero (`--ratio 1:10`).
pub fn ratio(s: &str) -> Result<(u32, u32), InvalidValue> {
    let bad = || format!("expected SET:GET weights such as 1:10 or 1:0, got '{s}'");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let (a, b): (u32, u32) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
    if a == 0 && b == 0 {
        return Err(format!("'{s}' sends nothing: at least one weight must be above 0").into());
    }
    Ok((a, b))
}

/// `MIN-MAX` with MIN <= MAX.
pub fn range(s: &str) -> Result<(u64, u64), InvalidValue> {
    let bad = || format!("expected MIN-MAX such as 10-100, got '{s}'");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let (lo, hi) = (count(a).map_err(|_| bad())?, count(b).map_err(|_| bad())?);
    if lo > hi {
        return Err(format!("'{s}': the minimum is above the maximum").into());
    }
    Ok((lo, hi))
}

/// Sizes with weights, as `--data-size-list` takes them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeList(pub Vec<(usize, u32)>);

/// `SIZE:WEIGHT,SIZE:WEIGHT,...` (`--data-size-list 32:10,1024:1`).
pub fn size_list(s: &str) -> Result<SizeList, InvalidValue> {
    let bad = || format!("expected SIZE:WEIGHT,... such as 32:10,1024:1, got '{s}'");
    let list = s
        .split(',')
        .map(|item| {
            let (size_s, weight) = item.split_once(':').ok_or_else(bad)?;
            Ok((size(size_s)?, weight.trim().parse::<u32>().map_err(|_| bad())?))
        })
        .collect::<Result<Vec<_>, InvalidValue>>()?;
    if list.iter().all(|(_, w)| *w == 0) {
        return Err(format!("'{s}': at least one weight must be above 0").into());
    }
    Ok(SizeList(list))
}

/// A key pattern: one letter for both commands or `SET:GET` (`R`, `G:G`, `P:P`).
pub fn key_patterns(s: &str) -> Result<(char, char), InvalidValue> {
    let letter = |p: &str| -> Result<char, InvalidValue> {
        let up = p.trim().to_ascii_uppercase();
        match up.as_str() {
            "S" | "R" | "G" | "Z" | "P" => Ok(up.chars().next().expect("one letter")),
            _ => Err(format!("expected key patterns from S, R, G, Z, P such as R or P:P, got '{s}'").into()),
        }
    };
    match s.split_once(':') {
        Some((a, b)) => Ok((letter(a)?, letter(b)?)),
        None => {
            let p = letter(s)?;
            Ok((p, p))
        }
    }
}

/// What a server URI says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Uri {
    pub target: super::target::Target,
    pub user: Option<String>,
    pub password: Option<String>,
    pub db: Option<u32>,
    /// `rediss://` or `valkeys://`.
    pub tls: bool,
}

/// `redis://[[user]:password@]host[:port][/db]`, `valkey://` alike, `rediss://` and
/// `valkeys://` with TLS, and `unix://[[user]:password@]/path/to.sock[?db=N]`.
pub fn uri(s: &str) -> Result<Uri, InvalidValue> {
    let bad = |why: &str| {
        format!(
            "'{s}' is not a server URI ({why}); expected redis://[user:password@]host[:port][/db] or unix:///path.sock"
        )
    };
    let (scheme, rest) = s.split_once("://").ok_or_else(|| bad("no scheme://"))?;
    let scheme = scheme.to_ascii_lowercase();
    let tls = scheme == "rediss" || scheme == "valkeys";
    let (userinfo, rest) = match rest.rsplit_once('@') {
        Some((u, r)) => (Some(u), r),
        None => (None, rest),
    };
    let (user, password) = match userinfo {
        None => (None, None),
        Some(u) => match u.split_once(':') {
            Some((user, pass)) => ((!user.is_empty()).then(|| percent_decode(user)), Some(percent_decode(pass))),
            None => (None, Some(percent_decode(u))),
        },
    };
    let db_of = |d: &str| d.parse::<u32>().map_err(|_| bad(&format!("database '{d}' is not a number")));
    match scheme.as_str() {
        "redis" | "valkey" | "rediss" | "valkeys" => {
            let (hostport, db) = match rest.split_once('/') {
                Some((h, d)) if !d.is_empty() => (h, Some(db_of(d)?)),
                Some((h, _)) => (h, None),
                None => (rest, None),
            };
            let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
                let (h, after) = v6.split_once(']').ok_or_else(|| bad("unclosed [ in the host"))?;
                (h.to_string(), after.strip_prefix(':'))
            } else {
                match hostport.rsplit_once(':') {
                    Some((h, p)) => (h.to_string(), Some(p)),
                    None => (hostport.to_string(), None),
                }
            };
            let port = port.map_or(Ok(6379), |p| p.parse::<u16>().map_err(|_| bad(&format!("port '{p}'"))))?;
            let host = if host.is_empty() { "127.0.0.1".to_string() } else { host };
            Ok(Uri { target: super::target::Target::Tcp { host, port }, user, password, db, tls })
        }
        "unix" => {
            let (path, query) = rest.split_once('?').unwrap_or((rest, ""));
            if path.is_empty() {
                return Err(bad("no socket path").into());
            }
            let db = query.split('&').find_map(|kv| kv.strip_prefix("db=")).map(db_of).transpose()?;
            Ok(Uri { target: super::target::Target::Unix(path.into()), user, password, db, tls: false })
        }
        other => Err(bad(&format!("unknown scheme '{other}'")).into()),
    }
}

/// `%40` into `@` and so on, for passwords in URIs.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        // Two hex digits, checked as bytes: slicing the str could split a character (found by
        // fuzzing), and from_str_radix would take a sign ("%+1").
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2]))
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Latency percentiles in percent, each from 0 (the lowest latency) to 100 (the highest), as
/// memtier's `--print-percentiles` takes them (`0,50,99,99.9,100`).
#[derive(Debug, Clone, PartialEq)]
pub struct Percentiles(pub Vec<f64>);

pub fn percentiles(s: &str) -> Result<Percentiles, InvalidValue> {
    let list = s
        .split(',')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(v) if (0.0..=100.0).contains(&v) => Ok(v),
            _ => Err(format!("'{p}' is not a percentile: expected numbers from 0 to 100, like 50,99,99.9").into()),
        })
        .collect::<Result<Vec<f64>, InvalidValue>>()?;
    Ok(Percentiles(list))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_percentages() {
        assert_eq!(fraction("0.01"), Ok(0.01));
        assert_eq!(fraction("1%"), Ok(0.01));
        assert_eq!(fraction("0"), Ok(0.0));
        for bad in ["2", "-0.1", "x", "", "NaN"] {
            assert!(fraction(bad).unwrap_err().contains(bad), "{bad}");
        }
    }

    #[test]
    fn counts_take_suffixes() {
        assert_eq!(count("100k"), Ok(100_000));
        assert_eq!(count("2M"), Ok(2_000_000));
        assert_eq!(count("7"), Ok(7));
        assert!(count("x").unwrap_err().contains("'x'"));
        assert!(positive("0").is_err());
    }

    #[test]
    fn sizes_are_binary() {
        assert_eq!(size("1k"), Ok(1024));
        assert_eq!(size("4KiB"), Ok(4096));
        assert_eq!(size("100"), Ok(100));
        assert!(size("1g").is_err());
    }

    #[test]
    fn durations_take_units() {
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(duration("2"), Ok(Duration::from_secs(2)));
        assert!(duration("-1s").is_err());
        assert!(duration("soon").is_err());
    }

    #[test]
    fn ratios_ranges_and_lists() {
        assert_eq!(ratio("1:10"), Ok((1, 10)));
        assert!(ratio("0:0").is_err());
        assert!(ratio("1").is_err());
        assert_eq!(range("10-20"), Ok((10, 20)));
        assert!(range("20-10").is_err());
        assert_eq!(size_list("32:10,1k:1"), Ok(SizeList(vec![(32, 10), (1024, 1)])));
        assert!(size_list("32").is_err());
    }

    #[test]
    fn uris() {
        use crate::config::Target;
        let u = uri("redis://bob:p%40ss@example.com:6380/2").unwrap();
        assert_eq!(u.target, Target::Tcp { host: "example.com".into(), port: 6380 });
        assert_eq!((u.user.as_deref(), u.password.as_deref(), u.db), (Some("bob"), Some("p@ss"), Some(2)));
        let u = uri("valkey://:secret@[::1]").unwrap();
        assert_eq!(u.target, Target::Tcp { host: "::1".into(), port: 6379 });
        assert_eq!((u.user, u.password.as_deref()), (None, Some("secret")));
        let u = uri("unix:///tmp/r.sock?db=3").unwrap();
        assert_eq!((u.target, u.db), (Target::Unix("/tmp/r.sock".into()), Some(3)));
        assert!(uri("rediss://h").unwrap().tls);
        assert!(!uri("valkey://h").unwrap().tls);
        assert!(uri("http://h").unwrap_err().contains("'http'"));
        assert!(uri("redis://h:port").unwrap_err().contains("port 'port'"));
    }

    #[test]
    fn key_patterns_one_or_two_letters() {
        assert_eq!(key_patterns("P:P"), Ok(('P', 'P')));
        assert_eq!(key_patterns("g"), Ok(('G', 'G')));
        assert!(key_patterns("Q").is_err());
    }
}
