//! Why the kernel said EACCES/EPERM to a perf_event_open, in words that lead somewhere.
//!
//! The same errno has different causes: `kernel.perf_event_paranoid` binds only a user
//! without CAP_PERFMON (or CAP_SYS_ADMIN); root refused means the event itself refuses
//! (a tracepoint that cannot be sampled, such as `irq_vectors:irq_work_exit`, whose
//! samples would raise it again) or a security policy does. Telling root to "run as
//! root" helps nobody, so the explanation is chosen from who asks, what was asked and
//! the paranoid level. Reads /proc and /sys only.

use super::targets::Target;

/// Who opens the event, as the kernel's permission checks see it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Privilege {
    /// Root, CAP_PERFMON or CAP_SYS_ADMIN: the paranoid level does not apply.
    Privileged,
    /// Anyone else.
    User,
}

/// What was asked for, as far as the permission checks care.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Request {
    pub target: Target,
    /// A tracepoint (its raw data needs CAP_PERFMON or paranoid -1 when sampled).
    pub tracepoint: bool,
    /// Kernel samples or counts were not excluded (`--user-only` not given).
    pub kernel: bool,
}

/// The explanation for a refusal of `request` by `privilege` at `paranoid` (`None` =
/// unreadable), with `lockdown` the kernel lockdown mode when one is active.
pub fn explain(
    request: Request,
    privilege: Privilege,
    paranoid: Option<i32>,
    lockdown: Option<&str>,
) -> String {
    let level = paranoid.map_or("unreadable".to_string(), |p| p.to_string());
    if privilege == Privilege::Privileged {
        let policy = match lockdown {
            Some(mode) => format!("kernel lockdown ({mode}) forbids it"),
            None => "a security policy (SELinux, AppArmor, a seccomp filter) forbids it".into(),
        };
        return format!(
            "refused although you are privileged (root or CAP_PERFMON, so kernel.perf_event_paranoid={level} does not apply): \
             the event itself refuses to be sampled (e.g. irq_vectors:irq_work_exit, whose samples would raise it again), or {policy}; \
             leave this event out"
        );
    }
    let own = "as a user you can profile your own processes: `-p PID` of one of them (or a workload after `--`) with `--user-only`, which works at perf_event_paranoid 2";
    let paranoid = paranoid.unwrap_or(i32::MAX);
    if paranoid >= 3 {
        return format!(
            "kernel.perf_event_paranoid is {level}: perf events are closed to users without CAP_PERFMON; \
             run as root, or `sysctl kernel.perf_event_paranoid=2` and then {own}"
        );
    }
    if !request.target.is_task() && paranoid > 0 {
        return format!(
            "kernel.perf_event_paranoid is {level}: CPU-wide events need it at 0 or below (or root / CAP_PERFMON): \
             run as root, or `sysctl kernel.perf_event_paranoid=0`; {own}"
        );
    }
    if request.tracepoint && paranoid > -1 {
        return format!(
            "kernel.perf_event_paranoid is {level}: sampling tracepoint data needs root or CAP_PERFMON (or paranoid -1): \
             run as root, or `sysctl kernel.perf_event_paranoid=-1`"
        );
    }
    if request.kernel && paranoid > 1 {
        return format!(
            "kernel.perf_event_paranoid is {level}: kernel samples need it at 1 or below: add `--user-only`, \
             or run as root, or `sysctl kernel.perf_event_paranoid=1`"
        );
    }
    if request.target.is_task() {
        return format!(
            "the thread belongs to another user (perf needs the right to ptrace it): watch your own processes, or run as root \
             (kernel.perf_event_paranoid is {level})"
        );
    }
    format!("kernel.perf_event_paranoid is {level}: run as root or grant CAP_PERFMON")
}

/// The caller's privilege: effective uid 0, or CAP_PERFMON (38) / CAP_SYS_ADMIN (21) in
/// its effective set.
pub fn current_privilege() -> Privilege {
    // SAFETY: geteuid has no arguments and cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        return Privilege::Privileged;
    }
    let caps = crate::input::read_system_text("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
            u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
        })
        .unwrap_or(0);
    if caps & (1 << 38 | 1 << 21) != 0 {
        Privilege::Privileged
    } else {
        Privilege::User
    }
}

/// kernel.perf_event_paranoid, when readable.
pub fn current_paranoid() -> Option<i32> {
    crate::input::read_system_text("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The active lockdown mode (`integrity`, `confidentiality`), when not `none`.
pub fn current_lockdown() -> Option<String> {
    let text = crate::input::read_system_text("/sys/kernel/security/lockdown").ok()?;
    let active = text.split_whitespace().find(|w| w.starts_with('['))?;
    let mode = active.trim_matches(|c| c == '[' || c == ']');
    (mode != "none").then(|| mode.to_string())
}

/// [`explain`] for the running process.
pub fn explain_current(request: Request) -> String {
    explain(
        request,
        current_privilege(),
        current_paranoid(),
        current_lockdown().as_deref(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(target: Target, tracepoint: bool, kernel: bool) -> Request {
        Request {
            target,
            tracepoint,
            kernel,
        }
    }

    #[test]
    fn root_is_never_told_to_run_as_root() {
        let text = explain(
            ask(Target::Cpu(0), true, true),
            Privilege::Privileged,
            Some(2),
            None,
        );
        assert!(!text.contains("run as root"), "{text}");
        assert!(
            text.contains("irq_work_exit") && text.contains("does not apply"),
            "{text}"
        );
        let locked = explain(
            ask(Target::Cpu(0), true, true),
            Privilege::Privileged,
            Some(2),
            Some("confidentiality"),
        );
        assert!(locked.contains("lockdown (confidentiality)"), "{locked}");
    }

    #[test]
    fn a_user_is_told_what_works_at_their_paranoid_level() {
        let cpu = explain(ask(Target::Cpu(0), false, true), Privilege::User, Some(2), None);
        assert!(
            cpu.contains("CPU-wide") && cpu.contains("--user-only") && cpu.contains("-p PID"),
            "{cpu}"
        );
        let kernel = explain(
            ask(Target::Thread(5), false, true),
            Privilege::User,
            Some(2),
            None,
        );
        assert!(
            kernel.contains("kernel samples") && kernel.contains("--user-only"),
            "{kernel}"
        );
        let tracepoint = explain(
            ask(Target::Thread(5), true, false),
            Privilege::User,
            Some(1),
            None,
        );
        assert!(
            tracepoint.contains("tracepoint") && tracepoint.contains("-1"),
            "{tracepoint}"
        );
        let closed = explain(
            ask(Target::Thread(5), false, false),
            Privilege::User,
            Some(3),
            None,
        );
        assert!(closed.contains("paranoid=2"), "{closed}");
        let other = explain(
            ask(Target::Thread(1), false, false),
            Privilege::User,
            Some(2),
            None,
        );
        assert!(other.contains("another user"), "{other}");
    }
}
