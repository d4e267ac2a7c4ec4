//! A command of the mix as memcached sees it, and the pieces of a request every protocol's
//! template is built from.

use crate::resp::{LenForm, Part, RawPart};

/// Hole of the expiry (the workload's `HOLE_EXPIRY`).
pub(super) const HOLE_EXPIRY: usize = 2;

/// A key or value argument: its parts, and what its length is made of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Arg {
    pub(super) parts: Vec<RawPart>,
    pub(super) holes: Vec<usize>,
    pub(super) lit_len: usize,
}

/// A literal piece of a request.
pub(super) fn lit(bytes: &[u8]) -> RawPart {
    RawPart::Lit(bytes.to_vec())
}

/// `word`, the key's parts, then `tail`: how every text and meta request starts.
pub(super) fn keyed(out: &mut Vec<RawPart>, word: &[u8], key: &Arg, tail: &[u8]) {
    out.push(lit(word));
    out.extend(key.parts.iter().cloned());
    out.push(lit(tail));
}

impl Arg {
    pub(super) fn new(arg: &[Part]) -> Arg {
        let mut out = Arg { parts: Vec::new(), holes: Vec::new(), lit_len: 0 };
        for part in arg {
            match part {
                Part::Lit(b) => {
                    out.lit_len += b.len();
                    out.parts.push(RawPart::Lit(b.clone()));
                }
                Part::Hole(i) => {
                    out.holes.push(*i);
                    out.parts.push(RawPart::Hole(*i));
                }
            }
        }
        out
    }

    /// This argument's byte length in `form`, plus `plus`.
    pub(super) fn len(&self, plus: usize, form: LenForm) -> RawPart {
        RawPart::Len { holes: self.holes.clone(), plus: self.lit_len + plus, form }
    }
}

/// A command of the mix as memcached sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Op {
    /// The value, and whether the expiry hole is filled per request.
    Set {
        key: Arg,
        data: Arg,
        expiry: bool,
    },
    Get(Arg),
    MultiGet(Vec<Arg>),
    Delete(Arg),
    Incr(Arg),
}

impl Op {
    pub(super) fn parse(name: &str, args: &[Vec<Part>]) -> Option<Op> {
        let has_expiry = args.iter().flatten().any(|p| *p == Part::Hole(HOLE_EXPIRY));
        let word = args.first().map(|a| words(a).to_ascii_uppercase())?;
        let base = name.split('#').next().unwrap_or(name);
        if word != base {
            return None;
        }
        match (base, args.len()) {
            ("SET", 3) | ("SET", 5) => {
                let data = &args[2];
                if data.contains(&Part::Hole(HOLE_EXPIRY)) {
                    return None;
                }
                Some(Op::Set { key: Arg::new(&args[1]), data: Arg::new(data), expiry: has_expiry })
            }
            ("GET", 2) => Some(Op::Get(Arg::new(&args[1]))),
            ("MGET", n) if n >= 2 => Some(Op::MultiGet(args[1..].iter().map(|a| Arg::new(a)).collect())),
            ("DEL", 2) => Some(Op::Delete(Arg::new(&args[1]))),
            ("INCR", 2) => Some(Op::Incr(Arg::new(&args[1]))),
            _ => None,
        }
    }
}

/// An argument's literal text, holes shown as `?` (for the refusal's message).
pub(super) fn words(arg: &[Part]) -> String {
    arg.iter()
        .map(|p| match p {
            Part::Lit(b) => String::from_utf8_lossy(b).into_owned(),
            Part::Hole(_) => "?".into(),
        })
        .collect()
}
