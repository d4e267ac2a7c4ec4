//! The memtier_benchmark front-end (`respbench memtier ARGS`, or the binary run as
//! `memtier_benchmark`): its option table and translation (`translate.rs`), `--uri` as memtier
//! reads it (`uri.rs`), its `--help`, `--version` and `--show-config` (`usage.rs`), its workload
//! options and what they do to the mix (`mix.rs`), the run with its stderr lines, report and
//! files (`run.rs`), and its crash report (`crash.rs`).

pub(super) mod crash;
pub(super) mod mix;
pub(super) mod out;
pub(super) mod run;
mod translate;
mod uri;
mod usage;

pub use translate::{Translated, plan, translate};
