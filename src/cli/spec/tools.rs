//! The command lines of the tools a specification runs beside memtier_benchmark in its
//! `clientconfigs`, read into typed values: `pubsub-sub-bench` (subscribers, Go's flag syntax:
//! `-name value`, `--name value`, `-name=value`) and `bcast-listener` (RESP3 `CLIENT TRACKING
//! BCAST` listeners, `--name value`). A flag the reader does not know is refused by name, with
//! the ones it reads; the connection flags are respbench's own and not read.

use super::error::SpecError;

/// `pubsub-sub-bench`: the subscribers of a pub/sub specification.
pub const SUBSCRIBERS: &str = "pubsub-sub-bench";
/// `bcast-listener`: the tracking listeners of a client-side caching specification.
pub const LISTENERS: &str = "bcast-listener";

/// A `pubsub-sub-bench` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct SubBench {
    /// `-clients`: subscriber connections; without it, one per channel and subscriber.
    pub clients: Option<u64>,
    pub channel_min: u64,
    pub channel_max: u64,
    /// `-subscriber-prefix`: a channel's name is the prefix and its number.
    pub prefix: String,
    /// `-mode`: `subscribe` or `ssubscribe`.
    pub sharded: bool,
    pub subscribers_per_channel: u64,
    pub min_channels_per_subscriber: u64,
    pub max_channels_per_subscriber: u64,
}

impl SubBench {
    /// Subscriber connections, each on [`SubBench::channels_each`] channels.
    pub fn connections(&self) -> u64 {
        self.clients.unwrap_or(self.channels() * self.subscribers_per_channel)
    }

    pub fn channels(&self) -> u64 {
        self.channel_max - self.channel_min + 1
    }

    /// The channels one connection subscribes to, on average.
    pub fn channels_each(&self) -> f64 {
        (self.min_channels_per_subscriber + self.max_channels_per_subscriber) as f64 / 2.0
    }
}

/// A `bcast-listener` command line.
#[derive(Debug, Clone, PartialEq)]
pub struct BcastListeners {
    pub listeners: u64,
    pub prefix: String,
    /// `--acl-user-patterns`: each listener an ACL user allowed only these key patterns.
    pub acl_patterns: Option<String>,
}

/// What a flag holds.
#[derive(Clone, Copy, PartialEq)]
enum Holds {
    Number,
    Text,
    /// A flag alone, or `-name=true|false`.
    Switch,
}

/// Reads `arguments` as `tool`'s flags, each one of `known` (name, what it holds, whether
/// respbench uses it): the used ones' values by name.
fn flags(
    tool: &str,
    arguments: &str,
    known: &[(&'static str, Holds, bool)],
    dashes: &str,
) -> Result<Vec<(&'static str, String)>, SpecError> {
    let words = shlex::split(arguments).ok_or_else(|| format!("{tool} arguments: the quotes are not balanced"))?;
    let used: Vec<&str> = known.iter().filter(|k| k.2).map(|k| k.0).collect();
    let mut out = Vec::new();
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let Some(flag) = word.strip_prefix("--").or_else(|| word.strip_prefix('-').filter(|_| dashes == "-")) else {
            return Err(format!("{tool} arguments: '{word}' is not a flag ({dashes}name value)").into());
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        let Some(&(known_name, holds, use_it)) = known.iter().find(|k| k.0 == name) else {
            return Err(format!(
                "{tool} {dashes}{name} is not supported (respbench reads {dashes}{})",
                used.join(&format!(", {dashes}"))
            )
            .into());
        };
        let value = match (holds, inline) {
            (Holds::Switch, v) => v.unwrap_or_else(|| "true".into()),
            (_, Some(v)) => v,
            (_, None) => words.next().ok_or_else(|| format!("{tool} {dashes}{name}: expected a value after it"))?,
        };
        if holds == Holds::Number && value.parse::<u64>().is_err() {
            return Err(format!("{tool} {dashes}{name} {value}: expected a whole number").into());
        }
        if use_it {
            out.push((known_name, value));
        }
    }
    Ok(out)
}

fn number(values: &[(&str, String)], name: &str, default: u64) -> u64 {
    values.iter().rev().find(|(n, _)| *n == name).map_or(default, |(_, v)| v.parse().expect("checked as read"))
}

fn text<'a>(values: &'a [(&str, String)], name: &str) -> Option<&'a str> {
    values.iter().rev().find(|(n, _)| *n == name).map(|(_, v)| v.as_str())
}

/// Reads a `pubsub-sub-bench` command line.
pub fn sub_bench(arguments: &str) -> Result<SubBench, SpecError> {
    use Holds::*;
    let known = [
        ("clients", Number, true),
        ("channel-minimum", Number, true),
        ("channel-maximum", Number, true),
        ("subscriber-prefix", Text, true),
        ("mode", Text, true),
        ("subscribers-per-channel", Number, true),
        ("min-number-channels-per-subscriber", Number, true),
        ("max-number-channels-per-subscriber", Number, true),
        ("subscribers-placement-per-channel", Text, true),
        ("min-reconnect-interval", Number, true),
        ("max-reconnect-interval", Number, true),
        ("messages", Number, true),
        // The run's length is the publishers'; the server and the outputs are respbench's.
        ("test-time", Number, false),
        ("host", Text, false),
        ("port", Text, false),
        ("a", Text, false),
        ("user", Text, false),
        ("resp", Number, false),
        ("json-out-file", Text, false),
        ("client-update-tick", Number, false),
        ("print-messages", Switch, false),
        ("verbose", Switch, false),
        ("redis-timeout", Text, false),
        ("pool_size", Number, false),
    ];
    let v = flags(SUBSCRIBERS, arguments, &known, "-")?;
    let s = SubBench {
        clients: text(&v, "clients").map(|_| number(&v, "clients", 0)),
        channel_min: number(&v, "channel-minimum", 1),
        channel_max: number(&v, "channel-maximum", 100),
        prefix: text(&v, "subscriber-prefix").unwrap_or("channel-").to_string(),
        sharded: match text(&v, "mode").unwrap_or("subscribe") {
            "subscribe" => false,
            "ssubscribe" => true,
            other => return Err(format!("{SUBSCRIBERS} -mode {other}: expected subscribe or ssubscribe").into()),
        },
        subscribers_per_channel: number(&v, "subscribers-per-channel", 1),
        min_channels_per_subscriber: number(&v, "min-number-channels-per-subscriber", 1),
        max_channels_per_subscriber: number(&v, "max-number-channels-per-subscriber", 1),
    };
    if let Some(p) = text(&v, "subscribers-placement-per-channel").filter(|p| *p != "dense") {
        return Err(
            format!("{SUBSCRIBERS} -subscribers-placement-per-channel {p} is not supported (dense only)").into()
        );
    }
    for (flag, what) in [
        ("max-reconnect-interval", "subscribers that resubscribe"),
        ("min-reconnect-interval", "subscribers that resubscribe"),
        ("messages", "a count of messages instead of the run's length"),
    ] {
        if number(&v, flag, 0) > 0 {
            return Err(format!("{SUBSCRIBERS} -{flag} ({what}) is not supported").into());
        }
    }
    if s.channel_max < s.channel_min {
        return Err(format!(
            "{SUBSCRIBERS} -channel-minimum {} -channel-maximum {}: expected a range of at least one channel",
            s.channel_min, s.channel_max
        )
        .into());
    }
    if s.connections() == 0 || s.max_channels_per_subscriber == 0 {
        return Err(format!("{SUBSCRIBERS} arguments: no subscriber (-clients or -subscribers-per-channel 0)").into());
    }
    if s.min_channels_per_subscriber > s.max_channels_per_subscriber {
        return Err(format!(
            "{SUBSCRIBERS} -min-number-channels-per-subscriber {} is above -max-number-channels-per-subscriber {}",
            s.min_channels_per_subscriber, s.max_channels_per_subscriber
        )
        .into());
    }
    Ok(s)
}

/// Reads a `bcast-listener` command line.
pub fn bcast_listeners(arguments: &str) -> Result<BcastListeners, SpecError> {
    use Holds::*;
    let known = [
        ("listener-count", Number, true),
        ("tracking-prefix", Text, true),
        ("acl-user-patterns", Text, true),
        ("host", Text, false),
        ("port", Text, false),
        ("password", Text, false),
        ("user", Text, false),
    ];
    let v = flags(LISTENERS, arguments, &known, "--")?;
    let listeners = number(&v, "listener-count", 1);
    if listeners == 0 {
        return Err(format!("{LISTENERS} --listener-count 0: expected at least one listener").into());
    }
    let Some(prefix) = text(&v, "tracking-prefix") else {
        return Err(
            format!("{LISTENERS} arguments: expected --tracking-prefix P (the keys the listeners hear of)").into()
        );
    };
    Ok(BcastListeners {
        listeners,
        prefix: prefix.to_string(),
        acl_patterns: text(&v, "acl-user-patterns").map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pubsub_sub_bench_lines_are_read_in_go_flag_syntax() {
        let s = sub_bench(
            "-clients 5000 -channel-minimum 1 -channel-maximum 100 -subscriber-prefix \"channel-\" -mode subscribe \
             -test-time 120 -min-number-channels-per-subscriber 10 --max-number-channels-per-subscriber=10",
        )
        .unwrap();
        assert_eq!((s.clients, s.channels(), s.prefix.as_str(), s.sharded), (Some(5000), 100, "channel-", false));
        assert_eq!((s.connections(), s.channels_each()), (5000, 10.0));
        let s =
            sub_bench("-channel-minimum 1 -channel-maximum 10 -subscribers-per-channel 3 -mode ssubscribe").unwrap();
        assert_eq!((s.connections(), s.sharded), (30, true));
    }

    #[test]
    fn flags_that_cannot_be_run_are_named() {
        let e = sub_bench("-clients 1 -oss-cluster-api-distribute-subscribers").unwrap_err().to_string();
        assert!(e.starts_with("pubsub-sub-bench -oss-cluster-api-distribute-subscribers is not supported"), "{e}");
        let e = sub_bench("-mode psubscribe").unwrap_err().to_string();
        assert_eq!(e, "pubsub-sub-bench -mode psubscribe: expected subscribe or ssubscribe");
        let e = sub_bench("-clients many").unwrap_err().to_string();
        assert_eq!(e, "pubsub-sub-bench -clients many: expected a whole number");
        let e = bcast_listeners("--listeners 3").unwrap_err().to_string();
        assert!(e.starts_with("bcast-listener --listeners is not supported (respbench reads --listener-count"), "{e}");
    }

    #[test]
    fn bcast_listener_lines_are_read() {
        let l = bcast_listeners("--listener-count 100 --tracking-prefix bench:").unwrap();
        assert_eq!(l, BcastListeners { listeners: 100, prefix: "bench:".into(), acl_patterns: None });
        let l =
            bcast_listeners("--listener-count 200 --tracking-prefix bench: --acl-user-patterns bench:hot:*").unwrap();
        assert_eq!(l.acl_patterns.as_deref(), Some("bench:hot:*"));
        assert!(bcast_listeners("--listener-count 2").is_err());
    }
}
