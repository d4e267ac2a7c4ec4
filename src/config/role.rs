//! Roles: client groups of one run whose figures only mean something together (publishers and
//! the subscribers that must receive every message). `--role NAME:KIND:KEY=VALUE,...` names a
//! role; the rest of the command line (server, duration, interval, outputs) holds for every
//! role. A run without `--role` is one role, the command line's own mix, as it always was.
//!
//! A pub/sub role's publishers are the run's own connections, driven by the one engine (its
//! PUBLISH is the mix, its channels the key range, its rate the run's); its subscribers are
//! listeners the engine opens beside them (`engine::pubsub`). A tracking role's writers are
//! the run's connections too (SET with a stamp); its cached readers are listeners
//! (`engine::tracking`). A mix role is a plain command mix with its own connections
//! (`config::role::mix`).

use std::time::Duration;

mod error;
pub mod mix;
pub mod queue;
pub mod tracking;

pub use error::RoleError;

/// The most channel-and-publisher pairs a subscriber keeps a sequence number for.
pub const MAX_STREAMS: u64 = 1 << 22;

/// One client group of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Role {
    pub name: String,
    pub kind: RoleKind,
    /// How far into the measured run the role's requesting connections begin (`start=`):
    /// nothing is sent before, and an open-loop role's schedule begins then. Its listeners
    /// open before the run all the same.
    pub start: Duration,
}

impl Role {
    /// Role `name` doing `kind` from the run's start.
    pub fn new(name: impl Into<String>, kind: RoleKind) -> Role {
        Role { name: name.into(), kind, start: Duration::ZERO }
    }
}

/// What a role does.
#[derive(Debug, Clone, PartialEq)]
pub enum RoleKind {
    PubSub(PubSub),
    Tracking(tracking::Tracking),
    /// XADD producers and a consumer group (`config::role::queue`).
    Stream(queue::StreamRole),
    /// Producers and workers blocked on a pop (`config::role::queue`).
    Queue(queue::QueueRole),
    /// A plain command mix with its own connections, pipeline, keys, values and rate
    /// (`config::role::mix`); `None` until planned: the command line's own mix.
    Mix(Option<Box<mix::MixRole>>),
}

impl RoleKind {
    /// The word the kind goes by on the command line and in the result.
    pub fn word(&self) -> &'static str {
        match self {
            RoleKind::PubSub(_) => "pubsub",
            RoleKind::Tracking(_) => "tracking",
            RoleKind::Stream(_) => "stream",
            RoleKind::Queue(_) => "queue",
            RoleKind::Mix(_) => "mix",
        }
    }
}

/// How subscribers listen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Listen {
    /// `SUBSCRIBE` to every channel by name.
    Subscribe,
    /// `PSUBSCRIBE` to one pattern that matches every channel of the role.
    Psubscribe,
    /// `SSUBSCRIBE` (sharded pub/sub, `SPUBLISH`): in cluster mode, on the node owning each
    /// channel's slot.
    Ssubscribe,
}

impl Listen {
    pub fn name(self) -> &'static str {
        match self {
            Listen::Subscribe => "subscribe",
            Listen::Psubscribe => "psubscribe",
            Listen::Ssubscribe => "ssubscribe",
        }
    }
}

/// N channels x M subscribers, fed by publishers (closed loop, or at `rate` per second).
#[derive(Debug, Clone, PartialEq)]
pub struct PubSub {
    pub channels: u64,
    pub subscribers: usize,
    pub publishers: usize,
    /// Publishes per second over all publishers; `None`: closed loop.
    pub rate: Option<f64>,
    pub listen: Listen,
    /// Bytes of filler after the stamp each message carries.
    pub size: usize,
}

impl PubSub {
    /// Channel `n` (1-based) of role `name`.
    pub fn channel(name: &str, n: u64) -> String {
        format!("{name}:{n}")
    }
}

/// The `--role` flag's value: `NAME:KIND[:KEY=VALUE,...]`.
pub fn parse(text: &str) -> Result<Role, RoleError> {
    let mut parts = text.splitn(3, ':');
    let name = parts.next().unwrap_or_default();
    if name.is_empty() || name.contains(char::is_whitespace) {
        return Err(
            format!("--role '{text}': a role starts with its name (no spaces), as in news:pubsub:channels=10").into()
        );
    }
    let Some(kind) = parts.next().filter(|k| !k.is_empty()) else {
        return Err(format!(
            "--role {name} names nothing to do: give it a kind and its figures, as in \
             {name}:pubsub:channels=10,subscribers=5,rate=1000"
        )
        .into());
    };
    let (start, settings) = start(name, parts.next().unwrap_or_default())?;
    let settings = settings.as_str();
    let kind = match kind {
        "pubsub" => RoleKind::PubSub(pubsub(name, settings)?),
        "tracking" => RoleKind::Tracking(tracking::parse(name, settings)?),
        "stream" => RoleKind::Stream(queue::stream(name, settings)?),
        "queue" => RoleKind::Queue(queue::queue(name, settings)?),
        "mix" => RoleKind::Mix(mix::parse(name, settings)?),
        other => {
            return Err(format!(
                "--role {name}: unknown kind '{other}' (expected pubsub, stream, queue, tracking or mix)"
            )
            .into());
        }
    };
    Ok(Role { name: name.into(), kind, start })
}

/// The `start=DURATION` setting every kind takes, and the kind's own settings without it.
fn start(name: &str, settings: &str) -> Result<(Duration, String), RoleError> {
    let mut start = Duration::ZERO;
    let mut rest = Vec::new();
    for setting in settings.split(',').filter(|s| !s.is_empty()) {
        match setting.split_once('=') {
            Some(("start", value)) => start = start_value(name, value)?,
            _ => rest.push(setting),
        }
    }
    Ok((start, rest.join(",")))
}

/// A role's `start` value: a duration into the measured run, as in 1s or 500ms.
pub fn start_value(name: &str, value: &str) -> Result<Duration, RoleError> {
    if value.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse::<f64>() == Ok(0.0) {
        return Ok(Duration::ZERO);
    }
    super::parse::duration(value)
        .map_err(|e| format!("--role {name}: start={value}: {e} (a time into the run, as in 1s or 500ms)").into())
}

fn pubsub(name: &str, settings: &str) -> Result<PubSub, RoleError> {
    let mut p = PubSub { channels: 1, subscribers: 1, publishers: 1, rate: None, listen: Listen::Subscribe, size: 0 };
    for setting in settings.split(',').filter(|s| !s.is_empty()) {
        let Some((key, value)) = setting.split_once('=') else {
            return Err(format!("--role {name}: '{setting}' is not KEY=VALUE (as in channels=10)").into());
        };
        let count = |what: &str| -> Result<u64, RoleError> {
            value.parse::<u64>().map_err(|_| format!("--role {name}: {what}={value} is not a whole number").into())
        };
        match key {
            "channels" => p.channels = count("channels")?,
            "subscribers" => p.subscribers = count("subscribers")? as usize,
            "publishers" => p.publishers = count("publishers")? as usize,
            "size" => p.size = count("size")? as usize,
            "rate" => {
                let rate = super::parse::positive(value)
                    .map_err(|e| format!("--role {name}: rate={value}: {e} (publishes per second)"))?;
                p.rate = Some(rate as f64);
            }
            "mode" => {
                p.listen = match value {
                    "subscribe" => Listen::Subscribe,
                    "psubscribe" => Listen::Psubscribe,
                    "ssubscribe" => Listen::Ssubscribe,
                    _ => {
                        return Err(format!(
                            "--role {name}: mode={value} (expected subscribe, psubscribe or ssubscribe)"
                        )
                        .into());
                    }
                }
            }
            _ => {
                return Err(format!(
                    "--role {name}: unknown setting '{key}' (expected channels, subscribers, publishers, rate, \
                     mode or size)"
                )
                .into());
            }
        }
    }
    if p.channels == 0 {
        return Err(format!("--role {name} has no channels: give it channels=N (N at least 1)").into());
    }
    if p.publishers == 0 {
        return Err(format!(
            "--role {name} has subscribers but no publishers: give it publishers=N (N at least 1), or run \
             the subscribers with a role that publishes"
        )
        .into());
    }
    if p.channels.saturating_mul(p.publishers as u64) > MAX_STREAMS {
        return Err(format!(
            "--role {name}: {} channels x {} publishers is above {MAX_STREAMS}, the most a subscriber keeps \
             in order: fewer channels or publishers",
            p.channels, p.publishers
        )
        .into());
    }
    if p.subscribers == 0 {
        return Err(
            format!("--role {name} has publishers but no subscribers: give it subscribers=M (M at least 1)").into()
        );
    }
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pubsub_role_reads_its_settings() {
        let role = parse("news:pubsub:channels=10,subscribers=5,rate=1000,mode=psubscribe").unwrap();
        assert_eq!(role.name, "news");
        let RoleKind::PubSub(p) = role.kind else { panic!("a pub/sub role") };
        assert_eq!((p.channels, p.subscribers, p.publishers, p.rate), (10, 5, 1, Some(1000.0)));
        assert_eq!(p.listen, Listen::Psubscribe);
    }

    #[test]
    fn a_role_with_nothing_to_do_is_named_with_the_fix() {
        let e = parse("news").unwrap_err().to_string();
        assert!(e.starts_with("--role news names nothing to do"), "{e}");
        let e = parse("news:pubsub:publishers=0").unwrap_err().to_string();
        assert!(e.contains("news has subscribers but no publishers: give it publishers=N"), "{e}");
        let e = parse("news:queues").unwrap_err().to_string();
        assert!(e.contains("unknown kind 'queues'"), "{e}");
        let e = parse("jobs:queue:workers=0").unwrap_err().to_string();
        assert!(e.starts_with("--role jobs has producers but no workers: give it workers=M"), "{e}");
    }
}
