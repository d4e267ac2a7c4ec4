//! The memcached codecs against hand-written replies, split and noisy input, and the bytes
//! their templates write.

use super::*;
use crate::resp::{MAX_LINE, ReplyClass};
use proptest::prelude::*;

/// What the compiled template writes.
fn render(parts: &[RawPart], holes: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    crate::resp::Template::raw(parts).encode(&mut out, holes);
    out
}

fn whole(d: Dialect, bytes: &[u8]) -> Scanned {
    scan(d, bytes, Limits::default()).expect("valid").expect("complete")
}

fn lit(s: &str) -> Part {
    Part::Lit(s.as_bytes().to_vec())
}

fn key() -> Vec<Part> {
    vec![lit("memtier-"), Part::Hole(0)]
}

fn bin(opcode: u8, status: u16, key: &[u8], extras: &[u8], value: &[u8], opaque: u32) -> Vec<u8> {
    let mut p = binary::request(opcode, key, extras, value, opaque);
    p[0] = binary::RESPONSE;
    p[6..8].copy_from_slice(&status.to_be_bytes());
    p
}

#[test]
fn text_replies_are_classified() {
    let t = Dialect::Text;
    assert_eq!(whole(t, b"STORED\r\n"), Scanned { len: 8, class: ReplyClass::Value, id: 0 });
    assert_eq!(whole(t, b"END\r\n").class, ReplyClass::Nil);
    let hit = b"VALUE memtier-1 0 3\r\nabc\r\nEND\r\n";
    assert_eq!(whole(t, hit), Scanned { len: hit.len(), class: ReplyClass::Value, id: 0 });
    let two = b"VALUE a 0 1 99\r\nx\r\nVALUE b 5 0\r\n\r\nEND\r\nSTORED\r\n";
    assert_eq!(whole(t, two).len, two.len() - 8);
    assert_eq!(hits_misses_multi(t, two, 3), (2, 1));
    assert_eq!(whole(t, b"NOT_FOUND\r\n").class, ReplyClass::Nil);
    assert_eq!(whole(t, b"42\r\n").class, ReplyClass::Value);
    assert_eq!(whole(t, b"DELETED\r\n").class, ReplyClass::Value);
    assert_eq!(whole(t, b"CLIENT_ERROR bad data chunk\r\n").class, ReplyClass::Error { msg_start: 0, msg_end: 27 });
    assert_eq!(whole(t, b"ERROR\r\n").class, ReplyClass::Error { msg_start: 0, msg_end: 5 });
    assert!(matches!(whole(t, b"NOT_STORED\r\n").class, ReplyClass::Error { .. }));
    assert_eq!(whole(t, b"VERSION 1.6.18\r\n").class, ReplyClass::Value);
    assert_eq!(whole(t, b"STAT pid 1\r\nSTAT uptime 2\r\nEND\r\n").len, 32);
    assert_eq!(scan(t, b"+OK\r\n", Limits::default()), Err(ScanError::Unrecognised { offset: 0 }));
    assert_eq!(scan(t, b"STORED\n", Limits::default()), Err(ScanError::Unrecognised { offset: 0 }));
    assert_eq!(scan(t, b"VALUE a 0 x\r\n", Limits::default()), Err(ScanError::BadNumber));
    assert_eq!(scan(t, b"VALUE a 0 1\r\nxy\r\n", Limits::default()), Err(ScanError::MissingCrlf));
    assert_eq!(
        scan(t, b"VALUE a 0 1\r\nx\r\nSTORED\r\n", Limits::default()),
        Err(ScanError::Unrecognised { offset: 16 })
    );
}

#[test]
fn meta_replies_are_classified() {
    let m = Dialect::Meta;
    assert_eq!(whole(m, b"HD\r\n").class, ReplyClass::Value);
    assert_eq!(whole(m, b"VA 2\r\nhi\r\n"), Scanned { len: 10, class: ReplyClass::Value, id: 0 });
    assert_eq!(whole(m, b"EN\r\n").class, ReplyClass::Nil);
    assert_eq!(whole(m, b"NF\r\n").class, ReplyClass::Nil);
    assert!(matches!(whole(m, b"NS\r\n").class, ReplyClass::Error { .. }));
    // A multi-key get: hits carry their key, misses are quiet, MN closes it.
    let multi = b"VA 2 ka\r\nhi\r\nVA 1 kc\r\nx\r\nMN\r\nHD\r\n";
    assert_eq!(whole(m, multi).len, multi.len() - 4);
    assert_eq!(hits_misses_multi(m, multi, 3), (2, 1));
    assert_eq!(whole(m, b"MN\r\n").class, ReplyClass::Nil);
    let bad = b"VA 2 ka\r\nhi\r\nCLIENT_ERROR bad command line format\r\nMN\r\n";
    assert_eq!(whole(m, bad).len, bad.len());
    assert!(matches!(whole(m, bad).class, ReplyClass::Error { msg_start: 13, .. }));
    assert_eq!(whole(m, b"VERSION 1.6.18\r\n").class, ReplyClass::Value);
    assert!(matches!(whole(m, b"CLIENT_ERROR x\r\n").class, ReplyClass::Error { .. }));
    assert_eq!(scan(m, b"VA x\r\n", Limits::default()), Err(ScanError::BadNumber));
    assert_eq!(scan(m, b"HDX\r\n", Limits::default()), Err(ScanError::Unrecognised { offset: 0 }));
}

#[test]
fn binary_replies_are_classified_with_their_opaque() {
    let b = Dialect::Binary;
    let stored = bin(binary::OP_SET, 0, b"", b"", b"", 7);
    assert_eq!(whole(b, &stored), Scanned { len: 24, class: ReplyClass::Value, id: 7 });
    let miss = bin(binary::OP_GET, 1, b"", b"", b"Not found", 3);
    assert_eq!(whole(b, &miss), Scanned { len: 33, class: ReplyClass::Nil, id: 3 });
    let hit = bin(binary::OP_GET, 0, b"", &[0; 4], b"value", 3);
    assert_eq!(whole(b, &hit).len, 24 + 9);
    let err = bin(binary::OP_INCREMENT, 6, b"", b"", b"Non-numeric", 2);
    assert_eq!(whole(b, &err).class, ReplyClass::Error { msg_start: 24, msg_end: 35 });
    // GETKQ hits, then the NOOP: one reply.
    let mut multi = bin(binary::OP_GETKQ, 0, b"k1", &[0; 4], b"v", 9);
    multi.extend(bin(binary::OP_GETKQ, 0, b"k3", &[0; 4], b"vv", 9));
    multi.extend(bin(binary::OP_NOOP, 0, b"", b"", b"", 9));
    assert_eq!(whole(b, &multi), Scanned { len: multi.len(), class: ReplyClass::Value, id: 9 });
    assert_eq!(hits_misses_multi(b, &multi, 3), (2, 1));
    assert_eq!(scan(b, &multi[..multi.len() - 1], Limits::default()), Ok(None));
    assert_eq!(scan(b, b"VALUE", Limits::default()), Err(ScanError::BadType(b'V')));
    let mut short = stored.clone();
    short[4] = 9; // extras longer than the body
    assert_eq!(scan(b, &short, Limits::default()), Err(ScanError::BadNumber));
    let mut huge = stored;
    huge[8..12].copy_from_slice(&u32::MAX.to_be_bytes());
    assert!(matches!(scan(b, &huge, Limits { max_bulk: 1000 }), Err(ScanError::TooLarge { .. })));
}

#[test]
fn limits_hold_for_lines_values_and_runs() {
    let limits = Limits { max_bulk: 10 };
    for d in [Dialect::Text, Dialect::Meta] {
        let mut line = vec![b'x'; MAX_LINE + 1];
        assert_eq!(scan(d, &line, limits), Ok(None));
        line.push(b'x');
        assert_eq!(scan(d, &line, limits), Err(ScanError::LineTooLong { offset: 0 }));
    }
    assert!(matches!(scan(Dialect::Text, b"VALUE a 0 11\r\n", limits), Err(ScanError::TooLarge { len: 11, .. })));
    assert!(matches!(scan(Dialect::Meta, b"VA 11\r\n", limits), Err(ScanError::TooLarge { len: 11, .. })));
    // Endless values in one get reply stop at the limit.
    let endless = b"VALUE a 0 5\r\nxxxxx\r\n".repeat(5000);
    assert!(matches!(scan(Dialect::Text, &endless, limits), Err(ScanError::TooLarge { .. })));
}

#[test]
fn text_templates_write_memtiers_requests() {
    let t = Dialect::Text;
    let set = template(t, "SET", &[vec![lit("SET")], key(), vec![Part::Hole(1)]], 1).unwrap();
    assert_eq!(render(&set, &[b"17", b"hello", b""]), b"set memtier-17 0 0 5\r\nhello\r\n");
    let set =
        template(t, "SET", &[vec![lit("SET")], key(), vec![Part::Hole(1)], vec![lit("EX")], vec![Part::Hole(2)]], 1);
    assert_eq!(render(&set.unwrap(), &[b"1", b"ab", b"30"]), b"set memtier-1 0 30 2\r\nab\r\n");
    let get = template(t, "GET", &[vec![lit("GET")], key()], 2).unwrap();
    assert_eq!(render(&get, &[b"5"]), b"get memtier-5\r\n");
    let multi =
        template(t, "MGET", &[vec![lit("MGET")], vec![lit("p"), Part::Hole(40)], vec![lit("p"), Part::Hole(41)]], 3);
    let mut holes: Vec<&[u8]> = vec![b""; 42];
    holes[40] = b"1";
    holes[41] = b"2";
    assert_eq!(render(&multi.unwrap(), &holes), b"get p1 p2\r\n");
    assert_eq!(render(&template(t, "DEL", &[vec![lit("DEL")], key()], 4).unwrap(), &[b"9"]), b"delete memtier-9\r\n");
    assert_eq!(render(&template(t, "INCR", &[vec![lit("INCR")], key()], 5).unwrap(), &[b"9"]), b"incr memtier-9 1\r\n");
}

#[test]
fn meta_templates_use_meta_commands() {
    let m = Dialect::Meta;
    let set =
        template(m, "SET", &[vec![lit("SET")], key(), vec![Part::Hole(1)], vec![lit("EX")], vec![Part::Hole(2)]], 1);
    assert_eq!(render(&set.unwrap(), &[b"1", b"ab", b"30"]), b"ms memtier-1 2 T30\r\nab\r\n");
    let set = template(m, "SET", &[vec![lit("SET")], key(), vec![Part::Hole(1)]], 1).unwrap();
    assert_eq!(render(&set, &[b"1", b"ab"]), b"ms memtier-1 2\r\nab\r\n");
    assert_eq!(render(&template(m, "GET", &[vec![lit("GET")], key()], 2).unwrap(), &[b"5"]), b"mg memtier-5 v\r\n");
    let multi = template(m, "MGET", &[vec![lit("MGET")], vec![Part::Hole(0)], vec![Part::Hole(1)]], 3).unwrap();
    assert_eq!(render(&multi, &[b"a", b"b"]), b"mg a v k q\r\nmg b v k q\r\nmn\r\n");
    assert_eq!(render(&template(m, "DEL", &[vec![lit("DEL")], key()], 4).unwrap(), &[b"9"]), b"md memtier-9\r\n");
}

#[test]
fn binary_templates_frame_and_tag_requests() {
    let b = Dialect::Binary;
    let set =
        template(b, "SET", &[vec![lit("SET")], key(), vec![Part::Hole(1)], vec![lit("EX")], vec![Part::Hole(2)]], 5);
    let out = render(&set.unwrap(), &[b"1", b"abc", b"300"]);
    let mut want = binary::request(binary::OP_SET, b"memtier-1", &[0, 0, 0, 0, 0, 0, 1, 44], b"abc", 5);
    assert_eq!(out, want);
    let get = template(b, "GET", &[vec![lit("GET")], key()], 6).unwrap();
    assert_eq!(render(&get, &[b"1"]), binary::request(binary::OP_GET, b"memtier-1", b"", b"", 6));
    let multi = template(b, "MGET", &[vec![lit("MGET")], vec![Part::Hole(0)], vec![Part::Hole(1)]], 7).unwrap();
    want = binary::request(binary::OP_GETKQ, b"a", b"", b"", 7);
    want.extend(binary::request(binary::OP_GETKQ, b"bb", b"", b"", 7));
    want.extend(binary::request(binary::OP_NOOP, b"", b"", b"", 7));
    assert_eq!(render(&multi, &[b"a", b"bb"]), want);
    let incr = template(b, "INCR", &[vec![lit("INCR")], key()], 8).unwrap();
    let mut extras = vec![0, 0, 0, 0, 0, 0, 0, 1];
    extras.extend([0; 12]);
    assert_eq!(render(&incr, &[b"1"]), binary::request(binary::OP_INCREMENT, b"memtier-1", &extras, b"", 8));
}

#[test]
fn other_commands_are_refused_naming_what_is_allowed() {
    let err = template(Dialect::Text, "HSET", &[vec![lit("HSET")], key(), vec![lit("f")], vec![Part::Hole(1)]], 1);
    let err = err.unwrap_err();
    assert!(err.contains("--protocol memcache-text cannot send \"HSET\"") && err.contains("MGET"), "{err}");
    assert!(template(Dialect::Meta, "GET", &[vec![lit("GET")], key(), vec![lit("x")]], 1).is_err());
}

fn valid(d: Dialect) -> BoxedStrategy<Vec<u8>> {
    let value = proptest::collection::vec(any::<u8>(), 0..30);
    match d {
        Dialect::Text => prop_oneof![
            Just(b"STORED\r\n".to_vec()),
            Just(b"END\r\n".to_vec()),
            any::<u32>().prop_map(|n| format!("{n}\r\n").into_bytes()),
            proptest::collection::vec(value, 1..4).prop_map(|vs| {
                let mut out = Vec::new();
                for (i, v) in vs.iter().enumerate() {
                    out.extend(format!("VALUE k{i} 0 {}\r\n", v.len()).into_bytes());
                    out.extend(v);
                    out.extend(b"\r\n");
                }
                out.extend(b"END\r\n");
                out
            }),
        ]
        .boxed(),
        Dialect::Meta => prop_oneof![
            Just(b"HD\r\n".to_vec()),
            Just(b"EN\r\n".to_vec()),
            Just(b"MN\r\n".to_vec()),
            value.clone().prop_map(|v| [format!("VA {}\r\n", v.len()).into_bytes(), v, b"\r\n".to_vec()].concat()),
            proptest::collection::vec(value, 1..4).prop_map(|vs| {
                let mut out = Vec::new();
                for (i, v) in vs.iter().enumerate() {
                    out.extend(format!("VA {} k{i}\r\n", v.len()).into_bytes());
                    out.extend(v);
                    out.extend(b"\r\n");
                }
                out.extend(b"MN\r\n");
                out
            }),
        ]
        .boxed(),
        Dialect::Binary => (any::<u8>(), 0u16..3, value.clone(), proptest::collection::vec(value, 0..3), any::<u32>())
            .prop_map(|(op, status, v, quiet, opaque)| {
                let mut out = Vec::new();
                for q in &quiet {
                    out.extend(bin(binary::OP_GETKQ, 0, b"key", &[0; 4], q, opaque));
                }
                let op = if quiet.is_empty() && ![binary::OP_GETKQ, binary::OP_GETQ, binary::OP_STAT].contains(&op) {
                    op
                } else {
                    binary::OP_NOOP
                };
                out.extend(bin(op, status, b"", b"", &v, opaque));
                out
            })
            .boxed(),
    }
}

fn dialect() -> impl Strategy<Value = Dialect> {
    prop_oneof![Just(Dialect::Text), Just(Dialect::Binary), Just(Dialect::Meta)]
}

proptest! {
    #[test]
    fn split_replies_need_more_then_complete((d, reply) in dialect().prop_flat_map(|d| (Just(d), valid(d))),
            tail in proptest::collection::vec(any::<u8>(), 0..10)) {
        for cut in 0..reply.len() {
            prop_assert_eq!(scan(d, &reply[..cut], Limits::default()), Ok(None), "cut at {}", cut);
        }
        let mut buf = reply.clone();
        buf.extend_from_slice(&tail);
        prop_assert_eq!(scan(d, &buf, Limits::default()).unwrap().unwrap().len, reply.len());
    }

    #[test]
    fn arbitrary_bytes_never_panic(d in dialect(), bytes in proptest::collection::vec(any::<u8>(), 0..200), max in 0i64..100) {
        if let Ok(Some(reply)) = scan(d, &bytes, Limits { max_bulk: max }) {
            // A complete reply lies within the input and scans the same on its own.
            prop_assert!(reply.len <= bytes.len());
            prop_assert_eq!(scan(d, &bytes[..reply.len], Limits { max_bulk: max }), Ok(Some(reply)));
        }
        let _ = hits_misses_multi(d, &bytes, 3);
    }

    #[test]
    fn shaped_noise_never_panics(d in dialect(), bytes in proptest::collection::vec(prop_oneof![
            Just(b'\r'), Just(b'\n'), Just(b' '), Just(b'1'), Just(0x81u8), Just(0u8), Just(b'V'), Just(b'A'), any::<u8>()], 0..300)) {
        for limits in [Limits::default(), Limits { max_bulk: 4 }] {
            if let Ok(Some(reply)) = scan(d, &bytes, limits) {
                prop_assert_eq!(scan(d, &bytes[..reply.len], limits), Ok(Some(reply)));
            }
        }
    }
}
