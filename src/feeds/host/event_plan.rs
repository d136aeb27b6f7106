//! Which resolved tracepoints a session really opens. A wildcard (`-e '*:*'`) or a list
//! can name events the kernel refuses — one that cannot be sampled
//! (`irq_vectors:irq_work_exit`), one a policy forbids, one gone since tracefs listed it.
//! Each event is tried once on the session's first target; the refused ones are left out
//! with one warning that lists them (grouped by reason, each reason said once). Only a
//! stage left with nothing is an error, and that error is the kernel's own explanation.
//! Failures that are not about the event (too many open files, a thread gone) stop the
//! session as before: they would hit every event alike.

use crate::sources::perf_event::PerfEventError;
use crate::sources::perf_event::attr::EventAttr;
use crate::sources::perf_event::closer::EventFds;
use crate::sources::perf_event::fd::PerfEventFd;
use crate::sources::perf_event::targets::{Target, online_cpus};
use crate::sources::tracefs::ResolvedEvent;

/// The events kept per stage, and the ones left out with the reason.
pub struct EventPlan {
    pub stages: Vec<Vec<ResolvedEvent>>,
    /// (`sys:name`, the kernel's refusal), in selector order.
    pub skipped: Vec<(String, PerfEventError)>,
    /// The probes, kept open until the session's own events are: the first perf event on
    /// a tracepoint registers it with the kernel and the last one closed unregisters it,
    /// each a wait for RCU (tens of ms) — closing a probe at once would pay that twice
    /// per event, minutes for `-e '*:*'`.
    pub probes: EventFds,
}

/// Try every event of `stages` on `probe` (built by `attr_of`); keep what opens.
pub fn plan_events(
    stages: Vec<Vec<ResolvedEvent>>,
    probe: Target,
    ring_bytes: usize,
    attr_of: impl Fn(&ResolvedEvent) -> EventAttr,
) -> anyhow::Result<EventPlan> {
    let mut skipped = Vec::new();
    let mut probes = EventFds::default();
    let mut kept_stages = Vec::with_capacity(stages.len());
    for (stage_index, stage) in stages.into_iter().enumerate() {
        let mut kept = Vec::with_capacity(stage.len());
        let mut first_refusal = None;
        for event in stage {
            let tried = probes.len() + skipped.len();
            crate::stop::check(|| format!("trying the events ({tried} tried)"))?;
            match PerfEventFd::open(&attr_of(&event), probe, ring_bytes) {
                Ok(probe_fd) => {
                    probes.push(probe_fd);
                    kept.push(event);
                }
                Err(err) if refuses_the_event(&err) => {
                    let name = event.layout.full_name();
                    if first_refusal.is_none() {
                        first_refusal = Some(format!("{name}: {err}"));
                    }
                    skipped.push((name, err));
                }
                // A thread that exited is skipped by the real open; any other failure is
                // about the session, not the event.
                Err(PerfEventError::NoSuchThread { .. }) => kept.push(event),
                Err(err) => return Err(err.into()),
            }
        }
        if kept.is_empty() {
            let stage = if stage_index == 0 {
                String::new()
            } else {
                format!(" of -e #{}", stage_index + 1)
            };
            anyhow::bail!(
                "the kernel refused every event{stage}: {}",
                first_refusal.unwrap_or_else(|| "no events".into())
            );
        }
        kept_stages.push(kept);
    }
    Ok(EventPlan {
        stages: kept_stages,
        skipped,
        probes,
    })
}

/// A refusal of this event in particular (another event may well open).
fn refuses_the_event(err: &PerfEventError) -> bool {
    matches!(
        err,
        PerfEventError::PermissionDenied { .. }
            | PerfEventError::NoSuchEvent { .. }
            | PerfEventError::InvalidAttr { .. }
            | PerfEventError::Open { .. }
    )
}

impl EventPlan {
    /// The one warning about the skipped events (`None` when all opened): the names
    /// grouped by reason, e.g. `perfscope: skipped 2 events the kernel refused:
    /// irq_vectors:irq_work_exit, x:y — permission denied: …`.
    pub fn warning(&self) -> Option<String> {
        if self.skipped.is_empty() {
            return None;
        }
        // The reason without the `perf_event_open(id) on CPU n: ` prefix, which differs per event.
        let reason = |err: &PerfEventError| {
            let text = err.to_string();
            match text.split_once(": ") {
                Some((_, why)) if text.starts_with("perf_event_open(") => why.to_string(),
                _ => text,
            }
        };
        let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
        for (name, err) in &self.skipped {
            let why = reason(err);
            match groups.iter_mut().find(|(w, _)| *w == why) {
                Some((_, names)) => names.push(name),
                None => groups.push((why, vec![name])),
            }
        }
        let count = self.skipped.len();
        let mut text = format!(
            "perfscope: skipped {count} event{} the kernel refused (the others are open):",
            if count == 1 { "" } else { "s" }
        );
        for (why, names) in groups {
            text.push_str(&format!("\n  {} — {why}", names.join(", ")));
        }
        Some(text)
    }
}

/// The CPUs each event (flattened, in open order) is opened on: `None` = every target, or
/// a selector's `cpus=` list, checked against the machine — a CPU that is not online is
/// an error naming it and the online ones, as is a list that meets none of the session's
/// CPUs, or `cpus=` on threads opened on any CPU (`-p`/`-t` without `--inherit`).
pub fn event_cpus(
    stages: &[Vec<ResolvedEvent>],
    targets: &[Target],
) -> anyhow::Result<Vec<Option<Vec<u32>>>> {
    let events: Vec<&ResolvedEvent> = stages.iter().flatten().collect();
    if events.iter().all(|e| e.spec.cpus.is_none()) {
        return Ok(vec![None; events.len()]);
    }
    let online_text = crate::input::read_system_text("/sys/devices/system/cpu/online")
        .map(|t| t.trim().to_string())
        .unwrap_or_default();
    let online = online_cpus()?;
    let session: Vec<u32> = targets.iter().filter_map(Target::cpu).collect();
    events
        .iter()
        .map(|event| {
            let Some(cpus) = &event.spec.cpus else {
                return Ok(None);
            };
            let name = event.layout.full_name();
            if let Some(missing) = cpus.iter().find(|c| !online.contains(c)) {
                anyhow::bail!(
                    "{name}: cpus= names CPU {missing}, which does not exist or is offline (online: {online_text})"
                );
            }
            if targets.iter().any(|t| t.cpu().is_none()) {
                anyhow::bail!(
                    "{name}: cpus= needs events opened per CPU; threads (-p/-t) are opened on any CPU: add --inherit, or watch CPUs"
                );
            }
            if !cpus.iter().any(|c| session.contains(c)) {
                anyhow::bail!("{name}: cpus= and the CPUs this session watches (-C) have no CPU in common");
            }
            Ok(Some(cpus.clone()))
        })
        .collect()
}
