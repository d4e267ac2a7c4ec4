//! One result to merge, as the caller read it.

use crate::report::document::Document;

/// One result to merge: its name (label or file stem), its document and the intervals of the
/// interval log it names (empty for a result that keeps its intervals inline).
pub struct Input {
    pub name: String,
    pub doc: Document,
    pub log: Vec<crate::report::document::interval_log::LoggedInterval>,
}
