//! Drive the real binary in a real terminal: a detached tmux session we send keys to and
//! read the screen of. tmux must be installed (scripts/install-test-deps.sh does it); a
//! missing tmux fails the test loudly instead of skipping it.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

/// A tmux session running one command, on a tmux server of its own; killed on drop.
///
/// One server per session: on a shared server, a test that kills the last session ends the
/// server while another test's `new-session` is connecting to it ("server exited
/// unexpectedly").
pub struct TmuxSession {
    pub name: String,
}

fn tmux(socket: &str, args: &[&str]) -> std::process::Output {
    Command::new("tmux")
        .args(["-L", socket])
        .args(args)
        .output()
        .expect("tmux is not installed: run ./scripts/install-test-deps.sh (apt-get install tmux)")
}

impl TmuxSession {
    /// Start `command` (a shell command line) in a `width`×`height` terminal.
    pub fn start(name: &str, width: u16, height: u16, cwd: &Path, command: &str) -> TmuxSession {
        let name = format!("{name}-{}", std::process::id());
        let _ = tmux(&name, &["kill-server"]);
        let out = tmux(
            &name,
            &[
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &width.to_string(),
                "-y",
                &height.to_string(),
                "-c",
                &cwd.display().to_string(),
                "-e",
                "TERM=xterm-256color",
                "-e",
                "COLORTERM=truecolor",
                command,
            ],
        );
        assert!(
            out.status.success(),
            "tmux new-session failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Keep the pane after the command exits so a crash message can still be read.
        let _ = tmux(&name, &["set-option", "-t", &name, "remain-on-exit", "on"]);
        TmuxSession { name }
    }

    /// Run a tmux command on this session's server (`-t` the session is the caller's).
    pub fn tmux(&self, args: &[&str]) -> std::process::Output {
        tmux(&self.name, args)
    }

    /// The visible screen as text.
    pub fn screen(&self) -> String {
        let out = self.tmux(&["capture-pane", "-p", "-t", &self.name]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Send keys in tmux's syntax ("Enter", "Escape", "C-c") or literal text with `literal`.
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", &self.name];
        args.extend_from_slice(keys);
        let out = self.tmux(&args);
        assert!(out.status.success(), "tmux send-keys failed");
    }

    pub fn literal(&self, text: &str) {
        let out = self.tmux(&["send-keys", "-t", &self.name, "-l", text]);
        assert!(out.status.success(), "tmux send-keys -l failed");
    }

    /// Wait until the screen satisfies `pred`; panics with the last screen on timeout.
    pub fn wait_for(&self, what: &str, timeout: Duration, pred: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!("timed out after {timeout:?} waiting for {what}; screen:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// A live `syscalls` session at 80×24 over a workload that reads all along (read(0) rows
/// come at once), on its Tables view; the shell says `perfscope-exit=N` when it ends.
pub fn live_syscalls_tables(name: &str, cwd: &Path, wait: Duration) -> TmuxSession {
    let tmux = TmuxSession::start(
        name,
        80,
        24,
        cwd,
        &format!(
            "{} syscalls -- sh -c 'while :; do cat /etc/hostname >/dev/null; sleep 0.05; done'; \
             echo perfscope-exit=$?; sleep 60",
            env!("CARGO_BIN_EXE_perfscope")
        ),
    );
    tmux.keys(&["8"]);
    tmux.wait_for("the syscalls table with read(0)", wait, |s| {
        s.contains("syscalls") && s.contains("read(0)")
    });
    tmux
}

impl Drop for TmuxSession {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
    }
}
