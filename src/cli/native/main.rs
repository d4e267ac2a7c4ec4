//! `respbench [OPTIONS]`: respbench's own command line, parsed once, saved as a scenario when
//! asked (`--save-scenario`), and run.

use std::ffi::OsString;
use std::process::ExitCode;

use super::run;
use crate::cli::options::Output;
use crate::cli::run::{Ran, RunContext};
use crate::cli::scenario::save::{self, Draft};
use crate::cli::usage::{parse_flags, said, usage_error};
use crate::cli::{signals, verify};
use crate::config::Config;

/// A command line of respbench's own flags (the program's name first), run.
pub fn main(args: Vec<OsString>) -> ExitCode {
    let native = match parse_flags(&args) {
        Ok(native) => native,
        Err(e) => return said(&e),
    };
    let draft = Draft::of(&native);
    let (config, output) = match native.into_config() {
        Ok(parsed) => parsed,
        Err(msg) => return usage_error(&msg),
    };
    if let Err(code) = save::write(&args, draft, config.seed) {
        return code;
    }
    let stop = signals::install_sigint();
    execute(&config, &output, &RunContext::new(&stop)).code
}

/// One benchmark of respbench's own: check, run, print, write files, read back when asked; the
/// exit code and the result document.
pub(crate) fn execute(config: &Config, output: &Output, cx: &RunContext<'_>) -> Ran {
    verify::around(config, output.verify, output.verify_only, || match crate::cli::around::check_outputs(output) {
        Ok(()) => run::execute(config, output, cx),
        Err(code) => Ran::failed(code),
    })
}
