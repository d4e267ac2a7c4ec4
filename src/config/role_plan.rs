//! A run's roles made into its plan: what `--role` changes in the `Config` the rest of the
//! command line built (`config::role` reads the roles; this file applies them).

use std::time::Duration;

use super::role::queue::{Pop, QueueRole, StreamRole};
use super::role::{Listen, PubSub, Role, RoleError, RoleKind};

mod groups;
mod mix;
mod rate;
mod tracking;
use super::{ArgPart, CommandSpec, Config, KeyPattern, KeyRange, Rate, StopAfter, ValueSize};
pub use groups::{Group, Pacing};
pub use mix::mix_role;
pub use rate::set_role_rate;

/// Makes `config` run `roles`: a pub/sub role's publishers become the run's connections, its
/// PUBLISH (SPUBLISH for `mode=ssubscribe`) the mix, its channels the key range, walked in
/// order by every publisher, and its rate the run's; a tracking role's writers likewise, with
/// SET (`role_plan::tracking`). The command line's own mix does not run, unless a mix role
/// (`NAME:mix`) names it; a mix role built elsewhere ([`mix_role`]) runs its own. Several roles are
/// client groups of the one run, each planned as it would be alone (`role_plan::groups`).
pub fn apply(config: &mut Config, roles: Vec<Role>) -> Result<(), RoleError> {
    if let StopAfter::Duration(run) = config.stop
        && let Some(late) = roles.iter().find(|r| r.start >= run)
    {
        return Err(format!(
            "--role {}: start={:?} is not before the run's end (--duration {:?}): start it earlier or run longer",
            late.name, late.start, run
        )
        .into());
    }
    if roles.len() > 1 {
        return groups::apply(config, roles, plan);
    }
    match roles.into_iter().next() {
        Some(role) => plan(config, role),
        None => Ok(()),
    }
}

/// Makes `config` run the one role `role`.
fn plan(config: &mut Config, role: Role) -> Result<(), RoleError> {
    match &role.kind {
        RoleKind::PubSub(p) => pubsub(config, &p.clone(), role),
        RoleKind::Tracking(t) => tracking::apply(config, &t.clone(), role),
        RoleKind::Stream(s) => stream(config, &s.clone(), role),
        RoleKind::Queue(q) => queue(config, &q.clone(), role),
        RoleKind::Mix(_) => mix::plan(config, role),
    }
}

/// What every role of the run's own connections needs: a Redis-protocol server, and no
/// warmup (every message is counted).
fn runnable(config: &Config, role: &Role, what: &str) -> Result<(), RoleError> {
    if config.server.session.protocol != crate::codec::Protocol::Resp {
        return Err(
            format!("--role {}: a {what} role needs a Redis-protocol server (drop --protocol)", role.name).into()
        );
    }
    if config.warmup > Duration::ZERO {
        return Err(format!(
            "--role {}: --warmup cannot be used with a {what} role: every message is counted",
            role.name
        )
        .into());
    }
    Ok(())
}

/// A stream role's plan: its producers XADD stamped entries to `NAME:1`.
fn stream(config: &mut Config, s: &StreamRole, role: Role) -> Result<(), RoleError> {
    runnable(config, &role, "stream")?;
    let args = vec![lit(b"XADD"), vec![ArgPart::Key], lit(b"*"), lit(b"stamp"), stamped(s.size)];
    produce(config, (args, "XADD"), (s.producers, s.rate, s.size), format!("{}:", role.name));
    config.extras.roles = vec![role];
    Ok(())
}

/// A queue role's plan: its producers push stamped items where its workers pop them.
fn queue(config: &mut Config, q: &QueueRole, role: Role) -> Result<(), RoleError> {
    runnable(config, &role, "queue")?;
    let (push, prefix) = match q.pop {
        Pop::Bzpopmin => ("ZADD", format!("{}:", role.name)),
        Pop::Blpop => ("RPUSH", format!("{}:", role.name)),
        Pop::Brpop => ("LPUSH", format!("{}:", role.name)),
        // The list of taken items shares the queue's slot (`engine::queue`).
        Pop::Blmove => ("LPUSH", format!("{{{}}}:", role.name)),
    };
    let mut args = vec![lit(push.as_bytes()), vec![ArgPart::Key]];
    if q.pop == Pop::Bzpopmin {
        // One score: items are taken in the members' order, the stamp's.
        args.push(lit(b"0"));
    }
    args.push(stamped(q.size));
    produce(config, (args, push), (q.producers, q.rate, q.size), prefix);
    config.extras.roles = vec![role];
    Ok(())
}

/// A pub/sub role's plan (see [`apply`]).
fn pubsub(config: &mut Config, p: &PubSub, role: Role) -> Result<(), RoleError> {
    runnable(config, &role, "pub/sub")?;
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

fn lit(word: &[u8]) -> Vec<ArgPart> {
    vec![ArgPart::Lit(word.to_vec())]
}

/// The argument that carries the stamp, and `size` bytes of filler after it.
fn stamped(size: usize) -> Vec<ArgPart> {
    let mut arg = vec![ArgPart::Stamp];
    if size > 0 {
        arg.push(ArgPart::Data);
    }
    arg
}

/// A stream or queue role's producers made the run's connections: `command` the mix, sent to
/// one key (`prefix` then 1), at `rate` per second or closed loop.
fn produce(
    config: &mut Config,
    (args, name): (Vec<Vec<ArgPart>>, &str),
    (producers, rate, size): (usize, Option<f64>, usize),
    prefix: String,
) {
    config.commands = vec![CommandSpec {
        name: name.to_string(),
        args,
        reads: false,
        weight: 1,
        key_pattern: KeyPattern::Sequential,
        inline: false,
    }];
    config.sequence = None;
    config.connections = producers;
    config.threads = config.threads.clamp(1, producers);
    config.keys = KeyRange { prefix, min: 1, max: 1 };
    config.values = ValueSize::Fixed(size);
    config.rate = rate.map(|per_sec| Rate { per_sec, poisson: false });
    config.ramp = None;
}
