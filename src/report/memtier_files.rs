//! memtier_benchmark's per-run files for the memtier front-end: `--hdr-file-prefix`'s
//! percentile distributions and HdrHistogram logs, and `--client-stats`' per-connection CSV.

use std::path::PathBuf;

use super::memtier_stats::MemtierView;
use crate::config::Config;
use crate::engine::{Outcome, Progress};

/// `--hdr-file-prefix`: (path, contents, what memtier says it writes) per file.
pub fn hdr_files(_view: &MemtierView<'_>, _prefix: &str, _run: usize, _o: &Outcome) -> Vec<(PathBuf, Vec<u8>, String)> {
    Vec::new()
}

/// `--client-stats`: per-connection per-second figures.
pub struct ClientStats {}

impl ClientStats {
    pub fn new(_config: &Config) -> ClientStats {
        ClientStats {}
    }

    pub fn add(&mut self, _p: &Progress) {}

    pub fn files(self, _view: &MemtierView<'_>, _prefix: &str, _run: usize, _o: &Outcome) -> Vec<(PathBuf, Vec<u8>)> {
        Vec::new()
    }
}
