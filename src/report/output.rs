//! The one way every output file is opened and written: `-` is standard output; a symlink is
//! followed and its target written as that file would be; a FIFO, a character device or a
//! socket is written in place in one pass (never renamed over, so `/dev/stdout` stays a link
//! and a FIFO's reader gets the document); only a regular file or a new path is written to a
//! temporary file beside it and renamed over it, so an interrupted run leaves the old file or
//! the whole new one, never half of one.

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The path that means standard output.
pub const STDOUT: &str = "-";

/// Whether `path` is `-`, standard output.
pub fn is_stdout(path: &Path) -> bool {
    path.as_os_str() == STDOUT
}

/// Where an output path leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dest {
    /// `-`.
    Stdout,
    /// A regular file or a path not there yet (a symlink's target when the path is a link):
    /// written to a temporary file beside it and renamed over it.
    File(PathBuf),
    /// A FIFO, a character device or a socket: written in place.
    Special(PathBuf, Special),
}

/// The kinds of special file an output may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Special {
    Fifo,
    CharDevice,
    Socket,
}

/// An output that cannot be written: the path as the user gave it and the reason.
#[derive(Debug)]
pub struct OutputError {
    pub path: PathBuf,
    pub reason: String,
}

impl fmt::Display for OutputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.reason)
    }
}

impl std::error::Error for OutputError {}

/// Symlinks followed at most (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// Where `path` leads: `-`, a regular or new file (through any symlinks), or a special file.
/// A directory, a block device or a loop of links is an error.
pub fn dest(path: &Path) -> Result<Dest, OutputError> {
    if is_stdout(path) {
        return Ok(Dest::Stdout);
    }
    let fail = |e: io::Error| OutputError { path: path.to_path_buf(), reason: reason(&e) };
    let said = |reason: &str| OutputError { path: path.to_path_buf(), reason: reason.to_string() };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Dest::File(path.to_path_buf())),
        Err(e) => return Err(fail(e)),
    };
    let meta = if meta.file_type().is_symlink() {
        // Followed by the kernel, so that /dev/stdout's link into /proc (to "pipe:[...]",
        // which no path names) leads where the descriptor does.
        match std::fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return dangling(path).map(Dest::File),
            Err(e) => return Err(fail(e)),
        }
    } else {
        meta
    };
    let kind = meta.file_type();
    if kind.is_file() {
        // The file itself, not the link, is replaced.
        let real = if path.is_symlink() { std::fs::canonicalize(path).map_err(fail)? } else { path.to_path_buf() };
        Ok(Dest::File(real))
    } else if kind.is_fifo() {
        Ok(Dest::Special(path.to_path_buf(), Special::Fifo))
    } else if kind.is_char_device() {
        Ok(Dest::Special(path.to_path_buf(), Special::CharDevice))
    } else if kind.is_socket() {
        Ok(Dest::Special(path.to_path_buf(), Special::Socket))
    } else if kind.is_dir() {
        Err(said("it is a directory"))
    } else {
        Err(said("it is a block device; name a file, a FIFO or a character device"))
    }
}

/// The file a dangling symlink names (created by writing through the link, as a shell's `>`
/// does), following the links it passes through.
fn dangling(path: &Path) -> Result<PathBuf, OutputError> {
    let mut at = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.file_type().is_symlink() => {
                let target = std::fs::read_link(&at)
                    .map_err(|e| OutputError { path: path.to_path_buf(), reason: reason(&e) })?;
                at = match at.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(at),
        }
    }
    Err(OutputError { path: path.to_path_buf(), reason: "too many levels of symbolic links".into() })
}

/// Whether files derived from `path` (the journal, the interval log) may be placed beside it:
/// only beside a regular file or a new path.
pub fn takes_neighbours(path: &Path) -> bool {
    matches!(dest(path), Ok(Dest::File(_)))
}

/// The identity of an output's destination, to find two outputs naming one place.
#[derive(Debug, PartialEq, Eq)]
enum Identity {
    Stdout,
    /// A file or FIFO there now: its device and inode (`-` and `/dev/stdout` are one).
    Inode(u64, u64),
    /// A new file, or a device (two outputs may not both name `/dev/null`, but one may while
    /// standard output goes there too): the real path.
    Path(PathBuf),
}

fn identity(path: &Path) -> Result<Identity, OutputError> {
    let inode = |at: &Path| std::fs::metadata(at).ok().map(|m| Identity::Inode(m.dev(), m.ino()));
    match dest(path)? {
        Dest::Stdout => Ok(Identity::Stdout),
        Dest::Special(at, Special::CharDevice) => Ok(Identity::Path(std::fs::canonicalize(&at).unwrap_or(at))),
        Dest::File(at) | Dest::Special(at, _) => Ok(inode(&at).unwrap_or_else(|| {
            // A new file: its directory's real path and its name.
            let dir = match at.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let dir = std::fs::canonicalize(&dir).unwrap_or(dir);
            Identity::Path(dir.join(at.file_name().unwrap_or_default()))
        })),
    }
}

/// Standard output's own identity, when it is a file or a FIFO (`-` beside `/dev/stdout`).
fn stdout_inode() -> Option<Identity> {
    let meta = std::fs::metadata("/proc/self/fd/1").ok()?;
    (!meta.file_type().is_char_device()).then(|| Identity::Inode(meta.dev(), meta.ino()))
}

message_error!(
    /// Outputs that cannot all be written as asked (two on one path, a directory); the message
    /// names the flags.
    OutputsClash
);

/// Checks a run's outputs before it starts (`(flag, path)` each): two outputs on one path, or
/// two on standard output, a directory or a block device: the one line to say, for exit 2.
pub fn check(outputs: &[(&str, &Path)]) -> Result<(), OutputsClash> {
    let stdout = stdout_inode();
    let mut seen: Vec<(&str, &Path, Identity)> = Vec::new();
    for &(flag, path) in outputs {
        let id = identity(path).map_err(|e| format!("{flag} {e}"))?;
        let same = |seen: &Identity| {
            *seen == id
                || (*seen == Identity::Stdout && stdout.as_ref() == Some(&id))
                || (id == Identity::Stdout && stdout.as_ref() == Some(seen))
        };
        if let Some((other, _, _)) = seen.iter().find(|(_, _, seen)| same(seen)) {
            return Err(if id == Identity::Stdout {
                format!("{other} and {flag} both name standard output (-): one output at most may go there").into()
            } else {
                format!("{other} and {flag} both name {}: each output needs a path of its own", path.display()).into()
            });
        }
        seen.push((flag, path, id));
    }
    Ok(())
}

/// Writes `bytes` to the output `path` as [`dest`] says. A reader of standard output that stops
/// early (`| head`) is not an error; every other failure names the path and the reason.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), OutputError> {
    let fail = |e: io::Error| OutputError { path: path.to_path_buf(), reason: reason(&e) };
    match dest(path)? {
        Dest::Stdout => {
            let mut stdout = io::stdout().lock();
            match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(fail(e)),
                _ => Ok(()),
            }
        }
        Dest::File(at) => replace(&at, bytes).map_err(fail),
        Dest::Special(at, kind) => in_place(&at, kind, bytes).map_err(fail),
    }
}

/// The report a person reads, on standard output; on standard error instead when one of
/// `outputs` is `-`, so that `--json - | jq` gets the document alone. A reader that stops
/// early (`| head`) is not an error.
pub fn print_report<'a>(text: &str, outputs: impl IntoIterator<Item = &'a Path>) {
    say_report(text, outputs.into_iter().any(is_stdout));
}

/// The report a person reads, on standard error when `stdout_taken` (an output is `-`), else
/// on standard output. A reader that stops early (`| head`) is not an error.
pub fn say_report(text: &str, stdout_taken: bool) {
    let _ = if stdout_taken {
        io::stderr().lock().write_all(text.as_bytes())
    } else {
        let mut stdout = io::stdout().lock();
        stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush())
    };
}

/// The outputs a command was given, each with its flag, leaving out those not given.
pub fn named<'a>(flags: &[(&'static str, &'a Option<PathBuf>)]) -> Vec<(&'static str, &'a Path)> {
    flags.iter().filter_map(|&(flag, path)| Some((flag, path.as_deref()?))).collect()
}

/// Writes each output, every one tried whatever became of those before it; a failure is said
/// on standard error after `who` (`respbench`, `respbench merge`). Whether all were written.
pub fn write_each<'a, B: AsRef<[u8]>>(who: &str, files: impl IntoIterator<Item = (&'a Path, B)>) -> bool {
    let mut all = true;
    for (path, bytes) in files {
        if let Err(e) = write(path, bytes.as_ref()) {
            eprintln!("{who}: {e}");
            all = false;
        }
    }
    all
}

/// A failure in the words a user reads: the OS's, with the cases that need saying named.
fn reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::ENXIO) => "no process has the FIFO open for reading".into(),
        Some(libc::EPIPE) => "the reader closed it before the whole output was written".into(),
        Some(libc::EFBIG) => "the file size limit was reached (ulimit -f)".into(),
        _ => {
            let text = e.to_string();
            // "No space left on device (os error 28)": the number says nothing more.
            match text.find(" (os error") {
                Some(at) => text[..at].to_string(),
                None => text,
            }
        }
    }
}

/// A regular file or a new path: a temporary file in the same directory, synced, renamed over.
fn replace(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = File::create(&tmp)?;
        // The mode of the file replaced, so replacing it does not widen who can read it.
        if let Ok(meta) = std::fs::metadata(path) {
            file.set_permissions(meta.permissions())?;
        }
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A FIFO, a character device or a socket: opened and written once, in place. A FIFO with no
/// reader is an error at once rather than a wait for one that may never come.
fn in_place(path: &Path, kind: Special, bytes: &[u8]) -> io::Result<()> {
    match kind {
        Special::Socket => {
            let mut stream = std::os::unix::net::UnixStream::connect(path)?;
            stream.write_all(bytes)?;
            stream.shutdown(std::net::Shutdown::Write)
        }
        Special::Fifo => {
            let mut file = OpenOptions::new().write(true).custom_flags(libc::O_NONBLOCK).open(path)?;
            blocking(&file)?;
            file.write_all(bytes)?;
            file.flush()
        }
        Special::CharDevice => {
            let mut file = OpenOptions::new().write(true).open(path)?;
            file.write_all(bytes)?;
            file.flush()
        }
    }
}

/// Clears O_NONBLOCK (set only so that opening a FIFO without a reader fails at once).
fn blocking(file: &File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a descriptor this function's caller owns, with no pointers.
    #[allow(unsafe_code)]
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    #[allow(unsafe_code)]
    let set = unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) };
    if set < 0 { Err(io::Error::last_os_error()) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_regular_file_is_replaced_and_no_temporary_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.json");
        write(&path, b"one").unwrap();
        write(&path, b"two").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let missing = dir.path().join("missing/out.json");
        let e = write(&missing, b"x").unwrap_err();
        assert_eq!(e.to_string(), format!("cannot write {}: No such file or directory", missing.display()));
    }

    #[test]
    fn a_symlink_stays_a_link_and_its_target_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target.json");
        std::fs::write(&target, b"old").unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink("target.json", &link).unwrap();
        write(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&target).unwrap(), b"new");
        // A dangling link: its target is created.
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink("later.json", &dangling).unwrap();
        write(&dangling, b"made").unwrap();
        assert_eq!(std::fs::read(dir.path().join("later.json")).unwrap(), b"made");
        // A loop of links is an error, not a hang.
        std::os::unix::fs::symlink("b", dir.path().join("a")).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        assert!(write(&dir.path().join("a"), b"x").unwrap_err().reason.contains("levels of symbolic links"));
    }

    #[test]
    fn a_fifo_without_a_reader_is_an_error_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        #[allow(unsafe_code)]
        let made = unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
        assert_eq!(made, 0);
        let e = write(&fifo, b"x").unwrap_err();
        assert!(e.reason.contains("no process has the FIFO open"), "{e}");
        assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    }

    #[test]
    fn outputs_on_one_place_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let same = dir.path().join("same.out");
        let e = check(&[("--json", &same), ("--html", &same)]).unwrap_err();
        assert!(e.starts_with("--json and --html both name "), "{e}");
        let e = check(&[("--json", Path::new("-")), ("--csv", Path::new("-"))]).unwrap_err();
        assert!(e.contains("both name standard output"), "{e}");
        std::fs::write(&same, b"").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&same, &link).unwrap();
        assert!(check(&[("--json", &same), ("--html", &link)]).is_err());
        assert!(check(&[("--json", &same), ("--html", &dir.path().join("other"))]).is_ok());
        assert!(check(&[("--json", dir.path())]).unwrap_err().contains("it is a directory"));
    }
}
