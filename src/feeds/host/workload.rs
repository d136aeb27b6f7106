//! A workload started by perfscope (`perfscope syscalls -- dd ...`), "corked" as perf-prof
//! does: the child is forked and waits before `exec` until the events are open on it, so
//! not one of its events is missed; then it is released.

use std::ffi::CString;
use std::io::Write;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use anyhow::{Context, bail};

/// A forked workload that has not exec'd yet.
///
/// Forked by hand: `std::process::Command::spawn` waits until the child has exec'd, which a
/// child held before exec never does.
pub struct CorkedWorkload {
    pid: libc::pid_t,
    /// Writing one byte (or closing) lets the child exec.
    release: Option<std::fs::File>,
    status: Option<i32>,
}

impl CorkedWorkload {
    /// Fork `argv`; the child blocks before exec until [`CorkedWorkload::release`].
    pub fn spawn(argv: &[String]) -> anyhow::Result<CorkedWorkload> {
        if argv.is_empty() {
            bail!("the workload after `--` is empty");
        }
        // A program that cannot run is an error before anything starts (as a shell's
        // "not found"), not a session that ends with nothing in it.
        runnable(&argv[0])?;
        let args: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .context("a workload argument contains a NUL byte")?;
        let mut pointers: Vec<*const libc::c_char> = args.iter().map(|a| a.as_ptr()).collect();
        pointers.push(std::ptr::null());
        let mut fds = [0; 2];
        // SAFETY: a valid out array for two descriptors.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error()).context("cannot create the workload's start pipe");
        }
        // SAFETY: both descriptors were just created and are owned here only.
        let (read_end, write_end) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let gate = read_end.as_raw_fd();
        // SAFETY: the child only makes async-signal-safe calls (read, execvp, write, _exit)
        // on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(std::io::Error::last_os_error()).context("cannot fork the workload");
        }
        if pid == 0 {
            // SAFETY: see above; nothing allocates here.
            unsafe {
                let mut byte = 0u8;
                while libc::read(gate, (&mut byte as *mut u8).cast(), 1) < 0
                    && *libc::__errno_location() == libc::EINTR
                {}
                libc::execvp(pointers[0], pointers.as_ptr());
                let message = b"perfscope: cannot exec the workload\n";
                libc::write(2, message.as_ptr().cast(), message.len());
                libc::_exit(127);
            }
        }
        drop(read_end);
        wait_until_blocked_in_read(pid);
        Ok(CorkedWorkload {
            pid,
            release: Some(std::fs::File::from(write_end)),
            status: None,
        })
    }

    pub fn pid(&self) -> u32 {
        self.pid as u32
    }

    /// Let the workload exec (call once its events are open and enabled).
    pub fn release(&mut self) {
        if let Some(mut gate) = self.release.take() {
            let _ = gate.write_all(b"g");
        }
    }

    /// The exit code (128 + signal when killed) once it has exited; `None` while it runs.
    pub fn try_wait(&mut self) -> Option<i32> {
        if self.status.is_none() {
            let mut status = 0;
            // SAFETY: our own child; WNOHANG never blocks.
            if unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) } == self.pid {
                self.status = Some(if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status)
                } else {
                    128 + libc::WTERMSIG(status)
                });
            }
        }
        self.status
    }

    /// Stop it (the session ended first) and reap it.
    pub fn kill(&mut self) {
        self.release();
        if self.try_wait().is_none() {
            let mut status = 0;
            // SAFETY: our own, not yet reaped child.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, &mut status, 0);
            }
            self.status = Some(128 + libc::SIGKILL);
        }
    }
}

/// Where `execvp` would find `program`, or why it would not: a path (with a `/`) must be
/// an executable file; a bare name is looked up in `$PATH` (execvp's default without it).
fn runnable(program: &str) -> anyhow::Result<std::path::PathBuf> {
    use std::path::{Path, PathBuf};
    let executable = |path: &Path| -> std::io::Result<()> {
        let meta = std::fs::metadata(path)?;
        if meta.is_dir() {
            return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
        }
        let c = CString::new(path.as_os_str().as_encoded_bytes())
            .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
        // SAFETY: a NUL-terminated path.
        if unsafe { libc::access(c.as_ptr(), libc::X_OK) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    };
    if program.contains('/') {
        let path = PathBuf::from(program);
        return match executable(&path) {
            Ok(()) => Ok(path),
            Err(e) => bail!("cannot run the workload {program}: {e}"),
        };
    }
    let search = std::env::var_os("PATH").unwrap_or_else(|| "/bin:/usr/bin".into());
    for dir in std::env::split_paths(&search) {
        let path = dir.join(program);
        if executable(&path).is_ok() {
            return Ok(path);
        }
    }
    bail!(
        "cannot run the workload {program}: no executable of that name in PATH ({})",
        search.to_string_lossy()
    )
}

/// Wait (a bounded while) until the forked child sleeps in the read of its start pipe.
///
/// Its events are enabled next: a child that entered that read only afterwards would have
/// it traced as its own syscall (`syscalls -- ./prog` counting one read too many). Once
/// the child sleeps in it, only the read's exit falls in the trace, which pairs with
/// nothing. /proc/PID/syscall names the syscall; where it cannot be read, a sleeping child
/// can only be in that read (it makes no other call before it).
fn wait_until_blocked_in_read(pid: libc::pid_t) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let read_nr = libc::SYS_read.to_string();
    while std::time::Instant::now() < deadline {
        let blocked = match crate::input::read_system_text(format!("/proc/{pid}/syscall")) {
            Ok(text) => text.split_whitespace().next() == Some(read_nr.as_str()),
            Err(_) => crate::input::read_system_text(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let (_, after_comm) = stat.rsplit_once(')')?;
                    after_comm.split_whitespace().next().map(|state| state == "S")
                })
                .unwrap_or(false),
        };
        if blocked {
            return;
        }
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

impl Drop for CorkedWorkload {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Read what a released workload printed, for tests.
#[cfg(test)]
fn read_all(mut r: impl std::io::Read) -> String {
    let mut s = String::new();
    let _ = r.read_to_string(&mut s);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_workload_waits_for_its_release_then_runs() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let argv = vec![
            "/bin/sh".to_string(),
            "-c".to_string(),
            format!("echo yes > {}", marker.display()),
        ];
        let mut w = CorkedWorkload::spawn(&argv).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(!marker.exists(), "ran before the release");
        assert!(w.try_wait().is_none());
        w.release();
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = w.try_wait() {
                break s;
            }
            assert!(Instant::now() < deadline, "the workload never finished");
            std::thread::sleep(Duration::from_millis(10));
        };
        assert_eq!(status, 0);
        assert_eq!(read_all(std::fs::File::open(&marker).unwrap()), "yes\n");
    }

    #[test]
    fn spawn_returns_once_the_child_sleeps_in_its_start_read() {
        // Events enabled after spawn must not see that read begin (it would count as the
        // workload's own syscall).
        for _ in 0..20 {
            let w = CorkedWorkload::spawn(&["/bin/true".to_string()]).unwrap();
            let syscall = std::fs::read_to_string(format!("/proc/{}/syscall", w.pid())).unwrap();
            assert_eq!(
                syscall.split_whitespace().next(),
                Some(libc::SYS_read.to_string().as_str()),
                "{syscall}"
            );
        }
    }

    #[test]
    fn a_program_whose_exec_fails_exits_127() {
        // Runnable as far as a check before the fork can tell; its interpreter is missing.
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("script");
        std::fs::write(&script, "#!/nonexistent/interpreter\n").unwrap();
        std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let mut w = CorkedWorkload::spawn(&[script.to_str().unwrap().to_string()]).unwrap();
        w.release();
        let deadline = Instant::now() + Duration::from_secs(10);
        while w.try_wait().is_none() {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(w.try_wait(), Some(127), "exec failed: exit 127 as a shell says");
        assert!(CorkedWorkload::spawn(&[]).is_err());
    }

    #[test]
    fn a_program_that_cannot_run_is_refused_before_the_fork_with_the_reason() {
        let err = |argv0: &str| {
            CorkedWorkload::spawn(&[argv0.to_string()])
                .err()
                .map(|e| format!("{e:#}"))
                .unwrap_or_else(|| panic!("{argv0} was started"))
        };
        let e = err("/nonexistent/cmd");
        assert!(
            e.contains("/nonexistent/cmd") && e.contains("No such file"),
            "{e}"
        );
        let e = err("/tmp");
        assert!(e.contains("/tmp") && e.contains("directory"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("data.txt");
        std::fs::write(&plain, "not a program").unwrap();
        let e = err(plain.to_str().unwrap());
        assert!(e.contains("Permission denied"), "{e}");
        let e = err("perfscope-no-such-program");
        assert!(e.contains("no executable of that name in PATH"), "{e}");
        assert_eq!(runnable("sh").unwrap().file_name().unwrap(), "sh");
    }
}
