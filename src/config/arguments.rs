//! What a command's arguments take beside the key range: the field and member spaces
//! (`__field__`, `__member__`), and the replies of the setup commands (`__setup:N__`), filled
//! into the commands once, before the run's templates are compiled.

use super::{ArgPart, Config};

/// A space of argument names apart from the key range: `__field__` (a hash's field) or
/// `__member__` (a set's or sorted set's member), each a prefix and a number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgSpace {
    pub prefix: String,
    pub min: u64,
    pub max: u64,
    /// Walked in order instead of drawn at random. Under a key pattern that walks (S, P) the
    /// number moves on once per pass over the keys, so the keys and the numbers together walk
    /// every pair once (ten keys by a thousand fields: each key gets every field).
    pub sequential: bool,
}

/// Which of the two spaces a placeholder names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Space {
    Field = 0,
    Member = 1,
}

impl Space {
    /// The placeholder as written in a command.
    pub fn placeholder(self) -> &'static str {
        match self {
            Space::Field => "__field__",
            Space::Member => "__member__",
        }
    }
}

/// The two spaces, indexed by [`Space`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgSpaces(pub [ArgSpace; 2]);

impl Default for ArgSpaces {
    fn default() -> ArgSpaces {
        let space = |prefix: &str| ArgSpace { prefix: prefix.into(), min: 1, max: 1000, sequential: false };
        ArgSpaces([space("field:"), space("member:")])
    }
}

impl ArgSpaces {
    pub fn get(&self, space: Space) -> &ArgSpace {
        &self.0[space as usize]
    }
}

/// A command run once before the run's connections open, as its words (`SCRIPT LOAD "..."`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetupCommand {
    pub words: Vec<String>,
}

impl SetupCommand {
    /// The command as one line, for messages.
    pub fn shown(&self) -> String {
        self.words
            .iter()
            .map(|w| if w.contains(' ') { format!("\"{w}\"") } else { w.clone() })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// The setup numbers (from 1) the commands name with `__setup:N__`, in order, each once.
pub fn setup_refs(config: &Config) -> Vec<u16> {
    let mut refs: Vec<u16> = config
        .commands
        .iter()
        .flat_map(|c| c.args.iter().flatten())
        .filter_map(|p| if let ArgPart::Setup(n) = p { Some(*n) } else { None })
        .collect();
    refs.sort_unstable();
    refs.dedup();
    refs
}

/// The plan with every `__setup:N__` replaced by setup command N's reply (`replies[N - 1]`),
/// as literal bytes: the templates compiled from it carry the reply, patched per request like
/// any literal. [`setup_refs`] says which replies must be there; a missing one stays written.
pub fn fill_setup(config: &Config, replies: &[Option<Vec<u8>>]) -> Config {
    let mut filled = config.clone();
    for part in filled.commands.iter_mut().flat_map(|c| c.args.iter_mut()).flatten() {
        if let ArgPart::Setup(n) = part
            && let Some(Some(reply)) = replies.get(usize::from(*n).wrapping_sub(1))
        {
            *part = ArgPart::Lit(reply.clone());
        }
    }
    filled
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{CommandSpec, KeyPattern};

    #[test]
    fn setup_replies_become_literals() {
        let mut config = crate::config::tests::sample();
        config.commands = vec![CommandSpec::parse("EVALSHA __setup:2__ 0", 1, KeyPattern::Random).unwrap()];
        assert_eq!(setup_refs(&config), vec![2]);
        let filled = fill_setup(&config, &[None, Some(b"abc".to_vec())]);
        assert_eq!(filled.commands[0].args[1], vec![ArgPart::Lit(b"abc".to_vec())]);
    }
}
