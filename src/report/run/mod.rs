//! The run's own formats, written from a finished run (or rebuilt from its JSON result): the
//! versioned JSON, the terminal text, CSV and Markdown tables, the server's own latency; the
//! live sinks, pages and merges build on these.

pub mod failed_keys;
pub mod json;
pub mod server_latency;
pub mod tables;
pub mod text;
