//! What the tools print on stdout before the tests under `--cluster`: the nodes they will
//! load, read from CLUSTER SLOTS. valkey-benchmark 9: `Cluster has N primary nodes:` (`replica`
//! under `--rfr yes`, `cluster` under `--rfr all`), then `Node I(Primary): ID IP:PORT` per node;
//! redis-benchmark 7: `Cluster has N master nodes:`, then `Master I: ID IP:PORT`.

use std::fmt::Write;

use crate::config::{Config, ReadFrom};
use crate::net::Session;
use crate::net::cluster::{self, SlotNode};

/// The listing for the cluster `config` names, or `None` when its nodes cannot be read (the
/// run that follows says why, in the tool's words) or it has none.
pub fn listing(tool: &str, config: &Config) -> Option<String> {
    let read_from = config.cluster?;
    let mut session = Session::open_within(&config.server, config.faults.connect_timeout).ok()?;
    let nodes = cluster::slot_nodes(&mut session, &config.server).ok()?;
    let nodes: Vec<SlotNode> = nodes
        .into_iter()
        .filter(|n| match read_from {
            ReadFrom::No => n.primary,
            ReadFrom::Yes => !n.primary,
            ReadFrom::All => true,
        })
        .collect();
    (!nodes.is_empty()).then(|| render(tool, read_from, &nodes))
}

fn render(tool: &str, read_from: ReadFrom, nodes: &[SlotNode]) -> String {
    let valkey = tool == "valkey-benchmark";
    let roles = match (valkey, read_from) {
        (false, _) => "master",
        (true, ReadFrom::No) => "primary",
        (true, ReadFrom::Yes) => "replica",
        (true, ReadFrom::All) => "cluster",
    };
    let mut out = format!("Cluster has {} {roles} nodes:\n\n", nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        let addr = format!("{}:{}", node.addr.host, node.addr.port);
        let _ = match (valkey, node.primary) {
            (true, true) => writeln!(out, "Node {i}(Primary): {} {addr}", node.id),
            (true, false) => writeln!(out, "Node {i}(Replica): {} {addr}", node.id),
            (false, _) => writeln!(out, "Master {i}: {} {addr}", node.id),
        };
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::cluster::NodeAddr;

    #[test]
    fn the_tools_words() {
        let node = |id: &str, port, primary| SlotNode {
            id: id.into(),
            addr: NodeAddr { host: "127.0.0.1".into(), port },
            primary,
        };
        let nodes = [node("aa", 7000, true), node("bb", 7001, false)];
        assert_eq!(
            render("valkey-benchmark", ReadFrom::All, &nodes),
            "Cluster has 2 cluster nodes:\n\nNode 0(Primary): aa 127.0.0.1:7000\nNode 1(Replica): bb 127.0.0.1:7001\n\n"
        );
        assert_eq!(
            render("redis-benchmark", ReadFrom::No, &nodes[..1]),
            "Cluster has 1 master nodes:\n\nMaster 0: aa 127.0.0.1:7000\n\n"
        );
    }
}
