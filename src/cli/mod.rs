//! Command lines in, exit codes out: which front-end or subcommand takes a command line (one
//! table), and the modules. Each parses its flags into a [`Config`](crate::config::Config),
//! runs it, prints and writes the reports, and maps every failure to one line and a code.

mod ab;
mod around;
mod capacity;
mod dialect;
mod exit;
mod files;
mod fill;
pub mod manual;
pub mod memtier;
mod merge;
mod native;
mod notes;
mod options;
pub mod parse;
mod recover;
pub mod redis_benchmark;
mod results;
mod run;
pub mod scenario;
mod secrets;
mod shard;
// unsafe: sigaction and the async-signal-safe crash report; each block says why it is sound.
#[allow(unsafe_code)]
mod signals;
mod spec;
mod usage;
mod verify;

use std::ffi::{OsStr, OsString};
use std::process::ExitCode;

/// How a command line names its entry: by the program's name (a link named so), or by the word
/// after `respbench`.
#[derive(Clone, Copy, PartialEq)]
enum Named {
    Program,
    Word,
}

/// An entry's main: the name it is known by and the command line after that name.
type Main = fn(&str, &[OsString]) -> ExitCode;

/// Every front-end and subcommand, the first that a command line names taking it; a command line
/// none names is respbench's own flags.
const ENTRIES: &[(&str, Named, Main)] = &[
    ("memtier_benchmark", Named::Program, |_, args| memtier::main(args)),
    ("memtier", Named::Word, |_, args| memtier::main(args)),
    ("redis-benchmark", Named::Program, redis_benchmark::main),
    ("valkey-benchmark", Named::Program, redis_benchmark::main),
    ("redis-benchmark", Named::Word, redis_benchmark::main),
    ("valkey-benchmark", Named::Word, redis_benchmark::main),
    ("ab", Named::Word, |name, args| ab::main(subcommand(name, args))),
    ("capacity", Named::Word, |name, args| capacity::main(subcommand(name, args))),
    ("fill", Named::Word, |name, args| fill::main(subcommand(name, args))),
    ("report", Named::Word, |name, args| results::report_main(subcommand(name, args))),
    ("compare", Named::Word, |name, args| results::compare_main(subcommand(name, args))),
    ("merge", Named::Word, |name, args| merge::main(subcommand(name, args))),
    ("recover", Named::Word, |name, args| recover::main(subcommand(name, args))),
    ("run", Named::Word, |name, args| scenario::run_file::main(subcommand(name, args))),
    ("spec", Named::Word, |name, args| spec::main(subcommand(name, args))),
];

/// The whole program: what `main` calls.
pub fn main(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let args: Vec<OsString> = args.into_iter().collect();
    crate::stats::map_large_blocks();
    signals::ignore_file_size_signal();
    let program = args.first().and_then(|a| std::path::Path::new(a).file_name());
    let word = args.get(1).map(OsString::as_os_str);
    for (name, named, main) in ENTRIES {
        let (given, rest) = match named {
            Named::Program => (program, 1),
            Named::Word => (word, 2),
        };
        if given == Some(OsStr::new(name)) {
            return main(name, &args[rest.min(args.len())..]);
        }
    }
    native::main::main(args)
}

/// A subcommand's command line for clap: `respbench NAME` as the program, then its flags.
fn subcommand(name: &str, args: &[OsString]) -> Vec<OsString> {
    std::iter::once(OsString::from(format!("respbench {name}"))).chain(args.iter().cloned()).collect()
}
