//! Reading other tools' command lines the way guides print them: long options with one dash
//! or two, `--opt=value` or `--opt value`, short options with their value attached (`-c10`).
//! The memtier_benchmark and redis-benchmark front-ends both scan through here.

use std::ffi::OsString;

message_error!(
    /// A command line another tool's words cannot be read from (an option without its value,
    /// a word that is not text); the message names it.
    ScanError
);

/// One option a tool accepts: its names (the first is the canonical long name) and whether
/// it takes a value.
pub struct Spec {
    pub names: &'static [&'static str],
    pub takes_value: bool,
}

/// An option found on the command line.
pub struct Found {
    /// Index of its [`Spec`] in the table.
    pub index: usize,
    /// The canonical name with two dashes, for messages.
    pub long: String,
    pub value: Option<String>,
}

/// What a tool does with the words of its command line that are not options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// They are its command (redis-benchmark): `--`, or the first word that is not an
    /// option, starts it, and the options end there.
    Command,
    /// They are set aside and the options go on (memtier_benchmark: getopt moves them to the
    /// end, and the tool never reads them); after `--`, every word is set aside.
    Ignored,
}

/// The options in order, and the words that are not options (the command, or the words set
/// aside), as `rest` says.
pub fn scan<M>(
    tool: &str,
    table: &[(Spec, M)],
    args: &[OsString],
    rest: Rest,
) -> Result<(Vec<Found>, Vec<String>), ScanError> {
    let mut found = Vec::new();
    let mut aside = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_str().ok_or_else(|| format!("the argument {:?} is not UTF-8", args[i]))?;
        i += 1;
        if arg == "--" {
            aside.extend(words(&args[i..])?);
            return Ok((found, aside));
        }
        let Some(stripped) = arg.strip_prefix('-').filter(|s| !s.is_empty()) else {
            if rest == Rest::Command {
                return Ok((found, words(&args[i - 1..])?));
            }
            aside.push(arg.to_string());
            continue;
        };
        let stripped = stripped.strip_prefix('-').unwrap_or(stripped);
        let (name, attached) = match stripped.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (stripped, None),
        };
        let lookup = |name: &str| table.iter().position(|(s, _)| s.names.contains(&name));
        // A short option with its value attached (`-c10`), as getopt allows.
        let (index, attached) = match lookup(name) {
            Some(index) => (index, attached),
            None if attached.is_none() && !arg.starts_with("--") && name.len() > 1 => {
                let (short, rest) = name.split_at(1);
                match lookup(short) {
                    Some(index) if table[index].0.takes_value => (index, Some(rest.to_string())),
                    _ => return Err(format!("unknown {tool} option '{arg}'").into()),
                }
            }
            None => return Err(format!("unknown {tool} option '{arg}'").into()),
        };
        let spec = &table[index].0;
        let long =
            if spec.names[0].len() == 1 { format!("-{}", spec.names[0]) } else { format!("--{}", spec.names[0]) };
        let value = match (spec.takes_value, attached) {
            (true, Some(v)) => Some(v),
            (true, None) => {
                let v = args.get(i).and_then(|v| v.to_str()).ok_or_else(|| format!("{long} needs a value"))?;
                i += 1;
                Some(v.to_string())
            }
            (false, Some(_)) => return Err(format!("{long} takes no value").into()),
            (false, None) => None,
        };
        found.push(Found { index, long, value });
    }
    Ok((found, aside))
}

fn words(args: &[OsString]) -> Result<Vec<String>, ScanError> {
    args.iter()
        .map(|a| a.to_str().map(String::from).ok_or_else(|| ScanError(format!("the argument {a:?} is not UTF-8"))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[(Spec, ())] = &[
        (Spec { names: &["clients", "c"], takes_value: true }, ()),
        (Spec { names: &["quiet", "q"], takes_value: false }, ()),
    ];

    type Scanned = (Vec<(usize, Option<String>)>, Vec<String>);

    fn scan_strs(args: &[&str], rest: Rest) -> Result<Scanned, ScanError> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        scan("tool", TABLE, &args, rest).map(|(f, r)| (f.into_iter().map(|f| (f.index, f.value)).collect(), r))
    }

    #[test]
    fn every_spelling_of_an_option() {
        for line in [&["--clients", "5"][..], &["-clients=5"], &["--clients=5"], &["-c", "5"], &["-c5"]] {
            assert_eq!(scan_strs(line, Rest::Ignored).unwrap().0, vec![(0, Some("5".to_string()))], "{line:?}");
        }
        assert_eq!(scan_strs(&["-q"], Rest::Ignored).unwrap().0, vec![(1, None)]);
    }

    #[test]
    fn the_rest_starts_at_the_first_word_or_after_dashes() {
        let (found, rest) = scan_strs(&["-q", "set", "k", "-c"], Rest::Command).unwrap();
        assert_eq!((found.len(), rest), (1, vec!["set".to_string(), "k".into(), "-c".into()]));
        let (_, rest) = scan_strs(&["--", "-x", ";"], Rest::Command).unwrap();
        assert_eq!(rest, vec!["-x".to_string(), ";".into()]);
        assert!(scan_strs(&["--bogus"], Rest::Ignored).unwrap_err().contains("'--bogus'"));
        assert!(scan_strs(&["-c"], Rest::Ignored).unwrap_err().contains("needs a value"));
        assert!(scan_strs(&["-q=1"], Rest::Ignored).unwrap_err().contains("takes no value"));
    }

    #[test]
    fn words_that_are_not_options_are_set_aside_as_getopt_permutes_them() {
        let (found, aside) = scan_strs(&["set", "-c", "5", "k", "-q", "--", "-c", "9"], Rest::Ignored).unwrap();
        assert_eq!(found, vec![(0, Some("5".to_string())), (1, None)]);
        assert_eq!(aside, vec!["set".to_string(), "k".into(), "-c".into(), "9".into()]);
    }
}
