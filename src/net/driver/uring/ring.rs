//! Making a worker's ring (with the kernel's newest task-work modes where it has them) and
//! putting entries on its submission queue: the io_uring calls the driver's loop leans on,
//! apart from the loop itself.

use crate::net::driver::error::IoUnavailable;
use std::io;

use io_uring::{IoUring, opcode, squeue};

/// Whether io_uring can be used here as this driver uses it.
pub(in crate::net::driver) fn probe() -> Result<(), IoUnavailable> {
    let ring = build(8, 16).map_err(|e| e.to_string())?;
    if !ring.params().is_feature_ext_arg() {
        return Err("the kernel cannot wait with a timeout (IORING_FEAT_EXT_ARG, Linux 5.11)".into());
    }
    let mut probe = io_uring::Probe::new();
    ring.submitter().register_probe(&mut probe).map_err(|e| e.to_string())?;
    for (code, name) in [(opcode::Send::CODE, "send"), (opcode::Recv::CODE, "recv"), (opcode::PollAdd::CODE, "poll")] {
        if !probe.is_supported(code) {
            return Err(format!("the kernel's io_uring has no {name} operation").into());
        }
    }
    Ok(())
}

/// A ring for one thread: deferred task work (completions are processed when the thread
/// waits, in a batch) where the kernel has it (6.1), else cooperative task work (5.19). Both
/// keep the ring from interrupting the thread's blocking calls (a reconnect's login).
pub(super) fn build(entries: u32, completions: u32) -> io::Result<IoUring> {
    IoUring::builder()
        .setup_single_issuer()
        .setup_defer_taskrun()
        .setup_submit_all()
        .setup_cqsize(completions)
        .build(entries)
        .or_else(|_| {
            IoUring::builder().setup_coop_taskrun().setup_submit_all().setup_cqsize(completions).build(entries)
        })
}

/// Submits what is queued when fewer than two entries are free.
pub(super) fn room_for_two(ring: &mut IoUring) -> io::Result<()> {
    let (len, capacity) = {
        let sq = ring.submission();
        (sq.len(), sq.capacity())
    };
    if capacity - len < 2 {
        ring.submit()?;
    }
    Ok(())
}

/// Puts an entry on the submission queue, submitting what is there first when it is full.
pub(super) fn push(ring: &mut IoUring, sqe: &squeue::Entry) -> io::Result<()> {
    loop {
        // SAFETY: every entry pushed points into a slot's buffer that stays in place until
        // the entry's completion (see the callers), or at no memory at all (the poll).
        if unsafe { ring.submission().push(sqe) }.is_ok() {
            return Ok(());
        }
        match ring.submit() {
            Ok(_) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EINTR | libc::EBUSY | libc::EAGAIN)) => {}
            Err(e) => return Err(e),
        }
    }
}
