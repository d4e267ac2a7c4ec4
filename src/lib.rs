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

/// Declares a module's error type: one sentence naming the value and what was expected, said
/// to the user as it is. It is built from the `String` its parts format (so `?` lifts one),
/// turns back into one where a caller adds context, and reads as its message.
macro_rules! message_error {
    // `NAME from A, B`: also lifts the errors of the modules below it (`?` keeps their message).
    ($(#[$doc:meta])* $name:ident from $($below:ty),+ $(,)?) => {
        message_error!($(#[$doc])* $name);
        $(
            impl From<$below> for $name {
                fn from(error: $below) -> $name {
                    $name(error.to_string())
                }
            }
        )+
    };
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
        #[error("{0}")]
        pub struct $name(pub String);

        impl From<String> for $name {
            fn from(message: String) -> $name {
                $name(message)
            }
        }

        impl From<&str> for $name {
            fn from(message: &str) -> $name {
                $name(message.to_string())
            }
        }

        impl From<$name> for String {
            fn from(error: $name) -> String {
                error.0
            }
        }

        /// The error reads as its message (`err.contains(..)`, `err == "..."`).
        impl std::ops::Deref for $name {
            type Target = str;

            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }
    };
}

pub mod cli;
pub mod codec;
pub mod config;
pub mod engine;
pub mod net;
pub mod report;
pub mod resp;
pub mod stats;
pub mod workload;
