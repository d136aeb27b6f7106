//! A thread that stamps what it reads must wake the moment its data arrives: the QEMU
//! console reader stamps marker lines with the time its `read` returned, and every
//! millisecond it waits for a CPU behind busy vCPU threads puts a sample on the wrong
//! side of the workload window. A real-time (SCHED_FIFO) thread preempts them on wake-up;
//! it only reads and forwards, so it cannot starve anyone. The host readers use it when
//! asked (`--realtime`): a reader woken at once drains the rings before they overflow.

/// Make the calling thread real-time at the lowest FIFO priority. False when the process
/// may not (no CAP_SYS_NICE and no RLIMIT_RTPRIO); the thread then stays as it was.
pub fn prefer_prompt_wakeups() -> bool {
    let param = libc::sched_param { sched_priority: 1 };
    // SAFETY: pthread_self is always valid for the calling thread; param lives across the call.
    unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) == 0 }
}

/// [`prefer_prompt_wakeups`] for a host ring reader asked to (`--realtime`), saying on
/// stderr when the process may not.
pub fn realtime_reader(asked: bool) {
    if asked && !prefer_prompt_wakeups() {
        crate::stdio::say(
            "perfscope: --realtime: SCHED_FIFO refused (needs CAP_SYS_NICE or RLIMIT_RTPRIO); \
             the rings are read at normal priority",
        );
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_root_thread_becomes_fifo() {
        // The suite runs as root (CI does); without the privilege this must report false.
        let granted = std::thread::spawn(|| {
            let ok = super::prefer_prompt_wakeups();
            // SAFETY: sched_getscheduler(0) reads the calling thread's policy.
            (ok, unsafe { libc::sched_getscheduler(0) })
        })
        .join()
        .unwrap();
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } == 0 {
            assert!(granted.0, "root may make a thread real-time");
        }
        let fifo = granted.1 == libc::SCHED_FIFO;
        assert_eq!(
            granted.0, fifo,
            "reported {} but the policy is {}",
            granted.0, granted.1
        );
    }
}
