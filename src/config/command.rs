//! Commands as the user writes them (`SET __key__ __data__`, `MULTI ; SET k v ; EXEC`):
//! split into words and sequences, and parsed into argument parts with their placeholders,
//! which the workload compiles into templates.

use super::parse::InvalidValue;

/// How a command picks its key number.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum KeyPattern {
    /// Each connection walks the whole range in order, wrapping.
    Sequential,
    /// Uniformly random over the range.
    Random,
    /// Normal around `median` (default: the middle) with `stddev` (default: range / 6).
    Gaussian { median: Option<f64>, stddev: Option<f64> },
    /// Zipf over ranks: `key_min` is the most popular key.
    Zipf { exponent: f64 },
    /// Each connection walks its own contiguous slice of the range, wrapping.
    Parallel,
}

impl KeyPattern {
    /// The one-letter name used on command lines (memtier's letters).
    pub fn letter(&self) -> char {
        match self {
            KeyPattern::Sequential => 'S',
            KeyPattern::Random => 'R',
            KeyPattern::Gaussian { .. } => 'G',
            KeyPattern::Zipf { .. } => 'Z',
            KeyPattern::Parallel => 'P',
        }
    }
}

/// A piece of a command argument: fixed bytes, or a placeholder filled per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgPart {
    Lit(Vec<u8>),
    /// `__key__`: the key prefix and a number from the command's key pattern.
    Key,
    /// `__data__`: the value payload.
    Data,
    /// The `EX` seconds of `--expiry-range`.
    Expiry,
    /// `__rand_int__`: a fresh random number in the key range, zero-padded to 12 digits.
    RandInt,
    /// `__rand_1st__` .. `__rand_9th__`: draws shared by every occurrence within one command.
    RandShared(u8),
    /// `{tag}`: a cluster hash tag; empty outside cluster mode.
    Tag,
    /// Key `i` of a multi-key read (MGET under `--multi-key-get`): the key prefix and a number
    /// drawn on its own from the command's key pattern.
    MultiKey(u16),
    /// A number drawn per request in `min..=max`: uniform, or normal around the middle with a
    /// sixth of the range as deviation (WAIT's replicas and timeout under `--wait-ratio`).
    Between {
        min: u64,
        max: u64,
        normal: bool,
    },
    /// The cursor the server returned to this connection's last SCAN (`--scan-incremental-iteration`).
    Cursor,
    /// `__field:NAME__` (`__field:NAME:base64__` decoded): the field of the dataset's row this
    /// command takes (`--dataset`).
    Field(FieldRef),
    /// A pub/sub role's message stamp: the publisher, its sequence number and its send time,
    /// in fixed width, which a subscriber reads back (`workload::stamp`).
    Stamp,
    /// `__key2__` .. `__key9__`: another key of the command, drawn from its key pattern and
    /// distinct from the command's other keys (`__key__` is the first); the index from 1.
    OtherKey(u16),
    /// `__field__` or `__member__`: a name from that space (`--field-range`, `--member-range`).
    Element(super::arguments::Space),
    /// `__setup:N__`: the reply of setup command N (from 1), filled in before the run.
    Setup(u16),
}

/// A dataset field a command names: the header's name, and whether its values are base64 to
/// be decoded before sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRef {
    pub name: String,
    pub base64: bool,
}

/// `__field:NAME__` at the start of `rest`: the field and the placeholder's length.
fn field_at(rest: &str) -> Option<(FieldRef, usize)> {
    let inner = rest.strip_prefix("__field:")?;
    let end = inner.find("__")?;
    let name = &inner[..end];
    if name.is_empty() {
        return None;
    }
    let (name, base64) = match name.strip_suffix(":base64") {
        Some(raw) if !raw.is_empty() => (raw, true),
        _ => (name, false),
    };
    Some((FieldRef { name: name.to_string(), base64 }, "__field:".len() + end + 2))
}

/// `__setup:N__` at the start of `rest`: N as written (checked against the setup commands
/// later) and the placeholder's length.
fn setup_at(rest: &str) -> Option<(u16, usize)> {
    let inner = rest.strip_prefix("__setup:")?;
    let end = inner.find("__")?;
    let n = inner[..end].parse().ok()?;
    Some((n, "__setup:".len() + end + 2))
}

/// One command of the mix.
#[derive(Debug, Clone, PartialEq)]
pub struct CommandSpec {
    /// Name used in reports ("SET", "GET", "LPUSH").
    pub name: String,
    /// The arguments, each a list of parts (`user:__key__` is a literal and a key).
    pub args: Vec<Vec<ArgPart>>,
    /// A read whose null reply is a miss (GET and its kin): hits and misses are counted.
    pub reads: bool,
    /// Relative weight in the mix; 0 leaves it out.
    pub weight: u32,
    pub key_pattern: KeyPattern,
    /// Sent as an inline command (`PING\r\n`) instead of a RESP array.
    pub inline: bool,
}

/// One step of a [`Config::sequence`]: command `command` of the mix, sent `repeat` times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    pub command: usize,
    pub repeat: u32,
}

/// Commands whose null reply means a missing key.
const READS: [&str; 9] = ["GET", "GETEX", "GETDEL", "HGET", "LINDEX", "ZSCORE", "HMGET", "MGET", "GETRANGE"];

impl CommandSpec {
    /// `SET key value`, with `EX seconds` when `expiry` (from `--expiry-range`).
    pub fn set(weight: u32, key_pattern: KeyPattern, expiry: bool) -> CommandSpec {
        let mut args = vec![vec![ArgPart::Lit(b"SET".to_vec())], vec![ArgPart::Key], vec![ArgPart::Data]];
        if expiry {
            args.push(vec![ArgPart::Lit(b"EX".to_vec())]);
            args.push(vec![ArgPart::Expiry]);
        }
        CommandSpec { name: "SET".into(), args, reads: false, weight, key_pattern, inline: false }
    }

    /// `GET key`.
    pub fn get(weight: u32, key_pattern: KeyPattern) -> CommandSpec {
        let args = vec![vec![ArgPart::Lit(b"GET".to_vec())], vec![ArgPart::Key]];
        CommandSpec { name: "GET".into(), args, reads: true, weight, key_pattern, inline: false }
    }

    /// A command line with placeholders: `LPUSH list:__key__ __data__`. Arguments split on
    /// white space; double or single quotes keep spaces inside one argument.
    pub fn parse(text: &str, weight: u32, key_pattern: KeyPattern) -> Result<CommandSpec, InvalidValue> {
        let words = split_words(text)?;
        if words.is_empty() {
            return Err(format!("the command '{text}' is empty").into());
        }
        Ok(CommandSpec::from_words(&words, weight, key_pattern, true))
    }

    /// A command already split into arguments (a shell's argv). With `placeholders` false,
    /// `__rand_int__` and its kin stay literal, as redis-benchmark leaves them without `-r`.
    pub fn from_words<S: AsRef<str>>(
        words: &[S],
        weight: u32,
        key_pattern: KeyPattern,
        placeholders: bool,
    ) -> CommandSpec {
        let name = words.first().map_or(String::new(), |w| w.as_ref().to_ascii_uppercase());
        let args =
            words
                .iter()
                .map(|w| {
                    if placeholders {
                        parse_arg(w.as_ref())
                    } else {
                        vec![ArgPart::Lit(w.as_ref().as_bytes().to_vec())]
                    }
                })
                .collect();
        let reads = READS.contains(&name.as_str());
        CommandSpec { name, args, reads, weight, key_pattern, inline: false }
    }
}

impl CommandSpec {
    /// `__rand_int__` sent as written rather than drawn: every request names one key, as
    /// redis-benchmark's commands do without `-r`.
    pub fn with_literal_rand_int(mut self) -> CommandSpec {
        for part in self.args.iter_mut().flatten() {
            if *part == ArgPart::RandInt {
                *part = ArgPart::Lit(b"__rand_int__".to_vec());
            }
        }
        self
    }
}

/// A sequence's commands, each with its repeat count, as [`split_sequence`] finds them.
pub type SequenceParts = Vec<(u32, Vec<String>)>;

/// A sequence compiled for a [`Config`]: its commands and the steps that send them.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequence {
    pub commands: Vec<CommandSpec>,
    pub steps: Vec<Step>,
}

impl Sequence {
    /// One command per step.
    pub fn of(parts: &[(u32, Vec<String>)], key_pattern: KeyPattern, placeholders: bool) -> Sequence {
        let commands = parts.iter().map(|(_, words)| CommandSpec::from_words(words, 1, key_pattern, placeholders));
        let steps = parts.iter().enumerate().map(|(command, (repeat, _))| Step { command, repeat: *repeat });
        Sequence { commands: commands.collect(), steps: steps.collect() }
    }
}

/// Splits a sequence (`MULTI ; SET k v ; 4 GET k ; EXEC`) at its `;` words into commands,
/// each with its repeat count (a leading number). Returns `None` when there is no `;`.
pub fn split_sequence<S: AsRef<str>>(words: &[S]) -> Result<Option<SequenceParts>, InvalidValue> {
    if !words.iter().any(|w| w.as_ref() == ";") {
        return Ok(None);
    }
    let mut out = Vec::new();
    for part in words.split(|w| w.as_ref() == ";") {
        let mut part: Vec<String> = part.iter().map(|w| w.as_ref().to_string()).collect();
        let mut repeat = 1;
        if part.len() > 1 && part[0].bytes().all(|b| b.is_ascii_digit()) {
            repeat = match part.remove(0).parse::<u32>() {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(
                        format!("the repeat count in '{}' must be a whole number above 0", part.join(" ")).into()
                    );
                }
            };
        }
        if part.is_empty() {
            return Err("a sequence has an empty command between two ';'".into());
        }
        out.push((repeat, part));
    }
    Ok(Some(out))
}

/// Splits a command line into words, honouring "double" and 'single' quotes.
pub fn split_words(text: &str) -> Result<Vec<String>, InvalidValue> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                in_word = true;
            }
            (None, c) if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut current));
                    in_word = false;
                }
            }
            (None, c) => {
                current.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err(format!("the command '{text}' has an unclosed quote").into());
    }
    if in_word {
        words.push(current);
    }
    Ok(words)
}

/// `__rand_1st__` .. `__rand_9th__`, in order.
const RAND_SHARED: [&str; 9] = [
    "__rand_1st__",
    "__rand_2nd__",
    "__rand_3rd__",
    "__rand_4th__",
    "__rand_5th__",
    "__rand_6th__",
    "__rand_7th__",
    "__rand_8th__",
    "__rand_9th__",
];

/// `__key2__` .. `__key9__`, in order.
const OTHER_KEYS: [&str; 8] =
    ["__key2__", "__key3__", "__key4__", "__key5__", "__key6__", "__key7__", "__key8__", "__key9__"];

/// One argument into literal parts and placeholders.
fn parse_arg(word: &str) -> Vec<ArgPart> {
    let mut parts = Vec::new();
    let mut lit = String::new();
    let mut rest = word;
    while !rest.is_empty() {
        if let Some((field, len)) = field_at(rest) {
            if !lit.is_empty() {
                parts.push(ArgPart::Lit(std::mem::take(&mut lit).into_bytes()));
            }
            parts.push(ArgPart::Field(field));
            rest = &rest[len..];
            continue;
        }
        if let Some((n, len)) = setup_at(rest) {
            if !lit.is_empty() {
                parts.push(ArgPart::Lit(std::mem::take(&mut lit).into_bytes()));
            }
            parts.push(ArgPart::Setup(n));
            rest = &rest[len..];
            continue;
        }
        let found = [
            ("__key__", ArgPart::Key),
            ("__field__", ArgPart::Element(super::arguments::Space::Field)),
            ("__member__", ArgPart::Element(super::arguments::Space::Member)),
            ("__data__", ArgPart::Data),
            ("__rand_int__", ArgPart::RandInt),
            ("{tag}", ArgPart::Tag),
        ]
        .into_iter()
        .chain(RAND_SHARED.iter().enumerate().map(|(i, holder)| (*holder, ArgPart::RandShared(i as u8))))
        .chain(OTHER_KEYS.iter().enumerate().map(|(i, holder)| (*holder, ArgPart::OtherKey(i as u16 + 1))))
        .find(|(holder, _)| rest.starts_with(holder));
        match found {
            Some((holder, part)) => {
                if !lit.is_empty() {
                    parts.push(ArgPart::Lit(std::mem::take(&mut lit).into_bytes()));
                }
                parts.push(part);
                rest = &rest[holder.len()..];
            }
            None => {
                let c = rest.chars().next().expect("rest is not empty");
                lit.push(c);
                rest = &rest[c.len_utf8()..];
            }
        }
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(ArgPart::Lit(lit.into_bytes()));
    }
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::arguments::Space;

    #[test]
    fn setup_fields_members_and_other_keys_are_placeholders() {
        let spec =
            CommandSpec::parse("X __setup:2__ f__field__ __member__ __key3__ __setup:x__", 1, KeyPattern::Random);
        let args = spec.unwrap().args;
        assert_eq!(args[1], [ArgPart::Setup(2)]);
        assert_eq!(args[2], [ArgPart::Lit(b"f".to_vec()), ArgPart::Element(Space::Field)]);
        assert_eq!(args[3], [ArgPart::Element(Space::Member)]);
        assert_eq!(args[4], [ArgPart::OtherKey(2)]);
        // Not a number: written as it is.
        assert_eq!(args[5], [ArgPart::Lit(b"__setup:x__".to_vec())]);
    }
}
