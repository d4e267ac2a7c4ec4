//! Signals. SIGINT, SIGTERM and SIGHUP stop a run cleanly: sending stops, every requested
//! output is still written and marked interrupted, and the exit status is 128 + the signal; a
//! second one exits at once. A fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, even
//! one sent with `kill`) prints a bug report, as memtier_benchmark does, and the process then
//! dies of that signal.
//!
//! A signal handler may only do async-signal-safe things, so the report is written by a
//! watcher thread: the handler hands it the signal over a pipe and waits (bounded) for it to
//! finish; if the watcher cannot (the crash left a lock held), the handler writes a block
//! formatted at start-up with `write(2)` instead. Then it re-raises with the default action.
//! The handler takes the crashed thread's return addresses itself (glibc's `backtrace`, loaded
//! at start-up); the watcher names them.
//!
//! The stop signals are registered with signal-hook (its registry chains handlers and its flag
//! actions are async-signal-safe by construction). The fatal ones keep a `sigaction` handler of
//! our own: signal-hook refuses SIGSEGV, SIGILL and SIGFPE, and the crash handler must control
//! every step itself (take the frames, hand over to the watcher, wait bounded, re-raise with the
//! default action), doing nothing that is not async-signal-safe.

use std::ffi::c_int;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::Duration;

use crate::config::ServerOptions;
use crate::engine::{Board, LinkState};
use crate::net::Session;

// Signal-handler flags: a signal is sent to the process, not to a run, so what it sets is the
// process's, and only a `static` lives as long as the handlers that write it.
/// Set by the first SIGINT, SIGTERM or SIGHUP: the run stops.
static STOP: AtomicBool = AtomicBool::new(false);
/// The signal that stopped the run (0: none yet).
static STOPPED_BY: AtomicUsize = AtomicUsize::new(0);

/// A fatal signal is being reported: a second one waits for the first to end the process.
static CRASHING: AtomicBool = AtomicBool::new(false);
/// The handler's end of the pipe to the watcher, and the watcher's reply ("report written").
static TO_WATCHER: AtomicI32 = AtomicI32::new(-1);
static FROM_WATCHER: AtomicI32 = AtomicI32::new(-1);
/// The report the handler writes itself if the watcher does not answer in time.
static FALLBACK: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static FALLBACK_LEN: AtomicUsize = AtomicUsize::new(0);

/// The crashed thread's return addresses, taken by the handler (glibc's `backtrace`, warmed
/// at start-up so that it does not load libgcc inside the handler) and named by the watcher.
struct Frames(std::cell::UnsafeCell<[*mut libc::c_void; MAX_FRAMES]>);
// SAFETY: only the first fatal signal's handler writes it (CRASHING), and the watcher reads
// it only after the handler has written the frame count and woken it.
unsafe impl Sync for Frames {}
const MAX_FRAMES: usize = 64;
static FRAMES: Frames = Frames(std::cell::UnsafeCell::new([std::ptr::null_mut(); MAX_FRAMES]));
static FRAME_COUNT: AtomicUsize = AtomicUsize::new(0);

/// Longest the handler waits for the watcher's report.
const WATCHER_WAIT_MS: c_int = 4000;

const STOP_SIGNALS: [c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];
const FATAL_SIGNALS: [c_int; 5] = [libc::SIGSEGV, libc::SIGBUS, libc::SIGFPE, libc::SIGILL, libc::SIGABRT];

/// What a run is handed of the signal handling: the flag the stop signals set (every run of
/// the process shares it), and what the crash watcher is told: the server a bug report should
/// describe and the board on which the run's workers show their connections.
pub struct Stop {
    flag: &'static AtomicBool,
    /// `None` where the watcher did not start (or a second `install` of the process).
    crash_watcher: Option<Arc<Mutex<Told>>>,
}

/// What the runs told the crash watcher, the latest of each (a run replaces its
/// predecessor's, so a process of many runs keeps one).
#[derive(Default)]
struct Told {
    server: Option<ServerOptions>,
    board: Option<Arc<Board>>,
}

impl std::ops::Deref for Stop {
    type Target = AtomicBool;
    fn deref(&self) -> &AtomicBool {
        self.flag
    }
}

impl Stop {
    /// The server a bug report should describe (INFO server and CLIENT LIST, asked at the
    /// time): the run that last passed its checks says so.
    pub fn describe_server(&self, server: &ServerOptions) {
        if let Some(watcher) = &self.crash_watcher {
            watcher.lock().unwrap_or_else(std::sync::PoisonError::into_inner).server = Some(server.clone());
        }
    }

    /// The board on which the run about to start shows its connections (a bug report lists
    /// them).
    pub fn show_connections(&self, board: &Arc<Board>) {
        if let Some(watcher) = &self.crash_watcher {
            watcher.lock().unwrap_or_else(std::sync::PoisonError::into_inner).board = Some(Arc::clone(board));
        }
    }
}

/// Whose bug report a fatal signal prints: respbench's, or memtier_benchmark's (its markers
/// and sections, under its name; `arbitrary`: its commands came from `--command`, which
/// memtier's connection list names `ARBITRARY`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    Respbench,
    Memtier { arbitrary: bool },
}

/// Ctrl-C (or SIGTERM, SIGHUP) sets the returned flag; a second one while results are written
/// ends at once. Fatal signals print a bug report in respbench's words.
pub fn install_sigint() -> Stop {
    install(Report::Respbench)
}

/// Installs every handler once (the first call's `report` is the process's); returns the flag
/// the stop signals set, and with the first call the line to the crash watcher.
pub fn install(report: Report) -> Stop {
    static ONCE: Once = Once::new();
    let mut crash_watcher = None;
    ONCE.call_once(|| {
        let fallback = match report {
            Report::Respbench => format!("{}{}{}", header(None), info_block(None), footer(None)),
            Report::Memtier { .. } => {
                let p = stamp(None);
                format!("{}{}{}", super::memtier::crash::START, info_block(None), super::memtier::crash::footer(&p))
            }
        }
        .into_bytes()
        .leak();
        FALLBACK_LEN.store(fallback.len(), Ordering::SeqCst);
        FALLBACK.store(fallback.as_mut_ptr(), Ordering::SeqCst);
        let mut warm = [std::ptr::null_mut(); 2];
        // SAFETY: a buffer of the length given; the first call loads the unwinder.
        unsafe { libc::backtrace(warm.as_mut_ptr(), warm.len() as c_int) };
        crash_watcher = start_watcher(report);
        for sig in STOP_SIGNALS {
            install_stop(sig);
        }
        for sig in FATAL_SIGNALS {
            let flags = libc::SA_SIGINFO | libc::SA_NODEFER | libc::SA_RESETHAND | libc::SA_ONSTACK;
            set_handler(sig, on_fatal as extern "C" fn(c_int, *mut libc::siginfo_t, *mut libc::c_void) as usize, flags);
        }
    });
    Stop { flag: &STOP, crash_watcher }
}

/// A write past the file size limit (`ulimit -f`) fails with EFBIG, which the output writer
/// names, instead of SIGXFSZ killing the process before the other outputs are written.
pub fn ignore_file_size_signal() {
    // SAFETY: SIG_IGN for a signal no other code of this process handles.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
}

/// The first stop signal records itself and sets the flag; a second one exits at once with
/// 128 + its number (the user does not want to wait for the results). signal-hook runs the
/// actions in the order registered: the exit first, so that it sees only an earlier signal's
/// flag.
fn install_stop(sig: c_int) {
    use signal_hook::flag;
    let registered = flag::register_conditional_shutdown(sig, 128 + sig, &STOP)
        .and_then(|_| flag::register_usize(sig, &STOPPED_BY, sig as usize))
        .and_then(|_| flag::register(sig, &STOP));
    if let Err(e) = registered {
        eprintln!("respbench: warning: {} will not stop the run cleanly: {e}", name(sig));
    }
}

/// The signal that stopped the run, if one did.
pub fn stopped_by() -> Option<c_int> {
    Some(STOPPED_BY.load(Ordering::SeqCst) as c_int).filter(|&s| s != 0)
}

/// Exit status of a run a signal stopped: 128 + the signal (130 for Ctrl-C).
pub fn interrupted_exit_code() -> u8 {
    128 + stopped_by().unwrap_or(libc::SIGINT) as u8
}

/// A signal's name, as memtier prints it.
pub fn name(sig: c_int) -> &'static str {
    match sig {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        _ => "UNKNOWN",
    }
}

fn set_handler(sig: c_int, handler: usize, flags: c_int) {
    // SAFETY: a zeroed sigaction is valid; the handler is an `extern "C"` fn of the shape the
    // flags say (SA_SIGINFO: three arguments).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        action.sa_flags = flags;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut());
    }
}

/// What the handler tells the watcher: signal, si_code, fault address, sender pid, thread id.
type Message = [u64; 5];

extern "C" fn on_fatal(sig: c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // Only async-signal-safe calls from here on: atomics, write, poll, syscall, raise, pause.
    if CRASHING.swap(true, Ordering::SeqCst) {
        loop {
            // SAFETY: pause is async-signal-safe; the first report ends the process.
            unsafe { libc::pause() };
        }
    }
    let (code, addr, pid) = if info.is_null() {
        (0, 0, 0)
    } else {
        // SAFETY: the kernel passes a valid siginfo with SA_SIGINFO.
        unsafe { ((*info).si_code as u64, (*info).si_addr() as u64, (*info).si_pid() as u64) }
    };
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) } as u64;
    // SAFETY: backtrace writes at most MAX_FRAMES pointers into the static buffer, which no
    // one else touches until the watcher is woken below; the unwinder was loaded at start-up.
    let frames = unsafe { libc::backtrace(FRAMES.0.get().cast(), MAX_FRAMES as c_int) };
    FRAME_COUNT.store(frames.max(0) as usize, Ordering::SeqCst);
    let message: Message = [sig as u64, code, addr, pid, tid];
    let (to, from) = (TO_WATCHER.load(Ordering::SeqCst), FROM_WATCHER.load(Ordering::SeqCst));
    let mut reported = false;
    if to >= 0 && from >= 0 {
        // SAFETY: write and poll on our own pipe's descriptors, with buffers that outlive them.
        unsafe {
            let sent = libc::write(to, message.as_ptr().cast(), std::mem::size_of::<Message>());
            if sent == std::mem::size_of::<Message>() as isize {
                let mut fd = libc::pollfd { fd: from, events: libc::POLLIN, revents: 0 };
                reported = libc::poll(&mut fd, 1, WATCHER_WAIT_MS) == 1;
            }
        }
    }
    if !reported {
        let (ptr, len) = (FALLBACK.load(Ordering::SeqCst), FALLBACK_LEN.load(Ordering::SeqCst));
        if !ptr.is_null() {
            // SAFETY: a leaked, never-freed buffer of `len` bytes.
            unsafe { libc::write(libc::STDERR_FILENO, ptr.cast(), len) };
        }
    }
    // SA_RESETHAND restored the default action and SA_NODEFER lets it through now.
    // SAFETY: raise is async-signal-safe.
    unsafe { libc::raise(sig) };
}

/// Starts the thread that writes the report, with the pipes the handler uses to reach it;
/// returns what runs tell it (their server, their board).
fn start_watcher(report: Report) -> Option<Arc<Mutex<Told>>> {
    let (mut to, mut from) = ([-1; 2], [-1; 2]);
    // SAFETY: pipe2 fills the arrays it is given.
    let piped = unsafe {
        libc::pipe2(to.as_mut_ptr(), libc::O_CLOEXEC) == 0 && libc::pipe2(from.as_mut_ptr(), libc::O_CLOEXEC) == 0
    };
    if !piped {
        return None; // the handler writes the fallback block
    }
    let (watch_fd, reply_fd) = (to[0], from[1]);
    let told = Arc::new(Mutex::new(Told::default()));
    let heard = Arc::clone(&told);
    let spawned = std::thread::Builder::new().name("respbench-crash-watcher".into()).spawn(move || {
        // A fatal signal sent to the process must reach another thread: this one reports it.
        // SAFETY: a sigset built with sigemptyset/sigaddset, applied to this thread only.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in FATAL_SIGNALS.iter().chain(&STOP_SIGNALS) {
                libc::sigaddset(&mut set, *sig);
            }
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        }
        let mut message: Message = [0; 5];
        let size = std::mem::size_of::<Message>();
        // SAFETY: reads into a buffer of `size` bytes.
        let got = unsafe { libc::read(watch_fd, message.as_mut_ptr().cast(), size) };
        if got != size as isize {
            return;
        }
        // What the latest run told (only a crash reads it). A lock the crash left held
        // (a run was telling) is not waited for: the report goes without.
        let Told { server, board } = match heard.try_lock() {
            Ok(mut told) => std::mem::take(&mut *told),
            Err(std::sync::TryLockError::Poisoned(told)) => std::mem::take(&mut *told.into_inner()),
            Err(std::sync::TryLockError::WouldBlock) => Told::default(),
        };
        let report = match report {
            Report::Respbench => crash_report(&message, server.as_ref(), board.as_deref()),
            Report::Memtier { arbitrary } => memtier_report(&message, board.as_deref(), arbitrary),
        };
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(report.as_bytes());
        let _ = stderr.flush();
        // SAFETY: one byte to our own pipe.
        unsafe { libc::write(reply_fd, b"x".as_ptr().cast(), 1) };
    });
    if spawned.is_err() {
        return None;
    }
    TO_WATCHER.store(to[1], Ordering::SeqCst);
    FROM_WATCHER.store(from[0], Ordering::SeqCst);
    Some(told)
}

/// `[pid] date # ` in front of every line, as memtier's report has it.
fn stamp(time: Option<&str>) -> String {
    match time {
        Some(t) => format!("[{}] {t} # ", std::process::id()),
        None => format!("[{}] # ", std::process::id()),
    }
}

/// The first line of a bug report.
const START: &str = "\n\n=== RESPBENCH BUG REPORT START: Cut & paste starting from here ===\n";

/// The fallback's opening: the handler cannot say more about the signal safely.
fn header(time: Option<&str>) -> String {
    format!("{START}{}respbench crashed by a fatal signal (the full report could not be written)\n", stamp(time))
}

fn info_block(time: Option<&str>) -> String {
    let p = stamp(time);
    let mut out = format!("\n{p}--- INFO OUTPUT\n");
    // SAFETY: uname fills a zeroed struct; its fields are NUL-terminated.
    let os = unsafe {
        let mut name: libc::utsname = std::mem::zeroed();
        (libc::uname(&mut name) == 0).then(|| {
            let field = |f: &[libc::c_char]| std::ffi::CStr::from_ptr(f.as_ptr()).to_string_lossy().into_owned();
            format!("{} {} {}", field(&name.sysname), field(&name.release), field(&name.machine))
        })
    };
    if let Some(os) = os {
        out.push_str(&format!("{p}os:{os}\n"));
    }
    out.push_str(&format!("{p}respbench_version:{}\n", env!("CARGO_PKG_VERSION")));
    out.push_str(&format!("{p}arch_bits:{}\n", usize::BITS));
    let args: Vec<String> = std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect();
    out.push_str(&format!("{p}command_line:{}\n", args.join(" ")));
    out
}

fn footer(time: Option<&str>) -> String {
    let p = stamp(time);
    format!(
        "{p}For more information, please check the core dump if available.\n{p}To enable core dumps: ulimit -c \
         unlimited\n{p}Core pattern: /proc/sys/kernel/core_pattern\n\n=== RESPBENCH BUG REPORT END. Make sure to \
         include from START to END. ===\n\n       Please report this bug with the command line and the server's \
         version.\n\n"
    )
}

/// The whole report, written by the watcher (a normal thread: it may allocate and connect).
fn crash_report(
    &[sig, code, addr, sender, tid]: &Message,
    server: Option<&ServerOptions>,
    board: Option<&Board>,
) -> String {
    let sig = sig as c_int;
    let time = local_time();
    let p = stamp(Some(&time));
    let mut out = START.to_string();
    out.push_str(&format!("{p}respbench crashed by signal: {sig}\n"));
    out.push_str(&format!("{p}Crashed running signal <{}>\n", name(sig)));
    out.push_str(&format!("{p}Signal code: {}\n", code as i32));
    // A signal someone sent (kill, tgkill, raise) has a sender, not a fault address.
    if (code as i32) <= 0 {
        out.push_str(&format!("{p}Sent by process: {sender}\n"));
    } else {
        out.push_str(&format!("{p}Fault address: {addr:#x}\n"));
    }
    out.push_str(&format!("\n{p}--- STACK TRACE\n"));
    let thread = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm")).unwrap_or_default();
    out.push_str(&format!("{p}Thread {tid} ({}) received the signal\n", thread.trim()));
    out.push_str(&stack_trace(&p));
    out.push_str(&info_block(Some(&time)));
    if let Some(board) = board {
        out.push_str(&connections_block(board, &p));
    }
    if let Some(server) = server {
        out.push_str(&server_block(server, &p));
    }
    out.push('\n');
    out.push_str(&footer(Some(&time)));
    out
}

/// The report under memtier's name: its sections in its order (`memtier::crash`).
fn memtier_report(&[sig, code, addr, _sender, tid]: &Message, board: Option<&Board>, arbitrary: bool) -> String {
    let time = local_time();
    let p = stamp(Some(&time));
    let mut out = super::memtier::crash::header(&p, (sig as c_int, name(sig as c_int)), code as i32, addr);
    out.push_str(&super::memtier::crash::stack_section(&p, tid, &stack_trace(&p)));
    out.push_str(&info_block(Some(&time)));
    if let Some(board) = board {
        out.push_str(&super::memtier::crash::client_list(&p, &board.shown(), arbitrary));
    }
    out.push_str(&super::memtier::crash::footer(&p));
    out
}

/// The crashed thread's frames as glibc names them (module, offset and address: `addr2line -f
/// -C -e respbench OFFSET` gives the function and line).
fn stack_trace(p: &str) -> String {
    let count = FRAME_COUNT.load(Ordering::SeqCst);
    if count == 0 {
        return format!("{p}  (no frames: open the core dump with gdb for the stack)\n");
    }
    let mut out = String::new();
    // SAFETY: the handler wrote `count` frames before waking this thread; backtrace_symbols
    // returns one malloc'd block of `count` C strings (or null), freed here once.
    unsafe {
        let frames: *const *mut libc::c_void = FRAMES.0.get().cast();
        let names = libc::backtrace_symbols(frames, count as c_int);
        for i in 0..count {
            let name = if names.is_null() {
                format!("{:p}", *frames.add(i))
            } else {
                std::ffi::CStr::from_ptr(*names.add(i)).to_string_lossy().into_owned()
            };
            out.push_str(&format!("{p}  {name}\n"));
        }
        libc::free(names.cast());
    }
    out
}

/// The run's connections as their workers last showed them: one line each.
fn connections_block(board: &Board, p: &str) -> String {
    let mut out = format!("\n{p}--- CONNECTIONS\n");
    for link in board.shown() {
        let server = link.server.map_or_else(|| "-".to_string(), |s| s.to_string());
        let local = link.local_port.map_or_else(|| "-".to_string(), |port| port.to_string());
        let state = match link.state {
            LinkState::Connecting => "connecting",
            LinkState::Connected => "connected",
            LinkState::Disconnected => "disconnected",
        };
        let oldest = link.oldest.as_deref().unwrap_or("-");
        out.push_str(&format!(
            "{p}thread={} client={} link={} server={server} local_port={local} state={state} in_flight={} \
             oldest={oldest}\n",
            link.thread, link.client, link.conn, link.pending
        ));
    }
    out
}

/// The server's INFO server and CLIENT LIST, asked on a connection of its own.
fn server_block(server: &ServerOptions, p: &str) -> String {
    let mut out = String::new();
    let mut session = match Session::open_within(server, Duration::from_secs(1)) {
        Ok(s) => s,
        Err(e) => return format!("\n{p}--- SERVER: cannot connect to ask it ({e})\n"),
    };
    for (title, args) in
        [("SERVER INFO OUTPUT", &[&b"INFO"[..], b"server"][..]), ("CLIENT LIST OUTPUT", &[&b"CLIENT"[..], b"LIST"][..])]
    {
        out.push_str(&format!("\n{p}--- {title}\n"));
        match session.call(args) {
            Ok(reply) => {
                for line in String::from_utf8_lossy(reply.text()).lines().filter(|l| !l.trim().is_empty()).take(500) {
                    out.push_str(&format!("{p}{}\n", line.trim_end()));
                }
            }
            Err(e) => out.push_str(&format!("{p}(refused: {e})\n")),
        }
    }
    out
}

/// The local time as memtier prints it: `02 Jan 2006 15:04:05`.
///
/// libc's rather than jiff's: jiff is built here without its time-zone database (the reports
/// write UTC), and `localtime_r` reads the zone the way memtier's own C code does.
fn local_time() -> String {
    local_time_as(c"%d %b %Y %H:%M:%S")
}

/// The local time in a `strftime` format, read as the tools' C code reads it.
pub(crate) fn local_time_as(format: &std::ffi::CStr) -> String {
    // SAFETY: time and localtime_r with our own buffers; strftime writes at most buf's length.
    unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&now, &mut tm).is_null() {
            return String::new();
        }
        let mut buf = [0u8; 64];
        let n = libc::strftime(buf.as_mut_ptr().cast(), buf.len(), format.as_ptr(), &tm);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }
}
