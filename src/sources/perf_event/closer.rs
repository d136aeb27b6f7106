//! Closing many tracepoint events without waiting for the kernel.
//!
//! The last close of a tracepoint event unregisters its probe and waits for an RCU grace
//! period, under the kernel's one `event_mutex`: ~35 ms each, one after another (closing
//! from many threads does not help). The 2,305 events of `-e '*:*'` took 84 s to close, so
//! a run asked to stop kept going for a minute and a half after its results.
//!
//! Instead the fds are handed to a detached process that closes them: a double fork whose
//! grandchild keeps only those fds (and no terminal, no pipe of the caller's), waits until
//! this process has closed its own copies, then exits — the kernel's wait happens there.
//! The events are disabled before (they record nothing meanwhile) and their rings unmapped.

use std::os::fd::{AsFd, AsRawFd, RawFd};

use super::attr::EventKind;
use super::fd::PerfEventFd;

/// Fewer tracepoints than this close in about a second: closed here, as usual.
pub const HAND_OFF_AT: usize = 32;

/// Close `fds`: here when they hold few tracepoints, else in a detached process (see the
/// module). The wait is per tracepoint, not per fd (its last fd unregisters it).
pub fn close_all(fds: Vec<PerfEventFd>) {
    let tracepoints: std::collections::BTreeSet<u64> = fds
        .iter()
        .filter_map(|fd| match fd.kind() {
            EventKind::Tracepoint { id } => Some(id),
            _ => None,
        })
        .collect();
    if tracepoints.len() < HAND_OFF_AT {
        return drop(fds);
    }
    let mut pipe = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two-element array.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return drop(fds);
    }
    let [read_end, write_end] = pipe;
    // What the closer keeps: the events and the pipe's read end, sorted (made before the
    // fork: the child may not allocate).
    let mut keep: Vec<RawFd> = fds
        .iter()
        .map(|fd| fd.as_fd().as_raw_fd())
        .chain([read_end])
        .collect();
    keep.sort_unstable();
    // SAFETY: fork in a threaded process: the child calls only async-signal-safe functions
    // (fork, setsid, close_range, read, _exit) and touches no lock or allocator.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // SAFETY: as above; `keep` was built before the fork and is only read.
        unsafe { closer(&keep, read_end, write_end) }
    }
    // SAFETY: fds this process owns.
    unsafe { libc::close(read_end) };
    if child > 0 {
        // Our copies close at once: the closer holds the last references.
        drop(fds);
        // SAFETY: as above.
        unsafe { libc::close(write_end) };
        let mut status = 0;
        // The middle child exits at once (its child is adopted by init).
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(child, &mut status, 0) };
    } else {
        // SAFETY: as above.
        unsafe { libc::close(write_end) };
        drop(fds);
    }
}

/// The forked side: fork again (so init reaps the closer), keep only `keep`, wait for the
/// parent's copies to close (the pipe's write end closes with them), exit.
unsafe fn closer(keep: &[RawFd], read_end: RawFd, write_end: RawFd) -> ! {
    // SAFETY (whole function): async-signal-safe calls on fds this process owns.
    unsafe {
        if libc::fork() != 0 {
            libc::_exit(0);
        }
        libc::setsid();
        libc::close(write_end);
        let mut next: RawFd = 0;
        for &fd in keep {
            if fd > next {
                libc::syscall(
                    libc::SYS_close_range,
                    next as libc::c_uint,
                    (fd - 1) as libc::c_uint,
                    0,
                );
            }
            next = fd + 1;
        }
        libc::syscall(libc::SYS_close_range, next as libc::c_uint, libc::c_uint::MAX, 0);
        let mut byte = 0u8;
        while libc::read(read_end, (&raw mut byte).cast(), 1) < 0 {}
        libc::_exit(0)
    }
}

/// Perf event fds that close together when dropped: in a detached process when they hold
/// many tracepoints ([`close_all`]), unless [`EventFds::close_here`] was asked.
#[derive(Default)]
pub struct EventFds {
    fds: Vec<PerfEventFd>,
    close_here: bool,
}

impl EventFds {
    pub fn push(&mut self, fd: PerfEventFd) {
        self.fds.push(fd);
    }

    pub fn len(&self) -> usize {
        self.fds.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fds.is_empty()
    }

    /// Close them in this process however long it takes: the caller removes something
    /// they use right after (its uprobes, which the kernel keeps while an event holds them).
    pub fn close_here(&mut self) {
        self.close_here = true;
    }
}

impl Drop for EventFds {
    fn drop(&mut self) {
        let fds = std::mem::take(&mut self.fds);
        if self.close_here {
            drop(fds);
        } else {
            close_all(fds);
        }
    }
}
