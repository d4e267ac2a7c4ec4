//! What a command's arguments take beside the key range: the field and member spaces
//! (`__field__`, `__member__`), and the replies of the setup commands (`__setup:N__`), filled
//! into the commands once, before the run's templates are compiled.

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
