//! Watching the guest console: when the shell prompt is up (characters typed before it
//! are lost), and when the start / stop markers are printed, to the nanosecond the chunk
//! arrived on the session clock.
//!
//! Markers are looked for in complete lines, and the echo of the command we typed is
//! skipped: a workload like `echo BEGIN; run; echo END` echoes both marker strings in its
//! command line, which the reference harness mistakes for the markers themselves (it
//! tries `stty -echo` first, which many guest shells do not have).

/// The shell prompts StarryOS prints, looked for when `--shell-prefix` is not given: the
/// busybox shell's `root@starry:/# ` and the test kernel's `starry:~# `.
pub const STARRY_PROMPTS: [&str; 2] = ["root@starry:", "starry:~# "];

/// "shell prompt 'root@starry:' or 'starry:~# '": what a session waiting for `prompts` says.
pub fn describe_prompts(prompts: &[String]) -> String {
    let quoted: Vec<String> = prompts.iter().map(|p| format!("'{p}'")).collect();
    format!("shell prompt {}", quoted.join(" or "))
}

/// What the console showed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConsoleEvent {
    /// The prompt is on screen (the shell waits for input).
    Prompt,
    /// The start marker's line ended at this time.
    Start(u64),
    /// The stop marker's line ended at this time.
    Stop(u64),
}

/// Line assembly and matching.
#[derive(Clone, Debug)]
pub struct ConsoleWatch {
    /// Any of them on a partial line is the prompt.
    prompts: Vec<String>,
    start_marker: Option<String>,
    stop_marker: Option<String>,
    line: Vec<u8>,
    /// The next line containing this text is our own echo.
    pending_echo: Option<String>,
    prompt_reported: bool,
    pub start_ns: Option<u64>,
    pub stop_ns: Option<u64>,
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

impl ConsoleWatch {
    pub fn new(prompts: &[String], start_marker: Option<&str>, stop_marker: Option<&str>) -> Self {
        Self {
            prompts: prompts.to_vec(),
            start_marker: start_marker.map(str::to_string),
            stop_marker: stop_marker.map(str::to_string),
            line: Vec::new(),
            pending_echo: None,
            prompt_reported: false,
            start_ns: None,
            stop_ns: None,
        }
    }

    /// We typed `command`: its echo must not count as output.
    pub fn typed(&mut self, command: &str) {
        self.pending_echo = Some(command.trim().to_string());
        // The prompt's line is done: what follows on it is the echo (a partial echo
        // after the prompt's text is no new prompt).
        self.line.clear();
        // The next prompt is a new one (the command finished).
        self.prompt_reported = false;
    }

    /// Feed console bytes that arrived at `time_ns`.
    pub fn feed(&mut self, time_ns: u64, bytes: &[u8]) -> Vec<ConsoleEvent> {
        let mut events = Vec::new();
        for &b in bytes {
            if b == b'\n' {
                let line = std::mem::take(&mut self.line);
                self.complete_line(time_ns, &line, &mut events);
            } else if b != b'\r' {
                self.line.push(b);
            }
        }
        // A prompt is a partial line: the shell waits without a newline.
        if !self.prompt_reported && self.prompts.iter().any(|p| pending_prompt(&self.line, p)) {
            self.prompt_reported = true;
            events.push(ConsoleEvent::Prompt);
        }
        events
    }

    fn complete_line(&mut self, time_ns: u64, line: &[u8], events: &mut Vec<ConsoleEvent>) {
        if let Some(echo) = &self.pending_echo
            && contains(line, echo)
        {
            self.pending_echo = None;
            return;
        }
        if self.start_ns.is_none()
            && let Some(m) = &self.start_marker
            && contains(line, m)
        {
            self.start_ns = Some(time_ns);
            events.push(ConsoleEvent::Start(time_ns));
        }
        if self.stop_ns.is_none()
            && let Some(m) = &self.stop_marker
            && contains(line, m)
        {
            self.stop_ns = Some(time_ns);
            events.push(ConsoleEvent::Stop(time_ns));
        }
    }
}

fn pending_prompt(line: &[u8], prompt: &str) -> bool {
    !prompt.is_empty() && contains(line, prompt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_then_markers_with_the_echo_ignored() {
        let mut w = ConsoleWatch::new(&["starry:~# ".into()], Some("BEGIN"), Some("END"));
        assert_eq!(w.feed(1, b"OpenSBI v1.5\r\nstarry"), []);
        assert_eq!(w.feed(2, b":~# "), [ConsoleEvent::Prompt]);
        w.typed("echo BEGIN; bench 3; echo END");
        // The echo carries both marker strings: not markers.
        assert_eq!(w.feed(3, b"echo BEGIN; bench 3; echo END\r\n"), []);
        assert_eq!(w.feed(4, b"BEG"), []);
        assert_eq!(w.feed(5, b"IN\r\nworking\r\n"), [ConsoleEvent::Start(5)]);
        assert_eq!(
            w.feed(9, b"END\r\nstarry:~# "),
            [ConsoleEvent::Stop(9), ConsoleEvent::Prompt]
        );
        assert_eq!((w.start_ns, w.stop_ns), (Some(5), Some(9)));
        // Markers count once.
        assert_eq!(w.feed(10, b"BEGIN\nEND\n"), []);
    }

    #[test]
    fn a_marker_inside_the_typed_commands_arguments_is_not_one() {
        let mut w = ConsoleWatch::new(&["starry:~# ".into()], Some("BENCH_START"), Some("WL_END"));
        assert_eq!(w.feed(1, b"starry:~# "), [ConsoleEvent::Prompt]);
        w.typed("bench 300000 WL_END");
        // The shell echoes as the characters arrive, then the newline.
        assert_eq!(w.feed(2, b"bench 300000 "), []);
        assert_eq!(w.feed(3, b"WL_END\r\n"), []);
        assert_eq!(w.feed(4, b"BENCH_START\n"), [ConsoleEvent::Start(4)]);
        // The program's own line with the marker does count.
        assert_eq!(w.feed(5, b"done WL_END\n"), [ConsoleEvent::Stop(5)]);
    }

    #[test]
    fn without_markers_only_the_prompt_matters() {
        let mut w = ConsoleWatch::new(&["root@starry:".into()], None, None);
        assert_eq!(w.feed(1, b"root@starry:/# "), [ConsoleEvent::Prompt]);
        assert_eq!(w.feed(2, b"x"), []);
    }

    #[test]
    fn both_starry_prompt_forms_are_found_by_default() {
        let defaults: Vec<String> = STARRY_PROMPTS.iter().map(|p| p.to_string()).collect();
        for console in [&b"\r\nroot@starry:/# "[..], b"\r\nstarry:~# "] {
            let mut w = ConsoleWatch::new(&defaults, None, None);
            assert_eq!(w.feed(1, console), [ConsoleEvent::Prompt], "{console:?}");
        }
        assert_eq!(
            describe_prompts(&defaults),
            "shell prompt 'root@starry:' or 'starry:~# '"
        );
    }
}
