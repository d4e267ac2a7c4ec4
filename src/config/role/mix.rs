//! The mix role: a plain command mix with its own clients, as a run without roles has, beside
//! other roles of the same run. `--role NAME:mix` names the command line's own mix (its
//! `--command`s or `--ratio`, `-c`, `-t`, `--pipeline`, `--rate`, key range and value size) as
//! a role; scenario files and the Redis specifications' client configurations give several,
//! each planned elsewhere and carried here (`config::role_plan::mix_role`).

use super::super::{CommandSpec, KeyRange, Rate, ValueSize};
use super::error::RoleError;

/// What a mix role's connections do: the per-role part of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct MixRole {
    pub connections: usize,
    /// The worker threads the role adds to the run (the run's workers drive every role's
    /// connections).
    pub threads: usize,
    /// Requests in flight per connection.
    pub pipeline: usize,
    pub commands: Vec<CommandSpec>,
    pub keys: KeyRange,
    pub values: ValueSize,
    /// `None`: closed loop.
    pub rate: Option<Rate>,
}

/// `NAME:mix`: the settings a mix role takes on the command line, none (its mix is the
/// command line's own). `None`: the command line's mix, filled in when the run is planned.
pub fn parse(name: &str, settings: &str) -> Result<Option<Box<MixRole>>, RoleError> {
    if settings.is_empty() {
        return Ok(None);
    }
    Err(format!(
        "--role {name}:mix takes no settings: its mix is the command line's own (--command, -c, -t, --pipeline, \
         --rate, --key-*, -d); drop ':{settings}'"
    )
    .into())
}
