//! The QEMU process: spawned with the console on pipes, its output read on a thread and
//! stamped with the session clock, stopped cleanly (QMP quit, then SIGTERM, then SIGKILL),
//! and its final CPU accounting read while it is a zombie.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use anyhow::Context;

use super::host_time::{self, ProcTimes};
use super::qmp;
use crate::sources::clock::monotonic_ns;
use crate::sources::prompt_wakeup::prefer_prompt_wakeups;

/// How QEMU was stopped.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum StopMethod {
    QmpQuit,
    Sigterm,
    Sigkill,
}

impl StopMethod {
    pub fn name(self) -> &'static str {
        match self {
            StopMethod::QmpQuit => "qmp_quit",
            StopMethod::Sigterm => "sigterm",
            StopMethod::Sigkill => "sigkill",
        }
    }
}

/// Console output: (time on the session clock relative to the epoch, bytes).
pub type ConsoleChunk = (u64, Vec<u8>);

/// A running QEMU.
pub struct QemuProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    pub console: Receiver<ConsoleChunk>,
    qmp_socket: PathBuf,
    pub started: Instant,
    /// Set once the process has exited (status code, final /proc times).
    exited: Option<(i32, Option<ProcTimes>, Duration)>,
    stop_requested: Option<(Instant, StopMethod)>,
    stderr: Option<Receiver<Vec<u8>>>,
    /// The console reader runs real-time, so marker stamps trail the guest by microseconds.
    pub console_realtime: bool,
}

impl QemuProcess {
    /// Start `qemu args…`; stdout chunks are stamped relative to `epoch_ns`.
    pub fn spawn(
        qemu: &PathBuf,
        args: &[String],
        qmp_socket: PathBuf,
        epoch_ns: u64,
    ) -> anyhow::Result<Self> {
        let mut command = Command::new(qemu);
        command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        // QEMU must not outlive a perfscope that is killed (SIGKILL runs no cleanup): the
        // kernel kills it when the thread that started it — the main thread, alive until
        // the process ends — is gone.
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: the closure runs in the forked child before exec and makes only
        // async-signal-safe calls (prctl, getppid, _exit).
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // perfscope died between the fork and the prctl: nobody would kill it.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
        let mut child = command.spawn().with_context(|| {
            format!(
                "cannot start {}: install QEMU 10 (scripts/install-test-deps.sh does) or pass --qemu",
                qemu.display()
            )
        })?;
        let (tx, rx) = channel();
        let (prompt_tx, prompt_rx) = channel();
        let mut stdout = child.stdout.take().context("QEMU stdout")?;
        std::thread::Builder::new()
            .name("perfscope-console".into())
            .spawn(move || {
                let _ = prompt_tx.send(prefer_prompt_wakeups());
                let mut buf = [0u8; 4096];
                loop {
                    match stdout.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let t = monotonic_ns().saturating_sub(epoch_ns);
                            if tx.send((t, buf[..n].to_vec())).is_err() {
                                break;
                            }
                        }
                    }
                }
            })?;
        // QEMU's own messages (plugin load lines, errors) go to our stderr only when they
        // matter; keep them in memory for the report instead of garbling the TUI.
        let mut stderr = child.stderr.take().context("QEMU stderr")?;
        let (etx, erx) = channel::<Vec<u8>>();
        std::thread::Builder::new()
            .name("perfscope-qemu-stderr".into())
            .spawn(move || {
                // Read to the end (QEMU stalls on a full pipe), kept within the child
                // output cap: a plugin that floods stderr costs no memory.
                let mut kept =
                    match crate::input::read_kept(&mut stderr, crate::input::InputKind::ChildOutput) {
                        Ok((kept, 0)) => kept,
                        Ok((mut kept, dropped)) => {
                            kept.extend_from_slice(format!("\n[{dropped} more bytes not kept]\n").as_bytes());
                            kept
                        }
                        Err(_) => Vec::new(),
                    };
                kept.shrink_to_fit();
                let _ = etx.send(kept);
            })?;
        let stdin = child.stdin.take();
        let console_realtime = prompt_rx.recv().unwrap_or(false);
        Ok(Self {
            child,
            stdin,
            console: rx,
            qmp_socket,
            started: Instant::now(),
            exited: None,
            stop_requested: None,
            stderr: Some(erx),
            console_realtime,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Type into the guest console.
    pub fn write_console(&mut self, bytes: &[u8]) {
        if let Some(stdin) = &mut self.stdin
            && (stdin.write_all(bytes).is_err() || stdin.flush().is_err())
        {
            self.stdin = None;
        }
    }

    /// Whether QEMU has exited; on exit the /proc times are read before reaping.
    pub fn poll_exit(&mut self) -> bool {
        if self.exited.is_some() {
            return true;
        }
        let pid = self.child.id() as libc::id_t;
        // SAFETY: waitid on our own child with WNOWAIT leaves it a zombie we reap below.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        let rc = unsafe {
            libc::waitid(
                libc::P_PID,
                pid,
                &mut info,
                libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
            )
        };
        // SAFETY: si_pid is valid after a successful waitid.
        if rc != 0 || unsafe { info.si_pid() } == 0 {
            return false;
        }
        let times = host_time::read(self.child.id());
        let wall = self.started.elapsed();
        let status = self
            .child
            .wait()
            .map(|s| s.code().unwrap_or(128 + signal_of(&s)))
            .unwrap_or(-1);
        self.exited = Some((status, times, wall));
        true
    }

    /// Exit status, final /proc times and wall time, once exited.
    pub fn exit(&self) -> Option<&(i32, Option<ProcTimes>, Duration)> {
        self.exited.as_ref()
    }

    /// Ask QEMU to stop: QMP quit first (the plugin flushes at exit), SIGTERM if QMP is
    /// not there. [`escalate`](Self::escalate) follows up if it does not go.
    pub fn request_stop(&mut self) -> StopMethod {
        if let Some((_, m)) = self.stop_requested {
            return m;
        }
        let method = match qmp::quit(&self.qmp_socket, Duration::from_millis(500)) {
            Ok(()) => StopMethod::QmpQuit,
            Err(_) => {
                self.signal(libc::SIGTERM);
                StopMethod::Sigterm
            }
        };
        self.stop_requested = Some((Instant::now(), method));
        method
    }

    /// After a stop request: SIGTERM after 5 s, SIGKILL after 10 s. Returns the method
    /// that finally applies.
    pub fn escalate(&mut self) -> Option<StopMethod> {
        let (since, method) = self.stop_requested?;
        if self.exited.is_some() {
            return Some(method);
        }
        let waited = since.elapsed();
        let next = if waited > Duration::from_secs(10) && method != StopMethod::Sigkill {
            self.signal(libc::SIGKILL);
            StopMethod::Sigkill
        } else if waited > Duration::from_secs(5) && method == StopMethod::QmpQuit {
            self.signal(libc::SIGTERM);
            StopMethod::Sigterm
        } else {
            method
        };
        self.stop_requested = Some((if next != method { Instant::now() } else { since }, next));
        Some(next)
    }

    pub fn stop_method(&self) -> Option<StopMethod> {
        self.stop_requested.map(|(_, m)| m)
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: kill on our own child's pid.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, sig);
        }
    }

    /// QEMU's stderr, once it has exited.
    pub fn stderr_text(&mut self) -> String {
        self.stderr
            .take()
            .and_then(|rx| rx.recv_timeout(Duration::from_secs(2)).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }
}

fn signal_of(status: &std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.signal().unwrap_or(0)
}

impl Drop for QemuProcess {
    fn drop(&mut self) {
        if self.exited.is_none() {
            self.signal(libc::SIGKILL);
            let _ = self.child.wait();
        }
    }
}
