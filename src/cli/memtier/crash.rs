//! The bug report under memtier_benchmark's name, laid out as memtier 2.4 writes its own (its
//! start and end markers, `memtier_benchmark crashed by signal`, the crashing thread marked in
//! the stack section, the client's connection list), so that whoever collects memtier's crash
//! reports finds ours. Written by the crash watcher (`signals`), never inside the handler.

use crate::engine::{LinkState, Shown, WORKER_THREAD};

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

/// The client's connections, one line each in memtier's words and order: by thread, client
/// and connection (a client's link to each server node), with the server's address, the
/// local port (`-1` when not connected or on a unix socket), the state, the requests in
/// flight and the oldest one's command (`none` when nothing is in flight; `ARBITRARY` for
/// `--command`'s, as memtier names its request types).
pub fn client_list(p: &str, links: &[Shown], arbitrary: bool) -> String {
    let mut out = format!("\n{p}--- CLIENT LIST OUTPUT\n");
    for link in links {
        let addr = link.server.map_or_else(|| "unknown:unknown".to_string(), |s| format!("{}:{}", s.ip(), s.port()));
        let local_port = link.local_port.map_or(-1, i32::from);
        let state = match link.state {
            LinkState::Connecting => "connecting",
            LinkState::Connected => "connected",
            LinkState::Disconnected => "disconnected",
        };
        let last_cmd = match &link.oldest {
            Some(_) if link.pending > 0 && arbitrary => "ARBITRARY".to_string(),
            Some(name) if link.pending > 0 => name.to_ascii_uppercase(),
            _ => "none".to_string(),
        };
        out.push_str(&format!(
            "{p}thread={} client={} conn={} addr={addr} local_port={local_port} state={state} pending={} \
             last_cmd={last_cmd}\n",
            link.thread, link.client, link.conn, link.pending
        ));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_line_in_memtiers_words() {
        let link = |pending, oldest: Option<&str>, server: Option<&str>, local_port: Option<u16>| Shown {
            thread: 1,
            client: 2,
            conn: 0,
            state: if local_port.is_some() { LinkState::Connected } else { LinkState::Disconnected },
            server: server.map(|s| s.parse().unwrap()),
            local_port,
            pending,
            oldest: oldest.map(String::from),
        };
        let links = [
            link(16, Some("GET"), Some("127.0.0.1:6379"), Some(40001)),
            link(0, None, Some("[::1]:6380"), None),
            link(0, None, None, None),
        ];
        assert_eq!(
            client_list("# ", &links, false),
            "\n# --- CLIENT LIST OUTPUT\n\
             # thread=1 client=2 conn=0 addr=127.0.0.1:6379 local_port=40001 state=connected pending=16 last_cmd=GET\n\
             # thread=1 client=2 conn=0 addr=::1:6380 local_port=-1 state=disconnected pending=0 last_cmd=none\n\
             # thread=1 client=2 conn=0 addr=unknown:unknown local_port=-1 state=disconnected pending=0 last_cmd=none\n"
        );
        assert!(client_list("", &links[..1], true).contains(" pending=16 last_cmd=ARBITRARY\n"));
    }
}
