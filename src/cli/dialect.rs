//! Reading other tools' command lines the way guides print them: long options with one dash
//! or two, `--opt=value` or `--opt value`, short options with their value attached (`-c10`).
//! The memtier_benchmark and redis-benchmark front-ends both scan through here.

use std::ffi::OsString;

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

/// The options in order, then the words after them (`--`, or the first word that is not an
/// option, starts the rest). With `rest_allowed` false, a non-option word is an error.
pub fn scan<M>(
    tool: &str,
    table: &[(Spec, M)],
    args: &[OsString],
    rest_allowed: bool,
) -> Result<(Vec<Found>, Vec<String>), String> {
    let mut found = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].to_str().ok_or_else(|| format!("the argument {:?} is not UTF-8", args[i]))?;
        i += 1;
        if arg == "--" && rest_allowed {
            return Ok((found, words(&args[i..])?));
        }
        let Some(stripped) = arg.strip_prefix('-').filter(|s| !s.is_empty()) else {
            if rest_allowed {
                return Ok((found, words(&args[i - 1..])?));
            }
            return Err(format!("unexpected argument '{arg}': {tool} takes only options"));
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
                    _ => return Err(format!("unknown {tool} option '{arg}'")),
                }
            }
            None => return Err(format!("unknown {tool} option '{arg}'")),
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
            (false, Some(_)) => return Err(format!("{long} takes no value")),
            (false, None) => None,
        };
        found.push(Found { index, long, value });
    }
    Ok((found, Vec::new()))
}

fn words(args: &[OsString]) -> Result<Vec<String>, String> {
    args.iter()
        .map(|a| a.to_str().map(String::from).ok_or_else(|| format!("the argument {a:?} is not UTF-8")))
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

    fn scan_strs(args: &[&str], rest: bool) -> Result<Scanned, String> {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        scan("tool", TABLE, &args, rest).map(|(f, r)| (f.into_iter().map(|f| (f.index, f.value)).collect(), r))
    }

    #[test]
    fn every_spelling_of_an_option() {
        for line in [&["--clients", "5"][..], &["-clients=5"], &["--clients=5"], &["-c", "5"], &["-c5"]] {
            assert_eq!(scan_strs(line, false).unwrap().0, vec![(0, Some("5".to_string()))], "{line:?}");
        }
        assert_eq!(scan_strs(&["-q"], false).unwrap().0, vec![(1, None)]);
    }

    #[test]
    fn the_rest_starts_at_the_first_word_or_after_dashes() {
        let (found, rest) = scan_strs(&["-q", "set", "k", "-c"], true).unwrap();
        assert_eq!((found.len(), rest), (1, vec!["set".to_string(), "k".into(), "-c".into()]));
        let (_, rest) = scan_strs(&["--", "-x", ";"], true).unwrap();
        assert_eq!(rest, vec!["-x".to_string(), ";".into()]);
        assert!(scan_strs(&["set"], false).unwrap_err().contains("'set'"));
        assert!(scan_strs(&["--bogus"], false).unwrap_err().contains("'--bogus'"));
        assert!(scan_strs(&["-c"], false).unwrap_err().contains("needs a value"));
        assert!(scan_strs(&["-q=1"], false).unwrap_err().contains("takes no value"));
    }
}
