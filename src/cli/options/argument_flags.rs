//! The flags for what a command's arguments take beside the key range: setup commands whose
//! replies later commands name (`--setup`, `__setup:N__`), the field and member spaces
//! (`__field__`, `__member__`), and the checks that tie them to the commands.

use clap::Args;

use super::error::OptionsError;
use crate::config::arguments::{ArgSpace, ArgSpaces, SetupCommand, Space};
use crate::config::parse::{self, InvalidValue};
use crate::config::{ArgPart, Config};

#[derive(Debug, Clone, Args)]
pub struct ArgumentFlags {
    /// A command sent once before the run, repeatable, in order (in cluster mode to every
    /// primary, or to its key's node); a --command's __setup:N__ is setup N's reply (SCRIPT
    /// LOAD's SHA, FUNCTION LOAD's library). A CONFIG SET is put back after the run.
    #[arg(long, value_name = "\"CMD ARGS\"", help_heading = "Workload")]
    pub setup: Vec<String>,
    /// The numbers __field__ takes (a name of --field-prefix and a number) [default: 1-1000].
    #[arg(long, value_parser = parse::range, value_name = "MIN-MAX", help_heading = "Workload")]
    pub field_range: Option<(u64, u64)>,
    /// How __field__ numbers are taken: S in order (under an S or P key pattern, once per pass
    /// over the keys, so every key gets every field), R random [default: R].
    #[arg(long, value_parser = space_pattern, value_name = "S|R", help_heading = "Workload")]
    pub field_pattern: Option<bool>,
    /// The name before a __field__ number.
    #[arg(long, default_value = "field:", value_name = "PREFIX", help_heading = "Workload")]
    pub field_prefix: String,
    /// The numbers __member__ takes (a set's or sorted set's member) [default: 1-1000].
    #[arg(long, value_parser = parse::range, value_name = "MIN-MAX", help_heading = "Workload")]
    pub member_range: Option<(u64, u64)>,
    /// How __member__ numbers are taken: S in order (as --field-pattern), R random [default: R].
    #[arg(long, value_parser = space_pattern, value_name = "S|R", help_heading = "Workload")]
    pub member_pattern: Option<bool>,
    /// The name before a __member__ number.
    #[arg(long, default_value = "member:", value_name = "PREFIX", help_heading = "Workload")]
    pub member_prefix: String,
}

/// `S` (in order: true) or `R` (random: false).
fn space_pattern(s: &str) -> Result<bool, InvalidValue> {
    match s.trim().to_ascii_uppercase().as_str() {
        "S" => Ok(true),
        "R" => Ok(false),
        _ => Err(format!("expected S (in order) or R (random), got '{s}'").into()),
    }
}

impl ArgumentFlags {
    /// Puts the setup commands and the spaces into the plan, and checks the commands against
    /// them: every `__setup:N__` names a `--setup`, every command's distinct keys fit the range.
    pub fn apply(&self, config: &mut Config) -> Result<(), OptionsError> {
        let mut setup = Vec::with_capacity(self.setup.len());
        for text in &self.setup {
            let words = crate::config::split_words(text).map_err(|e| format!("--setup: {e}"))?;
            if words.is_empty() {
                return Err("--setup '': a setup command is empty".into());
            }
            setup.push(SetupCommand { words });
        }
        let space = |prefix: &str, range: Option<(u64, u64)>, sequential: Option<bool>| {
            let (min, max) = range.unwrap_or((1, 1000));
            ArgSpace { prefix: prefix.to_string(), min, max, sequential: sequential.unwrap_or(false) }
        };
        config.extras.spaces = ArgSpaces([
            space(&self.field_prefix, self.field_range, self.field_pattern),
            space(&self.member_prefix, self.member_range, self.member_pattern),
        ]);
        for spec in &config.commands {
            let mut keys = 0u64;
            for part in spec.args.iter().flatten() {
                match part {
                    ArgPart::Setup(n) if *n == 0 || usize::from(*n) > setup.len() => {
                        return Err(format!(
                            "--command {}: __setup:{n}__ names the reply of setup command {n}, but {} --setup {} \
                             given (numbered from 1)",
                            spec.name,
                            setup.len(),
                            if setup.len() == 1 { "is" } else { "are" }
                        )
                        .into());
                    }
                    ArgPart::OtherKey(i) => keys = keys.max(u64::from(*i) + 1),
                    _ => {}
                }
            }
            let range = config.keys.max - config.keys.min;
            if keys > 0 && range < keys - 1 {
                return Err(format!(
                    "--command {}: {keys} distinct keys (__key__ .. __key{keys}__) do not fit the key range \
                     {}-{}: widen --key-min/--key-max",
                    spec.name, config.keys.min, config.keys.max
                )
                .into());
            }
        }
        for (space, name) in [(Space::Field, "field"), (Space::Member, "member")] {
            let placeholder = space.placeholder();
            let used =
                config.commands.iter().flat_map(|c| c.args.iter().flatten()).any(|p| *p == ArgPart::Element(space));
            let given = match space {
                Space::Field => self.field_range.is_some() || self.field_pattern.is_some(),
                Space::Member => self.member_range.is_some() || self.member_pattern.is_some(),
            };
            if given && !used {
                return Err(format!(
                    "--{name}-range and --{name}-pattern need a --command with {placeholder}, and none has it"
                )
                .into());
            }
        }
        config.extras.setup = setup;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::super::Args;
    use super::*;

    fn plan(args: &[&str]) -> Result<Config, OptionsError> {
        let argv = ["respbench"].iter().chain(args).copied();
        Args::try_parse_from(argv).unwrap().into_config().map(|(config, _)| config)
    }

    #[test]
    fn setup_and_spaces_reach_the_plan() {
        let config = plan(&[
            "--setup",
            "SCRIPT LOAD 'return 1'",
            "--command",
            "EVALSHA __setup:1__ 0 __field__",
            "--field-range",
            "5-9",
            "--field-pattern",
            "s",
        ])
        .unwrap();
        assert_eq!(config.extras.setup[0].words, ["SCRIPT", "LOAD", "return 1"]);
        let field = config.extras.spaces.get(Space::Field);
        assert_eq!((field.min, field.max, field.sequential, field.prefix.as_str()), (5, 9, true, "field:"));
    }

    #[test]
    fn a_setup_numbered_zero_or_past_the_last_is_refused() {
        for n in ["0", "2"] {
            let err = plan(&["--setup", "PING", "--command", &format!("GET __setup:{n}__")]).unwrap_err();
            assert!(err.to_string().contains(&format!("__setup:{n}__")), "{err}");
        }
        assert!(Args::try_parse_from(["respbench", "--field-pattern", "Q"]).is_err());
    }
}
