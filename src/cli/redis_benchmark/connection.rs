//! redis-benchmark's server options applied in order, as its parser applies them: `-h`, `-p`,
//! `-s`, `-a`, `--user`, `--dbnum` and `-u` each set what they name and the last setting wins,
//! so a `-u` overrides an earlier `-p` and a later `-p` overrides the `-u`'s port. A URI sets
//! only the parts it has (`redis://host` keeps the port).

use std::ffi::OsString;

use crate::cli::parse;
use crate::config::Target;

/// The server options so far.
#[derive(Debug, Default, PartialEq)]
pub struct Connection {
    host: Option<String>,
    port: Option<String>,
    socket: Option<String>,
    password: Option<String>,
    user: Option<String>,
    db: Option<String>,
    /// `rediss://` or `valkeys://`.
    pub tls: bool,
}

impl Connection {
    /// Applies one option (its short or long name, as in the option table) if it is a server
    /// option; `Ok(false)` for any other.
    pub fn apply(&mut self, name: &str, value: &str) -> Result<bool, String> {
        let slot = match name {
            "h" => &mut self.host,
            "p" => &mut self.port,
            "s" => &mut self.socket,
            "a" => &mut self.password,
            "user" => &mut self.user,
            "dbnum" => &mut self.db,
            "u" => {
                self.uri(value)?;
                return Ok(true);
            }
            _ => return Ok(false),
        };
        *slot = Some(value.to_string());
        Ok(true)
    }

    /// The parts the URI has, over what was set before.
    fn uri(&mut self, value: &str) -> Result<(), String> {
        let uri = parse::uri(value).map_err(|e| format!("invalid value for '-u': {e}"))?;
        let present = Present::of(value);
        match uri.target {
            Target::Unix(path) => self.socket = Some(path.to_string_lossy().into_owned()),
            Target::Tcp { host, port } => {
                if present.host {
                    self.host = Some(host);
                }
                if present.port {
                    self.port = Some(port.to_string());
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
            self.db = Some(db.to_string());
        }
        self.tls |= uri.tls;
        Ok(())
    }

    /// Whether a password was given (`--user` alone sends no AUTH).
    fn has_password(&self) -> bool {
        self.password.is_some()
    }

    /// respbench's flags for the server: a socket replaces host and port, as `-s` does
    /// (TLS from the URI is [`tls`](Self::tls), for the caller to add once).
    pub fn flags(&self) -> Vec<OsString> {
        let mut out: Vec<OsString> = Vec::new();
        let tcp = [("--host", &self.host), ("--port", &self.port)];
        let pairs = if self.socket.is_some() { vec![("--socket", &self.socket)] } else { tcp.to_vec() };
        let rest = [("--password", &self.password), ("--db", &self.db)];
        for (flag, value) in pairs.into_iter().chain(rest) {
            if let Some(v) = value {
                out.extend([flag.into(), v.into()]);
            }
        }
        if let (Some(user), true) = (&self.user, self.has_password()) {
            out.extend(["--user".into(), user.into()]);
        }
        out
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

    fn flags(options: &[(&str, &str)]) -> Vec<String> {
        let mut c = Connection::default();
        for (name, value) in options {
            assert!(c.apply(name, value).unwrap());
        }
        c.flags().into_iter().map(|f| f.into_string().unwrap()).collect()
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
    }
}
