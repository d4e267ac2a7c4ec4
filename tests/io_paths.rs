//! The two I/O paths (`--io epoll`, `--io uring`) send the same requests and say which one ran;
//! `--io auto` falls back to epoll where io_uring is forbidden (a seccomp filter, as container
//! runtimes install), and `--io uring` there is a usage error that names the cause. The whole
//! suite runs once per path (`make test`); these check the choosing itself.

mod common;

use std::os::unix::process::CommandExt;
use std::process::Command;

use common::*;

fn json_run(server: &Server, io: &[&str]) -> (std::process::Output, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let args = ["-c", "20", "--threads", "2", "-n", "20000", "--ratio", "1:1", "-P", "4"];
    let out = respbench()
        .args(["-p", &server.port_arg()])
        .args(args)
        .args(io)
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    (out, read_json(&json))
}

#[test]
fn both_paths_send_every_request_and_say_which_ran() {
    let server = Server::start(&[]);
    for (flag, name) in [("epoll", "epoll"), ("uring", "io_uring")] {
        let (sets, gets) = (server.calls("set"), server.calls("get"));
        let (out, doc) = json_run(&server, &["--io", flag]);
        assert_eq!(doc["configuration"]["io"], name, "{}", doc["configuration"]);
        assert!(stdout(&out).lines().next().unwrap().ends_with(&format!(", {name}")), "{}", stdout(&out));
        // What the server counted is what the client sent and counted: nothing lost or doubled.
        assert_eq!((server.calls("set") - sets, server.calls("get") - gets), (10_000, 10_000), "--io {flag}");
        assert_eq!(doc["totals"]["count"], 20_000, "--io {flag}");
    }
}

#[test]
fn auto_takes_epoll_for_large_values_over_plain_tcp() {
    // Values of 64 KB and more: epoll drops a GET's body in the kernel, io_uring copies it into
    // its pool first. Smaller values, or one size under the line, keep io_uring; `--io uring`
    // is kept as asked.
    let server = Server::start(&[]);
    let cases: [(&[&str], &str); 5] = [
        (&["-d", "65536"], "epoll"),
        (&["--data-size-range", "70000-200000"], "epoll"),
        (&["--data-size-range", "1000-200000"], "io_uring"),
        (&["-d", "65535"], "io_uring"),
        (&["-d", "100000", "--io", "uring"], "io_uring"),
    ];
    for (args, path) in cases {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("run.json");
        let out = respbench()
            .env_remove("RESPBENCH_IO")
            .args(["-p", &server.port_arg(), "-c", "2", "-n", "20", "--ratio", "1:1", "--key-max", "9"])
            .args(args)
            .args(["--json", json.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(read_json(&json)["configuration"]["io"], path, "{args:?}");
        assert!(stdout(&out).lines().next().unwrap().ends_with(&format!(", {path}")), "{}", stdout(&out));
    }
}

/// Runs respbench with io_uring_setup(2) refused (EPERM) by a seccomp filter.
fn without_io_uring(command: &mut Command) -> &mut Command {
    const fn stmt(code: u16, k: u32) -> libc::sock_filter {
        libc::sock_filter { code, jt: 0, jf: 0, k }
    }
    // BPF: load the syscall number; io_uring_setup -> errno EPERM; anything else -> allow.
    const LD_W_ABS: u16 = 0x20;
    const JEQ_K: u16 = 0x15;
    const RET_K: u16 = 0x06;
    let filter = [
        stmt(LD_W_ABS, 0), // seccomp_data.nr
        libc::sock_filter { code: JEQ_K, jt: 0, jf: 1, k: libc::SYS_io_uring_setup as u32 },
        stmt(RET_K, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32),
        stmt(RET_K, libc::SECCOMP_RET_ALLOW),
    ];
    // SAFETY: between fork and exec only prctl(2) is called, with a filter that lives in the
    // parent's memory image, copied into the child by fork.
    unsafe {
        command.pre_exec(move || {
            let prog = libc::sock_fprog { len: filter.len() as u16, filter: filter.as_ptr() as *mut _ };
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
                || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog as *const _) != 0
            {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    }
}

#[test]
fn auto_falls_back_to_epoll_where_io_uring_is_forbidden() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    let sets = server.calls("set");
    let out = without_io_uring(&mut respbench())
        .args(["-p", &server.port_arg(), "-c", "4", "-n", "2000", "--ratio", "1:0", "--io", "auto"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(read_json(&json)["configuration"]["io"], "epoll");
    assert_eq!(server.calls("set") - sets, 2000);
    // Asked for by hand, it is a usage error naming why, before anything connects.
    for asked in [&["--io", "uring"][..], &[]] {
        let mut command = respbench();
        command.args(["-p", &server.port_arg(), "-n", "10"]).args(asked);
        if asked.is_empty() {
            command.env("RESPBENCH_IO", "uring");
        }
        let out = without_io_uring(&mut command).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("io_uring is not available here (Operation not permitted") && err.contains("--io epoll"),
            "{err}"
        );
    }
}

#[test]
fn a_bad_choice_is_a_usage_error() {
    let out = respbench().args(["-n", "1"]).env("RESPBENCH_IO", "kqueue").output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("kqueue") && err.contains("epoll") && err.contains("uring"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
