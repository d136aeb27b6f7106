//! The one clock of a session: CLOCK_MONOTONIC nanoseconds. The QEMU plugin stamps samples
//! with it (relative to the epoch the runner passes) and the runner stamps console chunks
//! with it, so marker times and sample times compare exactly; perf events are opened on it
//! (`use_clockid`), so the host sources read their drains and session starts from it too.

/// CLOCK_MONOTONIC now, in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the pointer we own.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn moves_forward() {
        let a = super::monotonic_ns();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let b = super::monotonic_ns();
        assert!(a > 0 && b >= a + 2_000_000, "{a} {b}");
    }
}
