//! respbench's own notes and warnings about a run (how a front-end verifies TLS, memtier's
//! shared key sequence, an empty keyspace before reading): the run's state, kept for its JSON
//! (`notes`, `warnings`) and said on stderr by the native CLI. Under a front-end's name stderr
//! carries only what the original tool prints there, so they are said only with `--notes`.

/// Where a run's notes go besides its JSON.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Notes {
    /// What was noted, without a prefix (as the JSON keeps it).
    pub said: Vec<String>,
    /// Said on stderr too: always in the native CLI, with `--notes` under a front-end.
    pub on_stderr: bool,
}

impl Notes {
    /// Notes said on stderr as well (the native CLI).
    pub fn spoken() -> Notes {
        Notes { said: Vec::new(), on_stderr: true }
    }

    /// Notes kept for the JSON, said on stderr only when `on_stderr` (a front-end's `--notes`).
    pub fn kept(on_stderr: bool) -> Notes {
        Notes { said: Vec::new(), on_stderr }
    }

    /// Keeps a note, and says it as `{who}: note: {text}` when notes go to stderr.
    pub fn note(&mut self, who: &str, text: String) {
        if self.on_stderr {
            eprintln!("{who}: note: {text}");
        }
        self.said.push(text);
    }

    /// Says the engine's notes (kept in the run's outcome, so in its JSON) when notes go to
    /// stderr.
    pub fn say(&self, who: &str, notes: &[String]) {
        if self.on_stderr {
            for n in notes {
                eprintln!("{who}: note: {n}");
            }
        }
    }

    /// Says warnings (kept by the caller in the run's `warnings`) when notes go to stderr.
    pub fn warn(&self, who: &str, warnings: &[String]) {
        if self.on_stderr {
            for w in warnings {
                eprintln!("{who}: warning: {w}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_note_is_kept_whether_or_not_it_is_said() {
        let mut quiet = Notes::kept(false);
        quiet.note("memtier_benchmark", "every client draws the same keys".into());
        assert_eq!(quiet.said, ["every client draws the same keys"]);
        assert!(!quiet.on_stderr);
        assert!(Notes::spoken().on_stderr);
    }
}
