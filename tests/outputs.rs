//! Output paths, on every flag that names one: `-` is standard output; a symlink stays a link
//! and its target is written; a FIFO is written in place and stays a FIFO; a write that fails
//! is one line naming the path, the other outputs still written, exit 1; two outputs on one
//! path are refused before anything connects. Everything happens in a temporary directory,
//! never on the machine's own /dev (the tests may run as root).

mod common;

use std::ffi::CString;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

/// A short closed-loop run's flags.
const SHORT: &[&str] = &["-n", "400", "-c", "2", "--threads", "1"];

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// `link` -> `target` (relative), with `target` holding "old".
fn link_to_old(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let target = dir.join(format!("{name}.target"));
    std::fs::write(&target, "old").unwrap();
    let link = dir.join(name);
    std::os::unix::fs::symlink(target.file_name().unwrap(), &link).unwrap();
    (link, target)
}

fn assert_written_through(link: &Path, target: &Path) {
    assert!(
        std::fs::symlink_metadata(link).unwrap().file_type().is_symlink(),
        "{} is no longer a link",
        link.display()
    );
    let written = std::fs::read(target).unwrap();
    assert!(written.len() > 3 && written != b"old", "{} was not written through {}", target.display(), link.display());
}

fn mkfifo(path: &Path) {
    let c = CString::new(s(path)).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo {}", path.display());
}

/// Entries of `dir` other than those named in `keep`.
fn others(dir: &Path, keep: &[&str]) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !keep.contains(&n.as_str()))
        .collect()
}

#[test]
fn json_to_stdout_pipes_the_document_alone_and_writes_no_file() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let out = respbench()
        .current_dir(dir.path())
        .args(["-p", &server.port_arg()])
        .args(SHORT)
        .args(["--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("standard output is the JSON document alone");
    assert_eq!(doc["tool"]["name"], "respbench");
    // The table a person reads moved to stderr; nothing was written in the working directory.
    assert!(stderr(&out).contains("Totals"), "{}", stderr(&out));
    assert!(others(dir.path(), &[]).is_empty(), "files left: {:?}", others(dir.path(), &[]));
}

#[test]
fn every_native_output_flag_writes_through_a_symlink_and_to_stdout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let flags =
        ["--json", "--html", "--csv", "--csv-timeline", "--markdown", "--hdr-log", "--out-file", "--save-scenario"];
    let mut args: Vec<String> = SHORT.iter().map(|a| a.to_string()).collect();
    let mut links = Vec::new();
    for flag in flags {
        let (link, target) = link_to_old(dir.path(), &format!("{}.out", flag.trim_start_matches('-')));
        args.extend([flag.to_string(), s(&link).to_string()]);
        links.push((link, target));
    }
    let out = run(&server, &args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    for (link, target) in &links {
        assert_written_through(link, target);
    }
    // `-` on each flag alone: the output on stdout, the text report (unless it is the output) on stderr.
    let first_bytes = [
        ("--json", "{"),
        ("--html", "<!DOCTYPE html>"),
        ("--csv", ""),
        ("--csv-timeline", ""),
        ("--markdown", "**"),
        ("--hdr-log", "#"),
        ("--out-file", ""),
        ("--save-scenario", "# Saved by respbench"),
    ];
    for (flag, starts) in first_bytes {
        let out = respbench()
            .current_dir(dir.path())
            .args(["-p", &server.port_arg()])
            .args(SHORT)
            .args([flag, "-"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{flag} -: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            !text.is_empty() && text.starts_with(starts),
            "{flag} -: stdout begins {:?}",
            &text[..text.len().min(80)]
        );
        if flag != "--out-file" {
            assert!(stderr(&out).contains("Totals"), "{flag} -: the table is not on stderr");
            assert!(!text.contains("Totals   "), "{flag} -: the table went to stdout");
        }
    }
    assert!(!dir.path().join("-").exists() && !dir.path().join("-.hlog").exists());
}

#[test]
fn memtier_outputs_write_through_symlinks_and_to_stdout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let memtier = |args: &[&str]| {
        respbench()
            .current_dir(dir.path())
            .args(["memtier", "-p", &server.port_arg(), "-n", "100", "-c", "2", "-t", "1", "--hide-histogram"])
            .args(args)
            .output()
            .unwrap()
    };
    let (json, json_target) = link_to_old(dir.path(), "memtier.json");
    let (text, text_target) = link_to_old(dir.path(), "memtier.txt");
    // memtier's per-run HDR files are named from the prefix: links made in their place.
    let (hgrm, hgrm_target) = link_to_old(dir.path(), "h_FULL_RUN_1.hgrm");
    let prefix = dir.path().join("h");
    // And its per-client files (`--client-stats`), the one client of thread 0 here.
    let (client, client_target) = link_to_old(dir.path(), "cs-1-0-0.csv");
    let clients = dir.path().join("cs");
    let out = memtier(&[
        "--json-out-file",
        s(&json),
        "-o",
        s(&text),
        "--hdr-file-prefix",
        s(&prefix),
        "--client-stats",
        s(&clients),
        "-c",
        "1",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_written_through(&json, &json_target);
    assert_written_through(&text, &text_target);
    assert_written_through(&hgrm, &hgrm_target);
    assert_written_through(&client, &client_target);
    let out = memtier(&["--json-out-file", "-"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is memtier's JSON alone");
    assert!(doc["ALL STATS"]["Totals"]["Ops/sec"].is_number());
    assert!(stderr(&out).contains("Writing results to stderr"), "{}", stderr(&out));
    let out = memtier(&["-o", "-"]);
    assert!(out.status.success() && stdout(&out).contains("ALL STATS"), "{}", stderr(&out));
    assert!(!dir.path().join("-").exists());
}

#[test]
fn redis_benchmark_save_scenario_writes_through_a_symlink_and_to_stdout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let (link, target) = link_to_old(dir.path(), "tests.toml");
    let bench = |path: &str| {
        respbench()
            .current_dir(dir.path())
            .args(["redis-benchmark", "-p", &server.port_arg(), "-n", "100", "-t", "ping", "-q"])
            .args(["--save-scenario", path])
            .output()
            .unwrap()
    };
    let out = bench(s(&link));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_written_through(&link, &target);
    let out = bench("-");
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("[[phase]]"), "{}", stdout(&out));
    assert!(!dir.path().join("-").exists());
}

#[test]
fn saved_results_subcommands_write_through_symlinks_and_to_stdout() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("run.json");
    run_ok(&server, &[SHORT, &["--json", s(&json)]].concat());
    let (html, html_target) = link_to_old(dir.path(), "report.html");
    let out = respbench().args(["report", s(&json), "-o", s(&html)]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    assert_written_through(&html, &html_target);
    let out = respbench().current_dir(dir.path()).args(["report", s(&json), "--csv", "-"]).output().unwrap();
    assert!(out.status.success() && !stdout(&out).is_empty(), "{}", stderr(&out));
    let out = respbench().current_dir(dir.path()).args(["merge", s(&json), s(&json), "--json", "-"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let merged: serde_json::Value = serde_json::from_slice(&out.stdout).expect("merge's JSON alone on stdout");
    assert!(merged["tool"].is_object());
    assert!(!dir.path().join("-").exists());
}

#[test]
fn a_scenario_writes_its_result_to_stdout_and_its_phases_reports_to_stderr() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let file = fill_then_run_scenario(dir.path(), &["200"]);
    let out = respbench()
        .current_dir(dir.path())
        .args(["run", s(&file), "-p", &server.port_arg(), "--json", "-"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the scenario's JSON alone on stdout");
    assert!(doc["phases"].is_array(), "{doc}");
    assert!(!dir.path().join("-").exists());
    // A phase whose outputs share a path is refused before the first phase runs.
    let twice = dir.path().join("twice.toml");
    std::fs::write(
        &twice,
        "[[phase]]\nkind = \"run\"\nrequests = \"10\"\nargs = [\"--csv\", \"x\", \"--markdown\", \"x\"]\n",
    )
    .unwrap();
    let out = respbench().args(["run", s(&twice), "-p", &free_port().to_string()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("both name"), "{}", stderr(&out));
}

#[test]
fn two_outputs_on_one_path_are_refused_before_connecting() {
    let dir = tempfile::tempdir().unwrap();
    let same = dir.path().join("same.out");
    let nobody = free_port().to_string();
    let cases: Vec<Vec<String>> = vec![
        vec!["--json".into(), s(&same).into(), "--html".into(), s(&same).into()],
        vec!["--json".into(), "-".into(), "--csv".into(), "-".into()],
        vec!["memtier".into(), "--json-out-file".into(), s(&same).into(), "-o".into(), s(&same).into()],
    ];
    for case in cases {
        let out = respbench().current_dir(dir.path()).args(&case).args(["-p", &nobody, "-n", "10"]).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{case:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{case:?}: {err}");
        assert!(err.contains("both name"), "{case:?}: {err}");
        assert!(!same.exists());
    }
}

#[test]
fn a_fifo_with_a_reader_gets_the_whole_document_and_stays_a_fifo() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("out.json");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let out = run(&server, &[SHORT, &["--json", s(&fifo)]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let got = reader.join().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&got).expect("the reader got the whole document");
    assert_eq!(doc["tool"]["name"], "respbench");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    // Nothing derived was placed beside it; the note says why.
    assert_eq!(others(dir.path(), &["out.json"]), Vec::<String>::new());
    assert!(stderr(&out).contains("no journal"), "{}", stderr(&out));
}

/// The one line that names `path` among `err`'s lines.
fn line_naming<'a>(err: &'a str, path: &Path) -> Vec<&'a str> {
    err.lines().filter(|l| l.contains(&format!("cannot write {}", path.display()))).collect()
}

#[test]
fn a_file_size_limit_fails_one_output_and_the_others_are_written() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let html = dir.path().join("big.html");
    let csv = dir.path().join("small.csv");
    let mut cmd = respbench();
    cmd.args(["-p", &server.port_arg()]).args(SHORT).args(["--csv", s(&csv), "--html", s(&html)]);
    // SAFETY: setrlimit only, between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit { rlim_cur: 16 * 1024, rlim_max: 16 * 1024 };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let out = cmd.output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines = line_naming(&err, &html);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("file size limit"), "{err}");
    assert!(std::fs::read_to_string(&csv).unwrap().lines().count() >= 2, "the CSV was still written");
}

#[test]
fn a_fifo_whose_reader_leaves_early_fails_with_one_line() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("report.html");
    mkfifo(&fifo);
    // The reader holds the FIFO open with a one-page buffer, waits for the first byte, reads
    // it and leaves: the writer, whose page is larger, finds no reader for the rest. (Until a
    // writer opens the FIFO a read says end of file, so the reader looks again until a byte
    // comes.)
    let script = "import os,fcntl,sys,time\n\
                  fd=os.open(sys.argv[1],os.O_RDONLY|os.O_NONBLOCK)\n\
                  fcntl.fcntl(fd,fcntl.F_SETPIPE_SZ,4096)\n\
                  print('ready',flush=True)\n\
                  while True:\n\
                  \x20try:\n\
                  \x20\x20if os.read(fd,1): break\n\
                  \x20except BlockingIOError: pass\n\
                  \x20time.sleep(0.001)\n";
    let mut reader = Command::new("python3").args(["-c", script, s(&fifo)]).stdout(Stdio::piped()).spawn().unwrap();
    let mut ready = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(reader.stdout.take().unwrap()), &mut ready).unwrap();
    assert_eq!(ready.trim(), "ready");
    let out = run(&server, &[SHORT, &["--html", s(&fifo)]].concat());
    reader.wait().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let lines = line_naming(&err, &fifo);
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains("the reader closed it"), "{err}");
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
}

#[test]
fn a_full_device_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    let c = CString::new(s(&full)).unwrap();
    // SAFETY: a valid path; a character device node like /dev/full's (1, 7), in a temporary directory.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 7)) } != 0 {
        eprintln!("skipped: mknod needs CAP_MKNOD here ({})", std::io::Error::last_os_error());
        return;
    }
    let server = Server::start(&[]);
    let json = dir.path().join("ok.json");
    let out = run(&server, &[SHORT, &["--html", s(&full), "--json", s(&json)]].concat());
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        line_naming(&err, &full),
        [format!("respbench: cannot write {}: No space left on device", full.display())]
    );
    assert!(std::fs::symlink_metadata(&full).unwrap().file_type().is_char_device(), "the device node was replaced");
    read_json(&json);
}

#[test]
fn a_run_stopped_while_writing_leaves_the_old_file_or_the_whole_new_one() {
    let server = Server::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("out.json");
    for _ in 0..3 {
        std::fs::write(&json, "old").unwrap();
        let mut cmd = respbench();
        cmd.args(["-p", &server.port_arg(), "-c", "2", "--threads", "1", "--duration", "60s", "--progress"]);
        cmd.args(["--json", s(&json), "--html", s(&dir.path().join("out.html"))]);
        let mut run = Watched::spawn(cmd);
        run.wait_intervals(1);
        // The first stops the run and its results are written; the second, at once after,
        // ends the program wherever it is, writing included.
        run.signal(libc::SIGTERM);
        run.signal(libc::SIGTERM);
        let out = run.finish();
        assert!(!out.status.success());
        let kept = std::fs::read(&json).unwrap();
        assert!(
            kept == b"old" || serde_json::from_slice::<serde_json::Value>(&kept).is_ok(),
            "half a file was left: {} bytes",
            kept.len()
        );
        assert!(std::fs::symlink_metadata(&json).unwrap().file_type().is_file());
    }
}
