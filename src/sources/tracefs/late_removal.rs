//! Removing probes the kernel still calls busy when a session ends.
//!
//! The kernel refuses to remove a probe (EBUSY) while a perf event on it is not yet fully
//! released. On a loaded machine that can outlast the end of the session; waiting for it
//! would hold the run open, and leaving the probe would leave state behind. So the removal
//! is handed to a detached process (as closing many tracepoints is, perf_event/closer.rs)
//! that asks again once a second for up to two minutes; a probe it cannot remove is taken
//! out by the next perfscope's orphan sweep (its process is gone by then).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// How long the detached process keeps asking.
const TRIES: usize = 120;

/// Remove `lines` (`-:group/event` commands) through `control` from a detached process.
pub fn remove_later(control: &Path, lines: &[String]) {
    // Everything the child uses is made before the fork: it may not allocate.
    let Ok(path) = CString::new(control.as_os_str().as_bytes()) else {
        return;
    };
    let commands: Vec<Vec<u8>> = lines.iter().map(|l| format!("{l}\n").into_bytes()).collect();
    let mut done = vec![false; commands.len()];
    // SAFETY: fork in a threaded process: the child calls only async-signal-safe functions
    // (fork, setsid, close_range, open, write, close, nanosleep, _exit) and touches no lock
    // or allocator.
    let child = unsafe { libc::fork() };
    if child == 0 {
        // SAFETY: as above; `path`, `commands` and `done` were made before the fork.
        unsafe { remover(&path, &commands, &mut done) }
    }
    if child > 0 {
        let mut status = 0;
        // The middle child exits at once (its child is adopted by init).
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(child, &mut status, 0) };
    }
}

/// The forked side: fork again (so init reaps the remover), drop every inherited fd, ask
/// the kernel once a second until each probe is gone or the time is up, exit.
unsafe fn remover(path: &CString, commands: &[Vec<u8>], done: &mut [bool]) -> ! {
    // SAFETY (whole function): async-signal-safe calls on memory made before the fork.
    unsafe {
        if libc::fork() != 0 {
            libc::_exit(0);
        }
        libc::setsid();
        libc::syscall(libc::SYS_close_range, 0 as libc::c_uint, libc::c_uint::MAX, 0);
        let second = libc::timespec {
            tv_sec: 1,
            tv_nsec: 0,
        };
        for _ in 0..TRIES {
            libc::nanosleep(&second, std::ptr::null_mut());
            let mut left = false;
            for (command, done) in commands.iter().zip(done.iter_mut()) {
                if *done {
                    continue;
                }
                let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_APPEND | libc::O_CLOEXEC);
                if fd >= 0 {
                    let written = libc::write(fd, command.as_ptr().cast(), command.len());
                    libc::close(fd);
                    // Written, or refused for another reason than busy (gone already).
                    *done = written == command.len() as isize || *libc::__errno_location() != libc::EBUSY;
                }
                left |= !*done;
            }
            if !left {
                break;
            }
        }
        libc::_exit(0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    #[test]
    fn the_detached_process_writes_each_command_once() {
        // A plain file stands for uprobe_events: every append succeeds at the first try.
        let dir = tempfile::tempdir().unwrap();
        let control = dir.path().join("uprobe_events");
        std::fs::write(&control, "").unwrap();
        let lines = [
            "-:perfscope_1/free".to_string(),
            "-:perfscope_1/malloc__return".to_string(),
        ];
        super::remove_later(&control, &lines);
        let want = "-:perfscope_1/free\n-:perfscope_1/malloc__return\n";
        let start = Instant::now();
        while std::fs::read_to_string(&control).unwrap() != want {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "{:?}",
                std::fs::read_to_string(&control)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        // Done, not asked again.
        std::thread::sleep(Duration::from_millis(1500));
        assert_eq!(std::fs::read_to_string(&control).unwrap(), want);
    }
}
