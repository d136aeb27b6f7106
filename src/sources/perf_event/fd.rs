//! One open perf event fd: the raw `perf_event_open` syscall with errors that say what
//! to do, and the ioctls perfscope drives (enable, disable, filter, id, output).

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

use perf_event_open_sys::{self as sys, bindings as b};

use super::attr::{EventAttr, EventKind};
use super::error::PerfEventError;
use super::targets::Target;

/// An open perf event: closes on drop.
#[derive(Debug)]
pub struct PerfEventFd {
    fd: OwnedFd,
    /// What was really opened (cycles may have become cpu-clock).
    kind: EventKind,
    /// Opened with `PERF_FORMAT_LOST`: [`PerfEventFd::lost_samples`] works.
    counts_lost: bool,
}

impl PerfEventFd {
    /// Open `event` on `target` for a ring of `ring_bytes`. Hardware cycles fall back to
    /// cpu-clock when the machine has no PMU; [`PerfEventFd::kind`] says which was used.
    pub fn open(event: &EventAttr, target: Target, ring_bytes: usize) -> Result<PerfEventFd, PerfEventError> {
        match Self::open_exactly(event, target, ring_bytes) {
            Err(err) if is_missing_pmu(&err) => match event.fallback() {
                Some(fallback) => Self::open_exactly(&fallback, target, ring_bytes),
                None => Err(err),
            },
            other => other,
        }
    }

    /// Open `event` as given, no fallback.
    pub fn open_exactly(
        event: &EventAttr,
        target: Target,
        ring_bytes: usize,
    ) -> Result<PerfEventFd, PerfEventError> {
        let mut attr = event.to_raw(ring_bytes)?;
        if target.inherits() {
            attr.set_inherit(1);
        }
        let (pid, cpu) = target.pid_cpu();
        let open = |attr: &mut sys::bindings::perf_event_attr| {
            // SAFETY: attr is a valid, fully initialised perf_event_attr for the call.
            unsafe { sys::perf_event_open(attr, pid, cpu, -1, u64::from(b::PERF_FLAG_FD_CLOEXEC)) }
        };
        let mut fd = open(&mut attr);
        if fd < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINVAL) {
            // Kernels before 6.0 refuse PERF_FORMAT_LOST: open without the lost counter.
            attr.read_format = 0;
            fd = open(&mut attr);
        }
        if fd < 0 {
            return Err(open_error(event, target, io::Error::last_os_error()));
        }
        // SAFETY: a fresh fd this value now owns.
        Ok(PerfEventFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
            kind: event.kind,
            counts_lost: attr.read_format & super::attr::READ_FORMAT_LOST != 0,
        })
    }

    pub fn kind(&self) -> EventKind {
        self.kind
    }

    /// The kernel's count of this event's samples lost to a full ring; `None` on kernels
    /// without `PERF_FORMAT_LOST`.
    pub fn lost_samples(&self) -> Option<u64> {
        if !self.counts_lost {
            return None;
        }
        let mut words = [0u64; 2];
        // SAFETY: reading 16 bytes into a 16-byte buffer we own.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), words.as_mut_ptr().cast(), 16) };
        (n == 16).then_some(words[1])
    }

    pub fn enable(&self) -> Result<(), PerfEventError> {
        // SAFETY: an ioctl without pointer arguments on our fd.
        check(unsafe { sys::ioctls::ENABLE(self.fd.as_raw_fd(), 0) }, "ENABLE")
    }

    pub fn disable(&self) -> Result<(), PerfEventError> {
        // SAFETY: as enable.
        check(unsafe { sys::ioctls::DISABLE(self.fd.as_raw_fd(), 0) }, "DISABLE")
    }

    /// Install a kernel ftrace filter (`id == 0 && common_pid != 1`). A refusal is
    /// [`PerfEventError::FilterRefused`] so the caller can filter in user space instead.
    /// The kernel accepts one filter per event: a second one is refused with EEXIST.
    pub fn set_filter(&self, filter: &str) -> Result<(), PerfEventError> {
        let text = CString::new(filter).map_err(|_| PerfEventError::FilterRefused {
            filter: filter.to_string(),
            cause: io::Error::new(io::ErrorKind::InvalidInput, "the filter contains a NUL byte"),
        })?;
        // SAFETY: the kernel reads (copies) the NUL-terminated string during the call.
        let rc = unsafe { sys::ioctls::SET_FILTER(self.fd.as_raw_fd(), text.as_ptr().cast_mut()) };
        if rc < 0 {
            return Err(PerfEventError::FilterRefused {
                filter: filter.to_string(),
                cause: io::Error::last_os_error(),
            });
        }
        Ok(())
    }

    /// The kernel's id of this event: what `PERF_SAMPLE_IDENTIFIER` carries.
    pub fn id(&self) -> Result<u64, PerfEventError> {
        let mut id = 0u64;
        // SAFETY: the kernel writes one u64 into `id`.
        check(unsafe { sys::ioctls::ID(self.fd.as_raw_fd(), &mut id) }, "ID")?;
        Ok(id)
    }

    /// Write this event's records into `ring_owner`'s ring (same CPU or same thread), so
    /// several events share one ring and one fd to poll.
    pub fn set_output(&self, ring_owner: &PerfEventFd) -> Result<(), PerfEventError> {
        // SAFETY: both fds are open perf events.
        check(
            unsafe { sys::ioctls::SET_OUTPUT(self.fd.as_raw_fd(), ring_owner.fd.as_raw_fd()) },
            "SET_OUTPUT",
        )
    }
}

impl AsFd for PerfEventFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// The pid a sampling consumer drops samples of for `--exclude-self`
/// (`sample.pid == Some(own_pid())`).
pub fn own_pid() -> u32 {
    std::process::id()
}

fn check(rc: i32, what: &'static str) -> Result<(), PerfEventError> {
    if rc < 0 {
        Err(PerfEventError::Ioctl {
            what,
            cause: io::Error::last_os_error(),
        })
    } else {
        Ok(())
    }
}

fn is_missing_pmu(err: &PerfEventError) -> bool {
    match err {
        PerfEventError::NoSuchEvent { .. } => true,
        PerfEventError::Open { cause: source, .. } => {
            matches!(source.raw_os_error(), Some(libc::EOPNOTSUPP | libc::ENODEV))
        }
        _ => false,
    }
}

fn open_error(event: &EventAttr, target: Target, source: io::Error) -> PerfEventError {
    let (name, target_text) = (event.kind.name(), target.to_string());
    match source.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => PerfEventError::PermissionDenied {
            event: name,
            target: target_text,
            why: super::refusal::explain_current(super::refusal::Request {
                target,
                tracepoint: matches!(event.kind, EventKind::Tracepoint { .. }),
                kernel: !event.exclude_kernel,
            }),
        },
        Some(libc::ENOENT) => PerfEventError::NoSuchEvent {
            event: name,
            target: target_text,
        },
        Some(libc::EINVAL) => PerfEventError::InvalidAttr {
            event: name,
            target: target_text,
            attr: event.describe(),
        },
        Some(libc::EMFILE) => PerfEventError::TooManyFiles {
            event: name,
            target: target_text,
        },
        Some(libc::ESRCH) => PerfEventError::NoSuchThread {
            event: name,
            target: target_text,
        },
        _ => PerfEventError::Open {
            event: name,
            target: target_text,
            cause: source,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sources::perf_event::attr::Sampling;

    #[test]
    fn errors_name_the_event_and_what_to_do() {
        let event = EventAttr::tracepoint(5);
        let perm = open_error(&event, Target::Cpu(0), io::Error::from_raw_os_error(libc::EACCES)).to_string();
        assert!(
            perm.contains("perf_event_paranoid") && perm.contains("root"),
            "{perm}"
        );
        if unsafe { libc::geteuid() } == 0 {
            assert!(
                !perm.contains("run as root"),
                "root is not told to be root: {perm}"
            );
        }
        let inval =
            open_error(&event, Target::Cpu(1), io::Error::from_raw_os_error(libc::EINVAL)).to_string();
        assert!(
            inval.contains("tracepoint id 5") && inval.contains("sample_type=") && inval.contains("CPU 1"),
            "{inval}"
        );
        let mfile = open_error(
            &event,
            Target::Thread(3),
            io::Error::from_raw_os_error(libc::EMFILE),
        )
        .to_string();
        assert!(
            mfile.contains("ulimit -n") && mfile.contains("thread 3"),
            "{mfile}"
        );
        let noent = open_error(&event, Target::Cpu(0), io::Error::from_raw_os_error(libc::ENOENT));
        assert!(is_missing_pmu(&noent) && noent.to_string().contains("ENOENT"));
    }

    #[test]
    fn a_software_counter_opens_reports_its_id_and_a_missing_tracepoint_is_enoent() {
        let event = EventAttr::new(EventKind::TaskClock, Sampling::Period(1_000_000));
        let fd = PerfEventFd::open(&event, Target::Thread(own_pid()), 4096).unwrap();
        assert_eq!(fd.kind(), EventKind::TaskClock);
        assert_ne!(fd.id().unwrap(), 0);
        fd.enable().unwrap();
        fd.disable().unwrap();
        let missing = PerfEventFd::open(&EventAttr::tracepoint(u64::from(u32::MAX)), Target::Cpu(0), 4096);
        assert!(missing.is_err());
    }
}
