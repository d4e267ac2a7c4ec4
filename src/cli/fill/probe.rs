//! What a fill reads of the server's memory: INFO (used memory, maxmemory, evictions) and
//! `CONFIG GET maxmemory`, of one server or summed over a cluster's primaries.

use super::error::FillError;
use crate::config::Config;
use crate::engine::Info;
use crate::net::Session;

/// The server's memory as a fill sees it: one server's INFO, or in cluster mode every primary's,
/// summed (used memory, maxmemory, evictions), so a target is spread over the shards.
pub(super) struct Probe {
    sessions: Vec<Session>,
}

impl Probe {
    pub(super) fn open(config: &Config) -> Result<Probe, FillError> {
        let mut seed = Session::open(&config.server).map_err(|e| e.to_string())?;
        if config.cluster.is_none() {
            return Ok(Probe { sessions: vec![seed] });
        }
        let shards = crate::net::cluster::shards(&mut seed, &config.server).map_err(|e| e.to_string())?;
        let sessions = shards
            .iter()
            .map(|shard| Session::open(&shard.primary.options(&config.server)).map_err(|e| FillError(e.to_string())))
            .collect::<Result<Vec<_>, FillError>>()?;
        Ok(Probe { sessions })
    }

    /// INFO of every node, summed; `None` if any refuses it.
    pub(super) fn info(&mut self) -> Option<Info> {
        let mut all: Option<Info> = None;
        for session in &mut self.sessions {
            let info = Info::read(session)?;
            all = Some(match all {
                None => info,
                Some(mut sum) => {
                    sum.used_memory += info.used_memory;
                    sum.counted_memory += info.counted_memory;
                    sum.maxmemory += info.maxmemory;
                    sum.evicted += info.evicted;
                    sum.keys += info.keys;
                    sum
                }
            });
        }
        all
    }

    /// Every node's maxmemory, summed (0: no limit); `None` if any hides it.
    pub(super) fn maxmemory(&mut self) -> Option<u64> {
        let each: Vec<u64> = self.sessions.iter_mut().map(config_maxmemory).collect::<Option<_>>()?;
        // One node without a limit makes the whole unlimited.
        Some(if each.contains(&0) { 0 } else { each.iter().sum() })
    }
}

/// `CONFIG GET maxmemory`, when CONFIG is allowed.
fn config_maxmemory(session: &mut Session) -> Option<u64> {
    let reply = session.call(&[b"CONFIG", b"GET", b"maxmemory"]).ok()?;
    let text = String::from_utf8_lossy(&reply.0).into_owned();
    text.lines().nth(4)?.trim().parse().ok()
}
