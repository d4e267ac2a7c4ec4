//! A run's roles made into its plan: what `--role` changes in the `Config` the rest of the
//! command line built (`config::role` reads the roles; this file applies them).

use std::time::Duration;

use super::role::{Listen, PubSub, Role, RoleError, RoleKind};

mod tracking;
use super::{ArgPart, CommandSpec, Config, KeyPattern, KeyRange, Rate, ValueSize};

/// Makes `config` run `roles`: a pub/sub role's publishers become the run's connections, its
/// PUBLISH (SPUBLISH for `mode=ssubscribe`) the mix, its channels the key range, walked in
/// order by every publisher, and its rate the run's; a tracking role's writers likewise, with
/// SET (`role_plan::tracking`). The command line's own mix does not run.
pub fn apply(config: &mut Config, roles: Vec<Role>) -> Result<(), RoleError> {
    if roles.len() > 1 {
        let names: Vec<&str> = roles.iter().map(|r| r.name.as_str()).collect();
        return Err(format!(
            "--role {}: one role per run for now: run the others as runs of their own",
            names.join(", ")
        )
        .into());
    }
    let Some(role) = roles.into_iter().next() else { return Ok(()) };
    match &role.kind {
        RoleKind::PubSub(p) => pubsub(config, &p.clone(), role),
        RoleKind::Tracking(t) => tracking::apply(config, &t.clone(), role),
    }
}

/// A pub/sub role's plan (see [`apply`]).
fn pubsub(config: &mut Config, p: &PubSub, role: Role) -> Result<(), RoleError> {
    if config.server.session.protocol != crate::codec::Protocol::Resp {
        return Err(
            format!("--role {}: a pub/sub role needs a Redis-protocol server (drop --protocol)", role.name).into()
        );
    }
    if config.warmup > Duration::ZERO {
        return Err(format!(
            "--role {}: --warmup cannot be used with a pub/sub role: every message is counted",
            role.name
        )
        .into());
    }
    let publish: &[u8] = if p.listen == Listen::Ssubscribe { b"SPUBLISH" } else { b"PUBLISH" };
    let mut payload = vec![ArgPart::Stamp];
    if p.size > 0 {
        payload.push(ArgPart::Data);
    }
    let args = vec![vec![ArgPart::Lit(publish.to_vec())], vec![ArgPart::Key], payload];
    let name = String::from_utf8_lossy(publish).into_owned();
    config.commands =
        vec![CommandSpec { name, args, reads: false, weight: 1, key_pattern: KeyPattern::Sequential, inline: false }];
    config.sequence = None;
    config.connections = p.publishers;
    config.threads = config.threads.clamp(1, p.publishers);
    config.keys = KeyRange { prefix: format!("{}:", role.name), min: 1, max: p.channels };
    config.values = ValueSize::Fixed(p.size);
    config.rate = p.rate.map(|per_sec| Rate { per_sec, poisson: false });
    config.ramp = None;
    config.extras.roles = vec![role];
    Ok(())
}
