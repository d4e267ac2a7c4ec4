//! respbench: a load generator and benchmark for Redis-protocol servers.
//!
//! How a run flows, module by module:
//! - [`cli`] turns a command line into a [`config::Config`], the validated plan.
//! - [`workload`] compiles the command mix into [`resp`] templates and gives each connection
//!   its own request stream (keys, values, ratio).
//! - [`engine`] connects through [`net`], starts worker threads together, and each worker's
//!   event loop keeps its connections' pipelines full as their pacer allows, scanning replies
//!   in place with [`resp::scan`] and recording latency into per-interval [`stats`] windows.
//! - The collector merges those windows into a timeline and totals: an [`engine::Outcome`].
//! - [`report`] renders the outcome: the text table, one summary line, JSON.

#![deny(unsafe_code)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod cli;
pub mod codec;
pub mod config;
pub mod engine;
pub mod net;
pub mod report;
pub mod resp;
pub mod stats;
pub mod workload;
