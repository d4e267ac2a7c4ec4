//! Checks before a run, each a one-line warning: reading from an empty keyspace, reading a key
//! range that is not filled, and a server that persists to disk while it is measured. All of
//! them share one deadline (`--connect-timeout`); a server that wants a password or does not
//! speak RESP stops the run here, with the fix in words.

use crate::config::{Config, StopAfter};
use crate::net::{CallError, ConnectError, Reply, Session};

use super::server_stats::Info;

/// Keys sampled across the read range to tell whether it is filled.
const SAMPLED_KEYS: u64 = 32;

/// What the checks found: their warnings, and whether the server let the shared deadline pass
/// without answering (then the run's own INFO probe, which comes next, must not wait the whole
/// `--connect-timeout` a second time: [`RunState::after_checks`](super::RunState::after_checks)).
#[derive(Debug, Default)]
pub struct Checks {
    pub warnings: Vec<String>,
    pub found_silent: bool,
}

/// Warnings about the server and the plan, before any load is sent.
pub fn preflight(config: &Config) -> Result<Checks, ConnectError> {
    let budget = config.faults.connect_timeout;
    let mut session = Session::open_by_deadline(&config.server, budget)?;
    let mut warnings = Vec::new();
    if let Some(note) = v1_note(config, &session) {
        warnings.push(note);
    }
    let mut session = Checked { session: &mut session, warnings: &mut warnings, silent: false };
    let reads = config.commands.iter().any(|c| c.reads && c.weight > 0);
    // In cluster mode each primary holds its share: ask them all.
    let mut shards = match config.cluster {
        Some(_) => Shards::open(config, session.session)?,
        None => None,
    };
    if reads && config.stop != StopAfter::AllKeys {
        let dbsize = match shards.as_mut() {
            Some(shards) => shards.dbsize(),
            None => session.ask(&[b"DBSIZE"])?.and_then(|r| integer(&r.0)),
        };
        if dbsize == Some(0) {
            session.warnings.push(
                "the keyspace is empty while the workload reads: every GET will miss, and an empty cache \
                 benchmarks unrealistically well (fill it first: respbench fill, or -n allkeys)"
                    .to_string(),
            );
        } else if dbsize.is_some() {
            let (found, sampled) = match shards.as_mut() {
                Some(shards) => shards.sample_range(config),
                None => sample_range(&mut session, config)?,
            };
            if sampled > 0 && found < sampled {
                session.warnings.push(format!(
                    "only {found} of {sampled} keys sampled across the read range {p}{}..{p}{} exist: the range is \
                     not filled, so some GETs will miss",
                    config.keys.min,
                    config.keys.max,
                    p = config.keys.prefix
                ));
            }
        }
    }
    let save = session.ask(&[b"CONFIG", b"GET", b"save"])?.map(|r| String::from_utf8_lossy(&r.0).into_owned());
    if let Some(save) = save {
        // *2 $4 save $N <schedule>: a non-empty schedule means RDB snapshots.
        let schedule = save.lines().nth(4).unwrap_or("").trim().to_string();
        if !schedule.is_empty() {
            session.warnings.push(format!(
                "the server snapshots to disk (save \"{schedule}\"): a fork during the run can disturb latency"
            ));
        }
    }
    // Asked like the others, so that a server silent to INFO alone is noticed as silent.
    let info = session.ask(&[b"INFO"])?.and_then(|r| Info::parse(&String::from_utf8_lossy(r.text())));
    if info.is_some_and(|i| i.aof) {
        session.warnings.push("the server appends every write to disk (appendonly yes): writes pay for it".into());
    }
    let found_silent = session.silent;
    Ok(Checks { warnings, found_silent })
}

/// What the result says when the server's chain held an X.509 v1 certificate, which rustls's
/// own verifier refuses: that it was accepted, and on what grounds.
fn v1_note(config: &Config, session: &Session) -> Option<String> {
    let tls = config.server.tls.as_ref().filter(|t| !t.skip_verify)?;
    let subject = session.tls_v1_certificate()?;
    let name = if tls.skip_hostname { "" } else { ", and the host name against its common name" };
    Some(format!(
        "the server's certificate chain holds an X.509 v1 certificate ({subject}), which rustls refuses; it was \
         accepted as OpenSSL accepts it, after checking the chain to a trusted CA, each signature and validity \
         period{name}"
    ))
}

/// A session whose calls tell a check that may be skipped (the server refused the command or
/// did not answer in time: a warning, once) from a run that cannot succeed (an error).
struct Checked<'s> {
    session: &'s mut Session,
    warnings: &'s mut Vec<String>,
    /// A call did not answer in time: the deadline is spent, the checks are skipped.
    silent: bool,
}

impl Checked<'_> {
    fn ask(&mut self, args: &[&[u8]]) -> Result<Option<Reply>, ConnectError> {
        if self.silent {
            return Ok(None);
        }
        match self.session.call(args) {
            Ok(reply) => Ok(Some(reply)),
            Err(CallError::Server(message)) => match crate::resp::hint(message.as_bytes()) {
                Some(hint) if hint.fatal => Err(ConnectError::Refused {
                    target: self.session.target().to_string(),
                    command: String::from_utf8_lossy(args[0]).into_owned(),
                    message: format!("{message} — {}", hint.fix),
                }),
                // A server may refuse a check (CONFIG on managed services): skip it.
                _ => Ok(None),
            },
            Err(CallError::Connect(e @ ConnectError::Silent { .. })) => {
                self.silent = true;
                self.warnings.push(format!("{e}: the checks before the run are skipped"));
                Ok(None)
            }
            Err(CallError::Connect(e @ (ConnectError::NotResp { .. } | ConnectError::Protocol { .. }))) => Err(e),
            Err(CallError::Connect(_)) => Ok(None),
        }
    }
}

/// A few keys spread evenly over the range.
fn sample_keys(config: &Config) -> Vec<String> {
    let span = config.keys.len();
    let n = SAMPLED_KEYS.min(span);
    (0..n)
        .map(|i| {
            let offset = (u128::from(span) * (2 * u128::from(i) + 1) / (2 * u128::from(n))) as u64;
            format!("{}{}", config.keys.prefix, config.keys.min + offset)
        })
        .collect()
}

/// A cluster's primaries, each with its slot ranges and a session.
struct Shards {
    nodes: Vec<(Vec<(u16, u16)>, Session)>,
}

impl Shards {
    /// `None` when the map cannot be read or a primary cannot be reached (the run says why);
    /// an error when the seed serves no slot, which no run can get past.
    fn open(config: &Config, seed: &mut Session) -> Result<Option<Shards>, ConnectError> {
        let shards = match crate::net::cluster::serving(seed, &config.server) {
            Ok(shards) => shards,
            Err(e @ ConnectError::NoSlots { .. }) => return Err(e),
            Err(_) => return Ok(None),
        };
        let nodes = shards
            .into_iter()
            .map(|s| Session::open(&s.primary.options(&config.server)).ok().map(|session| (s.ranges, session)))
            .collect::<Option<Vec<_>>>();
        Ok(nodes.map(|nodes| Shards { nodes }))
    }

    fn dbsize(&mut self) -> Option<u64> {
        self.nodes.iter_mut().map(|(_, s)| s.call(&[b"DBSIZE"]).ok().and_then(|r| integer(&r.0))).sum()
    }

    /// Like [`sample_range`], one EXISTS per key on the primary of its slot.
    fn sample_range(&mut self, config: &Config) -> (u64, u64) {
        let keys = sample_keys(config);
        let mut found = 0;
        for key in &keys {
            let slot = crate::net::cluster::slot(key.as_bytes());
            let Some((_, session)) =
                self.nodes.iter_mut().find(|(ranges, _)| ranges.iter().any(|&(a, b)| (a..=b).contains(&slot)))
            else {
                return (0, 0);
            };
            match session.call(&[b"EXISTS", key.as_bytes()]).ok().and_then(|r| integer(&r.0)) {
                Some(n) => found += n,
                None => return (0, 0),
            }
        }
        (found, keys.len() as u64)
    }
}

/// How many of a few keys spread evenly over the range exist (one EXISTS call).
fn sample_range(session: &mut Checked, config: &Config) -> Result<(u64, u64), ConnectError> {
    let keys = sample_keys(config);
    let n = keys.len() as u64;
    let mut args: Vec<&[u8]> = vec![b"EXISTS"];
    args.extend(keys.iter().map(|k| k.as_bytes()));
    Ok(match session.ask(&args)?.and_then(|r| integer(&r.0)) {
        Some(found) => (found, n),
        None => (0, 0),
    })
}

/// The value of an integer reply (`:42\r\n`).
fn integer(reply: &[u8]) -> Option<u64> {
    std::str::from_utf8(reply.strip_prefix(b":")?).ok()?.trim().parse().ok()
}
