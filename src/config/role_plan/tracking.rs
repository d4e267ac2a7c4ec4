//! A tracking role's plan: its writers are the run's connections, each SET carrying a stamp
//! (writer, sequence number, send time) so that every version of a key is told apart; its
//! cached readers are listeners beside them (`engine::tracking`).

use std::time::Duration;

use super::super::role::tracking::Tracking;
use super::super::role::{Role, RoleError};
use super::super::{ArgPart, CommandSpec, Config, KeyPattern, KeyRange, Rate, ValueSize};

/// Makes `config` run the tracking role `t`: SET over the keys `NAME:1` .. `NAME:K`, walked in
/// order by every writer, at the role's rate.
pub(super) fn apply(config: &mut Config, t: &Tracking, role: Role) -> Result<(), RoleError> {
    let name = &role.name;
    if config.server.session.protocol != crate::codec::Protocol::Resp {
        return Err(format!(
            "--role {name}: a tracking role needs a Redis-protocol server speaking RESP3 (Redis 6 or later, \
             Valkey): drop --protocol"
        )
        .into());
    }
    if config.cluster.is_some() {
        return Err(format!("--role {name}: a tracking role runs against one server: drop --cluster").into());
    }
    if config.warmup > Duration::ZERO {
        return Err(
            format!("--role {name}: --warmup cannot be used with a tracking role: every read is counted").into()
        );
    }
    let mut value = vec![ArgPart::Stamp];
    if t.size > 0 {
        value.push(ArgPart::Data);
    }
    let args = vec![vec![ArgPart::Lit(b"SET".to_vec())], vec![ArgPart::Key], value];
    config.commands = vec![CommandSpec {
        name: "SET".into(),
        args,
        reads: false,
        weight: 1,
        key_pattern: KeyPattern::Sequential,
        inline: false,
    }];
    config.sequence = None;
    config.connections = t.writers;
    config.threads = config.threads.clamp(1, t.writers);
    config.keys = KeyRange { prefix: format!("{name}:"), min: 1, max: t.keys };
    config.values = ValueSize::Fixed(t.size);
    config.rate = t.rate.map(|per_sec| Rate { per_sec, poisson: false });
    config.ramp = None;
    config.extras.roles = vec![role];
    Ok(())
}
