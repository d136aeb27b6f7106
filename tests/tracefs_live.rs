//! The tracefs source against the running kernel (root, as CI runs): mount if needed,
//! the event list, every format file of the systems the analyzers use, wildcard
//! expansion, the unknown-event error, and every print fmt rendered or knowingly left on
//! the `name=value` fallback.

use perfscope::sources::tracefs::{
    EventPrinter, PrintFmt, ResolveError, Tracefs, find_in_mounts, mount_tracefs, parse_selectors, resolve,
};
use perfscope::trace::event::{EventIndex, TraceEvent};
use perfscope::trace::expr::Expr;

fn tracefs() -> Tracefs {
    Tracefs::open().unwrap_or_else(|e| panic!("tracefs must be available (run as root): {e}"))
}

#[test]
fn the_event_list_has_the_analyzers_tracepoints() {
    let tracefs = tracefs();
    let events = tracefs.events();
    assert!(events.len() > 100, "only {} events", events.len());
    for needed in [
        "sched:sched_switch",
        "raw_syscalls:sys_enter",
        "raw_syscalls:sys_exit",
    ] {
        assert!(events.iter().any(|e| e == needed), "{needed} missing");
    }
    assert!(tracefs.has_event("sched", "sched_wakeup"));
    let layout = tracefs
        .layout("sched", "sched_switch")
        .expect("sched_switch format");
    assert_eq!(
        tracefs.event_id("sched", "sched_switch").expect("id file"),
        layout.id,
        "the id file and the format's ID agree"
    );
    for field in ["prev_comm", "prev_pid", "prev_state", "next_comm", "next_pid"] {
        assert!(layout.field(field).is_some(), "sched_switch lacks {field}");
    }
}

#[test]
fn every_format_of_the_analyzer_systems_parses() {
    let tracefs = tracefs();
    let mut parsed = 0;
    for system in ["sched", "raw_syscalls", "irq", "block"] {
        for full in tracefs.events() {
            let Some((sys, name)) = full.split_once(':') else {
                continue;
            };
            if sys != system {
                continue;
            }
            let layout = tracefs
                .layout(sys, name)
                .unwrap_or_else(|e| panic!("{full}: {e}"));
            assert_eq!(layout.name, name);
            assert!(layout.id > 0, "{full} has no id");
            assert_eq!(
                layout.field("common_pid").map(|f| (f.offset, f.size)),
                Some((4, 4)),
                "{full}"
            );
            // Every non-common field binds as an expression.
            for field in layout.fields.iter().filter(|f| !f.name.starts_with("common_")) {
                let text = if matches!(
                    field.kind,
                    perfscope::trace::event::FieldKind::DataLoc { is_string: false }
                        | perfscope::trace::event::FieldKind::RelLoc { is_string: false }
                ) {
                    format!("{}[0]", field.name)
                } else {
                    field.name.clone()
                };
                Expr::parse(&text)
                    .and_then(|e| e.bind(&layout))
                    .unwrap_or_else(|e| panic!("{full} {}: {e}", field.name));
            }
            parsed += 1;
        }
    }
    assert!(
        parsed > 40,
        "only {parsed} formats in sched/raw_syscalls/irq/block"
    );
}

#[test]
fn wildcards_expand_against_the_live_list() {
    let tracefs = tracefs();
    let specs = parse_selectors("sched:sched_wakeup*//key=pid/").expect("parses");
    let events = resolve(&tracefs, &specs).expect("resolves");
    let mut names: Vec<String> = events.iter().map(|e| e.layout.full_name()).collect();
    names.sort();
    assert_eq!(names, ["sched:sched_wakeup", "sched:sched_wakeup_new"]);
    assert!(events.iter().all(|e| e.attrs.key.is_some()));
}

#[test]
fn an_unknown_event_is_a_pointed_error() {
    let tracefs = tracefs();
    let specs = parse_selectors("sched:sched_switch,nosuch:event").expect("parses");
    match resolve(&tracefs, &specs) {
        Err(ResolveError::Selector(e)) => {
            assert_eq!(e.position, 19);
            assert!(e.message.starts_with("unknown event 'nosuch:event'"), "{e}");
            let shown = e.to_string();
            assert!(shown.ends_with(&format!("\n  {}^", " ".repeat(19))), "{shown}");
        }
        other => panic!("expected a selector error, got {other:?}"),
    }
}

#[test]
fn tracefs_mounts_where_we_ask() {
    // The usual mount point may already be in use by other tests; a second mount of the
    // same tracefs exercises the same mount(2) call without disturbing it.
    let dir = tempfile::tempdir().expect("temp dir");
    mount_tracefs(dir.path()).unwrap_or_else(|e| panic!("mount as root: {e}"));
    let mounts = std::fs::read_to_string("/proc/mounts").expect("/proc/mounts");
    let listed = mounts
        .lines()
        .any(|l| l.split_whitespace().nth(1) == Some(&*dir.path().to_string_lossy()));
    let second = Tracefs::at(dir.path()).map(|t| t.events().len());
    let first = tracefs().events().len();
    let target = std::ffi::CString::new(dir.path().to_string_lossy().as_bytes()).expect("path");
    // SAFETY: a NUL-terminated path that outlives the call.
    let rc = unsafe { libc::umount2(target.as_ptr(), libc::MNT_DETACH) };
    assert!(listed, "the new mount is in /proc/mounts");
    assert_eq!(second.expect("the new mount reads"), first);
    assert_eq!(rc, 0, "umount");
    assert!(find_in_mounts(&mounts).is_some());
}

#[test]
fn every_format_on_this_kernel_parses() {
    let tracefs = tracefs();
    let mut failures = Vec::new();
    for full in tracefs.events() {
        let Some((sys, name)) = full.split_once(':') else {
            continue;
        };
        if let Err(e) = tracefs.layout(sys, name) {
            failures.push(format!("{full}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{} failures: {failures:#?}", failures.len());
}

/// Systems whose every print fmt must render (the analyzers' and the usual suspects').
const RENDERED_SYSTEMS: [&str; 7] = [
    "raw_syscalls",
    "sched",
    "block",
    "kvm",
    "irq",
    "timer",
    "workqueue",
];

#[test]
fn every_print_fmt_on_this_kernel_renders_or_falls_back() {
    let tracefs = tracefs();
    let (mut compiled, mut fallback) = (0usize, Vec::new());
    let mut family_failures = Vec::new();
    for full in tracefs.events() {
        let Some((sys, name)) = full.split_once(':') else {
            continue;
        };
        let layout = tracefs.layout(sys, name).expect("format parses");
        // A zeroed record (plus room for payloads): rendering reads it without panicking,
        // and the printer gives some text for it either way.
        let end = layout.fields.iter().map(|f| f.offset + f.size).max().unwrap_or(0);
        let raw = vec![0u8; end + 64];
        let event = TraceEvent {
            time_ns: 0,
            cpu: 0,
            pid: 1,
            tid: 1,
            event: EventIndex(0),
            raw: &raw,
            callchain: &[],
            rebuilt: false,
        };
        let printer = EventPrinter::new(std::slice::from_ref(&layout));
        let _ = printer.fields_text(&event, &layout);
        match PrintFmt::compile(&layout) {
            Ok(format) => {
                compiled += 1;
                let _ = format.render(&event);
            }
            Err(e) => {
                if RENDERED_SYSTEMS.contains(&sys) {
                    family_failures.push(format!("{full}: {}", e.message));
                }
                fallback.push(format!("{full}: {}", e.message));
            }
        }
    }
    let total = compiled + fallback.len();
    eprintln!(
        "print fmt: {compiled} of {total} formats render ({:.1}%), {} fall back to name=value",
        100.0 * compiled as f64 / total as f64,
        fallback.len()
    );
    for line in &fallback {
        eprintln!("  fallback {line}");
    }
    assert!(total > 1000, "only {total} formats");
    assert!(
        compiled * 10 >= total * 9,
        "only {compiled} of {total} print fmts compile"
    );
    assert!(
        family_failures.is_empty(),
        "{} of {RENDERED_SYSTEMS:?} fall back: {family_failures:#?}",
        family_failures.len()
    );
}
