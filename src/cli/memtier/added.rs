//! The options memtier_benchmark added after 2.3 that need more than a field set: its
//! Prometheus exporter on respbench's metrics endpoint, and read preference on respbench's
//! replica reads (what respbench can honour is taken, the rest refused in one line).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use crate::cli::options::Args;

/// `--prometheus-port`, `--prometheus-bind-addr`, `--prometheus-run-label` (`name`; `long` as
/// written): the port and address kept in `exporter` until the options are all read.
pub(super) fn prometheus(
    name: &str,
    long: &str,
    v: &str,
    exporter: &mut (Option<u16>, Option<IpAddr>),
    args: &mut Args,
) -> Result<(), String> {
    match name {
        "prometheus-port" => {
            let port = v.parse().map_err(|_| format!("invalid value for '{long}': '{v}' is not a port (0 to 65535)"));
            exporter.0 = Some(port?);
        }
        "prometheus-bind-addr" => {
            let addr = v.trim_start_matches('[').trim_end_matches(']').parse();
            let addr = addr.map_err(|_| {
                format!(
                    "invalid value for '{long}': '{v}' is not a numeric IPv4 or IPv6 address (hostnames are not taken)"
                )
            });
            exporter.1 = Some(addr?);
        }
        // Every one adds a label, as memtier's.
        _ => {
            let label = crate::report::live::shape::label(v).map_err(|e| format!("invalid value for '{long}': {e}"))?;
            let labels = &mut args.scenario.metrics_label;
            labels.retain(|l| l.name != label.name);
            labels.push(label);
        }
    }
    Ok(())
}

/// `--read-server HOST:PORT`: checked as memtier checks it (true: one more given).
pub(super) fn read_server(long: &str, v: &str) -> Result<bool, String> {
    match v.rsplit_once(':').map(|(h, p)| (h, p.parse::<u16>())) {
        Some((host, Ok(port))) if !host.is_empty() && port > 0 => Ok(true),
        _ => Err(format!("invalid value for '{long}': '{v}' is not HOST:PORT")),
    }
}

/// `--command-is-read` after the `--command` `last`: respbench routes to replicas the reads it
/// knows, so it is taken for those and refused for the rest.
pub(super) fn command_is_read(long: &str, last: Option<&str>) -> Result<(), String> {
    let Some(last) = last else {
        return Err(format!("memtier_benchmark's {long} marks the --command before it: none was given"));
    };
    let spec = crate::config::CommandSpec::parse(last, 1, crate::config::KeyPattern::Random);
    if !spec.is_ok_and(|s| s.reads) {
        return Err(format!(
            "{long} after --command '{last}': respbench sends to replicas only the reads it knows (GET, GETEX, \
             GETDEL, HGET, HMGET, LINDEX, ZSCORE, MGET, GETRANGE)"
        ));
    }
    Ok(())
}

/// `--prometheus-port` (and its address): respbench's metrics endpoint in memtier's names;
/// memtier's warning when it listens beyond loopback.
pub(super) fn exporter((port, addr): (Option<u16>, Option<IpAddr>), args: &mut Args) -> Option<String> {
    let port = port?;
    let ip = addr.unwrap_or(Ipv4Addr::LOCALHOST.into());
    args.scenario.metrics_listen = Some(SocketAddr::new(ip, port));
    args.scenario.metrics_names = crate::report::live::shape::Names::Memtier;
    (!ip.is_loopback()).then(|| {
        format!(
            "WARNING: Prometheus exporter bound to non-loopback address {ip}: /metrics has no authentication; \
             make sure only trusted networks can reach it"
        )
    })
}

/// `--read-preference` and its fallback as respbench's `--read-from-replicas`: what respbench
/// can honour is taken, the rest refused in one line.
pub(super) fn read_preference(
    (mode, fallback): &(Option<String>, Option<String>),
    args: &mut Args,
) -> Result<(), String> {
    use crate::cli::options::ReadFromArg;
    let fallback = fallback.as_deref().unwrap_or("error");
    if !matches!(fallback, "error" | "queue" | "primary") {
        return Err(format!("invalid value for '--read-preference-fallback': '{fallback}' (error, queue or primary)"));
    }
    args.read_from_replicas = match mode.as_deref().unwrap_or("primary") {
        "primary" => ReadFromArg::No,
        // A replica of the slot's shard, its primary when it has none: respbench's `yes`.
        "secondaryPreferred" => ReadFromArg::Yes,
        "secondary" if fallback == "primary" => ReadFromArg::Yes,
        "secondary" => {
            return Err(format!(
                "--read-preference=secondary with --read-preference-fallback={fallback} is not available: respbench \
                 reads a slot without a replica from its primary (give --read-preference-fallback=primary)"
            ));
        }
        "nearest" => {
            return Err("--read-preference=nearest is not available: respbench does not choose replicas by their \
                        latency (secondaryPreferred reads from the replicas in turn)"
                .into());
        }
        other => {
            return Err(format!(
                "invalid value for '--read-preference': '{other}' (primary, secondary, secondaryPreferred or nearest)"
            ));
        }
    };
    Ok(())
}
