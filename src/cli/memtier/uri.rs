//! memtier_benchmark's server options as memtier 2.3 combines them: `--uri`
//! (`redis://[[user]:password@]host[:port][/db]`, `rediss://` for TLS) overrides the parts it
//! names of `--host`, `--port`, `--authenticate` and `--select-db` and keeps the others, with
//! memtier's warnings; `--authenticate`'s `user:password`, `:password` and `password` forms.

use crate::config::parse::InvalidValue;

/// What a memtier `--uri` names; `None` where it says nothing.
#[derive(Debug, Default, PartialEq)]
pub struct Uri {
    pub host: Option<String>,
    pub port: Option<u16>,
    /// In `--authenticate`'s form.
    pub credentials: Option<String>,
    pub db: Option<u32>,
    pub tls: bool,
}

/// Reads a URI as memtier does: the scheme is `redis` or `rediss`, credentials end at the first
/// `@` and split at their first `:`, an empty host keeps `--host`. A bracketed IPv6 host
/// (`[::1]:6379`) is read too, which memtier cannot.
pub fn parse(uri: &str) -> Result<Uri, InvalidValue> {
    let bad = |why: String| format!("invalid --uri '{uri}': {why} (expected redis://[user:password@]host[:port][/db])");
    let (scheme, rest) = uri.split_once("://").ok_or_else(|| bad("no scheme://".into()))?;
    let tls = match scheme {
        "redis" => false,
        "rediss" => true,
        other => return Err(bad(format!("the scheme '{other}' is not redis or rediss")).into()),
    };
    let (credentials, rest) = match rest.split_once('@') {
        // memtier passes `user:password` on as --authenticate would, and a password alone too.
        Some((auth, rest)) => (Some(auth.to_string()), rest),
        None => (None, rest),
    };
    let (hostport, db) = match rest.split_once('/') {
        Some((h, "")) => (h, None),
        Some((h, d)) => (h, Some(d.parse::<u32>().map_err(|_| bad(format!("the database '{d}' is not a number")))?)),
        None => (rest, None),
    };
    let (host, port) = match hostport.strip_prefix('[').and_then(|v6| v6.split_once(']')) {
        Some((v6, after)) => (v6, after.strip_prefix(':')),
        None => match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        },
    };
    let port = match port {
        Some(p) => match p.parse::<u16>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(bad(format!("the port '{p}' is not a number in 1-65535")).into()),
        },
        None => None,
    };
    let host = (!host.is_empty()).then(|| host.to_string());
    Ok(Uri { host, port, credentials, db, tls })
}

/// memtier's `--authenticate` value as (user, password): `user:password` for an ACL user,
/// `:password` for a password holding a `:`, else the password alone.
pub fn credentials(value: &str) -> (Option<&str>, &str) {
    if let Some(password) = value.strip_prefix(':') {
        return (None, password);
    }
    match value.split_once(':') {
        Some((user, password)) => (Some(user), password),
        None => (None, value),
    }
}

/// The server options given besides the URI, as memtier holds them when it reads the URI.
#[derive(Debug, Default)]
pub struct Given<'a> {
    pub host: Option<&'a str>,
    pub port: Option<&'a str>,
    pub authenticate: Option<&'a str>,
    pub select_db: Option<&'a str>,
    pub tls: bool,
}

/// memtier's warnings (stderr) when the URI meets other server options, in its order: each
/// says the URI takes precedence, though a part the URI leaves out keeps the option's value.
pub fn warnings(given: &Given<'_>) -> Vec<String> {
    let port_given = given.port.is_some_and(|p| p.parse::<u16>() != Ok(6379));
    let db_given = given.select_db.is_some_and(|d| d.parse::<u64>() != Ok(0));
    [
        (given.host.is_some_and(|h| h != "localhost"), "--host/--server"),
        (port_given, "--port"),
        (given.authenticate.is_some(), "--authenticate"),
        (db_given, "--select-db"),
        (given.tls, "--tls"),
    ]
    .into_iter()
    .filter(|(on, _)| *on)
    .map(|(_, option)| format!("warning: both URI and {option} specified, URI takes precedence."))
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_uri_names_only_some_parts() {
        let u = parse("redis://bob:p:w@example.com:6380/2").unwrap();
        let want = Uri {
            host: Some("example.com".into()),
            port: Some(6380),
            credentials: Some("bob:p:w".into()),
            db: Some(2),
            tls: false,
        };
        assert_eq!(u, want);
        assert_eq!(parse("rediss://h").unwrap(), Uri { host: Some("h".into()), tls: true, ..Uri::default() });
        assert_eq!(parse("redis://:7000").unwrap(), Uri { port: Some(7000), ..Uri::default() });
        assert_eq!(parse("redis://[::1]:7000/").unwrap().host.as_deref(), Some("::1"));
        assert!(parse("http://h").unwrap_err().contains("'http'"));
        assert!(parse("redis://h:0").unwrap_err().contains("'0'"));
        assert!(parse("redis://h/x").unwrap_err().contains("'x'"));
    }

    #[test]
    fn credentials_as_memtier_splits_them() {
        assert_eq!(credentials("pw"), (None, "pw"));
        assert_eq!(credentials("bob:pw:x"), (Some("bob"), "pw:x"));
        assert_eq!(credentials(":pw:x"), (None, "pw:x"));
    }

    #[test]
    fn warnings_follow_memtiers_conditions() {
        let given = Given { host: Some("localhost"), port: Some("6379"), select_db: Some("0"), ..Given::default() };
        assert!(warnings(&given).is_empty());
        let given = Given { host: Some("10.0.0.1"), port: Some("7000"), tls: true, ..Given::default() };
        let w = warnings(&given);
        assert_eq!(w.len(), 3);
        assert_eq!(w[1], "warning: both URI and --port specified, URI takes precedence.");
    }
}
