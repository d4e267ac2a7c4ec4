//! `--setup`: commands sent once before a benchmark's runs, on control connections (the
//! server given; in cluster mode every primary), whose replies fill the commands'
//! `__setup:N__` before their templates are compiled; and the configuration a setup CONFIG SET
//! changed, put back after the runs, as a specification's is.

use crate::config::Config;
use crate::config::arguments::SetupCommand;
use crate::net::{CallError, Session};
use crate::resp::value::{self, Value};

message_error!(
    /// A setup command the server refused, or whose reply a command cannot use; the message
    /// names the command.
    SetupError
);

/// Commands that act on a whole node rather than a key: in cluster mode every primary gets them
/// (a script or a function must be loaded where the keys it runs on live).
const EVERY_NODE: [&str; 6] = ["SCRIPT", "FUNCTION", "CONFIG", "FLUSHALL", "FLUSHDB", "ACL"];

/// The control connections: the server given, or in cluster mode every primary.
struct Server {
    sessions: Vec<Session>,
}

impl Server {
    fn open(config: &Config) -> Result<Server, crate::net::ConnectError> {
        let budget = config.faults.connect_timeout;
        let mut seed = Session::open_by_deadline(&config.server, budget)?;
        if config.cluster.is_none() {
            return Ok(Server { sessions: vec![seed] });
        }
        let shards = crate::net::cluster::shards(&mut seed, &config.server)?;
        let sessions = shards.iter().map(|s| Session::open_by_deadline(&s.primary.options(&config.server), budget));
        Ok(Server { sessions: sessions.collect::<Result<_, _>>()? })
    }

    /// `CONFIG GET name` on the first node: `None` when the server has no such parameter.
    fn config_get(&mut self, name: &str) -> Option<String> {
        let reply = self.sessions[0].call(&[b"CONFIG", b"GET", name.as_bytes()]).ok()?;
        let pairs = value::parse(&reply.0)?;
        let pairs = pairs.as_array()?;
        pairs.chunks(2).find(|p| p[0].as_str() == Some(name)).and_then(|p| p.get(1)?.as_str().map(str::to_string))
    }

    /// `CONFIG SET name value` on every node.
    fn config_set(&mut self, name: &str, value: &str) -> Result<(), CallError> {
        for session in &mut self.sessions {
            session.call(&[b"CONFIG", b"SET", name.as_bytes(), value.as_bytes()])?;
        }
        Ok(())
    }
}

/// What the setup commands left: their replies, and the parameters to put back.
pub struct Setup {
    server: Option<Server>,
    /// Reply of setup command `i` as one value (a string, an integer's digits); `None` for a
    /// list, a null or an accepted BUSYGROUP.
    replies: Vec<Option<Vec<u8>>>,
    /// `(name, old value)` of each parameter a setup CONFIG SET changed, in order.
    changed: Vec<(String, String)>,
}

impl Setup {
    /// Sends the plan's setup commands in order; none: nothing is opened.
    pub fn run(config: &Config) -> Result<Setup, SetupError> {
        let mut setup = Setup { server: None, replies: Vec::new(), changed: Vec::new() };
        if config.extras.setup.is_empty() {
            return Ok(setup);
        }
        let mut server = Server::open(config).map_err(|e| format!("--setup: {e}"))?;
        let sent = config.extras.setup.iter().enumerate().try_for_each(|(i, command)| {
            let reply = setup
                .send(&mut server, command)
                .map_err(|e| format!("--setup {} ({}): {e}", i + 1, command.shown()))?;
            setup.replies.push(reply);
            Ok::<(), SetupError>(())
        });
        setup.server = Some(server);
        if let Err(e) = sent {
            setup.put_back();
            return Err(e);
        }
        for n in config.setup_refs() {
            if setup.replies.get(usize::from(n) - 1).is_none_or(Option::is_none) {
                let command = &config.extras.setup[usize::from(n) - 1];
                setup.put_back();
                return Err(format!(
                    "--setup {n} ({}): its reply is not one value (a string or a number), so __setup:{n}__ cannot \
                     take it",
                    command.shown()
                )
                .into());
            }
        }
        Ok(setup)
    }

    /// The plan with the replies filled in; `None` when no command names one.
    pub fn filled(&self, config: &Config) -> Option<Config> {
        (!config.setup_refs().is_empty()).then(|| config.with_setup_replies(&self.replies))
    }

    /// One command: a CONFIG SET's old values kept first; sent to every primary, or to the one
    /// that owns its key (the nodes in turn until one does not answer MOVED).
    fn send(&mut self, server: &mut Server, command: &SetupCommand) -> Result<Option<Vec<u8>>, SetupError> {
        let words = &command.words;
        let name = words[0].to_ascii_uppercase();
        if name == "CONFIG" && words.get(1).is_some_and(|w| w.eq_ignore_ascii_case("SET")) {
            for pair in words[2..].chunks(2) {
                if let Some(old) = server.config_get(&pair[0]) {
                    self.changed.push((pair[0].clone(), old));
                }
            }
        }
        let args: Vec<&[u8]> = words.iter().map(|w| w.as_bytes()).collect();
        let every = EVERY_NODE.contains(&name.as_str());
        let mut first = None;
        let mut last_error = None;
        for session in &mut server.sessions {
            match session.call(&args) {
                Ok(reply) => {
                    first.get_or_insert(reply);
                    if !every {
                        break;
                    }
                }
                Err(CallError::Server(msg)) if msg.starts_with("MOVED") && !every => last_error = Some(msg),
                // The group is there already: what the command was for holds (a run again).
                Err(CallError::Server(msg)) if msg.starts_with("BUSYGROUP") => return Ok(None),
                Err(e) => return Err(e.to_string().into()),
            }
        }
        let Some(reply) = first else {
            return Err(last_error.unwrap_or_else(|| "no node answered".into()).into());
        };
        Ok(match value::parse(&reply.0) {
            Some(Value::Str(bytes) | Value::Other(bytes)) => Some(bytes),
            Some(Value::Int(n)) => Some(n.to_string().into_bytes()),
            _ => None,
        })
    }

    /// Puts back each parameter a setup CONFIG SET changed, latest first, and says so.
    pub fn put_back(&mut self) {
        let (Some(server), false) = (self.server.as_mut(), self.changed.is_empty()) else { return };
        let mut names = Vec::new();
        for (name, old) in self.changed.drain(..).rev() {
            match server.config_set(&name, &old) {
                Ok(()) => names.push(name),
                Err(e) => eprintln!("respbench: cannot put {name} back to '{old}': {e}"),
            }
        }
        if !names.is_empty() {
            names.reverse();
            eprintln!("respbench: configuration put back: {}", names.join(", "));
        }
    }
}
