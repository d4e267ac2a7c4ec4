//! Each side of `respbench ab`: its respbench flags (`--a "-h host1 -p 7000"`), split as a
//! shell splits words and parsed once by the native flags into a `Config`, or its scenario file
//! (`--a-file a.toml`, one measured phase). The rounds' length and warm-up are ab's own, so a
//! side's run length, repetitions and output files are refused (a file's phase length is
//! replaced).

use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

use super::error::AbError;
use crate::cli::options::Args;
use crate::cli::scenario::StepRole;
use crate::config::role::{Role, RoleKind};
use crate::config::{Config, StopAfter};

/// One side, ready to run a round.
pub struct Side {
    pub label: String,
    /// The flags (a password masked) or the file, for the outputs.
    pub source: String,
    pub config: Config,
    /// The price per hour and its currency: the scenario's `[price]`, or `--a-price`.
    pub price: Option<(f64, String)>,
}

/// `--a FLAGS` (`flag` names it in messages), running ab's `roles` as well.
pub fn from_flags(flag: &str, letter: &str, flags: &str, roles: &[Role]) -> Result<Side, AbError> {
    let words = shlex::split(flags)
        .ok_or_else(|| format!("{flag} '{flags}': unbalanced quotes (give the side's flags as one shell word)"))?;
    let argv = std::iter::once(OsString::from("respbench")).chain(words.iter().map(OsString::from));
    let argv: Vec<OsString> = argv.collect();
    let args = crate::cli::usage::parse_flags(&argv)
        .map_err(|e| format!("{flag}: {}", crate::cli::usage::clap_message(&e)))?;
    refuse_own_flags(flag, &args)?;
    let mut args = args;
    if !roles.is_empty() && !args.role.is_empty() {
        return Err(roles_twice(flag));
    }
    args.role.extend(roles.iter().cloned());
    let label = args.label.clone().unwrap_or_else(|| letter.to_string());
    let (config, _output) = args.into_config().map_err(|e| format!("{flag}: {e}"))?;
    Ok(Side { label, source: masked(&words), config, price: None })
}

/// What ab decides for both sides, refused in one side's flags.
fn refuse_own_flags(flag: &str, args: &Args) -> Result<(), AbError> {
    let run_length = [
        (args.requests.is_some(), "-n/--requests"),
        (args.duration.is_some(), "--duration"),
        (args.warmup.is_some(), "--warmup"),
        (args.runs > 1, "--runs"),
    ];
    if let Some((_, name)) = run_length.iter().find(|(given, _)| *given) {
        return Err(format!(
            "{flag} gives {name}: ab sets every round's length and warm-up (--rounds, --round-duration, --warmup after ab)"
        ).into());
    }
    // The files a run writes: the output flags that take a FILE.
    let cmd = <Args as clap::CommandFactory>::command();
    let writes = |id: &str| {
        cmd.get_arguments().any(|a| {
            a.get_id() == id
                && a.get_help_heading() == Some("Output")
                && a.get_value_names().is_some_and(|names| names.iter().any(|n| n == "FILE"))
        })
    };
    if let Some(file) = args.scenario.given.iter().find(|g| writes(&g.id)) {
        return Err(format!(
            "{flag} gives {}: ab writes one comparison (--json, --markdown, --html after ab)",
            file.flag
        )
        .into());
    }
    Ok(())
}

/// Roles given both to ab and in a side.
fn roles_twice(flag: &str) -> AbError {
    format!("{flag} gives roles and so does ab's --role: give them once (ab's --role holds for both sides)").into()
}

/// `--a-file FILE.toml`: the scenario's one measured phase, its `[price]` with it, running
/// ab's `roles` as well.
pub fn from_file(flag: &str, path: &Path, roles: &[Role]) -> Result<Side, AbError> {
    let loaded = crate::cli::scenario::load(path)?;
    let steps = loaded.compile(&crate::cli::scenario::Overrides::default())?;
    let measured: Vec<_> = steps.iter().filter(|s| s.kind == crate::cli::scenario::Kind::Run).collect();
    let others: Vec<_> = steps.iter().filter(|s| s.kind != crate::cli::scenario::Kind::Run).collect();
    let step = match (measured.as_slice(), others.first()) {
        ([one], None) => *one,
        (_, Some(other)) => {
            return Err(format!(
                "{flag} {}: phase '{}' is not a run: ab runs one measured phase per side (fill or warm up beforehand)",
                path.display(),
                other.label
            )
            .into());
        }
        (many, None) => {
            return Err(format!(
                "{flag} {}: {} measured phases: ab runs one per side (kind = \"run\", repeat 1)",
                path.display(),
                many.len()
            )
            .into());
        }
    };
    if !roles.is_empty() && !step.roles.is_empty() {
        return Err(roles_twice(flag));
    }
    let mut step = step.clone();
    step.roles.extend(roles.iter().map(|role| StepRole::Kind { role: role.clone(), text: role.name.clone() }));
    let (config, _output) = step.plan().map_err(|e| format!("{flag} {}: {e}", path.display()))?;
    let label = path.file_stem().map_or_else(|| "scenario".into(), |s| s.to_string_lossy().into_owned());
    let price = loaded.scenario.price.as_ref().map(|p| (p.get_ref().per_hour, p.get_ref().currency().to_string()));
    Ok(Side { label, source: format!("{} ({})", path.display(), step.shown()), config, price })
}

impl Side {
    /// Refuses a warm-up before every round when the side has a role whose messages (entries,
    /// items, cached reads) are each counted: a warm-up would leave some of them unmatched.
    pub fn counted_whole(&self, flag: &str, warmup: Duration) -> Result<(), AbError> {
        let counted = self.config.extras.roles.iter().find(|r| !matches!(r.kind, RoleKind::Mix(_)));
        match counted {
            Some(r) if !warmup.is_zero() => Err(format!(
                "{flag}: role {} ({}) counts every message over each round: give ab --warmup 0",
                r.name,
                r.kind.word()
            )
            .into()),
            _ => Ok(()),
        }
    }

    /// The plan of one round: `round` measured after `warmup`.
    pub fn round(&self, round: Duration, warmup: Duration) -> Config {
        let mut config = self.config.clone();
        config.stop = StopAfter::Duration(round);
        config.warmup = warmup;
        config
    }
}

/// The words as typed, the password and a URI's password masked.
fn masked(words: &[String]) -> String {
    let mut out = Vec::with_capacity(words.len());
    let mut mask = false;
    for w in words {
        let shown = if mask {
            "***".to_string()
        } else if let Some((scheme, rest)) = w.split_once("://")
            && let Some((login, host)) = rest.split_once('@')
        {
            let user = login.split_once(':').map_or("", |(u, _)| u);
            format!("{scheme}://{user}:***@{host}")
        } else {
            w.clone()
        };
        mask = matches!(w.as_str(), "-a" | "--password");
        out.push(if shown.contains(' ') { format!("'{shown}'") } else { shown });
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_split_like_a_shell_and_parsed_once() {
        let side = from_flags("--a", "A", "-p 7000 -c 4 --command 'SET k v' --label fast -a secret", &[]).unwrap();
        assert_eq!(side.label, "fast");
        assert_eq!(side.config.connections, 4);
        assert_eq!(side.source, "-p 7000 -c 4 --command 'SET k v' --label fast -a ***");
        let round = side.round(Duration::from_secs(2), Duration::from_secs(1));
        assert_eq!(round.stop, StopAfter::Duration(Duration::from_secs(2)));
        assert_eq!(round.warmup, Duration::from_secs(1));
        assert_eq!(from_flags("--b", "B", "", &[]).unwrap().label, "B");
    }

    #[test]
    fn a_sides_run_length_and_files_are_refused_by_name() {
        let e = from_flags("--b", "B", "--duration 10s", &[]).err().unwrap();
        assert!(e.starts_with("--b gives --duration: ab sets"), "{e}");
        assert!(from_flags("--a", "A", "--json x.json", &[]).err().unwrap().contains("--json"));
        assert!(from_flags("--a", "A", "-p 'x", &[]).err().unwrap().contains("unbalanced quotes"));
        assert!(from_flags("--a", "A", "-c none", &[]).err().unwrap().starts_with("--a: "));
        assert_eq!(masked(&["-u".into(), "redis://bob:pw@h:1".into()]), "-u redis://bob:***@h:1");
    }
}
