//! User-space probes defined through tracefs `uprobe_events`, in a group this process
//! owns (`perfscope_<pid>`), and removed when the group is dropped.
//!
//! Why tracefs and not the perf `uprobe` PMU (`/sys/bus/event_source/devices/uprobe`):
//! a probe defined in `uprobe_events` is an ordinary tracepoint under
//! `events/<group>/<name>` with a `format` file, so everything perfscope does with
//! tracepoints — kernel filters, print fmt lines, fields in `key=`/`top-by=`, the
//! recording's layouts, `list` — works on it unchanged, and fetch arguments
//! (`arg1=%di`, `ret=$retval`) become named fields. A PMU probe has no format and no
//! fields. The price is state outside the process: hence the group named after our pid,
//! removed on drop (every end of a session, error and panic unwinding included), and
//! groups of perfscope processes that no longer exist (a SIGKILL leaves them) removed
//! before new ones are defined.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::{Tracefs, TracefsError};

/// The group prefix every perfscope probe is defined under.
pub const PROBE_GROUP_PREFIX: &str = "perfscope_";

/// One probe to define.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UprobeDefinition {
    /// The tracefs event name (unique in the group).
    pub event: String,
    /// A return probe (`r:`) rather than an entry probe (`p:`).
    pub ret: bool,
    /// Absolute path of the ELF file.
    pub path: PathBuf,
    pub file_offset: u64,
    /// Fetch arguments, `name=FETCHARG[:TYPE]`, each a field of the event.
    pub fetch_args: Vec<String>,
}

impl UprobeDefinition {
    /// The `uprobe_events` line that defines it in `group`.
    fn command(&self, group: &str) -> String {
        let kind = if self.ret { 'r' } else { 'p' };
        let mut line = format!(
            "{kind}:{group}/{} {}:0x{:x}",
            self.event,
            self.path.display(),
            self.file_offset
        );
        for arg in &self.fetch_args {
            line.push(' ');
            line.push_str(arg);
        }
        line
    }
}

/// The probes this process defined; dropping it removes them. Drop it only after every
/// perf event opened on them is closed: the kernel refuses to remove a probe in use.
#[derive(Debug)]
pub struct UprobeGroup {
    control: PathBuf,
    group: String,
    defined: Vec<String>,
}

impl UprobeGroup {
    /// This process's group in `tracefs`, after removing the groups of perfscope
    /// processes that are gone.
    pub fn new(tracefs: &Tracefs) -> Result<Self, TracefsError> {
        let control = tracefs.root().join("uprobe_events");
        if !control.exists() {
            return Err(TracefsError::NoUprobeEvents { control });
        }
        remove_orphans(&control)?;
        Ok(Self {
            control,
            group: format!("{PROBE_GROUP_PREFIX}{}", std::process::id()),
            defined: Vec::new(),
        })
    }

    pub fn group(&self) -> &str {
        &self.group
    }

    /// Define `probe`; its event is then `group:probe.event`.
    pub fn define(&mut self, probe: &UprobeDefinition) -> Result<(), TracefsError> {
        let line = probe.command(&self.group);
        append(&self.control, &line).map_err(|cause| TracefsError::ProbeRefused {
            line: line.clone(),
            control: self.control.clone(),
            cause,
        })?;
        self.defined.push(probe.event.clone());
        Ok(())
    }
}

impl Drop for UprobeGroup {
    fn drop(&mut self) {
        // Newest first, as they were stacked.
        let mut busy = Vec::new();
        for event in self.defined.drain(..).rev() {
            let line = format!("-:{}/{event}", self.group);
            match remove_when_free(&self.control, &line) {
                Ok(()) => {}
                // Still held by an event the kernel is releasing: removed a moment later.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => busy.push(line),
                Err(e) => crate::stdio::say(&format!(
                    "perfscope: could not remove the probe {}/{event}: {e}; remove it with `echo '{line}' >> {}`",
                    self.group,
                    self.control.display()
                )),
            }
        }
        if !busy.is_empty() {
            super::late_removal::remove_later(&self.control, &busy);
        }
    }
}

/// Remove a probe: the kernel refuses (EBUSY) while a perf event on it is still being
/// released — its last reference can be dropped a moment after the fd is closed — so a
/// busy probe is asked again for up to 1 s (then [`super::late_removal`] takes over).
fn remove_when_free(control: &Path, line: &str) -> std::io::Result<()> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    let mut pause = std::time::Duration::from_millis(5);
    loop {
        match append(control, line) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && std::time::Instant::now() < deadline => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(200));
            }
            result => return result,
        }
    }
}

/// One command to `uprobe_events`. Appending matters: opening it truncated would remove
/// every probe on the system, other tools' too.
fn append(control: &Path, line: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new().append(true).open(control)?;
    file.write_all(format!("{line}\n").as_bytes())
}

/// Remove the probes of `perfscope_<pid>` groups whose process is gone.
fn remove_orphans(control: &Path) -> Result<(), TracefsError> {
    let text = crate::input::read_system_text(control).map_err(|cause| TracefsError::Io {
        path: control.to_path_buf(),
        cause,
    })?;
    for (group, event) in orphans(&text, |pid| Path::new("/proc").join(pid.to_string()).exists()) {
        // Best effort: another perfscope may be removing the same orphans right now.
        let _ = append(control, &format!("-:{group}/{event}"));
    }
    Ok(())
}

/// The `(group, event)` of every probe in `uprobe_events` text whose perfscope group's
/// pid is not `alive`.
fn orphans(text: &str, alive: impl Fn(u32) -> bool) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let name = line.split_whitespace().next()?.split_once(':')?.1;
            let (group, event) = name.split_once('/')?;
            let pid: u32 = group.strip_prefix(PROBE_GROUP_PREFIX)?.parse().ok()?;
            (!alive(pid)).then(|| (group.to_string(), event.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_name_the_group_the_file_and_the_offset() {
        let mut probe = UprobeDefinition {
            event: "work".into(),
            ret: false,
            path: "/tmp/x/bin".into(),
            file_offset: 0x1139,
            fetch_args: vec!["arg1=%di:u64".into()],
        };
        assert_eq!(
            probe.command("perfscope_7"),
            "p:perfscope_7/work /tmp/x/bin:0x1139 arg1=%di:u64"
        );
        probe.ret = true;
        probe.fetch_args.clear();
        assert_eq!(probe.command("g"), "r:g/work /tmp/x/bin:0x1139");
    }

    #[test]
    fn orphans_are_perfscope_groups_of_dead_processes_only() {
        let text = "p:perfscope_10/work /b:0x0000000000001139 arg1=%di:u64\n\
                    r:perfscope_11/work__return /b:0x0000000000001139\n\
                    p:other_10/x /b:0x10\n\
                    p:perfscope_x/y /b:0x10\n";
        let found = orphans(text, |pid| pid == 11);
        assert_eq!(found, [("perfscope_10".to_string(), "work".to_string())]);
    }
}
