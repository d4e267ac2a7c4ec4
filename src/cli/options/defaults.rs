//! `Args::default()`: the flags as an empty command line leaves them, so that a front-end, a
//! scenario phase or a subcommand builds its plan as a typed value (defaults, then the fields it
//! sets) instead of writing argv for clap to parse again. clap's own definitions give every
//! default: nothing here names a flag's value.

use clap::{CommandFactory, FromArgMatches};

use super::{Args, error::OptionsError};

impl Default for Args {
    fn default() -> Self {
        // `--io` reads RESPBENCH_IO: read here as clap reads it, but an unknown value leaves the
        // default (the command line's parse reports it; `checked_default` refuses it).
        let mut cmd = Args::command().mut_arg("io", |a| a.env(None));
        let matches = cmd.try_get_matches_from_mut(["respbench"]).expect("an empty command line parses");
        let mut args = Args::from_arg_matches(&matches).expect("an empty command line gives every field");
        args.session.io = io_from_env();
        args
    }
}

impl Args {
    /// The defaults, with `RESPBENCH_IO` checked as clap checks it at a command line: a value it
    /// does not know is an error naming it (a front-end that plans without clap calls this).
    pub fn checked_default() -> Result<Args, OptionsError> {
        use clap::ValueEnum;
        if let Some(v) = std::env::var("RESPBENCH_IO").ok().filter(|v| !v.is_empty()) {
            crate::config::IoChoice::from_str(&v, false)
                .map_err(|_| format!("invalid value '{v}' for RESPBENCH_IO: expected auto, uring or epoll"))?;
        }
        Ok(Args::default())
    }
}

/// `RESPBENCH_IO` as `--io` reads it; an unknown value is left to clap's error at the command
/// line, and the default path taken here.
fn io_from_env() -> crate::config::IoChoice {
    use clap::ValueEnum;
    std::env::var("RESPBENCH_IO")
        .ok()
        .and_then(|v| crate::config::IoChoice::from_str(&v, false).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn the_default_is_what_an_empty_command_line_gives() {
        let parsed = Args::try_parse_from(["respbench"]).unwrap();
        assert_eq!(format!("{:?}", Args::default()), format!("{parsed:?}"));
    }
}
