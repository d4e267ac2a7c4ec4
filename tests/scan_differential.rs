//! Differential check of the reply scanner: `resp::scan_within` must give the same
//! verdict as the reference reader in `tests/support/resp_reference.rs` (complete with the
//! same length and class, needs more bytes, or invalid) on every fuzz corpus file and on
//! inputs made here: valid RESP2/RESP3 replies of every type, every prefix of them, and
//! mutations of them. The fuzz target `scan_diff` does the same on whatever libFuzzer makes.

#[path = "support/resp_reference.rs"]
mod reference;
#[path = "support/scanner_verdict.rs"]
mod scanner_verdict;

use std::path::Path;

use reference::Verdict;
use respbench::resp::{MAX_BULK_LEN, MAX_DEPTH, MAX_LINE};
use scanner_verdict::scanner;

/// The limits each input is read under: the default and a tiny one.
const LIMITS: [i64; 3] = [MAX_BULK_LEN, 16, 0];

/// Both readers agree on `data` under every limit; returns the reference's default verdict.
fn agree(data: &[u8], what: &str) -> Verdict {
    for max_len in LIMITS {
        let (ours, theirs) = (scanner(data, max_len), reference::verdict(data, max_len));
        assert_eq!(
            ours,
            theirs,
            "{what}, limit {max_len}: scanner vs reference on {:?}",
            String::from_utf8_lossy(&data[..data.len().min(200)])
        );
    }
    reference::verdict(data, MAX_BULK_LEN)
}

/// A small deterministic random stream (xorshift64*), so that failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// Integers worth trying: the edges of `i64` and of the parsers.
const NUMBERS: [&str; 14] = [
    "0",
    "-0",
    "+7",
    "42",
    "-1",
    "007",
    "9223372036854775807",
    "-9223372036854775808",
    "9223372036854775808",
    "-9223372036854775809",
    "99999999999999999999",
    "1-",
    "",
    "+",
];

/// A random valid reply (sometimes with a number from [`NUMBERS`], which may not be valid).
fn reply(rng: &mut Rng, depth: u32, out: &mut Vec<u8>) {
    let leaf = depth >= 4 || rng.below(3) > 0;
    if leaf {
        match rng.below(14) {
            0 => out.extend_from_slice(b"+OK\r\n"),
            1 => out.extend_from_slice(b"-ERR wrong kind\r\n"),
            2 => out.extend_from_slice(format!(":{}\r\n", rng.pick(&NUMBERS)).as_bytes()),
            3 => out.extend_from_slice(format!(":{}\r\n", rng.next() as i64).as_bytes()),
            4 => {
                let len = rng.below(20) as usize;
                out.extend_from_slice(format!("${len}\r\n").as_bytes());
                out.extend((0..len).map(|_| rng.next() as u8));
                out.extend_from_slice(b"\r\n");
            }
            5 => out.extend_from_slice(b"$-1\r\n"),
            6 => out.extend_from_slice(b"_\r\n"),
            7 => out.extend_from_slice(if rng.below(2) == 0 { b"#t\r\n" } else { b"#f\r\n" }),
            8 => out.extend_from_slice(b",3.14\r\n"),
            9 => out.extend_from_slice(b"(3492890328409238509324850943850943825024385\r\n"),
            10 => out.extend_from_slice(b"=15\r\ntxt:Some string\r\n"),
            11 => out.extend_from_slice(b"!21\r\nSYNTAX invalid syntax\r\n"),
            12 => out.extend_from_slice(b"*-1\r\n"),
            _ => out.extend_from_slice(b"+\r\n"),
        }
        return;
    }
    let kind = *rng.pick(b"*~>%|");
    let count = rng.below(4);
    out.extend_from_slice(format!("{}{count}\r\n", kind as char).as_bytes());
    let elements = if kind == b'%' || kind == b'|' { count * 2 } else { count };
    for _ in 0..elements {
        reply(rng, depth + 1, out);
    }
    if kind == b'|' {
        reply(rng, depth + 1, out);
    }
}

/// Bytes a mutation puts in: the ones RESP gives meaning to, and any.
const MEANINGFUL: &[u8] = b"\r\n+-:$*_#,(!=%~>|0123456789";

fn mutate(rng: &mut Rng, input: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..=rng.below(3) {
        let at = rng.below(out.len() as u64 + 1) as usize;
        let byte = if rng.below(4) == 0 { rng.next() as u8 } else { *rng.pick(MEANINGFUL) };
        match rng.below(4) {
            0 if at < out.len() => out[at] = byte,
            1 if at < out.len() => {
                out.remove(at);
            }
            2 => out.insert(at, byte),
            _ => out.truncate(at),
        }
    }
    out
}

#[test]
fn the_scanner_agrees_with_the_reference_on_every_corpus_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut seen = 0;
    // The kept seeds, and what a local fuzzing run grew (not kept in git), when present.
    for dir in ["tests/fuzz-corpus/scan", "fuzz/corpus/scan", "fuzz/corpus/scan_diff"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else { continue };
        for entry in entries {
            let path = entry.unwrap().path();
            let data = std::fs::read(&path).unwrap();
            agree(&data, &path.display().to_string());
            // Every prefix of a seed is a read that stopped early.
            if data.len() <= 4096 {
                for cut in 0..data.len() {
                    agree(&data[..cut], &format!("{} cut at {cut}", path.display()));
                }
            }
            seen += 1;
        }
    }
    assert!(seen > 0, "no corpus found");
}

#[test]
fn the_scanner_agrees_with_the_reference_on_generated_replies() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let (mut complete, mut incomplete, mut invalid) = (0, 0, 0);
    for _ in 0..3000 {
        let mut input = Vec::new();
        reply(&mut rng, 0, &mut input);
        let whole = agree(&input, "generated");
        if let Verdict::Complete { len, .. } = whole {
            // A whole valid reply is all of the input; with bytes after it, it still ends there.
            assert_eq!(len, input.len());
            let mut longer = input.clone();
            longer.extend_from_slice(b"+next\r\n");
            assert_eq!(agree(&longer, "with a tail"), whole);
        }
        for cut in 0..input.len() {
            agree(&input[..cut], "a prefix");
        }
        for _ in 0..20 {
            match agree(&mutate(&mut rng, &input), "mutated") {
                Verdict::Complete { .. } => complete += 1,
                Verdict::Incomplete => incomplete += 1,
                Verdict::Invalid => invalid += 1,
            }
        }
    }
    // The mutations reach every verdict, so the agreement means something for each.
    assert!(complete > 1000 && incomplete > 1000 && invalid > 1000, "{complete} {incomplete} {invalid}");
}

#[test]
fn the_scanner_agrees_with_the_reference_at_the_limits() {
    // i64's edges as integers and lengths.
    for n in NUMBERS {
        for kind in [':', '$', '*', '%', '=', '!', '~', '>', '|'] {
            agree(format!("{kind}{n}\r\n").as_bytes(), "a number");
        }
    }
    // Nesting: at the deepest level accepted, one past it, and incomplete there.
    for depth in [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 2] {
        let mut deep = "*1\r\n".repeat(depth).into_bytes();
        agree(&deep, "deep, no leaf yet");
        deep.extend_from_slice(b":1\r\n");
        agree(&deep, "deep");
    }
    // Lines around the line limit, ended or not, with and without CR.
    for content in [MAX_LINE - 1, MAX_LINE, MAX_LINE + 1, MAX_LINE + 2] {
        for end in [&b""[..], b"\n", b"\r\n", b"\r"] {
            for kind in [b'+', b'-', b'$'] {
                let mut line = vec![kind];
                line.resize(content + 1, if kind == b'$' { b'1' } else { b'x' });
                line.extend_from_slice(end);
                agree(&line, "a long line");
            }
        }
    }
    // Lengths around a limit of 16, complete and not.
    for len in [15usize, 16, 17] {
        let mut bulk = format!("${len}\r\n").into_bytes();
        bulk.resize(bulk.len() + len, b'v');
        agree(&bulk, "a bulk without its CRLF");
        bulk.extend_from_slice(b"\r\n");
        agree(&bulk, "a bulk");
    }
}
