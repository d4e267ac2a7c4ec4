//! The command line as clap sees it, whole: respbench's own flags with every subcommand
//! beneath them. The manual pages and the shell completions are generated from it
//! (`examples/manual.rs`, run by `make man completions`); the program itself parses each
//! subcommand with its own parser and never builds this tree.

use clap::{Arg, Command, CommandFactory};

use super::ab::AbArgs;
use super::capacity::CapacityArgs;
use super::fill::FillArgs;
use super::merge::MergeArgs;
use super::options::Args;
use super::recover::RecoverArgs;
use super::results::{CompareArgs, ReportArgs};
use super::scenario::run_file::RunArgs;
use super::spec::SpecArgs;

/// The subcommands parsed by clap, each under the word that selects it.
fn subcommands() -> Vec<Command> {
    vec![
        AbArgs::command().name("ab"),
        CapacityArgs::command().name("capacity"),
        FillArgs::command().name("fill"),
        ReportArgs::command().name("report"),
        CompareArgs::command().name("compare"),
        MergeArgs::command().name("merge"),
        RecoverArgs::command().name("recover"),
        RunArgs::command().name("run"),
        SpecArgs::command().name("spec"),
    ]
}

/// A front-end that takes another tool's command line, which clap does not parse: its words
/// follow it as they are.
fn front_end(name: &'static str, about: &'static str) -> Command {
    Command::new(name)
        .about(about)
        .disable_help_flag(true)
        .arg(Arg::new("args").value_name("ARGS").num_args(0..).trailing_var_arg(true).allow_hyphen_values(true))
}

/// `respbench` with its flags and every subcommand, for the manual and the completions; each
/// subcommand's page is respbench-NAME(1).
pub fn command() -> Command {
    let front_ends = [
        front_end(
            "memtier",
            "Runs a memtier_benchmark command line (also: the binary run as memtier_benchmark); see \
             `respbench memtier --help`.",
        ),
        front_end(
            "redis-benchmark",
            "Runs a redis-benchmark command line (also: the binary run as redis-benchmark or \
             valkey-benchmark); see `respbench redis-benchmark --help`.",
        ),
        front_end("valkey-benchmark", "Runs a valkey-benchmark command line, as redis-benchmark."),
    ];
    let subcommands = subcommands().into_iter().chain(front_ends).map(|sub| {
        let name = sub.get_name().to_string();
        sub.bin_name(format!("respbench {name}")).display_name(format!("respbench-{name}"))
    });
    Args::command()
        .bin_name("respbench")
        .subcommands(subcommands)
        .args_conflicts_with_subcommands(true)
        .disable_help_subcommand(true)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_whole_command_line_is_consistent() {
        super::command().debug_assert();
    }
}
