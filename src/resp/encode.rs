//! Command encoding: a command is compiled once into a template of pre-encoded bytes with
//! holes, and each request only patches the holes (key digits, value, ...) into the output.

use std::ops::Range;

use super::out::Out;

/// One piece of a command argument as the workload describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Bytes known when the run starts.
    Lit(Vec<u8>),
    /// Filled per request from the caller's hole table, by index.
    Hole(usize),
}

/// How a computed number is written into a request (text protocols spell it in decimal,
/// binary ones as big-endian integers of a fixed width).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LenForm {
    Decimal,
    U16Be,
    U32Be,
}

/// One piece of a request written as it is, for protocols without RESP's per-argument length
/// prefixes (memcached): bytes, holes, and numbers computed from holes per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawPart {
    Lit(Vec<u8>),
    Hole(usize),
    /// The byte lengths of the named holes added, plus `plus`: a text `set`'s byte count, a
    /// binary header's key and body lengths.
    Len {
        holes: Vec<usize>,
        plus: usize,
        form: LenForm,
    },
    /// The hole's decimal digits (empty: 0) written in `form`: a binary request's expiry.
    Num {
        hole: usize,
        form: LenForm,
    },
}

#[derive(Debug, Clone)]
enum Piece {
    Bytes(Range<usize>),
    Hole(usize),
    Len { holes: Vec<usize>, plus: usize, form: LenForm },
    Num { hole: usize, form: LenForm },
}

#[derive(Debug, Clone)]
enum Op {
    /// Fully known protocol bytes: a run of everything between two holes (array header,
    /// literal arguments, an argument's `$`, CRLFs and literal key prefixes), copied at once.
    Bytes(Range<usize>),
    /// The decimal length of an argument with holes: its literal bytes plus its holes'.
    Len { literal_len: usize, holes: Vec<usize> },
    /// A hole's bytes.
    Hole(usize),
    /// Bytes and holes written as they are (an inline command has no length prefixes).
    Raw(Vec<Piece>),
}

/// A command compiled for repeated encoding.
#[derive(Debug, Clone)]
pub struct Template {
    bytes: Vec<u8>,
    ops: Vec<Op>,
    /// The ops up to the first that needs a hole other than the key's, encoded whole for
    /// each width of the key: a GET is one copy and the key's digits patched in.
    keyed: Option<Keyed>,
}

/// The hole a template's leading ops may be encoded ahead for: the workload puts the key's
/// digits there.
pub const KEY_HOLE: usize = 0;
/// Widest key encoded ahead (a `u64`'s digits); a wider one takes the ops one by one.
const KEY_WIDTH_MAX: usize = 20;

/// A template's first `upto` ops encoded for every width of the key, 1 to [`KEY_WIDTH_MAX`].
#[derive(Debug, Clone)]
struct Keyed {
    upto: usize,
    by_width: Vec<Ahead>,
}

/// Leading ops encoded with a key of one width: its bytes, and where the key goes in them.
#[derive(Debug, Clone)]
struct Ahead {
    bytes: Vec<u8>,
    key_at: Vec<usize>,
}

impl Keyed {
    /// For the ops before the first that needs another hole than the key's, if the key is
    /// among them (a template without the key, or with another hole first, gains nothing).
    fn of(bytes: &[u8], ops: &[Op]) -> Option<Keyed> {
        let only_key = |op: &Op| match op {
            Op::Bytes(_) => true,
            Op::Len { holes, .. } => holes.iter().all(|&h| h == KEY_HOLE),
            Op::Hole(h) => *h == KEY_HOLE,
            Op::Raw(_) => false,
        };
        let upto = ops.iter().position(|op| !only_key(op)).unwrap_or(ops.len());
        if !ops[..upto].iter().any(|op| matches!(op, Op::Hole(KEY_HOLE))) {
            return None;
        }
        let by_width = (1..=KEY_WIDTH_MAX)
            .map(|width| {
                let key = vec![b'0'; width];
                let mut ahead = Ahead { bytes: Vec::new(), key_at: Vec::new() };
                for op in &ops[..upto] {
                    if matches!(op, Op::Hole(KEY_HOLE)) {
                        ahead.key_at.push(ahead.bytes.len());
                    }
                    encode_op(bytes, op, &mut ahead.bytes, &|_| &key[..]);
                }
                ahead
            })
            .collect();
        Some(Keyed { upto, by_width })
    }
}

impl Template {
    /// Compiles a command given as arguments, each a list of parts. The static bytes between
    /// two holes are one run: a GET of `key:N` is three copies and a length per request.
    pub fn new(args: &[Vec<Part>]) -> Template {
        let mut bytes = Vec::new();
        let mut ops = Vec::new();
        let mut run_start = 0;
        // Ends the static run so far (if any) and starts the next after `op`.
        let dynamic = |bytes: &Vec<u8>, ops: &mut Vec<Op>, run_start: &mut usize, op: Op| {
            if bytes.len() > *run_start {
                ops.push(Op::Bytes(*run_start..bytes.len()));
            }
            ops.push(op);
            *run_start = bytes.len();
        };
        bytes.push(b'*');
        push_decimal(&mut bytes, args.len());
        bytes.extend_from_slice(b"\r\n");
        for arg in args {
            let literal_len: usize = arg.iter().map(part_len).sum();
            bytes.push(b'$');
            let holes: Vec<usize> =
                arg.iter().filter_map(|p| if let Part::Hole(i) = p { Some(*i) } else { None }).collect();
            if holes.is_empty() {
                push_decimal(&mut bytes, literal_len);
            } else {
                dynamic(&bytes, &mut ops, &mut run_start, Op::Len { literal_len, holes });
            }
            bytes.extend_from_slice(b"\r\n");
            for part in arg {
                match part {
                    Part::Lit(lit) => bytes.extend_from_slice(lit),
                    Part::Hole(index) => dynamic(&bytes, &mut ops, &mut run_start, Op::Hole(*index)),
                }
            }
            bytes.extend_from_slice(b"\r\n");
        }
        if bytes.len() > run_start {
            ops.push(Op::Bytes(run_start..bytes.len()));
        }
        let keyed = Keyed::of(&bytes, &ops);
        Template { bytes, ops, keyed }
    }

    /// Compiles an inline command: the arguments joined by spaces, ended by CRLF
    /// (`PING\r\n`), as redis-benchmark's PING_INLINE and telnet users send them.
    pub fn inline(args: &[Vec<Part>]) -> Template {
        let mut bytes = Vec::new();
        let mut pieces = Vec::new();
        let push_lit = |bytes: &mut Vec<u8>, pieces: &mut Vec<Piece>, lit: &[u8]| {
            let start = bytes.len();
            bytes.extend_from_slice(lit);
            pieces.push(Piece::Bytes(start..bytes.len()));
        };
        for (i, arg) in args.iter().enumerate() {
            if i > 0 {
                push_lit(&mut bytes, &mut pieces, b" ");
            }
            for part in arg {
                match part {
                    Part::Lit(lit) => push_lit(&mut bytes, &mut pieces, lit),
                    Part::Hole(index) => pieces.push(Piece::Hole(*index)),
                }
            }
        }
        push_lit(&mut bytes, &mut pieces, b"\r\n");
        Template { bytes, ops: vec![Op::Raw(pieces)], keyed: None }
    }

    /// Compiles a request written piece by piece, with no RESP framing (the memcached codecs).
    pub fn raw(parts: &[RawPart]) -> Template {
        let mut bytes = Vec::new();
        let pieces = parts
            .iter()
            .map(|part| match part {
                RawPart::Lit(lit) => {
                    let start = bytes.len();
                    bytes.extend_from_slice(lit);
                    Piece::Bytes(start..bytes.len())
                }
                RawPart::Hole(i) => Piece::Hole(*i),
                RawPart::Len { holes, plus, form } => Piece::Len { holes: holes.clone(), plus: *plus, form: *form },
                RawPart::Num { hole, form } => Piece::Num { hole: *hole, form: *form },
            })
            .collect();
        Template { bytes, ops: vec![Op::Raw(pieces)], keyed: None }
    }

    /// Bytes of the command apart from its holes and their length digits.
    pub fn fixed_len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends the command to `out`, filling hole `i` with `holes[i]`; returns bytes written.
    /// Allocates nothing when `out` has room.
    #[inline]
    pub fn encode(&self, out: &mut impl Out, holes: &[&[u8]]) -> usize {
        self.encode_with(out, |i| holes[i])
    }

    /// Like [`encode`](Self::encode), with hole `i` filled by `hole(i)`: for callers whose
    /// holes are too many for a table (the keys of an MGET, slices of one scratch buffer).
    #[inline]
    pub fn encode_with<'h>(&self, out: &mut impl Out, hole: impl Fn(usize) -> &'h [u8]) -> usize {
        let before = out.len();
        let mut from = 0;
        if let Some(keyed) = &self.keyed {
            let key = hole(KEY_HOLE);
            if let Some(ahead) = keyed.by_width.get(key.len().wrapping_sub(1)) {
                out.extend_from_slice(&ahead.bytes);
                for &at in &ahead.key_at {
                    out.patch_back(ahead.bytes.len() - at, key);
                }
                from = keyed.upto;
            }
        }
        for op in &self.ops[from..] {
            encode_op(&self.bytes, op, out, &hole);
        }
        out.len() - before
    }
}

/// Appends one op of a template whose fixed bytes are `bytes`.
#[inline(always)]
fn encode_op<'h>(bytes: &[u8], op: &Op, out: &mut impl Out, hole: &impl Fn(usize) -> &'h [u8]) {
    match op {
        Op::Bytes(range) => out.extend_from_slice(&bytes[range.clone()]),
        Op::Len { literal_len, holes } => {
            let len = holes.iter().fold(*literal_len, |len, i| len + hole(*i).len());
            push_decimal(out, len);
        }
        Op::Hole(i) => out.extend_from_slice(hole(*i)),
        Op::Raw(pieces) => write_pieces(bytes, out, pieces, hole),
    }
}

#[inline]
fn write_pieces<'h>(bytes: &[u8], out: &mut impl Out, pieces: &[Piece], hole: &impl Fn(usize) -> &'h [u8]) {
    for piece in pieces {
        match piece {
            Piece::Bytes(range) => out.extend_from_slice(&bytes[range.clone()]),
            Piece::Hole(i) => out.extend_from_slice(hole(*i)),
            Piece::Len { holes, plus, form } => {
                let len = holes.iter().map(|i| hole(*i).len()).sum::<usize>() + plus;
                push_number(out, len as u64, *form);
            }
            Piece::Num { hole: i, form } => push_number(out, parse_decimal(hole(*i)), *form),
        }
    }
}

fn part_len(part: &Part) -> usize {
    match part {
        Part::Lit(lit) => lit.len(),
        Part::Hole(_) => 0,
    }
}

/// Writes `n` in decimal; a length under 100 (most arguments' with holes: a key, a value of
/// a few dozen bytes) without the general formatter.
#[inline(always)]
fn push_decimal(out: &mut impl Out, n: usize) {
    if n < 10 {
        out.push(b'0' + n as u8);
        return;
    }
    if n < 100 {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8]);
        return;
    }
    push_long_decimal(out, n);
}

#[inline(never)]
fn push_long_decimal(out: &mut impl Out, n: usize) {
    let mut buf = itoa::Buffer::new();
    out.extend_from_slice(buf.format(n).as_bytes());
}

#[inline]
fn push_number(out: &mut impl Out, n: u64, form: LenForm) {
    match form {
        LenForm::Decimal => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        LenForm::U16Be => out.extend_from_slice(&(n.min(u64::from(u16::MAX)) as u16).to_be_bytes()),
        LenForm::U32Be => out.extend_from_slice(&(n.min(u64::from(u32::MAX)) as u32).to_be_bytes()),
    }
}

/// The value of ASCII decimal digits (the workload writes holes in decimal); 0 when empty.
#[inline]
fn parse_decimal(digits: &[u8]) -> u64 {
    digits
        .iter()
        .take_while(|b| b.is_ascii_digit())
        .fold(0u64, |n, d| n.saturating_mul(10).saturating_add(u64::from(d - b'0')))
}

/// Encodes a whole command from plain arguments (control path: handshakes, INFO).
pub fn encode_command(out: &mut impl Out, args: &[&[u8]]) {
    let parts: Vec<Vec<Part>> = args.iter().map(|a| vec![Part::Lit(a.to_vec())]).collect();
    Template::new(&parts).encode(out, &[]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(s: &str) -> Part {
        Part::Lit(s.as_bytes().to_vec())
    }

    #[test]
    fn literal_command_is_plain_resp() {
        let mut out = Vec::new();
        encode_command(&mut out, &[b"GET", b"foo"]);
        assert_eq!(out, b"*2\r\n$3\r\nGET\r\n$3\r\nfoo\r\n");
    }

    #[test]
    fn holes_are_patched_with_their_lengths() {
        let t = Template::new(&[
            vec![lit("SET")],
            vec![lit("key:"), Part::Hole(0)],
            vec![Part::Hole(1)],
            vec![lit("EX")],
            vec![Part::Hole(2)],
        ]);
        let mut out = Vec::new();
        let n = t.encode(&mut out, &[b"42", b"hello world", b"7"]);
        let want = b"*5\r\n$3\r\nSET\r\n$6\r\nkey:42\r\n$11\r\nhello world\r\n$2\r\nEX\r\n$1\r\n7\r\n";
        assert_eq!(out, want);
        assert_eq!(n, want.len());
        out.clear();
        t.encode(&mut out, &[b"1234567", b"", b"10"]);
        assert_eq!(out, b"*5\r\n$3\r\nSET\r\n$11\r\nkey:1234567\r\n$0\r\n\r\n$2\r\nEX\r\n$2\r\n10\r\n");
    }

    #[test]
    fn holes_between_literals_and_long_arguments_keep_their_lengths() {
        // A hole inside an argument, a literal after it, and lengths of one, two and three digits.
        let t = Template::new(&[vec![lit("SET")], vec![lit("k:"), Part::Hole(0), lit(":x")], vec![Part::Hole(1)]]);
        let mut out = Vec::new();
        let value = vec![b'v'; 123];
        t.encode(&mut out, &[b"7", &value]);
        let mut want = b"*3\r\n$3\r\nSET\r\n$5\r\nk:7:x\r\n$123\r\n".to_vec();
        want.extend_from_slice(&value);
        want.extend_from_slice(b"\r\n");
        assert_eq!(out, want);
        out.clear();
        t.encode(&mut out, &[b"123456", b""]);
        assert_eq!(out, b"*3\r\n$3\r\nSET\r\n$10\r\nk:123456:x\r\n$0\r\n\r\n");
    }

    #[test]
    fn a_key_encoded_ahead_writes_what_the_ops_write_one_by_one() {
        let templates = [
            Template::new(&[vec![lit("GET")], vec![lit("key:"), Part::Hole(0)]]),
            Template::new(&[vec![lit("SET")], vec![lit("k:"), Part::Hole(0), lit(":x")], vec![Part::Hole(1)]]),
            Template::new(&[vec![lit("MSET")], vec![Part::Hole(0)], vec![Part::Hole(1)], vec![Part::Hole(0)]]),
            Template::new(&[vec![lit("SET")], vec![Part::Hole(1)], vec![Part::Hole(0)]]),
        ];
        assert!(templates[..3].iter().all(|t| t.keyed.is_some()) && templates[3].keyed.is_none());
        let value = vec![b'v'; 300];
        for t in &templates {
            let one_by_one = Template { keyed: None, ..t.clone() };
            for width in 0..=KEY_WIDTH_MAX + 2 {
                let key: Vec<u8> = (0..width).map(|i| b'1' + (i % 9) as u8).collect();
                let (mut ahead, mut ops) = (b"before".to_vec(), b"before".to_vec());
                let holes: [&[u8]; 2] = [&key, &value];
                assert_eq!(t.encode(&mut ahead, &holes), one_by_one.encode(&mut ops, &holes));
                assert_eq!(String::from_utf8_lossy(&ahead), String::from_utf8_lossy(&ops), "width {width}");
                let mut sent = crate::resp::SendBuf::with_capacity(16);
                sent.extend_from_slice(b"before");
                t.encode(&mut sent, &holes);
                assert_eq!(sent.bytes(), &ops[..]);
            }
        }
    }

    #[test]
    fn inline_commands_join_words_with_spaces() {
        let t = Template::inline(&[vec![lit("PING")]]);
        let mut out = Vec::new();
        t.encode(&mut out, &[]);
        assert_eq!(out, b"PING\r\n");
        let t = Template::inline(&[vec![lit("GET")], vec![lit("k:"), Part::Hole(0)]]);
        out.clear();
        t.encode(&mut out, &[b"7"]);
        assert_eq!(out, b"GET k:7\r\n");
    }

    #[test]
    fn raw_templates_compute_lengths_and_numbers() {
        let t = Template::raw(&[
            RawPart::Lit(b"set k:".to_vec()),
            RawPart::Hole(0),
            RawPart::Lit(b" 0 0 ".to_vec()),
            RawPart::Len { holes: vec![1], plus: 0, form: LenForm::Decimal },
            RawPart::Lit(b"\r\n".to_vec()),
            RawPart::Hole(1),
            RawPart::Lit(b"\r\n".to_vec()),
        ]);
        let mut out = Vec::new();
        t.encode(&mut out, &[b"17", b"hello"]);
        assert_eq!(out, b"set k:17 0 0 5\r\nhello\r\n");
        let t = Template::raw(&[
            RawPart::Len { holes: vec![0, 1], plus: 2, form: LenForm::U16Be },
            RawPart::Len { holes: vec![0], plus: 0, form: LenForm::U32Be },
            RawPart::Num { hole: 1, form: LenForm::U32Be },
        ]);
        out.clear();
        t.encode(&mut out, &[b"abc", b"300"]);
        assert_eq!(out, [0, 8, 0, 0, 0, 3, 0, 0, 1, 44]);
        out.clear();
        t.encode(&mut out, &[b"", b""]);
        assert_eq!(out, [0, 2, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn encoded_commands_scan_as_one_unit() {
        // The encoder's output is valid RESP: the scanner sees exactly one array.
        let t = Template::new(&[vec![lit("GET")], vec![Part::Hole(0)]]);
        let mut out = Vec::new();
        t.encode(&mut out, &[b"k"]);
        let scanned = crate::resp::scan(&out).unwrap().unwrap();
        assert_eq!(scanned.len, out.len());
    }
}
