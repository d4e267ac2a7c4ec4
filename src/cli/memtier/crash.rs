//! The bug report under memtier_benchmark's name, laid out as memtier 2.3 writes its own (its
//! start and end markers, `memtier_benchmark crashed by signal`, the crashing thread marked in
//! the stack section, the client's connection list), so that whoever collects memtier's crash
//! reports finds ours. Written by the crash watcher (`signals`), never inside the handler.

use crate::engine::WORKER_THREAD;

pub const START: &str = "\n\n=== MEMTIER_BENCHMARK BUG REPORT START: Cut & paste starting from here ===\n";
pub const END: &str = "\n=== MEMTIER_BENCHMARK BUG REPORT END. Make sure to include from START to END. ===\n\n";

/// The opening lines: the signal (its number and `name`), its code and the fault address
/// (memtier prints both).
pub fn header(p: &str, (sig, name): (i32, &str), code: i32, addr: u64) -> String {
    format!(
        "{START}{p}memtier_benchmark crashed by signal: {sig}\n{p}Crashed running signal <{name}>\n{p}Signal code: \
         {code}\n{p}Fault address: {addr:#x}\n"
    )
}

/// The stack section: the crashing thread first, marked as such, with its frames; then each
/// worker thread, whose stack only a core dump holds.
pub fn stack_section(p: &str, crashed_tid: u64, frames: &str) -> String {
    let mut out = format!("\n{p}--- STACK TRACE (all threads)\n{p}Thread {crashed_tid} (current/crashing thread):\n");
    out.push_str(frames);
    for (tid, worker) in workers().into_iter().filter(|(tid, _)| *tid != crashed_tid) {
        out.push_str(&format!(
            "{p}Thread {tid} (worker thread {worker}):\n{p}  (Note: Stack trace for non-crashing threads not \
             available on this platform)\n"
        ));
    }
    out
}

/// The process's worker threads (named `respbench-wN`): thread id and N, by N.
fn workers() -> Vec<(u64, usize)> {
    let mut found: Vec<(u64, usize)> = std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|task| {
            let tid = task.file_name().to_str()?.parse().ok()?;
            let comm = std::fs::read_to_string(task.path().join("comm")).ok()?;
            let worker = comm.trim().strip_prefix(WORKER_THREAD)?.parse().ok()?;
            Some((tid, worker))
        })
        .collect();
    found.sort_by_key(|&(_, worker)| worker);
    found
}

/// The client's connections, one line each in memtier's `key=value` form: the process's TCP
/// sockets to a server (listening ones left out), with their remote address, local port and
/// state, read from /proc. Which worker owns a socket the kernel does not say, so the line
/// has no `thread=`/`client=` (nor memtier's `pending=`/`last_cmd=`).
pub fn client_list(p: &str) -> String {
    let mut out = format!("\n{p}--- CLIENT LIST OUTPUT\n");
    let ours = socket_inodes();
    let mut conn = 0;
    for table in ["/proc/self/net/tcp", "/proc/self/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for socket in text.lines().skip(1).filter_map(TcpSocket::parse) {
            if socket.state == LISTEN || !ours.contains(&socket.inode) {
                continue;
            }
            out.push_str(&format!(
                "{p}conn={conn} addr={} local_port={} state={}\n",
                socket.remote,
                socket.local_port,
                state_name(socket.state)
            ));
            conn += 1;
        }
    }
    out
}

/// The lines that close the report.
pub fn footer(p: &str) -> String {
    format!(
        "{p}For more information, please check the core dump if available.\n{p}To enable core dumps: ulimit -c \
         unlimited\n{p}Core pattern: /proc/sys/kernel/core_pattern\n{END}       Please report this bug with the \
         command line and the server's version.\n\n"
    )
}

const LISTEN: u8 = 0x0A;

/// memtier's connection states: connected, connecting, disconnected.
fn state_name(state: u8) -> &'static str {
    match state {
        0x01 => "connected",
        0x02 | 0x03 => "connecting",
        _ => "disconnected",
    }
}

/// The inodes of the process's sockets (`/proc/self/fd/N -> socket:[INODE]`).
fn socket_inodes() -> Vec<u64> {
    std::fs::read_dir("/proc/self/fd")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| {
            let link = std::fs::read_link(fd.path()).ok()?;
            link.to_str()?.strip_prefix("socket:[")?.strip_suffix(']')?.parse().ok()
        })
        .collect()
}

/// One line of /proc/net/tcp or tcp6.
#[derive(Debug, PartialEq)]
struct TcpSocket {
    local_port: u16,
    remote: String,
    state: u8,
    inode: u64,
}

impl TcpSocket {
    fn parse(line: &str) -> Option<TcpSocket> {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (local, remote, state, inode) = (fields.get(1)?, fields.get(2)?, fields.get(3)?, fields.get(9)?);
        let (_, local_port) = local.split_once(':')?;
        let (remote_ip, remote_port) = remote.split_once(':')?;
        let port = u16::from_str_radix(remote_port, 16).ok()?;
        let ip = match remote_ip.len() {
            8 => std::net::IpAddr::from(u32::from_str_radix(remote_ip, 16).ok()?.to_le_bytes()),
            32 => {
                // Four 32-bit words, each in the kernel's (little-endian) byte order.
                let mut bytes = [0u8; 16];
                for (i, word) in bytes.chunks_mut(4).enumerate() {
                    let w = u32::from_str_radix(remote_ip.get(i * 8..i * 8 + 8)?, 16).ok()?;
                    word.copy_from_slice(&w.to_le_bytes());
                }
                let v6 = std::net::Ipv6Addr::from(bytes);
                v6.to_ipv4_mapped().map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4)
            }
            _ => return None,
        };
        Some(TcpSocket {
            local_port: u16::from_str_radix(local_port, 16).ok()?,
            remote: std::net::SocketAddr::new(ip, port).to_string(),
            state: u8::from_str_radix(state, 16).ok()?,
            inode: inode.parse().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_net_tcp_lines() {
        let v4 = "   3: 0100007F:A1B2 0100007F:18EB 01 00000000:00000000 00:00000000 00000000     0        0 4242 1";
        assert_eq!(
            TcpSocket::parse(v4),
            Some(TcpSocket { local_port: 0xA1B2, remote: "127.0.0.1:6379".into(), state: 1, inode: 4242 })
        );
        let v6 = "   0: 00000000000000000000000001000000:C350 00000000000000000000000001000000:18EB 02 \
                  00000000:00000000 00:00000000 00000000     0        0 77 1";
        let parsed = TcpSocket::parse(v6).unwrap();
        assert_eq!((parsed.remote.as_str(), parsed.state, parsed.inode), ("[::1]:6379", 2, 77));
        assert_eq!(state_name(parsed.state), "connecting");
    }
}
