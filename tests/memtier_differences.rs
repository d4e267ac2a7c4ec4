//! Where respbench's memtier_benchmark front-end differs from memtier on purpose, against a
//! real redis-server: a run in which nothing succeeded exits 1 (memtier 2.3 exits 0), with one
//! line after memtier's own output saying why; `--scan-incremental-iteration` without a
//! `--command` is refused in memtier's words before anything is sent.

mod common;

use common::*;

fn memtier(port: &str, args: &[&str]) -> std::process::Output {
    respbench()
        .args(["memtier", "-s", "127.0.0.1", "-p", port, "-t", "1", "-c", "1", "--hide-histogram"])
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn a_run_in_which_nothing_succeeded_exits_1_and_says_why_after_memtiers_output() {
    let server = Server::start(&[]);
    // Every request an error reply: memtier's report is printed, then the reason for exit 1.
    let out = memtier(&server.port_arg(), &["-n", "5", "--command=NOSUCHCOMMAND __key__"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("ALL STATS") && stdout(&out).contains("Totals"), "{}", stdout(&out));
    let err = stderr(&out);
    let last = err.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(
        last.starts_with("respbench: exit status 1 where memtier_benchmark exits 0: no request succeeded"),
        "{err}"
    );
    assert_eq!(server.calls("nosuchcommand"), 0, "an unknown command is no call");
    assert_eq!(err.matches("exit status 1").count(), 1, "{err}");
    // No connection at all: the same one line, naming the server that could not be reached.
    let port = free_port().to_string();
    let out = memtier(&port, &["-n", "5"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let last = err.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert!(last.starts_with("respbench: exit status 1 where memtier_benchmark exits 0: cannot connect to"), "{err}");
}

#[test]
fn scan_incremental_iteration_without_a_command_is_refused_in_memtiers_words() {
    let server = Server::start(&[]);
    let out = memtier(&server.port_arg(), &["--scan-incremental-iteration", "-n", "5"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--scan-incremental-iteration requires --command with a SCAN command."), "{err}");
    // Nothing was sent: the plan was refused whole.
    assert_eq!(server.calls("set") + server.calls("get") + server.calls("scan"), 0);
}
