//! A phase's roles (`[[phase.role]]`): a kind role read as `--role NAME:KIND:SETTINGS` reads
//! it, or a mix role whose run keys compile as a phase's do, then plan, as its own step would,
//! to the plan its role carries (`config::role_plan::mix_role`). A role's mistake is one line
//! at its `name`, naming the role and the fix.

use super::compile::Compiler;
use super::error::ScenarioError;
use super::plan::{PlanError, Planned, Setting, Step, StepRole, Tool};
use super::schema::{Kind, Phase, PhaseRole};
use super::{kind_name, locate};
use crate::config::role::Role;

/// The keys only a mix role takes, by name, and whether the role gives each.
fn mix_keys(r: &PhaseRole) -> [(&'static str, bool); 8] {
    [
        ("mix", r.mix.is_some()),
        ("keyspace", r.keyspace.is_some()),
        ("values", r.values.is_some()),
        ("connections", r.connections.is_some()),
        ("threads", r.threads.is_some()),
        ("pipeline", r.pipeline.is_some()),
        ("rate", r.rate.is_some()),
        ("arrival", r.arrival.is_some()),
    ]
}

impl Compiler<'_> {
    /// The phase's roles; `target` is every step's connection settings.
    pub(super) fn roles(&self, kind: Kind, target: &[Setting]) -> Result<Vec<StepRole>, ScenarioError> {
        let roles = &self.phase.roles;
        if roles.is_empty() {
            return Ok(Vec::new());
        }
        if matches!(kind, Kind::Fill | Kind::Steps) {
            let msg = format!("a {} phase cannot hold roles: give them to a run or capacity phase", kind_name(kind));
            return Err(self.at_role(&roles[0], &msg).into());
        }
        roles.iter().map(|r| self.role(r, target)).collect()
    }

    fn role(&self, r: &PhaseRole, target: &[Setting]) -> Result<StepRole, ScenarioError> {
        let name = &r.name;
        if r.kind != "mix" {
            if let Some((key, _)) = mix_keys(r).iter().find(|(_, given)| *given) {
                let msg = format!(
                    "role '{name}': '{key}' is a mix role's key: give a {} role its settings in 'settings' \
                     (as --role {name}:{}:... takes them)",
                    r.kind, r.kind
                );
                return Err(self.at_role(r, &msg).into());
            }
            let mut text = format!("{name}:{}:{}", r.kind, r.settings.as_deref().unwrap_or(""));
            if let Some(start) = &r.start {
                text.push_str(&format!(",start={start}"));
            }
            let role =
                crate::config::role::parse(&text).map_err(|e| self.at_role(r, &format!("role '{name}': {e}")))?;
            return Ok(StepRole::Kind { role, text });
        }
        if r.settings.is_some() {
            let msg = format!(
                "role '{name}': a mix role takes its run keys (mix, keyspace, values, connections, threads, \
                 pipeline, rate, arrival), not 'settings'"
            );
            return Err(self.at_role(r, &msg).into());
        }
        if r.mix.is_none() && r.keyspace.is_none() {
            let msg = format!("role '{name}' names nothing to do: give it mix = \"NAME\" (from [mixes])");
            return Err(self.at_role(r, &msg).into());
        }
        let own = Phase {
            mix: r.mix.clone(),
            keyspace: r.keyspace.clone(),
            values: r.values.clone(),
            connections: r.connections,
            threads: r.threads,
            pipeline: r.pipeline,
            rate: r.rate,
            arrival: r.arrival.clone(),
            ..Phase::default()
        };
        let compiled = Compiler { loaded: self.loaded, phase: &own, scale: self.scale }.phase(Kind::Run)?;
        let settings = compiled.into_iter().flat_map(|(_, _, s)| s).collect();
        let start = match &r.start {
            Some(v) => crate::config::role::start_value(name, v)
                .map_err(|e| self.at_role(r, &format!("role '{name}': {e}")))?,
            None => std::time::Duration::ZERO,
        };
        Ok(StepRole::Mix { name: name.clone(), target: target.to_vec(), settings, start })
    }

    /// `msg` at the role's `name` line.
    fn at_role(&self, r: &PhaseRole, msg: &str) -> String {
        let text = &self.loaded.text;
        let at = [format!("name = \"{}\"", r.name), format!("name=\"{}\"", r.name)].iter().find_map(|n| text.find(n));
        match at {
            Some(offset) => locate(&self.loaded.path, text, offset, msg),
            None => self.here(msg),
        }
    }
}

impl Step {
    /// The step's roles as the run takes them: a mix role's settings planned, as its own
    /// step's would be, to the plan the role carries.
    pub(super) fn roles_planned(&self) -> Result<Vec<Role>, PlanError> {
        let whole = |msg: String| PlanError { key: None, msg };
        let mut out = Vec::with_capacity(self.roles.len());
        for role in &self.roles {
            match role {
                StepRole::Kind { role, .. } => out.push(role.clone()),
                StepRole::Mix { name, target, settings, start } => {
                    let own = Step {
                        tool: Tool::Native,
                        settings: target.iter().chain(settings).cloned().collect(),
                        roles: Vec::new(),
                        label: name.clone(),
                        ..self.clone()
                    };
                    let Ok(Planned::Native(args)) = own.planned() else {
                        let msg = own.planned().err().map_or_else(String::new, |e| e.msg);
                        return Err(whole(format!("role '{name}': {msg}")));
                    };
                    let (plan, _) = args.into_config().map_err(|e| whole(format!("role '{name}': {e}")))?;
                    let mut role = crate::config::role_plan::mix_role(name, &plan)
                        .map_err(|e| whole(format!("role '{name}': {e}")))?;
                    role.start = *start;
                    out.push(role);
                }
            }
        }
        Ok(out)
    }
}
