//! redis-benchmark's server options applied in order, as its parser applies them: `-h`, `-p`,
//! `-s`, `-a`, `--user`, `--dbnum` and `-u` each set what they name and the last setting wins,
//! so a `-u` overrides an earlier `-p` and a later `-p` overrides the `-u`'s port. A URI sets
//! only the parts it has (`redis://host` keeps the port). The result is set on respbench's typed
//! flags.

use std::path::PathBuf;

use super::error::BenchmarkError;
use crate::cli::options::Args;
use crate::cli::parse;
use crate::config::Target;

/// The server options so far.
#[derive(Debug, Default, PartialEq)]
pub struct Connection {
    host: Option<String>,
    port: Option<u16>,
    socket: Option<PathBuf>,
    password: Option<String>,
    user: Option<String>,
    db: Option<u32>,
    /// `rediss://` or `valkeys://`.
    pub tls: bool,
}

impl Connection {
    /// Applies one option (its short or long name, as in the option table) if it is a server
    /// option; `Ok(false)` for any other.
    pub fn apply(&mut self, name: &str, value: &str) -> Result<bool, BenchmarkError> {
        let text = Some(value.to_string());
        match name {
            "h" => self.host = text,
            "p" => {
                let port =
                    value.parse().map_err(|_| format!("invalid value for '-p': '{value}' is not a port number"))?;
                self.port = Some(port);
            }
            "s" => self.socket = Some(PathBuf::from(value)),
            "a" => self.password = text,
            "user" => self.user = text,
            "dbnum" => {
                let db = value
                    .parse()
                    .map_err(|_| format!("invalid value for '--dbnum': '{value}' is not a database number"))?;
                self.db = Some(db);
            }
            "u" => self.uri(value)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The parts the URI has, over what was set before.
    fn uri(&mut self, value: &str) -> Result<(), BenchmarkError> {
        let uri = parse::uri(value).map_err(|e| format!("invalid value for '-u': {e}"))?;
        let present = Present::of(value);
        match uri.target {
            Target::Unix(path) => self.socket = Some(path),
            Target::Tcp { host, port } => {
                if present.host {
                    self.host = Some(host);
                }
                if present.port {
                    self.port = Some(port);
                }
            }
        }
        if uri.user.is_some() {
            self.user = uri.user;
        }
        if uri.password.is_some() {
            self.password = uri.password;
        }
        if let Some(db) = uri.db {
            self.db = Some(db);
        }
        self.tls |= uri.tls;
        Ok(())
    }

    /// Sets the server on respbench's flags: a socket replaces host and port, as `-s` does; the
    /// user only with a password (`--user` alone sends no AUTH, as in the tools). TLS from the
    /// URI is [`tls`](Self::tls), for the caller.
    pub fn set(&self, args: &mut Args) {
        match &self.socket {
            Some(path) => args.socket = Some(path.clone()),
            None => {
                if let Some(host) = &self.host {
                    args.host = host.clone();
                }
                if let Some(port) = self.port {
                    args.port = port;
                }
            }
        }
        args.password = self.password.clone();
        args.db = self.db;
        if self.password.is_some() {
            args.user = self.user.clone();
        }
    }
}

/// Which parts of a `scheme://[userinfo@]host[:port][/db]` URI are written out.
struct Present {
    host: bool,
    port: bool,
}

impl Present {
    fn of(uri: &str) -> Present {
        let rest = uri.split_once("://").map_or(uri, |(_, r)| r);
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        let hostport = rest.split('/').next().unwrap_or("");
        let port = match hostport.strip_prefix('[') {
            Some(v6) => v6.split_once(']').is_some_and(|(_, after)| after.starts_with(':')),
            None => hostport.contains(':'),
        };
        Present { host: !hostport.is_empty() && !hostport.starts_with(':'), port }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server as respbench's flags would say it, for comparing.
    fn flags(options: &[(&str, &str)]) -> Vec<String> {
        let mut c = Connection::default();
        for (name, value) in options {
            assert!(c.apply(name, value).unwrap());
        }
        let mut args = Args::default();
        c.set(&mut args);
        let default = Args::default();
        let mut out = Vec::new();
        match &args.socket {
            Some(path) => out.push(format!("--socket {}", path.display())),
            None => {
                if args.host != default.host {
                    out.push(format!("--host {}", args.host));
                }
                if args.port != default.port {
                    out.push(format!("--port {}", args.port));
                }
            }
        }
        out.extend(args.password.map(|p| format!("--password {p}")));
        out.extend(args.db.map(|db| format!("--db {db}")));
        out.extend(args.user.map(|u| format!("--user {u}")));
        out
    }

    #[test]
    fn the_last_setting_of_each_part_wins() {
        let joined = |options: &[(&str, &str)]| flags(options).join(" ");
        assert_eq!(joined(&[("p", "1"), ("u", "redis://h:7000")]), "--host h --port 7000");
        assert_eq!(joined(&[("u", "redis://h:7000"), ("p", "8000")]), "--host h --port 8000");
        // A URI without a port keeps -p; without a host keeps -h.
        assert_eq!(joined(&[("p", "7001"), ("u", "redis://h")]), "--host h --port 7001");
        assert_eq!(joined(&[("h", "x"), ("u", "redis://:7002/3")]), "--host x --port 7002 --db 3");
        assert_eq!(
            joined(&[("a", "old"), ("u", "redis://bob:new@h"), ("user", "amy")]),
            "--host h --password new --user amy"
        );
        assert_eq!(joined(&[("h", "x"), ("s", "/tmp/s")]), "--socket /tmp/s");
        let mut c = Connection::default();
        c.apply("u", "rediss://h").unwrap();
        assert!(c.tls);
        assert!(Connection::default().apply("u", "http://h").unwrap_err().contains("'-u'"));
        assert!(Connection::default().apply("p", "x").unwrap_err().contains("'x'"));
        assert!(Connection::default().apply("dbnum", "-1").unwrap_err().contains("'--dbnum'"));
    }
}
