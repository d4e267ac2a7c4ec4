//! Replies as values, for the control path only (CLUSTER SLOTS and the like): the measured
//! path never builds values. Input is a reply [`scan`](super::scan) already found complete.

/// A reply, built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// Simple strings, bulk strings, verbatim strings.
    Str(Vec<u8>),
    Int(i64),
    Nil,
    Error(String),
    /// Arrays, sets, pushes; maps flattened into key, value, key, value.
    Array(Vec<Value>),
    /// Doubles, booleans, big numbers: kept as their text.
    Other(Vec<u8>),
}

impl Value {
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => std::str::from_utf8(s).ok(),
            _ => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Str(s) => std::str::from_utf8(s).ok()?.parse().ok(),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }
}

/// Parses one complete reply; `None` when the bytes are not one.
pub fn parse(buf: &[u8]) -> Option<Value> {
    let (value, _) = parse_at(buf, 0, 0)?;
    Some(value)
}

fn line(buf: &[u8], pos: usize) -> Option<(&[u8], usize)> {
    let end = memchr::memmem::find(&buf[pos..], b"\r\n")? + pos;
    Some((&buf[pos..end], end + 2))
}

fn number(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

fn parse_at(buf: &[u8], pos: usize, depth: usize) -> Option<(Value, usize)> {
    if depth > super::MAX_DEPTH {
        return None;
    }
    let kind = *buf.get(pos)?;
    let (text, next) = line(buf, pos + 1)?;
    match kind {
        b'+' => Some((Value::Str(text.to_vec()), next)),
        b'-' => Some((Value::Error(String::from_utf8_lossy(text).into_owned()), next)),
        b':' => Some((Value::Int(number(text)?), next)),
        b'_' => Some((Value::Nil, next)),
        b',' | b'#' | b'(' => Some((Value::Other(text.to_vec()), next)),
        b'$' | b'=' | b'!' => {
            let len = number(text)?;
            if len < 0 {
                return Some((Value::Nil, next));
            }
            let end = next.checked_add(len as usize)?;
            let body = buf.get(next..end)?;
            if kind == b'!' {
                return Some((Value::Error(String::from_utf8_lossy(body).into_owned()), end + 2));
            }
            Some((Value::Str(body.to_vec()), end + 2))
        }
        b'*' | b'~' | b'>' | b'%' | b'|' => {
            let n = number(text)?;
            if n < 0 {
                return Some((Value::Nil, next));
            }
            let count = if matches!(kind, b'%' | b'|') { n.checked_mul(2)? } else { n } as usize;
            let mut items = Vec::with_capacity(count.min(1024));
            let mut at = next;
            for _ in 0..count {
                let (item, after) = parse_at(buf, at, depth + 1)?;
                items.push(item);
                at = after;
            }
            if kind == b'|' {
                // An attribute precedes the real reply.
                return parse_at(buf, at, depth + 1);
            }
            Some((Value::Array(items), at))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_nested_replies() {
        let v = parse(b"*2\r\n*3\r\n:0\r\n:5460\r\n*2\r\n$9\r\n127.0.0.1\r\n:7000\r\n$-1\r\n").unwrap();
        let outer = v.as_array().unwrap();
        let first = outer[0].as_array().unwrap();
        assert_eq!(first[0].as_int(), Some(0));
        assert_eq!(first[2].as_array().unwrap()[0].as_str(), Some("127.0.0.1"));
        assert_eq!(outer[1], Value::Nil);
        assert_eq!(parse(b"%1\r\n+a\r\n:1\r\n").unwrap(), Value::Array(vec![Value::Str(b"a".to_vec()), Value::Int(1)]));
        assert_eq!(parse(b"-MOVED 1 h:1\r\n").unwrap(), Value::Error("MOVED 1 h:1".into()));
        assert!(parse(b"*2\r\n:1\r\n").is_none());
    }
}
