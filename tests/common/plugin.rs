//! The perfscope QEMU plugin and a small QEMU driver for the integration tests.
//!
//! `build_plugin()` builds `perfscope-qemu-plugin` once per test binary, in its own target
//! directory (the outer `cargo test` may hold the main one's lock). `QemuGuest` runs
//! `qemu-system-<arch>` with the runner's machine template (riscv64 `virt` + OpenSBI,
//! x86_64 `q35`), the test kernel and the plugin, drives the `starry:~# `
//! console over stdio and timestamps console markers on CLOCK_MONOTONIC, the clock the
//! plugin's `epoch_ns` is in. QEMU missing or hanging fails the test loudly.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use super::guest::{GuestArch, TestGuest};

pub const PROMPT: &str = "starry:~# ";

/// `clock_gettime(CLOCK_MONOTONIC)` in ns.
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_MONOTONIC)");
    now.tv_sec as u64 * 1_000_000_000 + now.tv_nsec as u64
}

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target"))
}

/// Build the plugin (release) once and return the `.so`.
pub fn build_plugin() -> PathBuf {
    static PLUGIN: OnceLock<PathBuf> = OnceLock::new();
    PLUGIN
        .get_or_init(|| {
            let dir = target_dir().join("plugin-test");
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let status = Command::new(cargo)
                .current_dir(env!("CARGO_MANIFEST_DIR"))
                .args([
                    "build",
                    "--release",
                    "-p",
                    "perfscope-qemu-plugin",
                    "--target-dir",
                ])
                .arg(&dir)
                .status()
                .expect("cannot run cargo to build the plugin");
            assert!(
                status.success(),
                "cargo build --release -p perfscope-qemu-plugin failed (see the output above)"
            );
            let so = dir.join("release/libperfscope_qemu_plugin.so");
            assert!(so.is_file(), "the plugin build did not produce {}", so.display());
            so
        })
        .clone()
}

/// A running QEMU with the test kernel; killed on drop.
pub struct QemuGuest {
    child: Child,
    stdin: Option<ChildStdin>,
    chunks: Receiver<(u64, Vec<u8>)>,
    stderr: Receiver<Vec<u8>>,
    /// Everything the console printed so far.
    pub console: String,
    deadline: Instant,
}

/// How a run ended.
pub struct QemuExit {
    pub status: ExitStatus,
    pub console: String,
    pub stderr: String,
}

impl QemuGuest {
    /// Start the riscv64 kernel image `kernel_bin` with `-plugin <so>,<plugin_args>`; the
    /// whole run must end within `timeout`.
    pub fn start(kernel_bin: &Path, plugin: &Path, plugin_args: &str, timeout: Duration) -> QemuGuest {
        QemuGuest::spawn(GuestArch::Riscv64, kernel_bin, plugin, plugin_args, timeout)
    }

    /// Start a test kernel of any architecture, as [`QemuGuest::start`].
    pub fn start_guest(guest: &TestGuest, plugin: &Path, plugin_args: &str, timeout: Duration) -> QemuGuest {
        QemuGuest::spawn(guest.arch, &guest.bin, plugin, plugin_args, timeout)
    }

    fn spawn(
        arch: GuestArch,
        kernel_bin: &Path,
        plugin: &Path,
        plugin_args: &str,
        timeout: Duration,
    ) -> QemuGuest {
        let mut plugin_opt = plugin.display().to_string();
        if !plugin_args.is_empty() {
            plugin_opt.push(',');
            plugin_opt.push_str(plugin_args);
        }
        let runner = arch.runner_arch();
        let mut child = Command::new(runner.qemu_binary())
            .args(runner.machine_args())
            .args(["-display", "none", "-monitor", "none", "-serial", "stdio", "-kernel"])
            .arg(kernel_bin)
            .arg("-plugin")
            .arg(&plugin_opt)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "{} cannot start ({e}): run scripts/install-test-deps.sh (QEMU 10 from bookworm-backports)",
                    runner.qemu_binary()
                )
            });
        let stdin = child.stdin.take();
        let mut stdout = child.stdout.take().expect("piped stdout");
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let (tx, chunks) = channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 || tx.send((monotonic_ns(), buf[..n].to_vec())).is_err() {
                    break;
                }
            }
        });
        let (etx, stderr) = channel();
        std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = stderr_pipe.read_to_end(&mut all);
            let _ = etx.send(all);
        });
        QemuGuest {
            child,
            stdin,
            chunks,
            stderr,
            console: String::new(),
            deadline: Instant::now() + timeout,
        }
    }

    fn fail(&mut self, what: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let stderr = self
            .stderr
            .recv_timeout(Duration::from_secs(2))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        panic!(
            "QEMU: {what} (killed it)\n--- console ---\n{}\n--- stderr ---\n{stderr}",
            self.console
        );
    }

    /// Wait until the console has printed `text` for the `nth` time (1-based); returns
    /// the CLOCK_MONOTONIC time the chunk completing it arrived.
    pub fn wait_for(&mut self, text: &str, nth: usize) -> u64 {
        loop {
            if self.console.matches(text).count() >= nth {
                return monotonic_ns();
            }
            let left = self.deadline.saturating_duration_since(Instant::now());
            match self.chunks.recv_timeout(left) {
                Ok((at, bytes)) => {
                    self.console.push_str(&String::from_utf8_lossy(&bytes));
                    if self.console.matches(text).count() >= nth {
                        return at;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    self.fail(&format!("timed out waiting for {text:?} #{nth}"))
                }
                Err(RecvTimeoutError::Disconnected) => {
                    self.fail(&format!("exited before printing {text:?} #{nth}"))
                }
            }
        }
    }

    pub fn send(&mut self, line: &str) {
        let ok = self
            .stdin
            .as_mut()
            .is_some_and(|s| s.write_all(line.as_bytes()).and_then(|()| s.flush()).is_ok());
        if !ok {
            self.fail(&format!("cannot write {line:?} to the console"));
        }
    }

    /// QEMU's process id (its /proc entry: memory, CPU time).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGKILL, as a crash or an impatient runner would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
    }

    /// Wait for QEMU to exit (after `exit`, or a kill).
    pub fn wait_exit(mut self) -> QemuExit {
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    while let Ok((_, bytes)) = self.chunks.recv_timeout(Duration::from_millis(200)) {
                        self.console.push_str(&String::from_utf8_lossy(&bytes));
                    }
                    let stderr = self
                        .stderr
                        .recv_timeout(Duration::from_secs(5))
                        .map(|b| String::from_utf8_lossy(&b).into_owned())
                        .unwrap_or_default();
                    return QemuExit {
                        status,
                        console: std::mem::take(&mut self.console),
                        stderr,
                    };
                }
                Ok(None) if Instant::now() < self.deadline => std::thread::sleep(Duration::from_millis(20)),
                _ => self.fail("did not exit in time"),
            }
        }
    }
}

impl Drop for QemuGuest {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A whole `bench N` session: prompt → `bench N` → BENCH_START/END → `exit`.
pub struct BenchRun {
    pub bench_start_ns: u64,
    pub bench_end_ns: u64,
    pub exit: QemuExit,
}

/// [`run_bench_on`] the riscv64 kernel image `kernel_bin`.
pub fn run_bench(kernel_bin: &Path, plugin: &Path, plugin_args: &str, n: u32, timeout: Duration) -> BenchRun {
    bench_session(QemuGuest::start(kernel_bin, plugin, plugin_args, timeout), n)
}

/// A whole `bench N` session on a test kernel of any architecture.
pub fn run_bench_on(
    guest: &TestGuest,
    plugin: &Path,
    plugin_args: &str,
    n: u32,
    timeout: Duration,
) -> BenchRun {
    bench_session(QemuGuest::start_guest(guest, plugin, plugin_args, timeout), n)
}

fn bench_session(mut guest: QemuGuest, n: u32) -> BenchRun {
    guest.wait_for(PROMPT, 1);
    guest.send(&format!("bench {n}\n"));
    let bench_start_ns = guest.wait_for("BENCH_START", 1);
    let bench_end_ns = guest.wait_for("BENCH_END", 1);
    guest.wait_for(PROMPT, 2);
    guest.send("exit\n");
    let exit = guest.wait_exit();
    BenchRun {
        bench_start_ns,
        bench_end_ns,
        exit,
    }
}

/// `perfscope qemu --no-tui` on a test kernel with this build's plugin, its artifacts under
/// `out`; callers add the sampling, workload and marker flags.
pub fn perfscope_qemu(guest: &TestGuest, out: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_perfscope"));
    command
        .args(["qemu", "--no-tui", "--arch", guest.arch.name(), "--kernel"])
        .arg(&guest.bin)
        .arg("--elf")
        .arg(&guest.elf)
        .arg("--plugin")
        .arg(build_plugin())
        .arg("--out")
        .arg(out);
    command
}

/// Run `command`; panics with its stdout and stderr unless it exited 0.
pub fn output_ok(command: &mut Command, what: &str) -> std::process::Output {
    let o = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        o.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    o
}
