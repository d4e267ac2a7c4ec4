//! `--protocol`: the wire protocol a run speaks (RESP, or memcached's text, binary or meta),
//! and what a memcached run cannot have (RESP's login, databases, cluster mode), refused
//! before anything connects. Kept apart so that `options/mod.rs` does not grow.

use clap::Args as ClapArgs;

use super::error::OptionsError;
use crate::codec::Protocol;
use crate::config::Config;
use crate::config::parse::InvalidValue;

#[derive(Debug, Clone, Default, ClapArgs)]
pub struct ProtocolFlags {
    /// Wire protocol: resp, memcache-text, memcache-binary (SASL PLAIN login with --user and
    /// -a) or memcache-meta (memcached 1.6's ms/mg/md). memcached runs SET, GET, MGET
    /// (--multi-key-get), DEL and INCR.
    #[arg(long, value_name = "NAME", default_value = "resp", value_parser = parse_protocol, help_heading = "Connection")]
    pub protocol: Protocol,
}

fn parse_protocol(s: &str) -> Result<Protocol, InvalidValue> {
    Ok(Protocol::from_name(s).ok_or_else(|| {
        format!("--protocol '{s}' is not one of: resp, memcache-text, memcache-binary, memcache-meta")
    })?)
}

/// The usage errors of a memcached run's plan (none for RESP).
pub fn check(config: &Config) -> Result<(), OptionsError> {
    let protocol = config.server.session.protocol;
    if !protocol.is_memcache() {
        return Ok(());
    }
    let name = protocol.name();
    let server = &config.server;
    if server.resp3 {
        return Err(format!("--resp3 is a RESP option: --protocol {name} has no RESP3").into());
    }
    if config.cluster.is_some() {
        return Err(format!("--cluster is Redis Cluster's: --protocol {name} talks to one memcached").into());
    }
    if server.db.is_some() {
        return Err(format!("--db selects a Redis database: memcached has none (--protocol {name})").into());
    }
    if server.session.tracking {
        return Err(format!("--enable-tracking is RESP's client-side caching: --protocol {name} has none").into());
    }
    match (protocol, &server.user, &server.password) {
        (Protocol::MemcacheBinary, None, Some(_)) => Err(
            "memcached's SASL PLAIN login needs a user: --user NAME -a PASSWORD (memtier: --authenticate USER:PASS)"
                .into(),
        ),
        (Protocol::MemcacheText | Protocol::MemcacheMeta, _, Some(_)) => {
            Err(format!("--protocol {name} has no login: memcached's SASL works over --protocol memcache-binary")
                .into())
        }
        _ => Ok(()),
    }
}
