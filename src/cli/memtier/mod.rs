//! The memtier_benchmark front-end (`respbench memtier ARGS`, or the binary run as
//! `memtier_benchmark`). Its plan is a typed value: `translate.rs` starts from respbench's
//! defaults (`Args::default()`) and sets the fields memtier's options mean, each through the
//! value parser respbench's own flag uses (`options.rs` is the option table), then respbench's
//! checks make the `Config`; no command line is written to be parsed again. `uri.rs` reads
//! `--uri` as memtier 2.3 does, `usage.rs` is its `--help`, `--version` and `--show-config`,
//! `mix.rs` its workload options (also hidden respbench flags, which scenario files use) and
//! what they do to the mix, `run.rs` the run with memtier's stderr lines, report and files,
//! `save.rs` the plan in respbench's flags for `--save-scenario`, `added.rs` the options memtier
//! added after 2.3 that need more than a field (its exporter, read preference), and `crash.rs` its crash
//! report.

mod added;
pub(super) mod crash;
mod draft;
mod error;
mod load;
pub(super) mod mix;
mod options;
mod retries;
pub(super) mod run;
mod save;
mod translate;
mod uri;
mod usage;
pub use error::MemtierError;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

pub use draft::Draft;
pub use translate::{Run, Translated, plan, translate};

use super::run::RunContext;
use super::usage::EXIT_USAGE;
use super::{notes, signals};

/// A memtier command line (without the program name), run: what `respbench memtier ARGS` and
/// the binary run as `memtier_benchmark` do.
pub fn main(args: &[OsString]) -> ExitCode {
    let run = match translate(args) {
        Ok(Translated::Run(run)) => run,
        Ok(Translated::Print(text)) => {
            print!("{text}");
            return ExitCode::SUCCESS;
        }
        Err(msg) => return memtier_error(&msg),
    };
    let Run { mut draft, warnings, notices, say_notes, show_config } = *run;
    // memtier's own (--uri beside --port, ...): its lines, always.
    for warning in warnings {
        eprintln!("{warning}");
    }
    // --save-scenario: the plan as the flags it sets, drafted before the checks take it.
    draft.args.scenario.given = save::given(&draft.args);
    let saved = crate::cli::scenario::save::Draft::of(&draft.args);
    let (mut config, mut output, memtier) = match draft.into_plan() {
        Ok(plan) => plan,
        Err(msg) => return memtier_error(&msg),
    };
    // memtier's stderr carries memtier's lines: respbench's notes only with --notes.
    output.notes = notes::Notes::kept(say_notes);
    // The faults of the run in memtier's words, --notes or not: they are its stderr lines.
    config.faults.voice = crate::config::Voice::Memtier;
    // --connection-stage-timeout (30 unless 0): no reply by the connect budget ends even a
    // timed run, with exit 2.
    config.faults.stage_bound =
        !memtier.given.iter().any(|(name, value)| name == "connection-stage-timeout" && value.trim() == "0");
    for notice in notices {
        output.notes.note("memtier_benchmark", notice);
    }
    if let Some(text) = show_config {
        // As memtier: the banner on stderr, the values on stdout.
        eprintln!("============== Configuration values: ==============");
        print!("{text}");
        let _ = std::io::stdout().flush();
        eprintln!("===================================================");
    }
    output.memtier_front_end = true;
    let shown: Vec<OsString> =
        std::iter::once(OsString::from("memtier_benchmark")).chain(args.iter().cloned()).collect();
    if let Err(code) = crate::cli::scenario::save::write(&shown, saved, config.seed) {
        return code;
    }
    let stop = signals::install(signals::Report::Memtier { arbitrary: output.arbitrary });
    let cx = RunContext::new(&stop);
    let (verify, verify_only) = (output.verify, output.verify_only);
    let run = || match crate::cli::around::check_outputs(&output) {
        Ok(()) => run::execute(&config, &output, &memtier, &cx),
        Err(code) => crate::cli::run::Ran::failed(code),
    };
    crate::cli::verify::around(&config, verify, verify_only, run).code
}

/// A memtier command line that cannot run: one line with "error", as memtier's own, exit 2.
fn memtier_error(msg: &str) -> ExitCode {
    eprintln!("memtier_benchmark: error: {msg} (see --help)");
    ExitCode::from(EXIT_USAGE)
}
