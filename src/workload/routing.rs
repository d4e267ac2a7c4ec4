//! Cluster mode: what the compiled mix knows of where each command goes before it is
//! encoded, worked out once.

use crate::config::{ArgPart, Config, Step};
use crate::net::cluster::KeySlots;

/// For each command: how the slot of its key follows from the key's number (when its key
/// argument is the drawn key, `__key__` after the prefix, between literal text with no hash
/// tag), and whether its key hashes by its `{tag}` alone (literal text with no `{` before the
/// tag). Neither for a command `routable` refuses (imported keys, a transaction's, which go
/// where their unit goes).
pub(super) fn keys(
    config: &Config,
    prefix: &[u8],
    routable: impl Fn(usize) -> bool,
) -> (Vec<Option<KeySlots>>, Vec<bool>) {
    let key_args = config.key_args();
    let args = key_args.iter().zip(&config.commands).enumerate().map(|(i, (arg, spec))| {
        let arg = arg.and_then(|a| spec.args.get(a)).filter(|_| routable(i));
        (arg.and_then(|arg| key_slots(arg, prefix)), arg.is_some_and(|arg| hashed_by_tag(arg)))
    });
    args.unzip()
}

/// Whether every command of each unit goes where its own key's digits say and takes no
/// `{tag}` (`tagged` says which commands take one; `plain`: no monitor line or followed SCAN
/// chooses the command).
pub(super) fn units_routed(
    units: &[Vec<Step>],
    key_slots: &[Option<KeySlots>],
    tagged: impl Fn(usize) -> bool,
    plain: bool,
) -> Vec<bool> {
    let routed = |s: &Step| key_slots.get(s.command).is_some_and(Option::is_some) && !tagged(s.command);
    units.iter().map(|steps| plain && steps.iter().all(routed)).collect()
}

fn key_slots(arg: &[ArgPart], prefix: &[u8]) -> Option<KeySlots> {
    let key = arg.iter().position(|p| *p == ArgPart::Key)?;
    let literal = |parts: &[ArgPart]| -> Option<Vec<u8>> {
        parts.iter().try_fold(Vec::new(), |mut text, part| match part {
            ArgPart::Lit(bytes) => {
                text.extend_from_slice(bytes);
                Some(text)
            }
            _ => None,
        })
    };
    let mut before = literal(&arg[..key])?;
    before.extend_from_slice(prefix);
    KeySlots::new(&before, &literal(&arg[key + 1..])?)
}

/// A key whose first `{` is its `{tag}`'s: it hashes by the tag alone.
fn hashed_by_tag(arg: &[ArgPart]) -> bool {
    let tag = arg.iter().position(|p| *p == ArgPart::Tag);
    tag.is_some_and(|t| arg[..t].iter().all(|p| matches!(p, ArgPart::Lit(l) if !l.contains(&b'{'))))
}

#[cfg(test)]
mod tests {
    use super::hashed_by_tag;
    use crate::config::ArgPart::{Key, Lit, Tag};

    #[test]
    fn a_key_hashes_by_its_tag_when_no_brace_comes_first() {
        assert!(hashed_by_tag(&[Lit(b"a".to_vec()), Tag, Lit(b":".to_vec()), Key]));
        assert!(hashed_by_tag(&[Tag, Key]));
        assert!(!hashed_by_tag(&[Lit(b"{x}".to_vec()), Tag]));
        assert!(!hashed_by_tag(&[Key, Tag]));
        assert!(!hashed_by_tag(&[Lit(b"k:".to_vec()), Key]));
    }
}
