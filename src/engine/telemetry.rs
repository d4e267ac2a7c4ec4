//! Who was busy: the client's own CPU per worker thread (from the kernel), weighed against the
//! server's (from [`super::server_stats`]) for the bottleneck verdict.

use std::time::Duration;

use serde::Serialize;

use super::server_stats::ServerCpu;

/// A worker thread's CPU over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct ThreadCpu {
    /// User + system time the thread ran.
    pub cpu_secs: f64,
    /// Time it was runnable but waiting for a core (another process had it).
    pub runqueue_wait_secs: f64,
    /// Time the hypervisor held this machine's cores while the thread ran (steal, from
    /// /proc/stat), averaged over the cores: a virtual machine's pauses, which neither the
    /// thread's CPU nor its run-queue wait counts. Zero on bare metal.
    pub steal_secs: f64,
    pub wall_secs: f64,
    /// Paced workers: waits the thread came back from over [`LATE_NS`] after it should have
    /// (the time it asked to wake, or the call where that had passed): the machine ran it
    /// late (its host, or another process, held the core), and sends due meanwhile left late.
    pub late_wakeups: u64,
    /// The latest of those, in milliseconds past its time.
    pub late_wakeup_max_ms: f64,
}

/// A send counts as late when it left this long after its intended time; a paced worker's
/// wake-up when it came this long after its time.
pub const LATE_NS: u64 = 1_000_000;

impl ThreadCpu {
    /// The calling thread's counters so far (wall left at zero).
    pub fn now() -> ThreadCpu {
        // SAFETY: rusage is plain integers, for which all zeroes is a valid value.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage writes into the struct we pass and reads nothing else.
        let cpu_secs = if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) } == 0 {
            let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            secs(usage.ru_utime) + secs(usage.ru_stime)
        } else {
            0.0
        };
        // "run time, run-queue wait, time slices" in nanoseconds, where the kernel keeps them.
        let runqueue_wait_secs = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().nth(1).and_then(|w| w.parse::<f64>().ok()))
            .map_or(0.0, |ns| ns / 1e9);
        ThreadCpu { cpu_secs, runqueue_wait_secs, steal_secs: steal_per_core_secs(), ..ThreadCpu::default() }
    }

    /// The difference from `before`, over `wall`.
    pub fn since(&self, before: &ThreadCpu, wall: Duration) -> ThreadCpu {
        ThreadCpu {
            cpu_secs: self.cpu_secs - before.cpu_secs,
            runqueue_wait_secs: self.runqueue_wait_secs - before.runqueue_wait_secs,
            steal_secs: (self.steal_secs - before.steal_secs).max(0.0),
            wall_secs: wall.as_secs_f64(),
            ..ThreadCpu::default()
        }
    }

    /// Share of the wall time the thread ran or wanted to run: near 1 means it set the pace.
    /// Never above 1: the kernel credits run-queue wait at the next switch-in, so over a short
    /// span the difference can include wait from before it.
    pub fn busy(&self) -> f64 {
        if self.wall_secs > 0.0 { ((self.cpu_secs + self.runqueue_wait_secs) / self.wall_secs).min(1.0) } else { 0.0 }
    }
}

/// The machine's steal time so far (/proc/stat's first line, in clock ticks of 1/100 s) over
/// its number of cores; 0 where the kernel keeps none.
fn steal_per_core_secs() -> f64 {
    std::fs::read_to_string("/proc/stat").map_or(0.0, |text| steal_of(&text))
}

fn steal_of(stat: &str) -> f64 {
    let mut lines = stat.lines();
    // "cpu  user nice system idle iowait irq softirq steal ...", then one "cpuN" line a core.
    let steal = lines.next().and_then(|all| all.split_whitespace().nth(8)).and_then(|t| t.parse::<f64>().ok());
    let cores = lines.take_while(|l| l.starts_with("cpu")).count();
    match steal {
        Some(ticks) if cores > 0 => ticks / 100.0 / cores as f64,
        _ => 0.0,
    }
}

/// Share of the wall time above which the hypervisor's steal is named in the verdict.
const STEAL_NAMED: f64 = 0.02;

/// Who set the pace of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Bottleneck {
    /// A worker thread of respbench was busy nearly all the time: the figures measure the client.
    ClientBound,
    /// The server's main thread (or the whole server) was busy nearly all the time.
    ServerBound,
    /// Neither was saturated: latency, the network or the pacing set the pace.
    #[default]
    Neither,
}

/// Busy share above which a thread is taken as saturated.
pub const SATURATED: f64 = 0.9;

/// Runs shorter than this are mostly connecting and starting: no verdict.
const MIN_JUDGED_SECS: f64 = 0.5;

/// Lowers the calling thread to the lowest scheduling priority (nice 19), for work beside a
/// run that must not take a core from its workers (the journal's encoding and `fdatasync`):
/// on a machine whose cores are all busy, the workers keep theirs.
pub fn yield_to_the_load() {
    lower_priority(19);
}

/// Lowers the calling thread to nice `nice` (0 to 19).
pub fn lower_priority(nice: i32) {
    // SAFETY: gettid takes no arguments and setpriority only integers; neither touches memory.
    unsafe {
        let tid = libc::syscall(libc::SYS_gettid) as libc::id_t;
        libc::setpriority(libc::PRIO_PROCESS, tid, nice);
    }
}

/// The verdict and its one-line explanation.
pub fn verdict(client: &[ThreadCpu], server: Option<ServerCpu>) -> (Bottleneck, String) {
    let busiest = client.iter().map(ThreadCpu::busy).fold(0.0, f64::max);
    let threads: Vec<String> = client.iter().map(|t| format!("{:.0}%", t.busy() * 100.0)).collect();
    let client_text = format!("client threads busy {}", threads.join(", "));
    let server_busy = server.map(|s| s.main_thread.unwrap_or(s.total));
    let server_text = match server {
        Some(ServerCpu { total, main_thread: Some(main) }) => {
            format!("server main thread {:.0}%, all threads {:.0}% of a core", main * 100.0, total * 100.0)
        }
        Some(ServerCpu { total, main_thread: None }) => format!("server {:.0}% of a core", total * 100.0),
        None => "server CPU unknown (no INFO)".into(),
    };
    let longest = client.iter().map(|t| t.wall_secs).fold(0.0, f64::max);
    if longest < MIN_JUDGED_SECS {
        return (
            Bottleneck::Neither,
            format!("too short to judge (under {MIN_JUDGED_SECS} s); {client_text}; {server_text}"),
        );
    }
    let verdict = if busiest >= SATURATED {
        Bottleneck::ClientBound
    } else if server_busy.is_some_and(|b| b >= SATURATED) {
        Bottleneck::ServerBound
    } else {
        Bottleneck::Neither
    };
    let stolen = client.iter().filter(|t| t.wall_secs > 0.0).map(|t| t.steal_secs / t.wall_secs).fold(0.0, f64::max);
    let steal_text = if stolen > STEAL_NAMED {
        format!(
            "; the hypervisor held the machine's cores {:.0}% of the time (steal): its pauses are in the figures",
            stolen * 100.0
        )
    } else {
        String::new()
    };
    (verdict, format!("{client_text}; {server_text}{steal_text}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn thread(busy: f64) -> ThreadCpu {
        ThreadCpu { cpu_secs: busy, wall_secs: 1.0, ..ThreadCpu::default() }
    }

    #[test]
    fn verdicts() {
        let busy_server = Some(ServerCpu { total: 0.99, main_thread: Some(0.97) });
        let idle_server = Some(ServerCpu { total: 0.3, main_thread: Some(0.3) });
        assert_eq!(verdict(&[thread(0.98), thread(0.5)], idle_server).0, Bottleneck::ClientBound);
        assert_eq!(verdict(&[thread(0.5)], busy_server).0, Bottleneck::ServerBound);
        assert_eq!(verdict(&[thread(0.5)], idle_server).0, Bottleneck::Neither);
        assert_eq!(verdict(&[thread(0.5)], None).0, Bottleneck::Neither);
        // Both saturated: the client's share of the blame makes the figures untrustworthy.
        assert_eq!(verdict(&[thread(0.95)], busy_server).0, Bottleneck::ClientBound);
        let short = ThreadCpu { cpu_secs: 0.01, wall_secs: 0.01, ..ThreadCpu::default() };
        assert!(verdict(&[short], idle_server).1.starts_with("too short"));
    }

    #[test]
    fn a_threads_share_never_exceeds_one() {
        // Wait credited late by the kernel can make the parts add up to more than the span.
        let short = ThreadCpu { cpu_secs: 0.1, runqueue_wait_secs: 0.33, wall_secs: 0.1, ..ThreadCpu::default() };
        assert_eq!(short.busy(), 1.0);
        assert!(verdict(&[short], None).1.contains("client threads busy 100%"));
    }

    #[test]
    fn steal_is_read_per_core_and_named_when_it_matters() {
        let stat =
            "cpu  100 0 50 900 0 0 0 60 0 0\ncpu0 50 0 25 450 0 0 0 30 0 0\ncpu1 50 0 25 450 0 0 0 30 0 0\nintr 1\n";
        assert_eq!(steal_of(stat), 0.3);
        assert_eq!(steal_of("cpu  1 2 3\ncpu0 1 2 3\n"), 0.0);
        assert_eq!(steal_of(""), 0.0);
        let paused = ThreadCpu { cpu_secs: 0.4, steal_secs: 0.3, wall_secs: 3.0, ..ThreadCpu::default() };
        assert!(
            verdict(&[paused], None)
                .1
                .ends_with("held the machine's cores 10% of the time (steal): its pauses are in the figures")
        );
        let quiet = ThreadCpu { steal_secs: 0.01, ..paused };
        assert!(!verdict(&[quiet], None).1.contains("steal"));
    }
}
