//! A specification's `clientconfigs` (several tools run together) made into one run with a
//! role (`config::role`), from typed values: each memtier_benchmark line's plan as the memtier
//! front-end builds it, and the tools beside it read by `tools.rs`.
//!
//! - a memtier PUBLISH client and `pubsub-sub-bench` subscribers: a pub/sub role;
//! - a memtier SET client and `bcast-listener` listeners: a tracking role in BCAST mode;
//! - a memtier client pushing to one key (LPUSH, RPUSH, ZADD, XADD) and one blocked on it
//!   (BLPOP, BRPOP, BZPOPMIN, XREADGROUP): a queue or stream role;
//! - memtier clients alone together: a mix role each ([`mix`]).
//!
//! What the run does differently from the tools is said in its notes.

use std::fmt::Write as _;

use super::error::SpecError;
use super::schema::{MEMTIER, Tool};
use super::tools::{self, BcastListeners, LISTENERS, SUBSCRIBERS, SubBench};
use crate::config::role::queue::{Pop, QueueRole, StreamRole};
use crate::config::role::tracking::{self as tracking_role, TrackMode, Tracking};
use crate::config::role::{Listen, MAX_STREAMS, PubSub, Role, RoleKind};
use crate::config::{ArgPart, CommandSpec, Config, KeyPattern, role_plan};
use crate::workload::stamp::STAMP_LEN;

/// One of the `clientconfigs`: as written, and for memtier_benchmark the plan its line builds.
pub struct Client<'a> {
    pub tool: &'a Tool,
    pub memtier: Option<Config>,
}

/// The clients made one run: its plan (the role applied), the memtier client whose output
/// options (percentiles, memtier's JSON) the run's outputs follow, and what differs.
pub struct Together {
    pub config: Config,
    pub output_from: usize,
    pub notes: Vec<String>,
}

/// The tools' names respbench runs in `clientconfigs`, or the line refusing the first other.
pub fn known(clients: &[Tool]) -> Result<(), SpecError> {
    match clients.iter().enumerate().find(|(_, c)| ![MEMTIER, SUBSCRIBERS, LISTENERS].contains(&c.tool.as_str())) {
        Some((i, c)) => Err(format!(
            "clientconfigs[{i}]: tool {} is not supported: respbench runs {MEMTIER} clients, with {SUBSCRIBERS} \
             subscribers or {LISTENERS} listeners beside them",
            c.tool
        )
        .into()),
        None => Ok(()),
    }
}

/// Makes the clients one run, or says why respbench does not run them together.
pub fn together(clients: &[Client<'_>]) -> Result<Together, SpecError> {
    let memtiers: Vec<(usize, &Config)> =
        clients.iter().enumerate().filter_map(|(i, c)| c.memtier.as_ref().map(|m| (i, m))).collect();
    let beside: Vec<&Tool> = clients.iter().filter(|c| c.memtier.is_none()).map(|c| c.tool).collect();
    let Some(&(last, _)) = memtiers.last() else {
        return Err(format!("clientconfigs: no {MEMTIER} client: respbench runs the others beside one").into());
    };
    let output_from = last;
    let (config, notes) = match (beside.as_slice(), memtiers.as_slice()) {
        ([], _) => return blocked(&memtiers).unwrap_or_else(|| mix(&memtiers)),
        ([tool], [(_, publisher)]) if tool.tool == SUBSCRIBERS => {
            pubsub(publisher, &tools::sub_bench(&tool.arguments)?)?
        }
        ([tool], [(_, writer)]) if tool.tool == LISTENERS => {
            tracking(writer, &tools::bcast_listeners(&tool.arguments)?)?
        }
        ([tool], _) => {
            return Err(format!(
                "clientconfigs: {} beside {} {MEMTIER} clients: expected one",
                tool.tool,
                memtiers.len()
            )
            .into());
        }
        _ => {
            let names: Vec<&str> = beside.iter().map(|t| t.tool.as_str()).collect();
            return Err(
                format!("clientconfigs: {} together: expected one of them beside {MEMTIER}", names.join(", ")).into()
            );
        }
    };
    Ok(Together { config, output_from, notes })
}

/// Several memtier_benchmark clients, each its own command mix, run together: each client a
/// mix role of its own (`client1`, `client2`, ... in the order of `clientconfigs`), one run of
/// several roles whose length, server and outputs are the last client's.
pub fn mix(memtiers: &[(usize, &Config)]) -> Result<Together, SpecError> {
    let Some(&(output_from, last)) = memtiers.last() else {
        return Err(format!("clientconfigs: no {MEMTIER} client").into());
    };
    let mut roles = Vec::with_capacity(memtiers.len());
    let mut notes = Vec::new();
    for &(i, client) in memtiers {
        let name = format!("client{}", i + 1);
        roles.push(role_plan::mix_role(&name, client).map_err(|e| e.to_string())?);
        if client.stop != last.stop {
            notes.push(format!(
                "{name} ({}) runs as long as the last client: one run holds every client",
                commands(client)
            ));
        }
    }
    notes.push(format!(
        "each {MEMTIER} client is a role of its own mix (client1..client{}), run together as one run's roles",
        memtiers.len()
    ));
    let mut config = last.clone();
    role_plan::apply(&mut config, roles).map_err(|e| e.to_string())?;
    Ok(Together { config, output_from, notes })
}

/// A client's commands, by name.
fn commands(config: &Config) -> String {
    let names: Vec<&str> = config.commands.iter().filter(|c| c.weight > 0).map(|c| c.name.as_str()).collect();
    names.join(" ")
}

/// The client's one command, if it sends one only, named `names` (upper case).
fn only<'a>(config: &'a Config, names: &[&str]) -> Option<&'a CommandSpec> {
    let mut sent = config.commands.iter().filter(|c| c.weight > 0);
    let first = sent.next()?;
    let name = first.name.to_ascii_uppercase();
    (sent.next().is_none() && names.contains(&name.as_str())).then_some(first)
}

/// An argument as the server sees it, `N` for the key's number.
fn shown(arg: &[ArgPart], prefix: &str) -> String {
    let mut s = String::new();
    for part in arg {
        let _ = match part {
            ArgPart::Lit(bytes) => write!(s, "{}", String::from_utf8_lossy(bytes)),
            ArgPart::Key => write!(s, "{prefix}N"),
            ArgPart::Data => write!(s, "__data__"),
            _ => write!(s, "?"),
        };
    }
    s
}

/// An argument made of literals only: its text.
fn literal(arg: &[ArgPart]) -> Option<String> {
    let mut out = Vec::new();
    for part in arg {
        match part {
            ArgPart::Lit(bytes) => out.extend_from_slice(bytes),
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

/// The filler after the stamp for a payload of `size` bytes, and the note when the stamp
/// alone is longer.
fn payload(size: usize, what: &str, notes: &mut Vec<String>) -> usize {
    if size < STAMP_LEN {
        notes.push(format!(
            "each {what} carries respbench's {STAMP_LEN}-byte stamp (client, sequence number, send time) to measure \
             it end to end: {STAMP_LEN} bytes where the spec's are {size}"
        ));
    } else {
        notes.push(format!(
            "each {what} carries respbench's {STAMP_LEN}-byte stamp (client, sequence number, send time) in the first \
             {STAMP_LEN} of its {size} bytes, to measure it end to end"
        ));
    }
    size.saturating_sub(STAMP_LEN)
}

fn in_order(config: &Config, who: &str, what: &str, notes: &mut Vec<String>) {
    if config.commands.iter().any(|c| c.weight > 0 && c.key_pattern != KeyPattern::Sequential) {
        notes.push(format!("the {who} walk the {what} in order (the spec's {MEMTIER} draws them at random)"));
    }
}

/// Applies the one role to `base` with the tools' own key names.
fn planned(base: &Config, role: Role, prefix: &str) -> Result<Config, SpecError> {
    let mut config = base.clone();
    role_plan::apply(&mut config, vec![role]).map_err(|e| e.to_string())?;
    config.keys.prefix = prefix.to_string();
    Ok(config)
}

/// A memtier PUBLISH client and pubsub-sub-bench's subscribers: a pub/sub role on the
/// subscribers' channels, with as many subscribers on every channel as pubsub-sub-bench puts
/// on each (the same deliveries per publish).
fn pubsub(publisher: &Config, sub: &SubBench) -> Result<(Config, Vec<String>), SpecError> {
    let Some(publish) = only(publisher, &["PUBLISH", "SPUBLISH"]) else {
        return Err(format!(
            "clientconfigs: {SUBSCRIBERS} beside {MEMTIER} sending {}: expected a client sending PUBLISH only",
            commands(publisher)
        )
        .into());
    };
    let mut notes = Vec::new();
    let channels = sub.channels();
    let subscriptions = sub.connections() as f64 * sub.channels_each();
    let per_channel = ((subscriptions / channels as f64).round() as usize).max(1);
    if sub.connections() != per_channel as u64 || sub.channels_each() != channels as f64 {
        notes.push(format!(
            "{SUBSCRIBERS}'s {} connections on {} channel(s) each ({} subscriptions, {per_channel} per channel) run \
             as {per_channel} subscriber(s) on every channel: the same deliveries per publish over {per_channel} \
             connection(s)",
            sub.connections(),
            sub.channels_each(),
            subscriptions
        ));
    }
    let theirs = shown(publish.args.get(1).map_or(&[][..], |a| a), &publisher.keys.prefix);
    if theirs != format!("{}N", sub.prefix) {
        notes.push(format!(
            "the publishers publish to the subscribers' channels {}1..{}{channels}: {MEMTIER}'s are {theirs}",
            sub.prefix, sub.prefix
        ));
    } else if sub.channel_min != 1 {
        notes.push(format!(
            "the channels are numbered from 1 ({}1..{}{channels}), {SUBSCRIBERS}'s from {}",
            sub.prefix, sub.prefix, sub.channel_min
        ));
    }
    if sub.sharded {
        notes.push(format!("-mode ssubscribe: the publishers send SPUBLISH where {MEMTIER} sends {}", publish.name));
    }
    in_order(publisher, "publishers", "channels", &mut notes);
    let size = payload(publisher.values.max(), "message", &mut notes);
    let p = PubSub {
        channels,
        subscribers: per_channel,
        publishers: publisher.connections,
        rate: publisher.rate.map(|r| r.per_sec),
        listen: if sub.sharded { Listen::Ssubscribe } else { Listen::Subscribe },
        size,
    };
    if channels.saturating_mul(p.publishers as u64) > MAX_STREAMS {
        return Err(format!(
            "clientconfigs: {channels} channels x {} publishers is above {MAX_STREAMS}, the most a subscriber keeps in \
             order",
            p.publishers
        )
        .into());
    }
    let role = Role::new("pubsub", RoleKind::PubSub(p));
    Ok((planned(publisher, role, &sub.prefix)?, notes))
}

/// The most keys a tracking reader's cache holds here: bcast-listener keeps none, and a
/// reader reads once a second.
const CACHE: u64 = 1000;

/// A memtier SET client and bcast-listener's listeners: a tracking role in BCAST mode on the
/// listeners' prefix, over the writer's keys.
fn tracking(writer: &Config, listeners: &BcastListeners) -> Result<(Config, Vec<String>), SpecError> {
    if let Some(patterns) = &listeners.acl_patterns {
        return Err(format!(
            "{LISTENERS} --acl-user-patterns {patterns} (listeners as ACL users allowed some keys only) is not \
             supported: the tracking role's readers are allowed every key"
        )
        .into());
    }
    let Some(set) = only(writer, &["SET"]) else {
        return Err(format!(
            "clientconfigs: {LISTENERS} beside {MEMTIER} sending {}: expected a client sending SET only",
            commands(writer)
        )
        .into());
    };
    if set.args.get(1).is_none_or(|key| key.as_slice() != [ArgPart::Key]) {
        return Err(format!("clientconfigs: {MEMTIER}'s SET: expected __key__ as its key").into());
    }
    let mut notes = Vec::new();
    let span = writer.keys.max.saturating_sub(writer.keys.min) + 1;
    let keys = span.min(tracking_role::MAX_KEYS);
    if keys < span || writer.keys.min != 1 {
        notes.push(format!(
            "the writers SET {}1..{}{keys}, the spec's {}{}..{}{}",
            writer.keys.prefix,
            writer.keys.prefix,
            writer.keys.prefix,
            writer.keys.min,
            writer.keys.prefix,
            writer.keys.max
        ));
    }
    if !writer.keys.prefix.starts_with(&listeners.prefix) {
        notes.push(format!(
            "the writers' keys {}N are outside the listeners' prefix {}: no write is announced",
            writer.keys.prefix, listeners.prefix
        ));
    }
    notes.push(format!(
        "{LISTENERS}'s {} listeners run as cached readers (RESP3, CLIENT TRACKING on BCAST PREFIX {}) that also read \
         one key a second each (from a cache of {CACHE} keys, or GET), so that stale reads are checked",
        listeners.listeners, listeners.prefix
    ));
    in_order(writer, "writers", "keys", &mut notes);
    let size = payload(writer.values.max(), "value", &mut notes);
    let t = Tracking {
        writers: writer.connections,
        readers: listeners.listeners as usize,
        keys,
        rate: writer.rate.map(|r| r.per_sec),
        reads_per_sec: 1,
        mode: TrackMode::Bcast { prefix: listeners.prefix.clone() },
        cache: keys.min(CACHE) as usize,
        size,
    };
    let role = Role::new("tracking", RoleKind::Tracking(t));
    Ok((planned(writer, role, &writer.keys.prefix)?, notes))
}

/// Two memtier clients, one pushing to a key and one blocked on it: a queue or stream role on
/// that key; `None` when they are not that.
fn blocked(memtiers: &[(usize, &Config)]) -> Option<Result<Together, SpecError>> {
    const POPS: [&str; 4] = ["BLPOP", "BRPOP", "BZPOPMIN", "XREADGROUP"];
    let [(_, a), (_, b)] = memtiers else { return None };
    let (producer, consumer) = if only(b, &POPS).is_some() { (*a, *b) } else { (*b, *a) };
    let pop = only(consumer, &POPS)?;
    let push = only(producer, &["LPUSH", "RPUSH", "ZADD", "XADD"])?;
    let (pop_name, push_name) = (pop.name.to_ascii_uppercase(), push.name.to_ascii_uppercase());
    let key = if pop_name == "XREADGROUP" {
        let words: Vec<String> = pop.args.iter().map(|a| literal(a)).collect::<Option<_>>()?;
        let streams = words.iter().position(|w| w.eq_ignore_ascii_case("STREAMS"))?;
        words.get(streams + 1)?.clone()
    } else {
        literal(pop.args.get(1)?)?
    };
    if literal(push.args.get(1)?)? != key {
        return None;
    }
    let mut notes = Vec::new();
    // The role's key is its prefix and 1.
    let prefix = match key.strip_suffix('1') {
        Some(prefix) => prefix.to_string(),
        None => {
            notes.push(format!("the key is {key}:1 where the spec's is {key}"));
            format!("{key}:")
        }
    };
    let rate = producer.rate.map(|r| r.per_sec);
    let kind = match (pop_name.as_str(), push_name.as_str()) {
        ("XREADGROUP", "XADD") => {
            let s = stream(pop, producer, consumer, &mut notes)?;
            RoleKind::Stream(StreamRole { rate, ..s })
        }
        ("BLPOP" | "BRPOP", "LPUSH" | "RPUSH") | ("BZPOPMIN", "ZADD") => {
            let (pop, ours) = match pop_name.as_str() {
                "BLPOP" => (Pop::Blpop, "RPUSH"),
                "BRPOP" => (Pop::Brpop, "LPUSH"),
                _ => (Pop::Bzpopmin, "ZADD"),
            };
            if ours != push_name {
                notes.push(format!(
                    "the producers push with {ours} where the spec's {push_name}: items are taken first in, first out"
                ));
            }
            if pop == Pop::Bzpopmin {
                notes.push("the producers ZADD every item with score 0 (taken in the stamp's order)".into());
            }
            let size = payload(producer.values.max(), "item", &mut notes);
            RoleKind::Queue(QueueRole {
                producers: producer.connections,
                workers: consumer.connections,
                rate,
                pop,
                size,
            })
        }
        _ => return None,
    };
    notes.push(format!(
        "the run's requests (ops/s, latency) are the producers' {push_name}s, where the spec exports the \
         consumers' {pop_name}s: those are in the role's figures (consumed, and their latencies)"
    ));
    if producer.stop != consumer.stop {
        notes.push(format!("one run as long as the consumers' {MEMTIER} line: the producer's own length is not kept"));
    }
    let base = Config { stop: consumer.stop, ..producer.clone() };
    let name = if matches!(kind, RoleKind::Stream(_)) { "stream" } else { "queue" };
    let role = Role::new(name, kind);
    let output_from = memtiers.iter().find(|(_, c)| std::ptr::eq(*c, consumer)).map_or(0, |(i, _)| *i);
    Some(planned(&base, role, &prefix).map(|config| Together { config, output_from, notes }))
}

/// XREADGROUP's own words (GROUP, COUNT, BLOCK, NOACK) as a stream role's settings; the
/// producers' (rate) are set by the caller.
fn stream(pop: &CommandSpec, producer: &Config, consumer: &Config, notes: &mut Vec<String>) -> Option<StreamRole> {
    let words: Vec<String> = pop.args.iter().map(|a| literal(a)).collect::<Option<_>>()?;
    let after = |name: &str| {
        let i = words.iter().position(|w| w.eq_ignore_ascii_case(name))?;
        words.get(i + 1).cloned()
    };
    let group = after("GROUP")?;
    let shared = words.iter().position(|w| w.eq_ignore_ascii_case("GROUP")).and_then(|i| words.get(i + 2))?;
    let block_ms = after("BLOCK")?.parse().ok()?;
    let count = after("COUNT").map_or(Some(1), |c| c.parse().ok())?.max(1);
    let ack = !words.iter().any(|w| w.eq_ignore_ascii_case("NOACK"));
    notes.push(format!(
        "the consumer group {group} is created afresh before the run and destroyed after it; its consumers are \
         named {group}-1..{group}-{} (the spec's share the name {shared})",
        consumer.connections
    ));
    if !ack {
        notes.push("the consumers read with NOACK, as the spec's".into());
    }
    let push = only(producer, &["XADD"])?;
    let xadd: Vec<String> = push.args.iter().map(|a| shown(a, "")).collect();
    if xadd.iter().any(|w| w.eq_ignore_ascii_case("MAXLEN") || w.eq_ignore_ascii_case("MINID")) {
        notes.push("the stream is not trimmed (the spec's XADD caps it): it grows for the run".into());
    }
    let size = payload(producer.values.max(), "entry", notes);
    Some(StreamRole {
        producers: producer.connections,
        consumers: consumer.connections,
        rate: None,
        count,
        block_ms,
        ack,
        group,
        size,
    })
}

/// One line for a role, as `--dry-run` shows it.
pub fn describe(config: &Config) -> Vec<String> {
    let prefix = &config.keys.prefix;
    let rate = |r: Option<f64>| r.map_or_else(|| "closed loop".to_string(), |r| format!("{r} per second"));
    config
        .extras
        .roles
        .iter()
        .map(|role| match &role.kind {
            RoleKind::PubSub(p) => format!(
                "pubsub role {}: {} channels {prefix}1..{prefix}{}, {} subscriber(s) on every channel ({}), {} \
                 publishers, {}, messages {} B",
                role.name,
                p.channels,
                p.channels,
                p.subscribers,
                p.listen.name(),
                p.publishers,
                rate(p.rate),
                STAMP_LEN + p.size
            ),
            RoleKind::Tracking(t) => format!(
                "tracking role {}: {} writers SET {prefix}1..{prefix}{}, {}, values {} B; {} cached readers \
                 (CLIENT TRACKING {}{}), {} read(s)/s each, cache {} keys",
                role.name,
                t.writers,
                t.keys,
                rate(t.rate),
                STAMP_LEN + t.size,
                t.readers,
                t.mode.name(),
                match &t.mode {
                    TrackMode::Bcast { prefix } => format!(" PREFIX {prefix}"),
                    _ => String::new(),
                },
                t.reads_per_sec,
                t.cache
            ),
            RoleKind::Mix(m) => format!(
                "mix role {}: {} connection(s), {} thread(s), pipeline {}, {}",
                role.name,
                m.as_ref().map_or(config.connections, |m| m.connections),
                m.as_ref().map_or(config.threads, |m| m.threads),
                m.as_ref().map_or(config.pipeline, |m| m.pipeline),
                rate(m.as_ref().map_or(config.rate, |m| m.rate).map(|r| r.per_sec))
            ),
            RoleKind::Queue(q) => format!(
                "queue role {}: {} producers to {prefix}1, {}, items {} B; {} workers on {}",
                role.name,
                q.producers,
                rate(q.rate),
                STAMP_LEN + q.size,
                q.workers,
                q.pop.name().to_ascii_uppercase()
            ),
            RoleKind::Stream(s) => format!(
                "stream role {}: {} producers XADD to {prefix}1, {}, entries {} B; {} consumers in group {} \
                 (XREADGROUP COUNT {} BLOCK {}{})",
                role.name,
                s.producers,
                rate(s.rate),
                STAMP_LEN + s.size,
                s.consumers,
                s.group,
                s.count,
                s.block_ms,
                if s.ack { ", XACK" } else { " NOACK" }
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::cli::memtier::{Translated, translate};

    fn memtier(line: &str) -> Config {
        let words: Vec<OsString> = shlex::split(line).unwrap().into_iter().map(OsString::from).collect();
        let Translated::Run(run) = translate(&words).unwrap() else { panic!("a run") };
        run.draft.into_plan().unwrap().0
    }

    fn tool(name: &str, arguments: &str) -> Tool {
        Tool { tool: name.into(), arguments: arguments.into() }
    }

    fn run(clients: &[(Tool, Option<Config>)]) -> Result<Together, SpecError> {
        let clients: Vec<Client<'_>> =
            clients.iter().map(|(tool, memtier)| Client { tool, memtier: memtier.clone() }).collect();
        together(&clients)
    }

    #[test]
    fn publishers_and_subscribers_keep_the_deliveries_per_publish() {
        let line = "--key-prefix channel- -d 128 --key-maximum 100 --command \"PUBLISH __key__ __data__\" -c 50 -t 4 \
                    --rate-limiting 10";
        let sub = "-clients 5000 -channel-minimum 1 -channel-maximum 100 -subscriber-prefix channel- \
                   -min-number-channels-per-subscriber 10 -max-number-channels-per-subscriber 10";
        let made = run(&[(tool(MEMTIER, line), Some(memtier(line))), (tool(SUBSCRIBERS, sub), None)]).unwrap();
        let RoleKind::PubSub(p) = &made.config.extras.roles[0].kind else { panic!("a pub/sub role") };
        // 5000 x 10 subscriptions over 100 channels: 500 on each.
        assert_eq!((p.channels, p.subscribers, p.publishers, p.rate), (100, 500, 200, Some(2000.0)));
        assert_eq!((p.size, made.config.keys.prefix.as_str()), (128 - STAMP_LEN, "channel-"));
        assert!(made.notes.iter().any(|n| n.contains("run as 500 subscriber(s) on every channel")), "{:?}", made.notes);
    }

    #[test]
    fn a_writer_and_listeners_are_a_bcast_tracking_role_over_the_writers_keys() {
        let line = "-d 16 --key-prefix bench: --key-minimum 1 --key-maximum 5000 --command \"SET __key__ __data__\" \
                    -c 4 -t 4";
        let listeners = "--listener-count 30 --tracking-prefix bench:";
        let made = run(&[(tool(MEMTIER, line), Some(memtier(line))), (tool(LISTENERS, listeners), None)]).unwrap();
        let RoleKind::Tracking(t) = &made.config.extras.roles[0].kind else { panic!("a tracking role") };
        assert_eq!((t.writers, t.readers, t.keys, t.cache), (16, 30, 5000, 1000));
        assert_eq!(t.mode, TrackMode::Bcast { prefix: "bench:".into() });
        assert_eq!(made.config.keys.prefix, "bench:");
    }

    #[test]
    fn a_pusher_and_blocked_poppers_are_a_queue_role_on_their_key() {
        let push = "--data-size 32 --command \"LPUSH blpop:key:1 __data__\" -c 1 -t 1 --test-time 125";
        let pop = "--command \"BLPOP blpop:key:1 0\" -c 25 -t 4 --test-time 120";
        let clients = [(tool(MEMTIER, push), Some(memtier(push))), (tool(MEMTIER, pop), Some(memtier(pop)))];
        let made = run(&clients).unwrap();
        let RoleKind::Queue(q) = &made.config.extras.roles[0].kind else { panic!("a queue role") };
        assert_eq!((q.producers, q.workers, q.pop), (1, 100, Pop::Blpop));
        assert_eq!((made.config.keys.prefix.as_str(), made.output_from), ("blpop:key:", 1));
        assert_eq!(made.config.stop, crate::config::StopAfter::Duration(std::time::Duration::from_secs(120)));
    }

    #[test]
    fn plain_clients_together_are_mix_roles_and_unknown_tools_are_refused_in_a_line() {
        let (a, b) = ("--command \"INFO everything\" -c 1 -t 1", "--command \"GET __key__\" -c 2 -t 1");
        let made = run(&[(tool(MEMTIER, a), Some(memtier(a))), (tool(MEMTIER, b), Some(memtier(b)))]).unwrap();
        let roles: Vec<(&str, usize)> = made
            .config
            .extras
            .roles
            .iter()
            .map(|r| match &r.kind {
                RoleKind::Mix(Some(m)) => (r.name.as_str(), m.connections),
                other => panic!("a mix role, not {other:?}"),
            })
            .collect();
        assert_eq!(roles, [("client1", 1), ("client2", 2)]);
        assert_eq!((made.config.connections, made.output_from), (3, 1));
        let e = known(&[tool(MEMTIER, a), tool("other-bench", "")]).unwrap_err().to_string();
        assert!(e.starts_with("clientconfigs[1]: tool other-bench is not supported: respbench runs"), "{e}");
    }
}
