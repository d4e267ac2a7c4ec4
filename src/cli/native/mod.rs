//! respbench's own command line: parsed into the options, run, and reported.

pub mod main;
pub mod run;
