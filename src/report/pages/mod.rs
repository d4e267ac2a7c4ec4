//! HTML pages: self-contained files (styles and SVG charts inline, no scripts) for a run, a
//! comparison of runs, and a scenario's phases, all built from results alone.

pub mod chart;
pub mod html;
pub mod scenario_compare;
pub mod scenario_html;
