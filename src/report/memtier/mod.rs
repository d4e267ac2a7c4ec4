//! memtier_benchmark's own formats for the memtier front-end (its JSON, text report, per-client
//! CSVs and HDR files, key for key as memtier 2.3 writes them), all computed from one view.

pub mod clients;
pub mod config;
pub mod files;
pub mod json;
pub mod realtime;
pub mod stats;
pub mod text;
