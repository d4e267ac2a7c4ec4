//! Stand-ins for the codec seam's types until it lands on main (removed by the merge).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LenForm {
    Decimal,
    U16Be,
    U32Be,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RawPart {
    Lit(Vec<u8>),
    Hole(usize),
    Len { holes: Vec<usize>, plus: usize, form: LenForm },
    Num { hole: usize, form: LenForm },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scanned {
    pub len: usize,
    pub class: crate::resp::ReplyClass,
    pub id: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ScanError {
    #[error("unexpected type byte 0x{0:02x}")]
    BadType(u8),
    #[error("malformed length or integer")]
    BadNumber,
    #[error("bulk payload not followed by CRLF")]
    MissingCrlf,
    #[error("a line longer than the limit at byte offset {offset}")]
    LineTooLong { offset: usize },
    #[error("a declared length of {len} at byte offset {offset} exceeds --max-reply-size {limit}")]
    TooLarge { len: i64, offset: usize, limit: i64 },
    #[error("an unrecognised reply at byte offset {offset}")]
    Unrecognised { offset: usize },
}

/// What `Template::raw(parts).encode(holes)` writes.
#[cfg(test)]
pub fn render(parts: &[RawPart], holes: &[&[u8]]) -> Vec<u8> {
    let mut out = Vec::new();
    let num = |out: &mut Vec<u8>, n: u64, form: LenForm| match form {
        LenForm::Decimal => out.extend_from_slice(n.to_string().as_bytes()),
        LenForm::U16Be => out.extend_from_slice(&(n as u16).to_be_bytes()),
        LenForm::U32Be => out.extend_from_slice(&(n as u32).to_be_bytes()),
    };
    for part in parts {
        match part {
            RawPart::Lit(lit) => out.extend_from_slice(lit),
            RawPart::Hole(i) => out.extend_from_slice(holes[*i]),
            RawPart::Len { holes: hs, plus, form } => {
                num(&mut out, (hs.iter().map(|i| holes[*i].len()).sum::<usize>() + plus) as u64, *form)
            }
            RawPart::Num { hole, form } => {
                num(&mut out, std::str::from_utf8(holes[*hole]).unwrap().parse().unwrap_or(0), *form)
            }
        }
    }
    out
}
