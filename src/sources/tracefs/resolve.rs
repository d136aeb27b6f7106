//! Selectors against the running kernel: wildcards expanded over the tracefs event list
//! (fnmatch on `sys:name`, list order kept, every match gets the same `/filter/attrs/`),
//! each event's layout read, and every expression attribute bound to that layout, so a
//! wrong field name is reported before anything is opened, pointing into the selector.

use super::selector::{AttrExpr, EventSpec, SelectorError};
use super::{Tracefs, TracefsError};
use crate::trace::event::EventLayout;
use crate::trace::expr::{BoundExpr, glob};

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Selector(#[from] SelectorError),
    #[error(transparent)]
    Tracefs(#[from] TracefsError),
    /// A signal asked the process to stop while the formats were read (a wildcard may
    /// match thousands).
    #[error("{0}")]
    Stopped(#[source] crate::stop::Stopped),
}

impl ResolveError {
    /// As an error of the command: a selector that names no event, or binds no field, is
    /// the command line's fault (a usage error, exit 2); tracefs failing is not.
    pub fn into_command_error(self) -> anyhow::Error {
        match self {
            ResolveError::Selector(e) => crate::model::usage::UsageError::of(e).into(),
            other => anyhow::Error::new(other),
        }
    }
}

/// The expression attributes of one event, bound to its layout.
#[derive(Clone, Debug, Default)]
pub struct BoundAttrs {
    pub key: Option<BoundExpr>,
    /// Bound to the single variable `key`: evaluate with `eval_vars(&[key])`.
    pub printkey: Option<BoundExpr>,
    pub role: Option<BoundExpr>,
    pub comm: Option<BoundExpr>,
    pub num: Option<BoundExpr>,
    pub ptr: Option<BoundExpr>,
    pub size: Option<BoundExpr>,
    pub top_by: Vec<BoundExpr>,
    pub top_add: Vec<BoundExpr>,
    /// `exec=`: a number or a string (what a `printf` prints).
    pub exec: Option<BoundExpr>,
}

/// One concrete tracepoint to open: its spec (wildcards replaced by the matched name),
/// its layout (with the id perf wants as `config`) and its bound attributes.
#[derive(Clone, Debug)]
pub struct ResolvedEvent {
    pub spec: EventSpec,
    pub layout: EventLayout,
    pub attrs: BoundAttrs,
    /// The wildcard this event matched (for `-v`'s "Wildcard expansion: 'a' -> 'b'").
    pub expanded_from: Option<String>,
}

/// Expand and resolve `specs`, in order.
pub fn resolve(tracefs: &Tracefs, specs: &[EventSpec]) -> Result<Vec<ResolvedEvent>, ResolveError> {
    let mut resolved = Vec::new();
    for spec in specs {
        if spec.is_wildcard() {
            let pattern = spec.full_name();
            let mut matched = false;
            for full in tracefs.events() {
                let Some((system, name)) = full.split_once(':') else {
                    continue;
                };
                if glob::glob_match(&pattern, full) && !is_foreign_probe_group(system) {
                    let read = resolved.len();
                    crate::stop::check(|| format!("reading the events' formats ({read} read)"))
                        .map_err(ResolveError::Stopped)?;
                    matched = true;
                    let mut concrete = spec.clone();
                    concrete.system = system.to_string();
                    concrete.name = name.to_string();
                    let mut event = resolve_one(tracefs, concrete)?;
                    event.expanded_from = Some(pattern.clone());
                    resolved.push(event);
                }
            }
            if !matched {
                return Err(SelectorError::new(
                    format!("no events match pattern '{pattern}'"),
                    &spec.source,
                    spec.name_offset,
                )
                .into());
            }
        } else {
            resolved.push(resolve_one(tracefs, spec.clone())?);
        }
    }
    Ok(resolved)
}

/// Another perfscope's probes (`perfscope_<pid>` of another process): private to that run
/// and removed when it ends. A wildcard does not reach them: events opened on them would
/// keep that run from removing its probes (EBUSY) for as long as they stay open.
fn is_foreign_probe_group(system: &str) -> bool {
    system
        .strip_prefix(super::PROBE_GROUP_PREFIX)
        .is_some_and(|pid| pid != std::process::id().to_string())
}

fn resolve_one(tracefs: &Tracefs, spec: EventSpec) -> Result<ResolvedEvent, ResolveError> {
    if let Some(probe) = &spec.probe
        && !spec.system.starts_with(super::PROBE_GROUP_PREFIX)
    {
        // A probe is a tracepoint only once a session has defined it (feeds/host/probes.rs).
        let message = format!("{} events can only be used by a host session", probe.kind());
        return Err(SelectorError::new(message, &spec.source, spec.name_offset).into());
    }
    let layout = match tracefs.layout(&spec.system, &spec.name) {
        Ok(layout) => layout,
        Err(TracefsError::NoSuchEvent { .. }) => {
            let full = spec.full_name();
            let message = match closest(&full, tracefs.events()) {
                Some(near) => format!("unknown event '{full}' (did you mean '{near}'?)"),
                None => format!(
                    "unknown event '{full}' (see {}/available_events)",
                    tracefs.root().display()
                ),
            };
            return Err(SelectorError::new(message, &spec.source, spec.name_offset).into());
        }
        Err(other) => return Err(other.into()),
    };
    Ok(bind_event(spec, layout)?)
}

/// Bind a concrete spec's expression attributes to `layout` (the live format, or one read
/// back from a recorded session).
pub fn bind_event(spec: EventSpec, layout: EventLayout) -> Result<ResolvedEvent, SelectorError> {
    let bind = |attr: &AttrExpr, key: &str| -> Result<BoundExpr, SelectorError> {
        let bound = if key == "printkey" {
            attr.expr.bind_vars(&["key"])
        } else {
            attr.expr.bind(&layout)
        };
        let bound = bound.map_err(|e| {
            SelectorError::new(
                format!("{key}=: {}", e.message),
                &spec.source,
                attr.offset + e.position,
            )
        })?;
        // comm= names a row and printkey= prints a key: strings. The rest are summed,
        // compared or used as keys: numbers.
        let wants_string = matches!(key, "comm" | "printkey");
        if key != "exec" && bound.is_string() != wants_string {
            let wanted = if wants_string {
                "a string (a field like comm, or printf(...))"
            } else {
                "a number"
            };
            return Err(SelectorError::new(
                format!("{key}= must be {wanted}"),
                &spec.source,
                attr.offset,
            ));
        }
        Ok(bound)
    };
    let one = |attr: &Option<AttrExpr>, key: &str| attr.as_ref().map(|a| bind(a, key)).transpose();
    let attrs = BoundAttrs {
        key: one(&spec.key, "key")?,
        printkey: one(&spec.printkey, "printkey")?,
        role: one(&spec.role, "role")?,
        comm: one(&spec.comm, "comm")?,
        num: one(&spec.num, "num")?,
        ptr: one(&spec.ptr, "ptr")?,
        size: one(&spec.size, "size")?,
        exec: one(&spec.exec, "exec")?,
        top_by: spec
            .top_by
            .iter()
            .map(|a| bind(a, "top-by"))
            .collect::<Result<_, _>>()?,
        top_add: spec
            .top_add
            .iter()
            .map(|a| bind(a, "top-add"))
            .collect::<Result<_, _>>()?,
    };
    Ok(ResolvedEvent {
        spec,
        layout,
        attrs,
        expanded_from: None,
    })
}

/// The event name nearest to `full` when it is close enough to be a typo: edit distance
/// at most a quarter of its length (and at least 2).
fn closest<'e>(full: &str, events: &'e [String]) -> Option<&'e str> {
    let limit = (full.chars().count() / 4).max(2);
    events
        .iter()
        // The distance is at least the difference in length: most events are skipped
        // without the quadratic comparison.
        .filter(|e| e.chars().count().abs_diff(full.chars().count()) <= limit)
        .map(|e| (edit_distance(full, e), e))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, e)| e.as_str())
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {

    #[test]
    fn wildcards_leave_other_perfscope_runs_probes_alone() {
        assert!(is_foreign_probe_group("perfscope_1"));
        assert!(!is_foreign_probe_group(&format!(
            "perfscope_{}",
            std::process::id()
        )));
        assert!(!is_foreign_probe_group("sched"));
        assert!(!is_foreign_probe_group("uprobes"));
    }

    use super::super::{fixture_tracefs, parse_selectors};
    use super::*;

    fn run(text: &str) -> Result<Vec<ResolvedEvent>, ResolveError> {
        resolve(&fixture_tracefs(), &parse_selectors(text).expect("parses"))
    }

    fn selector_error(text: &str) -> SelectorError {
        match run(text) {
            Err(ResolveError::Selector(e)) => e,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn wildcards_expand_in_list_order_with_the_same_suffix() {
        let events = run("sched:sched_wakeup*//key=pid/,sched:sched_switch").expect("resolves");
        let names: Vec<String> = events.iter().map(|e| e.layout.full_name()).collect();
        assert_eq!(
            names,
            [
                "sched:sched_wakeup_new",
                "sched:sched_wakeup",
                "sched:sched_switch"
            ],
            "available_events order; sched_waking does not match"
        );
        assert_eq!(events[0].spec.name, "sched_wakeup_new");
        assert_eq!(events[0].expanded_from.as_deref(), Some("sched:sched_wakeup*"));
        assert_eq!(events[2].expanded_from, None);
        assert!(events[0].attrs.key.is_some() && events[1].attrs.key.is_some());
        assert_eq!(events[2].layout.id, 372);
        assert!(events[2].attrs.key.is_none());
        let all = run("raw_syscalls:*").expect("resolves");
        assert_eq!(all.len(), 2);
    }

    #[test]
    fn attributes_bind_to_the_layout() {
        // Unparenthesised, `runtime/1000/` splits into top-by=runtime and an attribute.
        let e = parse_selectors("sched:sched_stat_runtime//top-by=runtime/1000/").unwrap_err();
        assert_eq!(e.message, "unknown attribute '1000'");
        let events = run(
            "sched:sched_stat_runtime//top-by=(runtime/1000)/top-add=pid/comm=comm/printkey=printf(\"%d\",key)/",
        )
        .expect("resolves");
        let attrs = &events[0].attrs;
        assert_eq!((attrs.top_by.len(), attrs.top_add.len()), (1, 1));
        assert!(attrs.comm.as_ref().is_some_and(|c| c.is_string()));
        let printkey = attrs.printkey.as_ref().expect("printkey");
        assert_eq!(
            printkey.eval_vars(&[7]).map(|v| v.to_string()).as_deref(),
            Some("7")
        );
    }

    #[test]
    fn unknown_names_are_pointed_errors() {
        let e = selector_error("sched:sched_switch,sched:sched_wakup");
        assert_eq!(e.position, 19);
        assert_eq!(
            e.message,
            "unknown event 'sched:sched_wakup' (did you mean 'sched:sched_wakeup'?)"
        );
        let e = selector_error("nosuch:event");
        assert!(
            e.message.starts_with("unknown event 'nosuch:event' (see "),
            "{}",
            e.message
        );
        let e = selector_error("sched:nothing*");
        assert_eq!(
            (e.message.as_str(), e.position),
            ("no events match pattern 'sched:nothing*'", 0)
        );
        let e = selector_error("sched:sched_stat_runtime//key=vruntime/");
        assert_eq!(e.position, 30);
        assert!(
            e.message.starts_with("key=: unknown field 'vruntime'"),
            "{}",
            e.message
        );
        let e = selector_error("sched:sched_stat_runtime//printkey=pid/");
        assert_eq!(e.position, 35);
        let e = selector_error("sched:sched_stat_runtime//key=comm/");
        assert_eq!((e.message.as_str(), e.position), ("key= must be a number", 30));
        let e = selector_error("sched:sched_stat_runtime//comm=pid/");
        assert!(e.message.starts_with("comm= must be a string"), "{}", e.message);
        let e = selector_error("sched:../sched//");
        assert!(e.message.contains("unknown event"), "{}", e.message);
    }

    #[test]
    fn a_probe_resolves_only_once_defined() {
        let e = selector_error("uprobe:/bin/true:main");
        assert_eq!(e.message, "uprobe events can only be used by a host session");
    }

    #[test]
    fn edit_distance_counts_single_edits() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("abc", "abc"), 0);
    }
}
