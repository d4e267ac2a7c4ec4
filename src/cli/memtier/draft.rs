//! The plan a memtier command line fills: respbench's flags as typed values, and memtier's own
//! outputs beside them.

use std::path::PathBuf;

use super::error::MemtierError;
use crate::cli::options::{Args, Output};
use crate::config::Config;
use crate::report::memtier::stats::MemtierOutput;

/// The plan a memtier command line builds, before respbench checks it: respbench's flags as
/// typed values, and memtier's output options that respbench's flags do not have.
#[derive(Debug)]
pub struct Draft {
    pub(super) args: Args,
    /// `--hide-histogram`, `--print-all-runs`, `--command-stats-breakdown`, `--hdr-file-prefix`,
    /// `--client-stats`, and every option as given (for memtier's JSON).
    pub(super) output: MemtierOutput,
    /// `--json-out-file`.
    pub(super) json: Option<PathBuf>,
}

impl Draft {
    /// respbench's checks over the plan, and memtier's outputs beside it: the `Config`, the
    /// `Output` and memtier's own outputs a run takes.
    pub(crate) fn into_plan(self) -> Result<(Config, Output, MemtierOutput), MemtierError> {
        let Draft { args, output: memtier, json } = self;
        let client_stats = memtier.client_stats.is_some();
        let (mut config, mut output) = args.into_config()?;
        config.extras.client_stats = client_stats;
        output.memtier_json = json;
        // `%t` in --json-out-file too (the other outputs' are named already; naming is idempotent).
        output.name_for_shard(config.extras.shard.as_ref());
        Ok((config, output, memtier))
    }
}
