//! The io_uring path's provided buffer ring: one pool of receive buffers per worker
//! ring, from which every connection's multishot receive takes a buffer only when bytes arrive.
//! A connection then holds no receive buffer of its own while idle (10,000 connections share a
//! pool sized for what is in flight, not 10,000 buffers), and one receive stays armed for the
//! whole run instead of one per reply. A buffer goes back to the ring once the worker has read
//! it all ([`BufRing::give_back`]).

use std::alloc::{Layout, alloc, alloc_zeroed, dealloc};
use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU16, Ordering};

use io_uring::IoUring;
use io_uring::types::BufRingEntry;

/// The buffer group every multishot receive of a ring takes from.
pub const GROUP: u16 = 0;

/// What a ring's pool may take, at most: its buffers are as many as the ring's connections
/// (each holds one between two loop turns at pipeline 1; when the pool runs dry a receive is
/// armed again once buffers are back), within 16 to 16,384, and as big as this allows,
/// within 1 to 64 KB. Pages the kernel never wrote stay unallocated.
const BUDGET: usize = 8 << 20;

/// The fewest buffers a pool has. The kernel takes them in turn, so each is written again
/// only after all the others: a pool no bigger than the connections need stays in the cache
/// between two uses, where 256 buffers of 32 KB (8 MB) for 10 connections receiving large
/// values missed it on every copy (1 MB GETs cost 30 % more CPU than with 16 of 64 KB).
const MIN_BUFFERS: usize = 16;

/// The ring of buffer descriptors the kernel reads (page-aligned, as it requires) and the
/// buffers themselves, in one block each.
pub struct BufRing {
    entries: NonNull<BufRingEntry>,
    count: u16,
    size: usize,
    mem: NonNull<u8>,
    tail: u16,
}

impl BufRing {
    /// A pool for `sockets` connections, every buffer handed to the kernel, registered with
    /// `ring`. The error is the kernel's refusal (before 5.19 it has no buffer rings).
    pub fn new(ring: &IoUring, sockets: usize) -> io::Result<BufRing> {
        let count = sockets.next_power_of_two().clamp(MIN_BUFFERS, 1 << 14);
        let size = (BUDGET / count).clamp(1 << 10, 64 << 10);
        let entries = Layout::from_size_align(count * size_of::<BufRingEntry>(), 4096).expect("a small layout");
        let bufs = Layout::from_size_align(count * size, 64).expect("a small layout");
        // SAFETY: both layouts have a non-zero size; a null return is handled.
        let (entries_ptr, mem_ptr) = unsafe { (alloc_zeroed(entries).cast::<BufRingEntry>(), alloc(bufs)) };
        let (Some(e), Some(mem)) = (NonNull::new(entries_ptr), NonNull::new(mem_ptr)) else {
            std::alloc::handle_alloc_error(entries);
        };
        let mut pool = BufRing { entries: e, count: count as u16, size, mem, tail: 0 };
        for bid in 0..count as u16 {
            pool.put(bid);
        }
        pool.publish();
        // SAFETY: the descriptor ring stays allocated, in place, until `self` drops, which the
        // driver lets happen only once the ring is closed or no receive is armed (uring.rs).
        unsafe { ring.submitter().register_buf_ring_with_flags(e.as_ptr() as u64, count as u16, GROUP, 0) }?;
        Ok(pool)
    }

    /// The bytes the kernel put in buffer `bid` at `range`.
    pub fn bytes(&self, bid: u16, range: std::ops::Range<usize>) -> &[u8] {
        assert!(usize::from(bid) < usize::from(self.count) && range.start <= range.end && range.end <= self.size);
        // SAFETY: inside buffer `bid` of the block (checked above); the kernel wrote those
        // bytes (a completion said so) and does not write that buffer again until it is
        // given back.
        unsafe {
            std::slice::from_raw_parts(self.mem.as_ptr().add(usize::from(bid) * self.size + range.start), range.len())
        }
    }

    /// Returns buffer `bid` to the kernel, all of it read.
    pub fn give_back(&mut self, bid: u16) {
        self.put(bid);
        self.publish();
    }

    fn put(&mut self, bid: u16) {
        let at = usize::from(self.tail & (self.count - 1));
        // SAFETY: `at` is inside the descriptor ring; the kernel reads only the entries between
        // its head and the published tail, which this one is not yet.
        let entry = unsafe { &mut *self.entries.as_ptr().add(at) };
        // SAFETY: `bid` names a buffer inside the block.
        entry.set_addr(unsafe { self.mem.as_ptr().add(usize::from(bid) * self.size) } as u64);
        entry.set_len(self.size as u32);
        entry.set_bid(bid);
        self.tail = self.tail.wrapping_add(1);
    }

    fn publish(&self) {
        // SAFETY: the tail shares the first entry's last field (the kernel's layout); it is a
        // u16 the kernel only reads, aligned as an AtomicU16 needs.
        let tail = unsafe { &*BufRingEntry::tail(self.entries.as_ptr()).cast::<AtomicU16>() };
        tail.store(self.tail, Ordering::Release);
    }
}

impl Drop for BufRing {
    fn drop(&mut self) {
        let count = usize::from(self.count);
        // SAFETY: the blocks allocated in `new`, with their layouts; the driver drops the pool
        // only when the kernel can no longer write to it (see `new`).
        unsafe {
            dealloc(
                self.entries.as_ptr().cast(),
                Layout::from_size_align_unchecked(count * size_of::<BufRingEntry>(), 4096),
            );
            dealloc(self.mem.as_ptr(), Layout::from_size_align_unchecked(count * self.size, 64));
        }
    }
}
