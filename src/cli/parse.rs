//! The value parsers, as the command line's modules have always named them (`cli::parse`): they
//! live in [`crate::config::parse`], which the scenario loader reads values with too.

pub use crate::config::parse::*;
