//! Where events are opened: CPUs (`-C`, default the online ones) or threads (`-p` = all
//! threads of the processes, `-t`), or with `--inherit` threads and the tasks they create,
//! once per CPU. Reads /sys and /proc; nothing else.

use std::fmt;

use super::error::PerfEventError;

/// One place an event is opened on.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    /// Every task on this CPU (`pid=-1, cpu=N`).
    Cpu(u32),
    /// This thread on any CPU (`pid=TID, cpu=-1`).
    Thread(u32),
    /// This thread and every task it creates after the event is opened (`inherit`), on
    /// one CPU (`pid=TID, cpu=N`): the kernel refuses to map the ring of an inherited
    /// event that is not bound to a CPU, so following children takes one event per CPU.
    Task { tid: u32, cpu: u32 },
}

impl Target {
    /// The `(pid, cpu)` arguments of perf_event_open.
    pub fn pid_cpu(&self) -> (i32, i32) {
        match *self {
            Target::Cpu(cpu) => (-1, cpu as i32),
            Target::Thread(tid) => (tid as i32, -1),
            Target::Task { tid, cpu } => (tid as i32, cpu as i32),
        }
    }

    /// The CPU the event is bound to; targets on the same CPU can share one ring.
    pub fn cpu(&self) -> Option<u32> {
        match *self {
            Target::Cpu(cpu) | Target::Task { cpu, .. } => Some(cpu),
            Target::Thread(_) => None,
        }
    }

    /// Opened on a thread (which may exit before it is opened).
    pub fn is_task(&self) -> bool {
        !matches!(self, Target::Cpu(_))
    }

    /// Children created after opening inherit the event.
    pub fn inherits(&self) -> bool {
        matches!(self, Target::Task { .. })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Cpu(cpu) => write!(f, "CPU {cpu}"),
            Target::Thread(tid) => write!(f, "thread {tid}"),
            Target::Task { tid, cpu } => write!(f, "thread {tid} and its children on CPU {cpu}"),
        }
    }
}

/// Parse a CPU list as the kernel prints it: `0-3,5`, `7`, `0-1,4-5`.
pub fn parse_cpu_list(text: &str) -> Result<Vec<u32>, PerfEventError> {
    let bad = |why: String| PerfEventError::CpuList {
        text: text.to_string(),
        why,
    };
    let mut cpus = Vec::new();
    for part in text.trim().split(',').map(str::trim) {
        if part.is_empty() {
            return Err(bad("empty item".into()));
        }
        let number = |s: &str| {
            s.trim()
                .parse::<u32>()
                .map_err(|_| bad(format!("{s:?} is not a CPU number")))
        };
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return Err(bad(format!("range {part} runs backwards")));
        }
        if last - first > 65_535 {
            return Err(bad(format!("range {part} is too large")));
        }
        cpus.extend(first..=last);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}

/// Parse `1234,1240` (`-p`/`-t`).
pub fn parse_id_list(text: &str) -> Result<Vec<u32>, PerfEventError> {
    text.split(',')
        .map(str::trim)
        .map(|s| {
            s.parse::<u32>().map_err(|_| PerfEventError::IdList {
                text: text.to_string(),
                why: format!("{s:?} is not a number"),
            })
        })
        .collect()
}

/// The online CPUs (/sys/devices/system/cpu/online).
pub fn online_cpus() -> Result<Vec<u32>, PerfEventError> {
    let path = "/sys/devices/system/cpu/online";
    let text = crate::input::read_system_text(path).map_err(|source| PerfEventError::Proc {
        path: path.into(),
        cause: source,
    })?;
    parse_cpu_list(&text)
}

/// Every thread of process `pid` now (/proc/PID/task), sorted.
pub fn threads_of(pid: u32) -> Result<Vec<u32>, PerfEventError> {
    let path = format!("/proc/{pid}/task");
    let entries = std::fs::read_dir(&path).map_err(|source| match source.kind() {
        std::io::ErrorKind::NotFound => PerfEventError::NoSuchProcess { pid },
        _ => PerfEventError::Proc {
            path: path.clone(),
            cause: source,
        },
    })?;
    let mut tids: Vec<u32> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tids.sort_unstable();
    Ok(tids)
}

/// The targets of the `-C` / `-p` / `-t` options: threads win over CPUs (as perf-prof);
/// no option at all means every online CPU. `-C` CPUs that are offline are dropped.
pub fn resolve_targets(
    cpus: Option<&str>,
    pids: &[u32],
    tids: &[u32],
) -> Result<Vec<Target>, PerfEventError> {
    let targets: Vec<Target> = if !pids.is_empty() || !tids.is_empty() {
        let mut threads = Vec::new();
        for &pid in pids {
            threads.extend(threads_of(pid)?);
        }
        threads.extend_from_slice(tids);
        threads.sort_unstable();
        threads.dedup();
        threads.into_iter().map(Target::Thread).collect()
    } else {
        chosen_cpus(cpus)?.into_iter().map(Target::Cpu).collect()
    };
    if targets.is_empty() {
        return Err(PerfEventError::NoTargets);
    }
    Ok(targets)
}

/// `--inherit`: the targets of [`resolve_targets`] made to follow the tasks they create,
/// each thread opened once per CPU (`cpus` as `-C`, default every online CPU), as
/// perf-prof's `--inherit` does. CPU targets already see every task and stay as they are.
pub fn inheriting(targets: Vec<Target>, cpus: Option<&str>) -> Result<Vec<Target>, PerfEventError> {
    if !targets.iter().any(Target::is_task) {
        return Ok(targets);
    }
    let chosen = chosen_cpus(cpus)?;
    let inheriting: Vec<Target> = targets
        .iter()
        .filter_map(|t| match *t {
            Target::Thread(tid) | Target::Task { tid, .. } => Some(tid),
            Target::Cpu(_) => None,
        })
        .flat_map(|tid| chosen.iter().map(move |&cpu| Target::Task { tid, cpu }))
        .collect();
    if inheriting.is_empty() {
        return Err(PerfEventError::NoTargets);
    }
    Ok(inheriting)
}

/// `-C` ∩ the online CPUs, or every online CPU.
fn chosen_cpus(cpus: Option<&str>) -> Result<Vec<u32>, PerfEventError> {
    let online = online_cpus()?;
    Ok(match cpus {
        Some(list) => parse_cpu_list(list)?
            .into_iter()
            .filter(|c| online.contains(c))
            .collect(),
        None => online,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse_ranges_and_singles() {
        assert_eq!(parse_cpu_list("0-3,5").unwrap(), [0, 1, 2, 3, 5]);
        assert_eq!(parse_cpu_list("7\n").unwrap(), [7]);
        assert_eq!(parse_cpu_list("4-5, 0-1,1").unwrap(), [0, 1, 4, 5]);
        for bad in ["", "1,,2", "3-1", "a", "1-", "0-99999999"] {
            let err = parse_cpu_list(bad).unwrap_err().to_string();
            assert!(err.contains("expected e.g. `0-3,5`"), "{bad:?}: {err}");
        }
    }

    #[test]
    fn id_lists_and_targets_of_this_process() {
        assert_eq!(parse_id_list("12, 15").unwrap(), [12, 15]);
        assert!(parse_id_list("12,x").is_err());
        let me = std::process::id();
        let threads = threads_of(me).unwrap();
        assert!(threads.contains(&me), "the main thread is a task of its process");
        let targets = resolve_targets(Some("0"), &[me], &[]).unwrap();
        assert!(targets.contains(&Target::Thread(me)), "-p wins over -C");
        let online = online_cpus().unwrap();
        assert_eq!(
            resolve_targets(None, &[], &[]).unwrap(),
            online.iter().map(|&c| Target::Cpu(c)).collect::<Vec<_>>()
        );
        assert!(matches!(
            resolve_targets(Some("100000"), &[], &[]),
            Err(PerfEventError::NoTargets)
        ));
        assert_eq!(Target::Cpu(3).pid_cpu(), (-1, 3));
        assert_eq!(Target::Thread(9).pid_cpu(), (9, -1));
        assert_eq!(Target::Task { tid: 9, cpu: 2 }.pid_cpu(), (9, 2));
    }

    #[test]
    fn inheriting_opens_each_thread_once_per_cpu() {
        let online = online_cpus().unwrap();
        let first = online[0];
        let targets = inheriting(vec![Target::Thread(7), Target::Thread(8)], None).unwrap();
        assert_eq!(targets.len(), 2 * online.len());
        assert!(targets.contains(&Target::Task { tid: 8, cpu: first }));
        assert!(targets.iter().all(Target::inherits));
        let one_cpu = inheriting(vec![Target::Thread(7)], Some(&first.to_string())).unwrap();
        assert_eq!(one_cpu, [Target::Task { tid: 7, cpu: first }]);
        // CPU targets see every task already.
        let cpus = vec![Target::Cpu(first)];
        assert_eq!(inheriting(cpus.clone(), None).unwrap(), cpus);
        assert!(matches!(
            inheriting(vec![Target::Thread(7)], Some("100000")),
            Err(PerfEventError::NoTargets)
        ));
    }
}
