//! Several roles in one run: each role's requesting clients are a client group of the run, its
//! own connections, commands, key space and rate. Each role is planned alone, as a run of its
//! own would be ([`super::apply`] on a copy of the command line's plan); the run's plan then
//! holds every group's commands one after the other and every group's connections one after
//! the other, and keeps each group's own plan ([`Group::plan`]) for what differs by group:
//! a connection's keys and pacing (`Config::group_of`) and the listeners its role opens beside
//! the workers (`Config::role_plans`).

use std::ops::Range;
use std::time::Duration;

use super::super::role::{Role, RoleError, RoleKind};
use super::super::{ArgPart, CommandSpec, Config, KeyRange, Rate, ValueSize};

/// One role's client group in a run of several roles.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// The plan the role makes of the command line alone (its connections, commands, keys,
    /// rate, and the role as its only one): what its connections and listeners follow.
    pub plan: Config,
    /// The run's connections that are the group's, and the run's commands (report rows, one
    /// unit each) that are its requests.
    pub connections: Range<usize>,
    pub commands: Range<usize>,
}

impl Config {
    /// The plan connection `index` follows and its index among that plan's connections: its
    /// group's plan in a run of several roles, otherwise this one.
    pub fn group_of(&self, index: usize) -> (&Config, usize) {
        match self.extras.groups.iter().find(|g| g.connections.contains(&index)) {
            Some(g) => (&g.plan, index - g.connections.start),
            None => (self, index),
        }
    }

    /// How far into the measured run connection `index` begins: its role's `start`.
    pub fn start_of(&self, index: usize) -> Duration {
        let (plan, _) = self.group_of(index);
        plan.extras.roles.first().map_or(Duration::ZERO, |r| r.start)
    }

    /// The commands (units of the mix) connection `index` picks from in a run of several
    /// roles: its group's; `None` for every unit of the mix.
    pub fn units_of(&self, index: usize) -> Option<Range<usize>> {
        self.extras.groups.iter().find(|g| g.connections.contains(&index)).map(|g| g.commands.clone())
    }

    /// Each role's plan and the first of its commands (its row in the report): one per group
    /// in a run of several roles, else this plan, whose first command is its role's.
    pub fn role_plans(&self) -> Vec<(&Config, usize)> {
        if self.extras.groups.is_empty() {
            return vec![(self, 0)];
        }
        self.extras.groups.iter().map(|g| (&g.plan, g.commands.start)).collect()
    }

    /// The requests in flight connection `index` keeps at most: its group's pipeline in a run
    /// of several roles, otherwise the run's.
    pub fn pipeline_of(&self, index: usize) -> usize {
        self.group_of(index).0.pipeline
    }

    /// The commands (as indices of `commands`) that are role `name`'s requests: every one
    /// when the run is one role's.
    pub fn role_commands(&self, name: &str) -> Range<usize> {
        let group = self.extras.groups.iter().find(|g| g.plan.extras.roles.iter().any(|r| r.name == name));
        group.map_or(0..self.commands.len(), |g| g.commands.clone())
    }
}

/// How a run's requests are paced, which says where their latency is measured from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pacing {
    /// At a rate: latency from each request's intended send time.
    Open,
    /// Closed loop: latency from each request's actual send.
    Closed,
    /// A run of several roles, some at a rate and some in closed loop: each role's latency
    /// from its own origin (`Config::pacing_of`).
    Mixed,
}

impl Pacing {
    /// As the result's `mode` says it.
    pub fn name(self) -> &'static str {
        match self {
            Pacing::Open => "open_loop",
            Pacing::Closed => "closed_loop",
            Pacing::Mixed => "mixed",
        }
    }
}

impl Config {
    /// How the run is paced as a whole.
    pub fn pacing(&self) -> Pacing {
        let rated = self.extras.groups.iter().filter(|g| g.plan.rate.is_some()).count();
        match (self.rate, rated) {
            (Some(_), _) => Pacing::Open,
            (None, 0) => Pacing::Closed,
            (None, _) => Pacing::Mixed,
        }
    }

    /// The requests per second the schedules asked for over `measured` time: the run's rate,
    /// less what a role starting later did not ask for before its start.
    pub fn requested_per_sec(&self, measured: Duration) -> Option<f64> {
        let rate = self.rate?.per_sec;
        let secs = measured.as_secs_f64();
        if secs <= 0.0 {
            return Some(rate);
        }
        let held: f64 = (self.role_plans().iter())
            .filter_map(|(plan, _)| Some((plan.rate?.per_sec, plan.extras.roles.first()?.start.as_secs_f64())))
            .map(|(per_sec, start)| per_sec * start.min(secs))
            .sum();
        Some(rate - held / secs)
    }

    /// How role `name`'s requests are paced (the run's, when the run is one role's).
    pub fn pacing_of(&self, name: &str) -> Pacing {
        let group = self.extras.groups.iter().find(|g| g.plan.extras.roles.iter().any(|r| r.name == name));
        match group.map_or(self.rate, |g| g.plan.rate) {
            Some(_) => Pacing::Open,
            None => Pacing::Closed,
        }
    }
}

/// Makes `config` run `roles` together, each planned on its own by `plan_one`: refuses two
/// roles of one name (each role's figures are found by its name) and a second role naming the
/// command line's own mix. Roles of one kind, and roles at a rate beside roles in closed loop,
/// run together: each role is reported as its own (`Config::pacing_of`), and `-n` is each
/// role's own count (`Config::quota`). The run's worker threads are the command line's, or the
/// mix roles' threads together when more; its pipeline is the deepest role's, each connection
/// keeping its own role's (`Config::pipeline_of`).
pub(super) fn apply(
    config: &mut Config,
    roles: Vec<Role>,
    plan_one: fn(&mut Config, Role) -> Result<(), RoleError>,
) -> Result<(), RoleError> {
    for (i, role) in roles.iter().enumerate() {
        if roles[..i].iter().any(|r| r.name == role.name) {
            return Err(format!("--role {} is given twice: give each role a name of its own", role.name).into());
        }
        if let RoleKind::Mix(None) = role.kind
            && let Some(other) = roles[..i].iter().find(|r| matches!(r.kind, RoleKind::Mix(None)))
        {
            return Err(format!(
                "--role {}: {} names the command line's mix already: the command line holds one mix role \
                 (a scenario file holds several)",
                role.name, other.name
            )
            .into());
        }
    }
    let mut groups: Vec<Group> = Vec::with_capacity(roles.len());
    let (mut commands, mut connections) = (Vec::new(), 0);
    for role in roles.iter().cloned() {
        let mut plan = config.clone();
        plan_one(&mut plan, role)?;
        one_size(&plan)?;
        let start = commands.len();
        commands.extend(plan.commands.iter().map(|c| self_contained(c, &plan)));
        let span = connections..connections + plan.connections;
        connections = span.end;
        groups.push(Group { plan, connections: span, commands: start..commands.len() });
    }
    // The run's rate is its roles' together when every role has one; with a role in closed
    // loop the run has none as a whole (`Config::pacing`: mixed).
    let rates: Option<Vec<f64>> = groups.iter().map(|g| g.plan.rate.map(|r| r.per_sec)).collect();
    let poisson = groups.iter().any(|g| g.plan.rate.is_some_and(|r| r.poisson));
    let mix_threads: usize = groups.iter().filter(|g| is_mix(&g.plan)).map(|g| g.plan.threads).sum();
    config.commands = commands;
    config.sequence = None;
    config.connections = connections;
    config.threads = config.threads.max(mix_threads).clamp(1, connections);
    config.pipeline = groups.iter().map(|g| g.plan.pipeline).max().unwrap_or(config.pipeline);
    // The keys and values are each command's own (`self_contained`): the run's range only
    // bounds what a report shows of it.
    let max = groups.iter().map(|g| g.plan.keys.max).max().unwrap_or(1);
    config.keys = KeyRange { prefix: String::new(), min: 1, max };
    config.values = ValueSize::Fixed(0);
    config.rate = rates.map(|r| Rate { per_sec: r.iter().sum(), poisson });
    config.ramp = None;
    // Each role as planned (a mix role carries the mix it runs).
    config.extras.roles = groups.iter().flat_map(|g| g.plan.extras.roles.first().cloned()).collect();
    config.extras.groups = groups;
    Ok(())
}

/// Whether a group's plan is a mix role's.
fn is_mix(plan: &Config) -> bool {
    plan.extras.roles.first().is_some_and(|r| matches!(r.kind, RoleKind::Mix(_)))
}

/// A role's values beside other roles are one size: its filler is a literal of its commands
/// (`self_contained`), and a literal has one length.
fn one_size(plan: &Config) -> Result<(), RoleError> {
    if matches!(plan.values, ValueSize::Fixed(_)) {
        return Ok(());
    }
    let name = plan.extras.roles.first().map_or("", |r| r.name.as_str());
    Err(format!(
        "--role {name}: a range or list of value sizes runs in a run of its own, not beside other roles: give it \
         one size"
    )
    .into())
}

/// A role's command as the run of several roles sends it: its key prefix and its filler are
/// literals of the command (each group has its own, the run's one key prefix and value size
/// cannot hold them all); the key's number is still drawn from the group's own key range.
fn self_contained(command: &CommandSpec, plan: &Config) -> CommandSpec {
    let filler = vec![b'x'; plan.values.max()];
    let prefix = plan.keys.prefix.as_bytes();
    let args = command
        .args
        .iter()
        .map(|arg| {
            let mut parts = Vec::with_capacity(arg.len() + 1);
            for part in arg {
                match part {
                    ArgPart::Key if !prefix.is_empty() => {
                        parts.push(ArgPart::Lit(prefix.to_vec()));
                        parts.push(ArgPart::Key);
                    }
                    ArgPart::Data => parts.push(ArgPart::Lit(filler.clone())),
                    other => parts.push(other.clone()),
                }
            }
            parts
        })
        .collect();
    CommandSpec { args, ..command.clone() }
}

/// A plan as the command line would make it, for the role plans' tests.
#[cfg(test)]
pub(super) fn base() -> Config {
    use super::super::{Extras, Faults, KeyPattern, ServerOptions, StopAfter, Target};
    use std::time::Duration;
    Config {
        server: ServerOptions {
            target: Target::Tcp { host: "h".into(), port: 1 },
            user: None,
            password: None,
            db: None,
            resp3: false,
            tls: None,
            connect_timeout: None,
            session: Default::default(),
        },
        connections: 50,
        threads: 4,
        pipeline: 1,
        stop: StopAfter::Duration(Duration::from_secs(2)),
        commands: vec![CommandSpec::get(1, KeyPattern::Random)],
        keys: KeyRange { prefix: "memtier-".into(), min: 0, max: 9 },
        values: ValueSize::Fixed(32),
        random_data: false,
        expiry: None,
        seed: 9,
        same_stream: false,
        conn_jitter: None,
        interval: Duration::from_secs(1),
        rate: None,
        warmup: Duration::ZERO,
        sequence: None,
        faults: Faults::default(),
        cluster: None,
        ramp: None,
        extras: Extras::default(),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::super::role::parse;
    use super::super::super::{KeyPattern, StopAfter};
    use super::*;
    use crate::workload::{RequestGen, Workload};

    /// What connection `conn` sends first, as text.
    fn first_request(config: &Config, conn: usize) -> String {
        let mut g = RequestGen::new(Arc::new(Workload::compile(config)), config, conn);
        let mut out = Vec::new();
        let unit = g.pick_unit();
        g.encode(unit, &mut out);
        String::from_utf8_lossy(&out).into_owned()
    }

    #[test]
    fn each_role_is_a_group_of_the_run_with_its_own_connections_commands_and_rate() {
        let mut config = base();
        let roles = vec![
            parse("news:pubsub:channels=10,subscribers=5,publishers=2,rate=1000").unwrap(),
            parse("jobs:queue:producers=3,workers=4,rate=200,size=3,command=bzpopmin").unwrap(),
        ];
        super::super::apply(&mut config, roles).unwrap();
        assert_eq!(config.connections, 5);
        assert_eq!(config.command_rows(), ["PUBLISH", "ZADD"]);
        assert_eq!(config.rate.map(|r| r.per_sec), Some(1200.0));
        assert_eq!((config.role_commands("news"), config.role_commands("jobs")), (0..1, 1..2));
        let (plan, local) = config.group_of(3);
        assert_eq!((plan.extras.roles[0].name.as_str(), local, plan.connections), ("jobs", 1, 3));
        assert_eq!(config.role_plans().iter().map(|(_, row)| *row).collect::<Vec<_>>(), [0, 1]);
        // A publisher walks its own channels; a producer pushes to its queue with its filler.
        let publish = first_request(&config, 1);
        assert!(publish.starts_with("*3\r\n$7\r\nPUBLISH\r\n$6\r\nnews:1\r\n"), "{publish:?}");
        let push = first_request(&config, 4);
        assert!(push.starts_with("*4\r\n$4\r\nZADD\r\n$6\r\njobs:1\r\n$1\r\n0\r\n"), "{push:?}");
        assert!(push.ends_with("xxx\r\n"), "{push:?}");
    }

    #[test]
    fn each_role_counts_its_own_requests_and_is_paced_as_its_own() {
        let mut config = base();
        config.stop = StopAfter::Requests(10);
        let roles = vec![
            parse("a:pubsub:channels=2,publishers=2,rate=100").unwrap(),
            parse("b:pubsub:channels=3,publishers=3").unwrap(),
        ];
        super::super::apply(&mut config, roles).unwrap();
        assert_eq!((0..2).map(|i| config.quota(i).unwrap()).sum::<u64>(), 10);
        assert_eq!((2..5).map(|i| config.quota(i).unwrap()).sum::<u64>(), 10);
        assert_eq!(config.planned_requests(), Some(20));
        assert_eq!(config.pacing(), Pacing::Mixed);
        assert_eq!((config.pacing_of("a"), config.pacing_of("b")), (Pacing::Open, Pacing::Closed));
        assert_eq!(config.rate, None);
    }

    #[test]
    fn a_role_starting_later_asks_for_its_rate_from_its_start_only() {
        let mut config = base();
        let roles = vec![
            parse("a:pubsub:channels=2,rate=100").unwrap(),
            parse("b:pubsub:channels=2,rate=200,start=1s").unwrap(),
        ];
        super::super::apply(&mut config, roles).unwrap();
        assert_eq!((config.start_of(0), config.start_of(1)), (Duration::ZERO, Duration::from_secs(1)));
        assert_eq!(config.rate.map(|r| r.per_sec), Some(300.0));
        assert_eq!(config.requested_per_sec(Duration::from_secs(2)), Some(200.0));
        let late = vec![parse("c:pubsub:start=2s").unwrap()];
        let e = super::super::apply(&mut base(), late).unwrap_err().to_string();
        assert!(e.starts_with("--role c: start=2s is not before the run's end (--duration 2s)"), "{e}");
        let role = parse("d:mix:start=500ms").unwrap();
        assert_eq!((role.start, role.kind), (Duration::from_millis(500), RoleKind::Mix(None)));
        assert_eq!(parse("e:queue:start=0,workers=2").unwrap().start, Duration::ZERO);
        let e = parse("f:stream:start=soon").unwrap_err().to_string();
        assert!(e.starts_with("--role f: start=soon: expected a duration"), "{e}");
    }

    #[test]
    fn one_role_is_planned_as_it_always_was() {
        let (mut one, mut alone) = (base(), base());
        let role = parse("news:pubsub:channels=10,rate=1000").unwrap();
        super::super::apply(&mut one, vec![role.clone()]).unwrap();
        super::super::plan(&mut alone, role).unwrap();
        assert_eq!(one, alone);
        assert!(one.extras.groups.is_empty());
        assert_eq!(one.keys.prefix, "news:");
    }

    #[test]
    fn mix_roles_keep_their_own_connections_pipeline_keys_and_values() {
        let mut config = base();
        let (mut hot, mut cold) = (base(), base());
        (hot.connections, hot.threads, hot.pipeline, hot.rate) =
            (2, 1, 8, Some(Rate { per_sec: 100.0, poisson: false }));
        hot.keys = KeyRange { prefix: "hot:".into(), min: 1, max: 5 };
        hot.commands = vec![CommandSpec::set(1, KeyPattern::Sequential, false)];
        hot.values = ValueSize::Fixed(3);
        (cold.connections, cold.threads, cold.pipeline, cold.rate) =
            (3, 2, 1, Some(Rate { per_sec: 50.0, poisson: false }));
        let roles = vec![
            super::super::mix_role("hot", &hot).unwrap(),
            super::super::mix_role("cold", &cold).unwrap(),
            parse("news:pubsub:channels=2,rate=10").unwrap(),
        ];
        super::super::apply(&mut config, roles).unwrap();
        assert_eq!((config.connections, config.threads, config.pipeline), (6, 4, 8));
        assert_eq!((config.pipeline_of(1), config.pipeline_of(2), config.pipeline_of(5)), (8, 1, 1));
        assert_eq!(config.command_rows(), ["SET", "GET", "PUBLISH"]);
        assert_eq!(config.rate.map(|r| r.per_sec), Some(160.0));
        let set = first_request(&config, 0);
        assert!(set.starts_with("*3\r\n$3\r\nSET\r\n$5\r\nhot:1\r\n$3\r\nxxx\r\n"), "{set:?}");
        assert!(first_request(&config, 2).contains("memtier-"), "the cold role's own keys");
        let mut ranged = base();
        ranged.values = ValueSize::Range { min: 1, max: 9 };
        let roles = vec![super::super::mix_role("r", &ranged).unwrap(), parse("news:pubsub").unwrap()];
        let e = super::super::apply(&mut base(), roles).unwrap_err().to_string();
        assert!(e.starts_with("--role r: a range or list of value sizes runs in a run of its own"), "{e}");
        let roles = vec![parse("a:mix").unwrap(), parse("b:mix").unwrap()];
        let e = super::super::apply(&mut base(), roles).unwrap_err().to_string();
        assert!(e.starts_with("--role b: a names the command line's mix already"), "{e}");
    }
}
