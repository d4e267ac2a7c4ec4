//! A mix role's plan: the per-role part of a plan built elsewhere (a scenario file's role, a
//! Redis specification's client configuration, the command line's own mix), carried by the
//! role and written back over the run's plan when the role is planned.

use super::super::Config;
use super::super::role::mix::MixRole;
use super::super::role::{Role, RoleError, RoleKind};

/// The mix role `name` running what `plan` runs: its connections, threads, pipeline, commands,
/// key range, value sizes and rate (closed loop without one). The rest of `plan` (server,
/// length, outputs) is the run's, not the role's, and is not read. Refuses what one client
/// group of a run cannot hold: a command sequence, a transaction, MONITOR replay, SCAN
/// following, imported or dataset values, sizes that follow the key, or a ramp.
pub fn mix_role(name: &str, plan: &Config) -> Result<Role, RoleError> {
    let e = &plan.extras;
    let refused = [
        (plan.sequence.is_some(), "a command sequence"),
        (e.transaction, "--transaction"),
        (e.monitor.is_some(), "MONITOR replay"),
        (e.scan.is_some(), "SCAN following"),
        (e.import.is_some(), "--data-import"),
        (e.dataset.is_some(), "--dataset"),
        (e.sizes_by_key, "--data-size-pattern"),
        (plan.ramp.is_some(), "a ramp"),
        (!e.roles.is_empty(), "roles of its own"),
    ];
    if let Some((_, what)) = refused.iter().find(|(given, _)| *given) {
        return Err(format!("--role {name}: a mix role cannot hold {what}: run it on its own").into());
    }
    if plan.connections == 0 || plan.commands.is_empty() {
        return Err(format!("--role {name} names nothing to do: give it connections and commands").into());
    }
    let mix = MixRole {
        connections: plan.connections,
        threads: plan.threads.max(1),
        pipeline: plan.pipeline.max(1),
        commands: plan.commands.clone(),
        keys: plan.keys.clone(),
        values: plan.values.clone(),
        rate: plan.rate,
    };
    Ok(Role::new(name, RoleKind::Mix(Some(Box::new(mix)))))
}

/// Makes `config` run mix role `role`: its carried mix over the command line's, or (`None`)
/// the command line's own mix, named.
pub(super) fn plan(config: &mut Config, role: Role) -> Result<(), RoleError> {
    let RoleKind::Mix(carried) = &role.kind else { unreachable!("planned as a mix role only") };
    let role = match carried {
        Some(m) => {
            let m = m.as_ref();
            config.connections = m.connections;
            config.threads = m.threads;
            config.pipeline = m.pipeline;
            config.commands = m.commands.clone();
            config.sequence = None;
            config.keys = m.keys.clone();
            config.values = m.values.clone();
            config.rate = m.rate;
            config.ramp = None;
            role
        }
        None => mix_role(&role.name, config)?,
    };
    config.extras.roles = vec![role];
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::super::role::parse;
    use super::*;

    #[test]
    fn the_command_line_mix_named_is_the_run_it_always_was() {
        let mut config = super::super::groups::base();
        let alone = config.clone();
        super::super::apply(&mut config, vec![parse("cache:mix").unwrap()]).unwrap();
        let RoleKind::Mix(Some(m)) = &config.extras.roles[0].kind else { panic!("a planned mix role") };
        assert_eq!((m.connections, m.pipeline, m.keys.clone()), (50, 1, alone.keys.clone()));
        config.extras.roles.clear();
        assert_eq!(config, alone);
    }

    #[test]
    fn a_mix_role_refuses_what_a_group_cannot_hold() {
        let e = parse("cache:mix:connections=3").unwrap_err().to_string();
        assert!(e.starts_with("--role cache:mix takes no settings"), "{e}");
        let mut plan = super::super::groups::base();
        plan.extras.transaction = true;
        let e = mix_role("cache", &plan).unwrap_err().to_string();
        assert_eq!(e, "--role cache: a mix role cannot hold --transaction: run it on its own");
    }
}
