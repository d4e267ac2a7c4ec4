//! One role's rate set over a planned run: what `respbench capacity` searches when the run has
//! roles (the searched role's rate changes, every other role keeps its own).

use std::ops::Range;

use super::super::role::{Role, RoleKind};
use super::super::{Config, Rate};

/// Sets the rate `role` asks for, in requests (publishes, writes, pushes) per second; false for
/// the command line's own mix not yet planned (`NAME:mix`), whose rate is the run's `--rate`.
pub fn set_role_rate(role: &mut Role, per_sec: f64) -> bool {
    match &mut role.kind {
        RoleKind::PubSub(p) => p.rate = Some(per_sec),
        RoleKind::Tracking(t) => t.rate = Some(per_sec),
        RoleKind::Stream(s) => s.rate = Some(per_sec),
        RoleKind::Queue(q) => q.rate = Some(per_sec),
        RoleKind::Mix(Some(m)) => m.rate = Some(Rate { per_sec, poisson: m.rate.is_some_and(|r| r.poisson) }),
        RoleKind::Mix(None) => return false,
    }
    true
}

impl Config {
    /// Runs role `role` (`None`: the run, of one role or none) at `per_sec`, the other roles at
    /// their own rates; the run's rate is their sum.
    pub fn set_rate_of(&mut self, role: Option<&str>, per_sec: f64) {
        let poisson = self.rate.is_some_and(|r| r.poisson);
        for r in self.extras.roles.iter_mut().filter(|r| role.is_none_or(|name| r.name == name)) {
            set_role_rate(r, per_sec);
        }
        let Some(name) = role.filter(|_| !self.extras.groups.is_empty()) else {
            self.rate = Some(Rate { per_sec, poisson });
            return;
        };
        for g in self.extras.groups.iter_mut() {
            if g.plan.extras.roles.iter().any(|r| r.name == name) {
                let poisson = g.plan.rate.is_some_and(|r| r.poisson);
                g.plan.rate = Some(Rate { per_sec, poisson });
                g.plan.extras.roles.iter_mut().for_each(|r| _ = set_role_rate(r, per_sec));
            }
        }
        let sum = self.extras.groups.iter().map(|g| g.plan.rate.map_or(0.0, |r| r.per_sec)).sum();
        self.rate = Some(Rate { per_sec: sum, poisson });
    }

    /// The rows (indices of `commands`) whose requests are role `role`'s; every row for `None`.
    pub fn rows_of(&self, role: Option<&str>) -> Range<usize> {
        role.map_or(0..self.commands.len(), |name| self.role_commands(name))
    }
}
